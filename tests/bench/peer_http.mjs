// peer_http.mjs: what the benchmarks' TypeScript SDK v2 peers (hub_peer.mjs,
// pool_peer.mjs) share: their command-line options, and the node:http server
// on loopback in front of a createMcpHandler handler, with the SDK's Host and
// Origin checks, the shape of v2-server.mjs, ended by SIGINT or SIGTERM.
import { createServer } from 'node:http';
import { toNodeHandler, localhostHostValidation, localhostOriginValidation } from '@modelcontextprotocol/node';

const args = process.argv.slice(2);

// The value after --name on the command line, or dflt.
export const opt = (name, dflt) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 && i + 1 < args.length ? args[i + 1] : dflt;
};

// Serves handler on 127.0.0.1:port, with the node:http settings in extra
// (keepAliveTimeout, maxConnections...), logging through log; returns the server.
export function serve(handler, port, log, extra = {}) {
    const node = toNodeHandler(handler);
    const vHost = localhostHostValidation();
    const vOrigin = localhostOriginValidation();
    const http = createServer((req, res) => {
        if (!vHost(req, res) || !vOrigin(req, res)) return;
        void node(req, res);
    });
    Object.assign(http, extra);
    http.listen(port, '127.0.0.1', () => log(`listening http://127.0.0.1:${port}/mcp pid=${process.pid}`));
    const stop = async () => {
        await handler.close().catch(() => {});
        http.close();
        process.exit(0);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    return http;
}
