#!/usr/bin/env node
// hub_peer.mjs: the TypeScript SDK v2 peer for tests/bench/hub_bench.sh. The
// shape of v2-server.mjs --mode minimal (one tool, echo; stateless
// createMcpHandler behind node:http on loopback) with the two things that
// server cannot do for this benchmark: its listen limit is the SDK default
// (1024), raised here to --max, and a change is announced the way Phantom
// announces one: on SIGHUP a tool is added to the catalogue and
// tools/list_changed is published to every open subscriptions/listen stream.
//   node hub_peer.mjs --port PORT --max 10000 [--keepalive-ms 15000]
// Run it from a folder whose node_modules holds @modelcontextprotocol/server
// and @modelcontextprotocol/node (and zod), beside peer_http.mjs.
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { opt, serve } from './peer_http.mjs';

const PORT = Number(opt('port', 3000));
const MAX = Number(opt('max', 10000));
const KEEPALIVE = Number(opt('keepalive-ms', 15000));
const log = (...a) => process.stderr.write(`[hub-peer] ${a.join(' ')}\n`);

let tools = 1; // how many tools the catalogue holds: SIGHUP adds one
function factory() {
    const s = new McpServer({ name: 'hub-peer', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
    for (let i = 0; i < tools; i++)
        s.registerTool(i ? `echo${i + 1}` : 'echo', { description: 'Echo the text back', inputSchema: z.object({ text: z.string() }) },
            async ({ text }) => ({ content: [{ type: 'text', text }] }));
    return s;
}
const handler = createMcpHandler(factory, {
    maxSubscriptions: MAX,
    keepAliveMs: KEEPALIVE,
    onerror: e => log('handler error:', e.message)
});
serve(handler, PORT, log, { keepAliveTimeout: 65_000, maxConnections: MAX + 1024 });
process.on('SIGHUP', () => {
    tools++;
    const t0 = process.hrtime.bigint();
    handler.notify.toolsChanged();
    log(`SIGHUP: ${tools} tools; tools/list_changed published in ${Number(process.hrtime.bigint() - t0) / 1e6} ms`);
});
