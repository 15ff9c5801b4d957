// oauth-flow.mjs: what the OAuth client scripts (sdk-oauth-v1.mjs,
// sdk-oauth-v2.mjs) share: their options and "ok - x" checks, an
// OAuthClientProvider that keeps everything in memory and completes the
// authorization server's login and consent forms itself (the part a person
// does in a browser), a fetch that records what the SDK sends, and the
// scenario both SDKs run against Phantom:
//   401 -> Phantom's RFC 9728 metadata -> the AS metadata -> registration ->
//   authorization (PKCE, resource) -> token -> tools/list and tools/call,
//   then, with --step-up TOOL, a 403 insufficient_scope, a second
//   authorization with the wider scope, and the call again.
//
// Options: --url URL --tool TOOL --expect TEXT [--args JSON] [--alg ALG]
//          [--step-up TOOL --step-up-scope SCOPE --step-up-args JSON --step-up-expect TEXT]
//          [--token-out FILE]   (the last access token, for the shell test)
//          [--login NAME]       (the user who signs in; default alice)
//          [--era 'VERSION' | 'VERSION session'] (what must be negotiated)
import fs from 'node:fs';

const argv = process.argv.slice(2);
export const opt = (n, d) => { const i = argv.indexOf(`--${n}`); return i >= 0 ? argv[i + 1] : d; };
let bad = 0;
export const check = (cond, what, why = '') => {
    if (cond) console.log(`ok - ${what}`);
    else { bad++; console.log(`not ok - ${what}${why ? ': ' + why : ''}`); }
};
export const finish = () => process.exit(bad ? 1 : 0);

// jwtPart(token, i): the decoded header (0) or payload (1) of a JWT
export function jwtPart(token, i) {
    try { return JSON.parse(Buffer.from(String(token).split('.')[i], 'base64url').toString()); } catch { return {}; }
}

// FlowLog: a fetch for the transport that records method, URL, status and
// the form body of every request (the token request's resource and
// code_verifier are checked; the log never leaves this process)
export class FlowLog {
    constructor() {
        this.seen = [];
        this.fetch = async (url, init = {}) => {
            const res = await fetch(url, init);
            const body = typeof init.body === 'string' || init.body instanceof URLSearchParams ? String(init.body) : '';
            this.seen.push({ method: init.method ?? 'GET', url: String(url), status: res.status, body,
                challenge: res.headers.get('www-authenticate') ?? '' });
            return res;
        };
    }
    find(pred) { return this.seen.find(pred); }
    filter(pred) { return this.seen.filter(pred); }
}

// authorizeHeadless(url, redirect, login): follows the authorization
// request through the AS with a cookie jar, signs in as login and consents
// on its forms, and returns the query of the redirect back to the client
export async function authorizeHeadless(url, redirect, login) {
    const jar = new Map();
    const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    let next = { url, init: {} };
    for (let step = 0; step < 12; step++) {
        const res = await fetch(next.url, { ...next.init, redirect: 'manual', headers: { ...next.init.headers, cookie: cookie() } });
        for (const c of res.headers.getSetCookie()) {
            const [kv] = c.split(';');
            const eq = kv.indexOf('=');
            jar.set(kv.slice(0, eq), kv.slice(eq + 1));
        }
        const loc = res.headers.get('location');
        if (res.status >= 300 && res.status < 400 && loc) {
            const to = new URL(loc, next.url);
            if (to.href.startsWith(redirect)) {
                const q = to.searchParams;
                if (q.get('error')) throw new Error(`authorization refused: ${q.get('error')}: ${q.get('error_description')}`);
                return q;
            }
            next = { url: to.href, init: {} };
            continue;
        }
        const html = await res.text();
        const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1]?.replace(/&amp;/g, '&');
        const prompt = /name="prompt" value="([^"]+)"/.exec(html)?.[1];
        if (res.status !== 200 || !action || !prompt)
            throw new Error(`authorization stopped at ${next.url}: HTTP ${res.status} ${html.slice(0, 200)}`);
        const form = new URLSearchParams({ prompt });
        if (prompt === 'login') { form.set('login', login); form.set('password', 'any'); }
        next = { url: new URL(action, next.url).href,
            init: { method: 'POST', body: form.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } } };
    }
    throw new Error('authorization did not come back to the client');
}

// HeadlessProvider: the SDKs' OAuthClientProvider, in memory; its
// redirectToAuthorization completes the authorization at once and keeps
// the callback's query for finishAuth
export class HeadlessProvider {
    constructor(login) {
        this.login = login;
        this.redirectUrl = 'http://127.0.0.1:9/callback'; // never contacted: the driver stops at it
        this.clientMetadata = { client_name: 'phantom-tests', redirect_uris: [this.redirectUrl],
            grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'none' };
        this.store = {};
        this.authorizations = [];
    }
    clientInformation() { return this.store.client; }
    saveClientInformation(c) { this.store.client = c; }
    tokens() { return this.store.tokens; }
    saveTokens(t) { this.store.tokens = t; }
    saveCodeVerifier(v) { this.store.verifier = v; }
    codeVerifier() { return this.store.verifier; }
    discoveryState() { return this.store.discovery; }
    saveDiscoveryState(s) { this.store.discovery = s; }
    invalidateCredentials(what) { if (what === 'all' || what === 'tokens') delete this.store.tokens; }
    async redirectToAuthorization(url) {
        this.authorizations.push(new URL(url));
        this.callback = await authorizeHeadless(url.href ?? String(url), this.redirectUrl, this.login);
    }
}

const isUnauthorized = e => e?.name === 'UnauthorizedError' || e?.constructor?.name === 'UnauthorizedError';

// authorized(fn, transport, provider): runs fn; when the SDK stopped for an
// authorization (UnauthorizedError), hands it the code and runs fn again
async function authorized(fn, transport, provider) {
    try { return await fn(); } catch (e) {
        if (!isUnauthorized(e) || !provider.callback) throw e;
        const cb = provider.callback;
        provider.callback = undefined;
        await transport.finishAuth(cb.get('code'), cb.get('iss') ?? undefined);
        return await fn();
    }
}

const text = r => (r?.content ?? []).filter(c => c.type === 'text').map(c => c.text).join('');

// flowChecks(label, url, log, provider): the steps of the first authorization
function flowChecks(label, url, log, provider) {
    const first = log.seen[0];
    check(first?.method === 'POST' && first.url === url && first.status === 401, `${label}: first request gets 401`,
        JSON.stringify(first));
    const prm = /resource_metadata="([^"]+)"/.exec(first?.challenge ?? '')?.[1];
    check(prm && log.find(s => s.url === prm && s.status === 200), `${label}: Phantom's RFC 9728 metadata read`, prm);
    check(log.find(s => /\/\.well-known\/(oauth-authorization-server|openid-configuration)/.test(s.url) && s.status === 200),
        `${label}: the authorization server's metadata read`);
    check(log.find(s => s.method === 'POST' && s.status === 201 && /\/reg$/.test(s.url)), `${label}: dynamic client registration`);
    const az = provider.authorizations[0];
    check(az?.searchParams.get('code_challenge_method') === 'S256' && az.searchParams.get('code_challenge'),
        `${label}: authorization request with a PKCE S256 challenge`);
    check(az?.searchParams.get('resource') === url, `${label}: authorization request names the resource`,
        az?.searchParams.get('resource'));
    const tok = log.find(s => s.method === 'POST' && /\/token$/.test(s.url));
    const form = new URLSearchParams(tok?.body ?? '');
    check(tok?.status === 200 && form.get('grant_type') === 'authorization_code' && form.get('code_verifier'),
        `${label}: code exchanged with the PKCE verifier`, tok?.status);
    check(form.get('resource') === url, `${label}: token request names the resource`, form.get('resource'));
    const at = provider.tokens()?.access_token;
    check(jwtPart(at, 1).aud === url || (Array.isArray(jwtPart(at, 1).aud) && jwtPart(at, 1).aud.includes(url)),
        `${label}: access token aud is Phantom's URL`, JSON.stringify(jwtPart(at, 1).aud));
    if (opt('alg')) check(jwtPart(at, 0).alg === opt('alg'), `${label}: access token signed with ${opt('alg')}`, jwtPart(at, 0).alg);
}

// stepUp(label, client, transport, provider, log): a tool that needs a
// scope the token lacks: 403 naming it, a second authorization, success
async function stepUp(label, client, transport, provider, log) {
    const tool = opt('step-up'), scope = opt('step-up-scope');
    const before = provider.authorizations.length;
    try {
        const r = await authorized(() => client.callTool({ name: tool, arguments: JSON.parse(opt('step-up-args', '{}')) }),
            transport, provider);
        check(!r.isError && text(r).includes(opt('step-up-expect', '')), `${label}: ${tool} succeeds after step-up`, JSON.stringify(r));
    } catch (e) { check(false, `${label}: ${tool} succeeds after step-up`, `${e?.name}: ${e?.message}`); }
    const denied = log.find(s => s.status === 403);
    const named = /scope="([^"]*)"/.exec(denied?.challenge ?? '')?.[1] ?? '';
    check(/error="insufficient_scope"/.test(denied?.challenge ?? '') && named.split(' ').includes(scope),
        `${label}: 403 insufficient_scope names ${scope}`, denied?.challenge);
    check(provider.authorizations.length === before + 1 && provider.authorizations.at(-1).searchParams.get('scope')?.split(' ').includes(scope),
        `${label}: authorized again asking for ${scope}`, provider.authorizations.at(-1)?.search);
    check((jwtPart(provider.tokens()?.access_token, 1).scope ?? '').split(' ').includes(scope),
        `${label}: the new token carries ${scope}`);
}

// run({label, open, era}): the scenario; open(provider, fetch) returns a
// new {client, transport} of the SDK under test for URL; era({client,
// transport}) what was negotiated, "VERSION" or "VERSION session" when the
// exchange is a legacy session (checked against --era when given)
export async function run({ label, open, era }) {
    const url = opt('url'), tool = opt('tool');
    const provider = new HeadlessProvider(opt('login', 'alice'));
    const log = new FlowLog();
    let c = open(provider, log.fetch);
    try {
        await authorized(() => c.client.connect(c.transport), c.transport, provider);
    } catch (e) {
        // the SDKs give up on the connection that needed authorization:
        // a new one with the provider that holds the token now
        if (!provider.tokens()) { check(false, `${label}: connects`, `${e?.name}: ${e?.message}`); finish(); }
        c = open(provider, log.fetch);
        try { await c.client.connect(c.transport); } catch (e2) {
            check(false, `${label}: connects after authorization`, `${e2?.name}: ${e2?.message}`); finish();
        }
    }
    check(true, `${label}: connects`);
    if (opt('era')) check(era(c) === opt('era'), `${label}: ${opt('era')}`, era(c));
    flowChecks(label, url, log, provider);
    try {
        const names = (await c.client.listTools()).tools.map(t => t.name);
        check(names.includes(tool), `${label}: tools/list has ${tool}`, JSON.stringify(names));
        const r = await c.client.callTool({ name: tool, arguments: JSON.parse(opt('args', '{}')) });
        check(!r.isError && text(r).includes(opt('expect', '')), `${label}: tools/call ${tool}`, JSON.stringify(r));
    } catch (e) { check(false, `${label}: tools/list and tools/call`, `${e?.name}: ${e?.message}`); }
    if (opt('step-up')) await stepUp(label, c.client, c.transport, provider, log);
    if (opt('token-out')) fs.writeFileSync(opt('token-out'), provider.tokens()?.access_token ?? '', { mode: 0o600 });
    await c.client.close();
    finish();
}
