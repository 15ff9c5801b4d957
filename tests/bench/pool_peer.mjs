#!/usr/bin/env node
// pool_peer.mjs: the TypeScript SDK v2 peer for tests/bench/pool_bench.sh.
// The shape of v2-server.mjs --mode minimal (stateless createMcpHandler
// behind node:http on loopback, the tool echo) with the benchmark's slow
// tool: "slow" runs the same program Phantom's slow tool runs (--slow, a
// script that reads stdin and prints a result after a sleep), with
// execFile, so its calls wait concurrently on the event loop.
//   node pool_peer.mjs --port PORT --slow /path/to/slow.sh
// Run it from a folder whose node_modules holds @modelcontextprotocol/server
// and @modelcontextprotocol/node (and zod), beside peer_http.mjs.
import { execFile } from 'node:child_process';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { opt, serve } from './peer_http.mjs';

const PORT = Number(opt('port', 3000));
const SLOW = opt('slow', '');
const log = (...a) => process.stderr.write(`[pool-peer] ${a.join(' ')}\n`);

// Runs the slow program with the call on stdin; its stdout is the result.
const runSlow = () => new Promise((resolve, reject) => {
    const child = execFile(SLOW, [], { timeout: 60_000 }, (err, stdout) => {
        if (err) reject(err);
        else resolve(JSON.parse(stdout));
    });
    child.stdin.end('{}\n');
});

function factory() {
    const s = new McpServer({ name: 'pool-peer', version: '1.0.0' }, { capabilities: { tools: {} } });
    s.registerTool('echo', { description: 'Echo the text back', inputSchema: z.object({ text: z.string() }) },
        async ({ text }) => ({ content: [{ type: 'text', text }] }));
    s.registerTool('slow', { description: 'Runs the slow program', inputSchema: z.object({}) }, runSlow);
    return s;
}
const handler = createMcpHandler(factory, { onerror: e => log('handler error:', e.message) });
serve(handler, PORT, log);
