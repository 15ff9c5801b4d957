// sdk-v1-stdio-push.mjs: the TypeScript SDK v1 client (@modelcontextprotocol/sdk,
// 2025-11-25) over stdio, with an elicitation and a sampling handler: the
// server writes elicitation/create and sampling/createMessage on stdout in
// the middle of a call, the client answers on stdin, and the call completes.
// While a call waits for its answer the elicitation handler first lists the
// tools: the server answers other requests meanwhile.
// Prints "ok - what" / "not ok - what: why".
//   node sdk-v1-stdio-push.mjs --stdio CMD [--arg A ...]
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { check, done, text, transport, connect, answerPushes } from './common.mjs';

const asked = { elicit: [], sampling: [], listed: [] };
const client = new Client({ name: 'phantom-v1-stdio-push', version: '1.0.0' },
    { capabilities: { elicitation: {}, sampling: {} } });
// the call waits for the elicitation's answer: another request is served meanwhile
await answerPushes(client, asked, async () => asked.listed.push((await client.listTools()).tools.length));
await connect(client, await transport({ v1: true }), 'sdk-v1 stdio: initialize', { report: false });
check(client.getServerVersion()?.name !== undefined, 'sdk-v1 stdio: initialize');
async function call(name, args, want, what) {
    try {
        const r = await client.callTool({ name, arguments: args });
        check(!r.isError && text(r) === want, `sdk-v1 stdio: ${what}`, JSON.stringify(r));
    } catch (e) { check(false, `sdk-v1 stdio: ${what}`, `${e?.name}: ${e?.message}`); }
}
await call('delete_file', { path: 'v1-yes.txt' }, 'Deleted v1-yes.txt.',
    'delete_file asks (elicitation/create on stdout mid-call) and "yes" deletes');
await call('delete_file', { path: 'v1-no.txt' }, 'Not deleted: v1-no.txt stays.', 'delete_file: "no" keeps the file');
check(asked.elicit.length === 2 && asked.elicit[0] === 'Really delete v1-yes.txt?',
    'sdk-v1 stdio: the elicitation handler was asked twice, with the tool\'s message', JSON.stringify(asked.elicit));
check(asked.listed.length === 2 && asked.listed.every(n => n > 0),
    'sdk-v1 stdio: tools/list is answered while a call waits for the client', JSON.stringify(asked.listed));
await call('test_sampling', { prompt: 'The capital of France?' }, 'LLM response: Paris',
    'a sampling tool (sampling/createMessage on stdout mid-call)');
check(asked.sampling.length === 1 && asked.sampling[0] === 'The capital of France?',
    'sdk-v1 stdio: the sampling handler got the prompt', JSON.stringify(asked.sampling));
await client.close();
done();
