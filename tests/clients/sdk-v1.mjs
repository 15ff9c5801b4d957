// sdk-v1.mjs: drives Phantom with the TypeScript SDK v1 client
// (@modelcontextprotocol/sdk, 2025-11-25 only). Prints "ok - ..." lines.
//   node sdk-v1.mjs --url URL | --stdio CMD [--arg A ...] [--name NAME] [--call TOOL --args JSON --expect TEXT]
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const argv = process.argv.slice(2);
const get = (n, d) => { const i = argv.indexOf(`--${n}`); return i >= 0 ? argv[i + 1] : d; };
const all = n => argv.flatMap((a, i) => (a === `--${n}` ? [argv[i + 1]] : []));
let bad = 0;
const check = (cond, what, why = '') => {
    if (cond) console.log(`ok - ${what}`);
    else { bad++; console.log(`not ok - ${what}${why ? ': ' + why : ''}`); }
};
const label = `sdk-v1 ${get('stdio') ? 'stdio' : 'http'}`;
const client = new Client({ name: 'phantom-tests-v1', version: '1.0.0' }, { capabilities: {} });
const transport = get('stdio')
    ? new StdioClientTransport({ command: get('stdio'), args: all('arg'), stderr: 'ignore' })
    : new StreamableHTTPClientTransport(new URL(get('url')));
try {
    await client.connect(transport);
    check(true, `${label}: initialize`);
} catch (e) {
    check(false, `${label}: initialize`, e?.message);
    process.exit(1);
}
if (get('name')) check(client.getServerVersion()?.name === get('name'), `${label}: server name`);
try {
    await client.ping();
    check(true, `${label}: ping`);
} catch (e) { check(false, `${label}: ping`, e?.message); }
const tool = get('call');
if (tool) {
    try {
        const tools = (await client.listTools()).tools.map(t => t.name);
        check(tools.includes(tool), `${label}: tools/list has ${tool}`, JSON.stringify(tools));
        const r = await client.callTool({ name: tool, arguments: JSON.parse(get('args', '{}')) });
        const text = (r.content ?? []).filter(c => c.type === 'text').map(c => c.text).join('');
        check(!r.isError && text.includes(get('expect', '')), `${label}: tools/call ${tool}`, JSON.stringify(r));
    } catch (e) { check(false, `${label}: tools ${tool}`, e?.message); }
}
await client.close();
process.exit(bad ? 1 : 0);
