// sdk-v1.mjs: drives Phantom with the TypeScript SDK v1 client
// (@modelcontextprotocol/sdk, 2025-11-25 only). Prints "ok - ..." lines.
//   node sdk-v1.mjs --url URL | --stdio CMD [--arg A ...] [--name NAME] [--call TOOL --args JSON --expect TEXT]
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { get, via, check, done, text, transport, connect } from './common.mjs';

const label = `sdk-v1 ${via}`;
const client = new Client({ name: 'phantom-tests-v1', version: '1.0.0' }, { capabilities: {} });
await connect(client, await transport({ v1: true }), `${label}: initialize`);
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
        check(!r.isError && text(r).includes(get('expect', '')), `${label}: tools/call ${tool}`, JSON.stringify(r));
    } catch (e) { check(false, `${label}: tools ${tool}`, e?.message); }
}
await client.close();
done();
