// common.mjs: what the SDK clients under tests/clients share: their command
// line, the transport to the server (HTTP or a server they start over stdio,
// with the v2 client @modelcontextprotocol/client or the v1 one
// @modelcontextprotocol/sdk) and their report. A client prints one line per
// check, "ok - what" or "not ok - what: why", and ends with done(); the shell
// test runs it with node_client (tests/lib.sh), which numbers the lines for
// TAP. node_setup copies this file next to the clients: import it as
// './common.mjs'.
//
// The command line every client takes, besides its own options:
//   --url URL [--token BEARER]           the server over HTTP
//   --stdio COMMAND [--arg A]...         the server started over stdio

const argv = process.argv.slice(2);
// get(NAME, DEFAULT): the value after --NAME
export const get = (n, d) => { const i = argv.indexOf(`--${n}`); return i >= 0 ? argv[i + 1] : d; };
// all(NAME): every value given after --NAME, in order
export const all = n => argv.flatMap((a, i) => (a === `--${n}` ? [argv[i + 1]] : []));
// via: how the client reaches the server, for the descriptions
export const via = get('stdio') ? 'stdio' : 'http';

let bad = 0;
export const check = (cond, what, why = '') => {
    if (cond) console.log(`ok - ${what}`);
    else { bad++; console.log(`not ok - ${what}${why ? ': ' + why : ''}`); }
};
// done(): ends the client, with status 1 when a check failed
export const done = () => process.exit(bad ? 1 : 0);

export const sleep = ms => new Promise(r => setTimeout(r, ms));
// text(RESULT): the text parts of a tool result, joined
export const text = r => (r?.content ?? []).filter(c => c.type === 'text').map(c => c.text).join('');

// transport({ v1 }): the transport the command line asks for. Over stdio the
// server gets the whole environment (PHANTOM_MODULE_PATH finds the test
// modules, a request_state secret may come from it); over HTTP --token is
// sent as a bearer token.
export async function transport({ v1 = false } = {}) {
    if (get('stdio')) {
        const { StdioClientTransport } = await import(v1 ? '@modelcontextprotocol/sdk/client/stdio.js'
            : '@modelcontextprotocol/client/stdio');
        return new StdioClientTransport({ command: get('stdio'), args: all('arg'), stderr: 'ignore',
            env: { ...process.env } });
    }
    const { StreamableHTTPClientTransport } = await import(v1 ? '@modelcontextprotocol/sdk/client/streamableHttp.js'
        : '@modelcontextprotocol/client');
    const headers = get('token') ? { Authorization: `Bearer ${get('token')}` } : {};
    return new StreamableHTTPClientTransport(new URL(get('url')), { requestInit: { headers } });
}

// connect(CLIENT, TRANSPORT, WHAT, { report }): connects; a failure is the
// check WHAT failed and ends the client, a success is reported as WHAT
// unless report is false (the client then checks more about it itself)
export async function connect(client, t, what, { report = true } = {}) {
    try {
        await client.connect(t);
    } catch (e) {
        check(false, what, `${e?.name}: ${e?.message}`);
        process.exit(1);
    }
    if (report) check(true, what);
    return client;
}

// answerPushes(CLIENT, ASKED, MEANWHILE): the v1 client's elicitation and
// sampling handlers of the push tests. The user confirms a deletion when the
// file's name has v1-yes, the model answers "Paris"; ASKED.elicit and
// ASKED.sampling record what they were asked. MEANWHILE (optional) runs while
// an elicitation waits, before it is answered.
export async function answerPushes(client, asked, meanwhile = async () => {}) {
    const { ElicitRequestSchema, CreateMessageRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
    client.setRequestHandler(ElicitRequestSchema, async req => {
        asked.elicit.push(req.params.message);
        await meanwhile();
        const m = req.params.message;
        return { action: 'accept', content: { confirm: m.includes('v1-yes') ? 'yes' : 'no' } };
    });
    client.setRequestHandler(CreateMessageRequestSchema, async req => {
        asked.sampling.push(req.params.messages?.[0]?.content?.text);
        return { role: 'assistant', model: 'test-model', stopReason: 'endTurn',
            content: { type: 'text', text: 'Paris' } };
    });
}
