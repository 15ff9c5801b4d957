// sdk-hosting.mjs: the official TypeScript SDK v2 client (pinned in
// tests/node/package.json) against the starter application of
// `phantom-fcgi --init` (examples/hosting): lists its tools and calls the sh,
// PHP, Python and persistent Python ones. One line per check, "ok - what" or
// "not ok - what: why"; the shell test numbers them for TAP.
//
//   node sdk-hosting.mjs --url URL --label WHAT [--warm | --cold]
// --warm: the persistent tool's second call lands on the same Python process
// (mod_fcgid keeps Phantom running); --cold: each call starts a new one (CGI).
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const argv = process.argv.slice(2);
const get = (n, d) => { const i = argv.indexOf(`--${n}`); return i >= 0 ? argv[i + 1] : d; };
const has = n => argv.includes(`--${n}`);
const label = get('label', 'hosting');
let bad = 0;
const check = (cond, what, why = '') => {
    if (cond) console.log(`ok - ${label}: ${what}`);
    else { bad++; console.log(`not ok - ${label}: ${what}${why ? ': ' + why : ''}`); }
};
const text = r => (r.content ?? []).filter(c => c.type === 'text').map(c => c.text).join('');

const client = new Client({ name: 'phantom-hosting-test', version: '1.0.0' },
    { capabilities: {}, versionNegotiation: { mode: 'auto' } });
try {
    await client.connect(new StreamableHTTPClientTransport(new URL(get('url'))));
    check(true, 'connects');
} catch (e) {
    check(false, 'connects', `${e?.name}: ${e?.message}`);
    process.exit(1);
}
check(client.getServerVersion()?.name === 'my-phantom', 'the starter configuration answers',
    JSON.stringify(client.getServerVersion()));

const call = async (name, args) => {
    try { return await client.callTool({ name, arguments: args }); } catch (e) { return { isError: true, error: e?.message }; }
};
try {
    const names = (await client.listTools()).tools.map(t => t.name).sort().join(',');
    check(names === 'counter,hello,reverse,stats', 'tools/list has the four starter tools', names);
} catch (e) { check(false, 'tools/list has the four starter tools', e?.message); }

let r = await call('hello', { name: 'Ann' });
check(!r.isError && text(r) === 'Hello, Ann!', 'the sh tool', JSON.stringify(r));
r = await call('reverse', { text: 'héllo wörld' });
check(!r.isError && text(r) === 'dlröw olléh', 'the PHP tool', JSON.stringify(r));
r = await call('stats', { text: 'one two\nthree' });
const s = r.structuredContent ?? {};
check(!r.isError && s.characters === 13 && s.words === 3 && s.lines === 2, 'the Python tool', JSON.stringify(r));

const c1 = await call('counter', {}), c2 = await call('counter', {});
const a = c1.structuredContent ?? {}, b = c2.structuredContent ?? {};
check(!c1.isError && !c2.isError && a.served >= 1 && b.served >= 1, 'the persistent Python tool',
    JSON.stringify([c1, c2]));
console.log(`counter: first call ${a.served} of pid ${a.pid}, second ${b.served} of pid ${b.pid}`);
if (has('warm'))
    check(b.pid === a.pid && b.served === a.served + 1, 'its Python process stays up between calls',
        JSON.stringify([a, b]));
if (has('cold'))
    check(a.served === 1 && b.served === 1 && a.pid !== b.pid, 'each call starts it anew (one process a request)',
        JSON.stringify([a, b]));
await client.close();
process.exit(bad ? 1 : 0);
