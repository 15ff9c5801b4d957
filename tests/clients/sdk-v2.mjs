// sdk-v2.mjs: drives Phantom with the official TypeScript SDK v2 client
// (@modelcontextprotocol/client, pinned in tests/node/package.json) and prints
// one line per check: "ok - what" or "not ok - what: why". The shell test
// numbers them for TAP.
//
//   node sdk-v2.mjs --url URL | --stdio CMD [--arg A ...]
//        --era auto|2026-07-28|legacy  --expect-era modern|legacy
//        [--name SERVER-NAME] [--call 'TOOL' --args JSON --expect TEXT]
//        [--progress-tool TOOL --progress-args JSON --progress-min N]
import { Client } from '@modelcontextprotocol/client';
import { get, via, check, done, text, transport, connect } from './common.mjs';

const era = get('era', 'auto');
const negotiation = era === 'legacy' ? undefined : era === 'auto' ? { mode: 'auto' } : { mode: { pin: era } };
const client = new Client({ name: 'phantom-tests', version: '1.0.0' },
    { capabilities: {}, ...(negotiation && { versionNegotiation: negotiation }) });
const label = `${via} era=${era}`;
await connect(client, await transport(), `${label}: connects`);
const wantEra = get('expect-era');
if (wantEra) check(client.getProtocolEra() === wantEra, `${label}: era is ${wantEra}`, client.getProtocolEra());
const ver = client.getNegotiatedProtocolVersion();
check(ver === (client.getProtocolEra() === 'modern' ? '2026-07-28' : '2025-11-25'), `${label}: negotiated version`, ver);
if (get('name')) check(client.getServerVersion()?.name === get('name'), `${label}: server name`, JSON.stringify(client.getServerVersion()));

const tool = get('call');
if (tool) {
    try {
        const r = await client.callTool({ name: tool, arguments: JSON.parse(get('args', '{}')) });
        check(!r.isError && text(r).includes(get('expect', '')), `${label}: tools/call ${tool}`, JSON.stringify(r));
    } catch (e) { check(false, `${label}: tools/call ${tool}`, e?.message); }
}
const ptool = get('progress-tool');
if (ptool) {
    const t0 = performance.now(), seen = [];
    try {
        const r = await client.callTool({ name: ptool, arguments: JSON.parse(get('progress-args', '{}')) },
            { onprogress: p => seen.push({ at: performance.now() - t0, p }) });
        const done = performance.now() - t0;
        const min = Number(get('progress-min', '2'));
        check(!r.isError, `${label}: ${ptool} completes`, JSON.stringify(r));
        check(seen.length >= min, `${label}: ${seen.length} progress notifications received`, JSON.stringify(seen));
        // live: the first notification arrived well before the result
        check(seen.length > 0 && seen[0].at < done - 100, `${label}: progress arrives before the result`,
            `first at ${seen[0]?.at?.toFixed(0)} ms, result at ${done.toFixed(0)} ms`);
        check(seen.every((s, i) => i === 0 || s.p.progress > seen[i - 1].p.progress), `${label}: progress increases`);
    } catch (e) { check(false, `${label}: ${ptool} with progress`, e?.message); }
}
await client.close();
done();
