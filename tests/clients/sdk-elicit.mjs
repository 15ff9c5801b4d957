// sdk-elicit.mjs: multi-round requests with the official TypeScript SDK v2
// client (@modelcontextprotocol/client, pinned in tests/node/package.json).
// The SDK answers input_required results by itself: it calls the
// elicitation/create, sampling/createMessage and roots/list handlers below,
// then retries the request with inputResponses and the echoed requestState,
// for as many rounds as the server asks. Prints "ok - what" or
// "not ok - what: why" per check; the shell test numbers them for TAP.
//
//   node sdk-elicit.mjs --url URL [--token BEARER] | --stdio CMD [--arg A ...]
//        [--era 2026-07-28|legacy]
// Against the configuration of tests/integration/elicit.sh.
import { Client } from '@modelcontextprotocol/client';
import { get, via, check, done, text, transport } from './common.mjs';

const era = get('era', '2026-07-28');
const label = `${via} ${era}`;

// What the client's "user" and "model" answer, and how often they were asked.
const asked = { elicit: [], sampling: 0, roots: 0 };
function answerElicitation(p) {
    asked.elicit.push(p.mode ?? 'form');
    if (p.mode === 'url') return { action: 'accept' };
    const m = p.message;
    if (m.startsWith('Really delete ')) return { action: 'accept', content: { confirm: m.includes('sdk-yes') ? 'yes' : 'no' } };
    if (m.startsWith('Step 1')) return { action: 'accept', content: { name: 'Ada' } };
    if (m.startsWith('Step 2')) return { action: 'accept', content: { color: 'green' } };
    if (m.startsWith('What is your name')) return { action: 'accept', content: { name: 'Ada' } };
    if (m === 'Proceed?') return { action: 'accept', content: { ok: true } };
    if (m.startsWith('What context')) return { action: 'accept', content: { context: 'sdk' } };
    if (m === 'Which topic?') return { action: 'accept', content: { topic: 'sdk' } };
    return { action: 'decline' };
}

async function connect(capabilities) { // handlers for the declared capabilities only
    const negotiation = era === 'legacy' ? undefined : { mode: { pin: era } };
    const client = new Client({ name: 'phantom-elicit-tests', version: '1.0.0' },
        { capabilities, ...(negotiation && { versionNegotiation: negotiation }) });
    if (capabilities.elicitation) client.setRequestHandler('elicitation/create', async req => answerElicitation(req.params));
    if (capabilities.sampling) client.setRequestHandler('sampling/createMessage', async req => {
        asked.sampling++;
        const q = req.params.messages?.[0]?.content?.text ?? '';
        return { role: 'assistant', model: 'test-model', stopReason: 'endTurn',
            content: { type: 'text', text: q.includes('capital') ? 'Paris' : 'Hello' } };
    });
    if (capabilities.roots) client.setRequestHandler('roots/list', async () => {
        asked.roots++;
        return { roots: [{ uri: 'file:///tmp/project', name: 'project' }] };
    });
    await client.connect(await transport());
    return client;
}
async function tool(client, name, args, want, what) {
    const rounds = [];
    try {
        const r = await client.callTool({ name, arguments: args },
            { onprogress: p => { if (/Fulfilling input required/.test(p.message ?? '')) rounds.push(p.progress); } });
        check(!r.isError && text(r) === want, `${label}: ${what}`, JSON.stringify(r));
        return rounds;
    } catch (e) {
        check(false, `${label}: ${what}`, `${e?.name}: ${e?.message}`);
        return rounds;
    }
}

let client;
try {
    client = await connect({ elicitation: { form: {}, url: {} }, sampling: {}, roots: {} });
    check(true, `${label}: connects`);
} catch (e) {
    check(false, `${label}: connects`, `${e?.name}: ${e?.message}`);
    process.exit(1);
}

// 2025-11-25 has the server push its requests mid-call (over HTTP on the
// call's stream of the session, over stdio on stdout, the answers coming
// back on stdin) and call the handler again with the answers, as a
// 2026-07-28 retry would.
const pushes = era === 'legacy';

const r1 = await tool(client, 'delete_file', { path: 'sdk-yes.txt' }, 'Deleted sdk-yes.txt.', 'delete_file: yes deletes');
// (the v2 client reports the rounds of a 2026-07-28 retry as progress; a
// pushed request is no round of its own)
if (!pushes) check(r1.length === 1, `${label}: delete_file took one input round`, JSON.stringify(r1));
await tool(client, 'delete_file', { path: 'sdk-no.txt' }, 'Not deleted: sdk-no.txt stays.', 'delete_file: no keeps the file');
await tool(client, 'sampling', {}, 'Sampling: Paris', 'sampling/createMessage round trip');
await tool(client, 'roots', {}, 'Roots: file:///tmp/project', 'roots/list round trip');
await tool(client, 'all3', {}, 'Hello Ada - 1 root(s)', 'elicitation, sampling and roots in one round');
const r2 = await tool(client, 'two_round', {}, 'Ada likes green', 'two rounds of elicitation');
if (!pushes) check(r2.length === 2, `${label}: two_round took two input rounds`, JSON.stringify(r2));
// a round without requests ("call again later") has no 2025-11-25 form
if (!pushes) await tool(client, 'shed', {}, 'served after a retry', 'a requestState-only round');
await tool(client, 'url', {}, 'url accepted', 'a URL elicitation');
try {
    const r = await client.callTool({ name: 'link_account', arguments: {} });
    check(/^Link request [0-9a-f]{16}: the page was opened\.$/.test(text(r)), `${label}: link_account (URL mode)`, JSON.stringify(r));
} catch (e) { check(false, `${label}: link_account (URL mode)`, e?.message); }
await tool(client, 'module_confirm', {}, 'module: ok=true for proceed (principal alice)', 'a module handler\'s elicitation');
if (!pushes) await tool(client, 'module_shed', {}, 'module: served after a retry', 'a module handler\'s state-only round');
try {
    const p = await client.getPrompt({ name: 'ask_prompt' });
    check(p.messages?.[0]?.content?.text === 'Use the following context: sdk', `${label}: prompts/get with elicitation`, JSON.stringify(p));
} catch (e) { check(false, `${label}: prompts/get with elicitation`, e?.message); }
try {
    const r = await client.readResource({ uri: 'mrtr://ask' });
    check(r.contents?.[0]?.text === 'topic: sdk', `${label}: resources/read with elicitation`, JSON.stringify(r));
} catch (e) { check(false, `${label}: resources/read with elicitation`, e?.message); }
check(asked.elicit.filter(m => m === 'url').length === 2 && asked.sampling === 2 && asked.roots === 2,
    `${label}: the client's handlers were asked (url ${asked.elicit.filter(m => m === 'url').length}, sampling ${asked.sampling}, roots ${asked.roots})`);
await client.close();

// A client that declares nothing: -32021 names what is missing.
const bare = await connect({});
try {
    await bare.callTool({ name: 'sampling', arguments: {} });
    check(false, `${label}: without the capability, -32021`, 'it succeeded');
} catch (e) {
    check(e?.code === -32021 && JSON.stringify(e?.data?.requiredCapabilities) === '{"sampling":{}}',
        `${label}: without the capability, -32021 with requiredCapabilities`, `${e?.code} ${JSON.stringify(e?.data)} ${e?.message}`);
}
try {
    const r = await bare.callTool({ name: 'delete_file', arguments: { path: 'sdk-no.txt' } });
    check(r.isError && /must ask for confirmation/.test(text(r)), `${label}: delete_file's fallback without elicitation`, JSON.stringify(r));
} catch (e) { check(false, `${label}: delete_file's fallback without elicitation`, e?.message); }
await bare.close();
done();
