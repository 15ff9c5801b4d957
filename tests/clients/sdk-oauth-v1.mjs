// sdk-oauth-v1.mjs: the TypeScript SDK v1 client (@modelcontextprotocol/sdk,
// a 2025-11-25 session) through Phantom's OAuth flow, headless; the scenario
// and its options are in oauth-flow.mjs. Prints "ok - x" lines.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { opt, run } from './oauth-flow.mjs';

await run({
    label: 'sdk-v1 oauth',
    open: (authProvider, fetch) => ({
        client: new Client({ name: 'phantom-oauth-tests-v1', version: '1.0.0' }, { capabilities: {} }),
        transport: new StreamableHTTPClientTransport(new URL(opt('url')), { authProvider, fetch }),
    }),
    era: ({ transport }) => `${transport.protocolVersion}${transport.sessionId ? ' session' : ''}`,
});
