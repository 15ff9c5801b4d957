// sdk-v2-trace.mjs: the SDK v2 client (@modelcontextprotocol/client) calls a
// tool with a W3C trace context in params._meta, as a client's OpenTelemetry
// instrumentation puts it there, so that the shell test can check one trace
// from the client through Phantom's spans to the handler's own.
//
//   node sdk-v2-trace.mjs --url URL --call TOOL --traceparent TP
import { Client } from '@modelcontextprotocol/client';
import { get, via, check, done, text, transport, connect } from './common.mjs';

const client = new Client({ name: 'phantom-trace', version: '1.0.0' },
    { capabilities: {}, versionNegotiation: { mode: { pin: '2026-07-28' } } });
await connect(client, await transport(), `${via}: connects`);
const tp = get('traceparent');
try {
    const r = await client.callTool({ name: get('call'), arguments: {}, _meta: { traceparent: tp } });
    const trace = tp.split('-')[1];
    check(!r.isError && text(r).includes(`00-${trace}-`),
        `${via}: the handler continues the client's trace (${trace})`, JSON.stringify(r));
} catch (e) { check(false, `${via}: tools/call with _meta.traceparent`, e?.message); }
await client.close();
done();
