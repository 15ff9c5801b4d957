// sdk-v1-stdio-session.mjs: the TypeScript SDK v1 client (@modelcontextprotocol/sdk,
// 2025-11-25) over stdio gets the session state an HTTP session gets:
// logging/setLevel filters the log notifications of later calls, a
// resources/subscribe hears one notifications/resources/updated per change
// of the file (and of a handler's announcement), and a SIGHUP tells it of
// each list whose visible content changed, and of no other.
// Prints "ok - what" / "not ok - what: why".
//   node sdk-v1-stdio-session.mjs --stdio CMD [--arg A ...] --conf PATH --file PATH
//        --stage CONF-FILE ... (copied onto --conf, one per reload, in order)
//        [--tag TEXT] (in every check's name)
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
    LoggingMessageNotificationSchema, ResourceUpdatedNotificationSchema,
    ToolListChangedNotificationSchema, PromptListChangedNotificationSchema,
    ResourceListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

const argv = process.argv.slice(2);
const get = (n, d) => { const i = argv.indexOf(`--${n}`); return i >= 0 ? argv[i + 1] : d; };
const all = n => argv.flatMap((a, i) => (a === `--${n}` ? [argv[i + 1]] : []));
const tag = get('tag', 'stdio');
let bad = 0;
const check = (cond, what, why = '') => {
    if (cond) console.log(`ok - ${tag}: ${what}`);
    else { bad++; console.log(`not ok - ${tag}: ${what}${why ? ': ' + why : ''}`); }
};
const sleep = ms => new Promise(r => setTimeout(r, ms));

const seen = { logs: [], updated: [], tools: 0, prompts: 0, resources: 0 };
const client = new Client({ name: 'phantom-v1-stdio-session', version: '1.0.0' }, { capabilities: {} });
client.setNotificationHandler(LoggingMessageNotificationSchema, n => { seen.logs.push(n.params.level); });
client.setNotificationHandler(ResourceUpdatedNotificationSchema, n => { seen.updated.push(n.params.uri); });
client.setNotificationHandler(ToolListChangedNotificationSchema, () => { seen.tools++; });
client.setNotificationHandler(PromptListChangedNotificationSchema, () => { seen.prompts++; });
client.setNotificationHandler(ResourceListChangedNotificationSchema, () => { seen.resources++; });
const transport = new StdioClientTransport({ command: get('stdio'), args: all('arg'), stderr: 'pipe',
    env: { ...process.env } });
let stderr = '';
transport.stderr.on('data', d => { stderr += d; });
try {
    await client.connect(transport);
} catch (e) {
    check(false, 'initialize', e?.message);
    process.exit(1);
}
const caps = client.getServerCapabilities();
check(caps?.logging && caps?.resources?.subscribe === true && caps?.tools?.listChanged === true,
    'initialize promises logging, resources.subscribe and tools.listChanged', JSON.stringify(caps));

// ---- logging/setLevel
const logsOf = async () => {
    seen.logs = [];
    await client.callTool({ name: 'logs', arguments: {} });
    return seen.logs.join(',');
};
check(await logsOf() === 'debug,info,warning,error', 'before setLevel every level is sent', seen.logs.join(','));
await client.setLoggingLevel('warning');
check(await logsOf() === 'warning,error', 'after setLevel warning: only warning and error', seen.logs.join(','));
check(await logsOf() === 'warning,error', '  and so for every later call', seen.logs.join(','));
await client.setLoggingLevel('debug');
check(await logsOf() === 'debug,info,warning,error', 'setLevel debug: every level again', seen.logs.join(','));

// ---- resources/subscribe
const file = get('file');
const original = readFileSync(file);
const waitFor = async (cond, ms = 3000) => {
    for (let t = 0; t < ms && !cond(); t += 50) await sleep(50);
    return cond();
};
await client.subscribeResource({ uri: 'doc://data' });
writeFileSync(file, 'changed once\n');
await waitFor(() => seen.updated.length > 0);
await sleep(300);
check(seen.updated.join(',') === 'doc://data', 'subscribe then a file write: one resources/updated',
    JSON.stringify(seen.updated));
try {
    await client.subscribeResource({ uri: 'doc://nothing' });
    check(false, 'subscribe to an unknown resource is refused', 'it was accepted');
} catch (e) {
    check(e?.code === -32002, 'subscribe to an unknown resource: -32002', `${e?.code} ${e?.message}`);
}
seen.updated = [];
await client.subscribeResource({ uri: 'app://thing' });
const r = await client.callTool({ name: 'announce', arguments: {} });
await waitFor(() => seen.updated.length > 0);
await sleep(300);
check(!r.isError && seen.updated.join(',') === 'app://thing',
    "a handler's resourcesUpdated reaches the subscription: one resources/updated", JSON.stringify(seen.updated));
await client.unsubscribeResource({ uri: 'doc://data' });
seen.updated = [];
writeFileSync(file, 'changed twice\n');
await sleep(800);
check(seen.updated.length === 0, 'after unsubscribe a write sends nothing', JSON.stringify(seen.updated));
// the file as it was loaded: its size is in resources/list, which the
// reloads below compare
writeFileSync(file, original);

// ---- SIGHUP: list_changed for what this client's principal sees
const reloads = () => (stderr.match(/configuration reloaded/g) ?? []).length;
const stages = all('stage');
const want = JSON.parse(get('want', '[]'));
for (let i = 0; i < stages.length; i++) {
    const before = reloads(), was = { ...seen };
    copyFileSync(stages[i], get('conf'));
    process.kill(transport.pid, 'SIGHUP');
    const done = await waitFor(() => reloads() > before, 10000);
    await client.ping(); // the notifications were written before its answer
    await sleep(200);
    const got = [seen.tools - was.tools, seen.prompts - was.prompts, seen.resources - was.resources];
    check(done && JSON.stringify(got) === JSON.stringify(want[i].got),
        `reload ${i + 1} (${want[i].what}): tools/prompts/resources list_changed ${JSON.stringify(want[i].got)}`,
        `${done ? '' : 'no reload logged; '}got ${JSON.stringify(got)}`);
}
await client.close();
process.exit(bad ? 1 : 0);
