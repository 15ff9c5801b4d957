#!/usr/bin/env node
// pool_peer.mjs: the TypeScript SDK v2 peer for tests/bench/pool_bench.sh.
// The shape of v2-server.mjs --mode minimal (stateless createMcpHandler
// behind node:http on loopback, the tool echo) with the benchmark's slow
// tool: "slow" runs the same program Phantom's slow tool runs (--slow, a
// script that reads stdin and prints a result after a sleep), with
// execFile, so its calls wait concurrently on the event loop.
//   node pool_peer.mjs --port PORT --slow /path/to/slow.sh
// Run it from a folder whose node_modules holds @modelcontextprotocol/server
// and @modelcontextprotocol/node (and zod).
import { createServer } from 'node:http';
import { execFile } from 'node:child_process';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler, localhostHostValidation, localhostOriginValidation } from '@modelcontextprotocol/node';
import * as z from 'zod';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 && i + 1 < args.length ? args[i + 1] : dflt;
};
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
const node = toNodeHandler(handler);
const vHost = localhostHostValidation();
const vOrigin = localhostOriginValidation();
const http = createServer((req, res) => {
    if (!vHost(req, res) || !vOrigin(req, res)) return;
    void node(req, res);
});
http.listen(PORT, '127.0.0.1', () => log(`listening http://127.0.0.1:${PORT}/mcp pid=${process.pid}`));
const stop = async () => {
    await handler.close().catch(() => {});
    http.close();
    process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
