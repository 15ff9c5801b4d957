// sdk-v1-push.mjs: the TypeScript SDK v1 client (@modelcontextprotocol/sdk,
// 2025-11-25) with an elicitation and a sampling handler, against a legacy
// session: the server pushes elicitation/create and sampling/createMessage
// on the tools/call stream, the client answers in separate POSTs, and the
// call completes. Then DELETE ends the session and the old id gets 404.
// Prints "ok - what" / "not ok - what: why".
//   node sdk-v1-push.mjs --url URL
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { get, check, done, text, transport as open, connect, answerPushes } from './common.mjs';

const url = new URL(get('url'));
const asked = { elicit: [], sampling: [] };
const client = new Client({ name: 'phantom-v1-push', version: '1.0.0' },
    { capabilities: { elicitation: {}, sampling: {} } });
await answerPushes(client, asked);
const transport = await open({ v1: true });
await connect(client, transport, 'sdk-v1: initialize', { report: false });
check(typeof transport.sessionId === 'string' && transport.sessionId.length > 0,
    'sdk-v1: initialize opens a session (Mcp-Session-Id)', String(transport.sessionId));
async function call(name, args, want, what) {
    try {
        const r = await client.callTool({ name, arguments: args });
        check(!r.isError && text(r) === want, `sdk-v1: ${what}`, JSON.stringify(r));
    } catch (e) { check(false, `sdk-v1: ${what}`, `${e?.name}: ${e?.message}`); }
}
await call('delete_file', { path: 'v1-yes.txt' }, 'Deleted v1-yes.txt.',
    'delete_file asks (elicitation/create pushed mid-call) and "yes" deletes');
await call('delete_file', { path: 'v1-no.txt' }, 'Not deleted: v1-no.txt stays.', 'delete_file: "no" keeps the file');
check(asked.elicit.length === 2 && asked.elicit[0] === 'Really delete v1-yes.txt?',
    'sdk-v1: the elicitation handler was asked twice, with the tool\'s message', JSON.stringify(asked.elicit));
await call('test_sampling', { prompt: 'The capital of France?' }, 'LLM response: Paris',
    'a sampling tool (sampling/createMessage pushed mid-call)');
check(asked.sampling.length === 1 && asked.sampling[0] === 'The capital of France?',
    'sdk-v1: the sampling handler got the prompt', JSON.stringify(asked.sampling));
try {
    const t = await client.listTools();
    check(t.tools.some(x => x.name === 'delete_file'), 'sdk-v1: plain requests on the session');
} catch (e) { check(false, 'sdk-v1: plain requests on the session', e?.message); }
const sid = transport.sessionId;
try {
    await transport.terminateSession();
    check(true, 'sdk-v1: DELETE ends the session');
} catch (e) { check(false, 'sdk-v1: DELETE ends the session', e?.message); }
const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream', 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': '2025-11-25' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }) });
check(res.status === 404, 'sdk-v1: a request on the ended session gets 404', String(res.status));
await client.close();
done();
