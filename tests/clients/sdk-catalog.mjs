// sdk-catalog.mjs: reads a whole resources/list with the official
// TypeScript SDK v2 client (@modelcontextprotocol/client), following
// nextCursor to the end, and checks that the expected resources arrived,
// each once, over HTTP or over stdio (a server it starts). Prints
// "ok - what" or "not ok - what: why" per check.
//
//   node sdk-catalog.mjs --url URL --expect N [--prefix study://] [--first URI]
//   node sdk-catalog.mjs --stdio COMMAND [--arg A]... --expect N ...
import { Client } from '@modelcontextprotocol/client';
import { get, via, check, done, transport, connect } from './common.mjs';

const client = new Client({ name: 'phantom-catalog-tests', version: '1.0.0' },
    { capabilities: {}, versionNegotiation: { mode: { pin: '2026-07-28' } } });
await connect(client, await transport(), `SDK v2 client (${via}): connects`, { report: false });
const prefix = get('prefix', 'study://');
const seen = [];
let cursor, pages = 0, err;
try {
    do {
        const r = await client.listResources(cursor ? { cursor } : {});
        seen.push(...r.resources.map(x => x.uri));
        cursor = r.nextCursor;
        pages++;
    } while (cursor !== undefined && pages < 10000);
} catch (e) { err = e; }
check(err === undefined, `SDK v2 client (${via}): every page of resources/list read`, String(err));
const wanted = seen.filter(u => u.startsWith(prefix));
const expect = Number(get('expect'));
check(wanted.length === expect, `SDK v2 client (${via}): ${expect} ${prefix} resources`, `got ${wanted.length}`);
check(new Set(seen).size === seen.length, `SDK v2 client (${via}): no resource listed twice`,
    `${seen.length - new Set(seen).size} duplicates`);
const ids = wanted.map(u => Number(u.slice(prefix.length))).sort((a, b) => a - b);
check(ids.every((v, i) => v === i), `SDK v2 client (${via}): no gap (0 to N-1, each once)`);
if (get('first')) check(seen[0] === get('first'), `SDK v2 client (${via}): the configured resource ${get('first')} comes first`, seen[0]);
console.log(`# ${pages} pages`);
await client.close();
done();
