// apps-host.mjs: a minimal MCP Apps host for the browser, bundled at test
// time (tests/integration/apps_browser.sh) with the extension's AppBridge
// (@modelcontextprotocol/ext-apps) and the SDK v2 client. It connects to
// the server given as ?mcp=URL (in the era ?era= pins, if any), lists the tools, picks the first one with
// _meta.ui.resourceUri, reads that ui:// resource, renders it in a
// sandboxed iframe (scripts only: its origin is opaque), connects the
// bridge, and once the view is initialized calls the tool and hands the
// view the input and the result, as a chat host does when the model calls
// it. What happened is in window.hostState for the driver.
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const state = window.hostState = { steps: [] };
const step = s => { state.steps.push(s); document.getElementById('log').textContent = state.steps.join('\n'); };
const info = { name: 'phantom-test-host', version: '1.0.0' };

async function main() {
    const q = new URL(location.href).searchParams, url = q.get('mcp'), era = q.get('era');
    // ?era=2026-07-28 pins the stateless revision; the client's default
    // starts a 2025-11-25 session
    const client = new Client(info, { capabilities: {},
        ...(era ? { versionNegotiation: { mode: { pin: era } } } : {}) });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    state.caps = client.getServerCapabilities();
    state.era = client.getNegotiatedProtocolVersion();
    step(`connected (${state.era})`);
    const { tools } = await client.listTools();
    state.tools = tools.map(t => t.name);
    const tool = tools.find(t => t._meta && t._meta.ui && t._meta.ui.resourceUri);
    if (!tool)
        throw new Error('no tool has _meta.ui.resourceUri');
    state.tool = tool.name;
    state.uri = tool._meta.ui.resourceUri;
    state.flat = tool._meta['ui/resourceUri'];
    step(`tools: ${state.tools.join(',')}; ${tool.name} shows ${state.uri}`);
    const read = await client.readResource({ uri: state.uri });
    const item = read.contents[0];
    state.items = read.contents.length;
    state.mime = item.mimeType;
    state.csp = item._meta && item._meta.ui ? item._meta.ui.csp : undefined;
    step(`read ${item.uri}: ${item.mimeType}, ${item.text.length} characters`);

    const frame = document.createElement('iframe');
    frame.id = 'view';
    frame.setAttribute('sandbox', 'allow-scripts');
    frame.style.cssText = 'width: 420px; height: 260px; border: 1px solid #999';
    document.getElementById('views').appendChild(frame);
    const bridge = new AppBridge(client, info, { openLinks: {}, serverTools: {}, serverResources: {}, logging: {} },
        { hostContext: { theme: 'light', displayMode: 'inline' } });
    bridge.oninitialized = async () => {
        try {
            step('view initialized');
            const result = await client.callTool({ name: tool.name, arguments: {} });
            await bridge.sendToolInput({ arguments: {} });
            await bridge.sendToolResult(result);
            state.rendered = true;
            step('tool result sent to the view');
        } catch (e) {
            state.error = String(e);
        }
    };
    await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
    frame.srcdoc = item.text;
}

main().catch(e => { state.error = String(e && e.stack || e); step('error: ' + state.error); });
