// sdk-v2-features.mjs: the official TypeScript SDK v2 client
// (@modelcontextprotocol/client) calling every kind of tool, prompt and
// resource of the configuration written by tests/integration/sdk_features.sh,
// over HTTP or stdio, in a chosen era. Prints "ok - VIA ERA: what" or
// "not ok - VIA ERA: what: why" per check.
//   node sdk-v2-features.mjs --url URL --era auto|2026-07-28|legacy
//   node sdk-v2-features.mjs --stdio CMD --arg X ... --era ...
import { Client } from '@modelcontextprotocol/client';
import { get, via, check as report, done, transport } from './common.mjs';

const era = get('era', 'auto');
const label = `${via} ${era}`;
// The SDK dispatches notifications on a later microtask but responses at
// once: every progress that arrives in the same stdio read as the result
// finds its handler gone. On a loaded machine the client reads late and
// several can share that read (CI saw [1] of 3), so over stdio the seen
// values are a non-empty prefix of 1..n: in order, none twice, none
// invented. stdio.sh checks every progress line on the wire itself.
const progressOk = (seen, n) => {
    const want = Array.from({ length: n }, (_, i) => i + 1);
    if (via !== 'stdio')
        return seen.join(',') === want.join(',');
    return seen.length >= 1 && seen.join(',') === want.slice(0, seen.length).join(',');
};
// check(NAME, FN): FN gives [ok, detail]; the detail is shown when not ok
const check = async (name, fn) => {
    try {
        const [ok, detail] = await fn();
        report(ok, `${label}: ${name}`, JSON.stringify(detail)?.slice(0, 300));
    } catch (e) {
        report(false, `${label}: ${name}`, `${e?.name}: ${e?.message}`);
    }
};

const client = new Client(
    { name: 'phantom-sdk-test', version: '1.0.0' },
    era === 'legacy' ? {} : { versionNegotiation: { mode: era === 'auto' ? 'auto' : { pin: era } } }
);
const t = await transport();
await check('connect', async () => {
    await client.connect(t);
    const caps = client.getServerCapabilities() ?? {};
    return [caps.tools && caps.prompts && caps.resources && caps.completions,
        { era: client.getProtocolEra?.(), version: client.getNegotiatedProtocolVersion?.() }];
});

const text = r => r?.content?.find(c => c.type === 'text')?.text;
await check('tools/list', async () => {
    const names = (await client.listTools()).tools.map(t => t.name);
    return [names.includes('echo') && names.includes('echo_script') && names.includes('all_content'), names];
});
await check('module tool', async () => {
    const r = await client.callTool({ name: 'echo', arguments: { text: 'héllo' } });
    return [text(r) === 'héllo', r];
});
await check('structured output', async () => {
    const r = await client.callTool({ name: 'text_stats', arguments: { text: 'a b\nc' } });
    return [r.structuredContent?.words === 3 && r.structuredContent?.lines === 2, r.structuredContent];
});
await check('every content type', async () => {
    const r = await client.callTool({ name: 'all_content', arguments: {} });
    const types = r.content.map(c => c.type).join(',');
    return [types === 'text,image,audio,resource_link,resource,resource', types];
});
await check('script tool', async () => {
    const r = await client.callTool({ name: 'echo_script', arguments: { text: 'from sh' } });
    return [text(r) === 'from sh', r];
});
await check('module progress', async () => {
    const seen = [];
    const r = await client.callTool({ name: 'count_to', arguments: { n: 3, delay_ms: 10 } },
        { onprogress: p => seen.push(p.progress) });
    return [text(r) === 'counted to 3' && progressOk(seen, 3), seen];
});
await check('script progress', async () => {
    const seen = [];
    const r = await client.callTool({ name: 'countdown', arguments: { from: 2, step_ms: 10 } },
        { onprogress: p => seen.push(p.progress) });
    return [text(r) === 'liftoff after 2 steps' && progressOk(seen, 2), seen];
});
await check('validation error is a tool result', async () => {
    const r = await client.callTool({ name: 'text_stats', arguments: {} });
    return [r.isError === true && /Missing required field: text/.test(text(r)), text(r)];
});
await check('unknown tool is an error', async () => {
    try {
        await client.callTool({ name: 'no_such_tool', arguments: {} });
        return [false, 'no error'];
    } catch (e) {
        return [/Unknown tool|-32602/.test(`${e.message} ${e.code}`), e.message];
    }
});
await check('prompts/list', async () => {
    const names = (await client.listPrompts()).prompts.map(p => p.name);
    return [names.join(',') === 'code_review,summarize_doc,describe_logo,module_prompt', names];
});
await check('prompt with arguments', async () => {
    const r = await client.getPrompt({ name: 'code_review', arguments: { code: 'x=1', language: 'python' } });
    return [/python code/.test(r.messages[0].content.text) && /x=1/.test(r.messages[0].content.text), r.messages[0]];
});
await check('prompt with an embedded resource', async () => {
    const r = await client.getPrompt({ name: 'summarize_doc', arguments: { page: 'index.md' } });
    return [r.messages[1].content.type === 'resource' && /Phantom example/.test(r.messages[1].content.resource.text), r.messages[1].content.type];
});
await check('prompt with an image', async () => {
    const r = await client.getPrompt({ name: 'describe_logo' });
    return [r.messages[1].content.type === 'image' && r.messages[1].content.mimeType === 'image/png', r.messages[1].content.mimeType];
});
await check('prompt from a module handler', async () => {
    const r = await client.getPrompt({ name: 'module_prompt', arguments: { topic: 'owls' } });
    return [r.messages.length === 2 && r.messages[1].role === 'assistant', r.messages];
});
await check('completion', async () => {
    const r = await client.complete({ ref: { type: 'ref/prompt', name: 'code_review' }, argument: { name: 'language', value: 'ru' } });
    return [r.completion.values.join(',') === 'ruby,rust', r.completion];
});
await check('resources/list', async () => {
    const uris = (await client.listResources()).resources.map(r => r.uri);
    return [uris.join(',') === 'docs://index,docs://logo', uris];
});
await check('resources/templates/list', async () => {
    const t = (await client.listResourceTemplates()).resourceTemplates.map(r => r.uriTemplate);
    return [t.join(',') === 'docs://{page},example://rot13/{text}', t];
});
await check('text resource', async () => {
    const r = await client.readResource({ uri: 'docs://index' });
    return [/Phantom example/.test(r.contents[0].text) && r.contents[0].mimeType === 'text/markdown', r.contents[0].mimeType];
});
await check('blob resource', async () => {
    const r = await client.readResource({ uri: 'docs://logo' });
    return [Buffer.from(r.contents[0].blob, 'base64').subarray(1, 4).toString() === 'PNG', r.contents[0].mimeType];
});
await check('directory template', async () => {
    const r = await client.readResource({ uri: 'docs://getting-started.md' });
    return [/^# Getting started/.test(r.contents[0].text), r.contents[0].uri];
});
await check('module template', async () => {
    const r = await client.readResource({ uri: 'example://rot13/abc' });
    return [r.contents[0].text === 'nop', r.contents[0]];
});
await check('missing resource is an error', async () => {
    try {
        await client.readResource({ uri: 'docs://nope.md' });
        return [false, 'no error'];
    } catch (e) {
        return [true, e.message];
    }
});
await client.close();
done();
