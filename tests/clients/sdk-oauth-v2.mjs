// sdk-oauth-v2.mjs: the TypeScript SDK v2 client (@modelcontextprotocol/client,
// 2026-07-28) through Phantom's OAuth flow, headless; the scenario and its
// options are in oauth-flow.mjs. Prints "ok - x" lines.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { opt, run } from './oauth-flow.mjs';

await run({
    label: 'sdk-v2 oauth',
    open: (authProvider, fetch) => ({
        client: new Client({ name: 'phantom-oauth-tests', version: '1.0.0' },
            { capabilities: {}, versionNegotiation: { mode: { pin: '2026-07-28' } } }),
        transport: new StreamableHTTPClientTransport(new URL(opt('url')), { authProvider, fetch }),
    }),
    era: ({ client }) => client.getNegotiatedProtocolVersion(),
});
