// sdk-v1-state.mjs: the TypeScript SDK v1 client (@modelcontextprotocol/sdk,
// 2025-11-25) against a legacy session's state in the hub:
// logging/setLevel then a tool that logs at every level delivers only the
// levels at or above the one set, call after call (on whichever worker
// serves it); resources/subscribe plus a file change delivers
// notifications/resources/updated on the session's GET stream (which the
// SDK opens by itself after initialize), unsubscribe stops it; a reload with
// one more tool delivers notifications/tools/list_changed there.
// Prints "ok - what" / "not ok - what: why".
//   node sdk-v1-state.mjs --url URL --token T --file F --uri U --conf C --conf-new N --pid P
import fs from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
    LoggingMessageNotificationSchema, ResourceUpdatedNotificationSchema, ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { get, check, done, sleep, text, transport as open, connect } from './common.mjs';

const until = async (cond, ms) => {
    for (const t0 = Date.now(); Date.now() - t0 < ms; await sleep(50))
        if (cond()) return true;
    return cond();
};

const logs = [], updates = [], listChanged = [];
const client = new Client({ name: 'phantom-v1-state', version: '1.0.0' }, { capabilities: {} });
client.setNotificationHandler(LoggingMessageNotificationSchema, n => logs.push(n.params.level));
client.setNotificationHandler(ResourceUpdatedNotificationSchema, n => updates.push(n.params.uri));
client.setNotificationHandler(ToolListChangedNotificationSchema, () => listChanged.push(Date.now()));
const transport = await open({ v1: true });
await connect(client, transport, 'sdk-v1: initialize', { report: false });
const caps = client.getServerCapabilities() ?? {};
check(caps.tools?.listChanged === true && caps.resources?.listChanged === true &&
      caps.resources?.subscribe === true && caps.logging !== undefined,
    'sdk-v1: initialize advertises tools/resources listChanged, resources.subscribe and logging',
    JSON.stringify(caps));

async function levels(what) {
    logs.length = 0;
    try {
        const r = await client.callTool({ name: 'log_levels', arguments: {} });
        return { pid: text(r), got: [...logs] };
    } catch (e) {
        check(false, `sdk-v1: ${what}`, `${e?.name}: ${e?.message}`);
        return { pid: '', got: null };
    }
}
const all = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];
let r = await levels('log_levels before setLevel');
check(JSON.stringify(r.got) === JSON.stringify(all), 'sdk-v1: before setLevel every level arrives',
    JSON.stringify(r.got));
await client.setLoggingLevel('warning');
const above = ['warning', 'error', 'critical', 'alert', 'emergency'];
const pids = new Set();
let same = 0;
for (let i = 0; i < 6; i++) {
    r = await levels('log_levels after setLevel');
    pids.add(r.pid);
    if (JSON.stringify(r.got) === JSON.stringify(above)) same++;
}
check(same === 6, 'sdk-v1: after setLevel warning, six calls get only warning and above', `${same}/6`);
console.log(`# the six calls ran on: ${[...pids].join(', ')}`);
await client.setLoggingLevel('error');
r = await levels('log_levels after setLevel error');
check(JSON.stringify(r.got) === JSON.stringify(above.slice(1)), 'sdk-v1: setLevel error narrows it again',
    JSON.stringify(r.got));

// resources/subscribe: updates arrive on the GET stream the SDK opened
const uri = get('uri'), file = get('file');
await client.subscribeResource({ uri });
await sleep(300);
fs.writeFileSync(file, `changed ${Date.now()}\n`);
check(await until(() => updates.includes(uri), 5000),
    'sdk-v1: resources/subscribe then a change of the file: notifications/resources/updated arrives',
    JSON.stringify(updates));
await client.unsubscribeResource({ uri });
updates.length = 0;
fs.writeFileSync(file, `changed again ${Date.now()}\n`);
await sleep(1500);
check(updates.length === 0, 'sdk-v1: after resources/unsubscribe a change sends nothing', JSON.stringify(updates));

// a reload with one more tool: tools/list_changed on the GET stream
fs.copyFileSync(get('conf-new'), get('conf'));
process.kill(Number(get('pid')), 'SIGHUP');
check(await until(() => listChanged.length > 0, 8000),
    'sdk-v1: a reload with one more tool sends notifications/tools/list_changed on the GET stream');
try {
    const t = await client.listTools();
    check(t.tools.some(x => x.name === 'added_tool'), 'sdk-v1: tools/list then shows the new tool');
} catch (e) { check(false, 'sdk-v1: tools/list after the reload', e?.message); }
await transport.terminateSession().catch(() => {});
await client.close().catch(() => {});
done();
