// sdk-stdio-concurrent.mjs: the TypeScript SDK v2 client
// (@modelcontextprotocol/client) over stdio against a server that runs calls
// concurrently: a fast tool sent after a slow one is answered first,
// tools/list is not held up by the slow one, and a call the client aborts
// (notifications/cancelled) stops: its exec process is gone while the other
// calls go on. Prints "ok - what" / "not ok - what: why".
//   node sdk-stdio-concurrent.mjs --stdio CMD [--arg A ...] --pidfile FILE
import { Client } from '@modelcontextprotocol/client';
import { readFileSync } from 'node:fs';
import { get, check, done as finish, sleep, text, transport, connect } from './common.mjs';

const client = new Client({ name: 'phantom-stdio-concurrent', version: '1.0.0' }, { capabilities: {} });
await connect(client, await transport(), 'connects over stdio', { report: false });
const t0 = performance.now();
const done = {};
const timed = (name, p) => p.then(r => { done[name] = performance.now() - t0; return r; });

// a slow module tool (2 s) and a fast one sent right after it
const slow = timed('slow', client.callTool({ name: 'count_to', arguments: { n: 20, delay_ms: 100 } }));
const fast = timed('fast', client.callTool({ name: 'echo', arguments: { text: 'quick' } }));
const list = timed('list', client.listTools());
const [rs, rf, rl] = await Promise.all([slow, fast, list]);
check(text(rf) === 'quick' && text(rs) === 'counted to 20', 'both calls answered',
    JSON.stringify([rs, rf]));
check(done.fast < done.slow, 'the fast tool sent after the slow one is answered first',
    `fast ${done.fast?.toFixed(0)} ms, slow ${done.slow?.toFixed(0)} ms`);
check(done.fast < 1000, `the fast answer did not wait for the slow tool (${done.fast?.toFixed(0)} ms)`);
check(rl.tools.some(t => t.name === 'count_to') && done.list < 1000 && done.list < done.slow,
    `tools/list is not held up by the slow tool (${done.list?.toFixed(0)} ms)`);

// abort a slow exec call: the client sends notifications/cancelled
const ac = new AbortController();
const aborted = client.callTool({ name: 'sleeper', arguments: {} }, { signal: ac.signal })
    .then(() => 'answered', e => `rejected: ${e?.name}`);
const other = client.callTool({ name: 'count_to', arguments: { n: 10, delay_ms: 100 } });
let pid = 0;
for (let i = 0; i < 50 && !pid; i++) {
    await sleep(100);
    try { pid = Number(readFileSync(get('pidfile'), 'utf8').trim()); } catch { /* not yet */ }
}
check(pid > 0, 'the slow exec call started', String(pid));
ac.abort('the user changed their mind');
check((await aborted).startsWith('rejected'), 'the aborted call ends on the client');
const alive = p => { try { process.kill(p, 0); return true; } catch { return false; } };
let gone = false;
for (let i = 0; i < 30 && !gone; i++) { await sleep(100); gone = !alive(pid); }
check(gone, 'the cancelled call\'s process is gone');
const ro = await other;
check(text(ro) === 'counted to 10', 'the call running next to it goes on and is answered', JSON.stringify(ro));
const after = await client.callTool({ name: 'echo', arguments: { text: 'after' } });
check(text(after) === 'after', 'a call after the cancel is served');
await client.close();
finish();
