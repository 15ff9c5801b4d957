// as.mjs: a real OAuth 2.1 authorization server for the tests, the npm
// package oidc-provider (pinned in tests/node/package.json) on 127.0.0.1:
// dynamic client registration, PKCE required, resource indicators, JWT access
// tokens whose aud is the resource (Phantom's URL), signed with the --alg key.
// Its login and consent are the package's development forms, which the
// clients' headless driver (tests/clients/oauth-flow.mjs) fills in.
//
//   node as.mjs --port-file FILE --keys FILE --resource URL [--resource URL...]
//        [--alg RS256|ES256|EdDSA] [--port N] [--ttl SECONDS] [--scopes "a b c"]
//        [--tls-cert FILE --tls-key FILE --host NAME]
//
// With --tls-cert and --tls-key it serves https, its issuer then
// https://NAME:PORT (NAME default localhost; the certificate must name it).
//
// --keys holds the private JWK set; missing keys for --alg are made and
// written there, so a restart (another --alg, the same --port) keeps every
// key published. A client "phantom-tests" (secret in FILE.secret next to
// --keys) may use client_credentials, so a test can get a token with curl.
// Signals: SIGHUP rotates (a new key for --alg, published first and signing
// from then on; the older keys stay published); SIGTERM stops.
// Writes the port to --port-file once it serves; logs one line per request
// to stderr (method, path, status; never a token).
import http from 'node:http';
import https from 'node:https';
import crypto from 'node:crypto';
import fs from 'node:fs';
import Provider, { errors } from 'oidc-provider';

const argv = process.argv.slice(2);
const opt = (n, d) => { const i = argv.indexOf(`--${n}`); return i >= 0 ? argv[i + 1] : d; };
const opts = n => argv.flatMap((a, i) => (a === `--${n}` ? [argv[i + 1]] : []));
const alg = opt('alg', 'RS256');
const keysFile = opt('keys');
const resources = new Set(opts('resource'));
const ttl = Number(opt('ttl', '300'));
const scopes = opt('scopes', 'mcp:read mcp:write mcp:admin');
if (!keysFile || !opt('port-file') || resources.size === 0) {
    console.error('usage: as.mjs --port-file FILE --keys FILE --resource URL [--alg ALG]');
    process.exit(2);
}

// newKey(alg): a private JWK for alg with a fresh kid
function newKey(a) {
    const kind = { RS256: ['rsa', { modulusLength: 2048 }], ES256: ['ec', { namedCurve: 'P-256' }],
        EdDSA: ['ed25519', {}] }[a];
    if (!kind) throw new Error(`unknown --alg ${a}`);
    const { privateKey } = crypto.generateKeyPairSync(kind[0], kind[1]);
    return { ...privateKey.export({ format: 'jwk' }), kid: `${a.toLowerCase()}-${crypto.randomBytes(6).toString('hex')}`,
        alg: a, use: 'sig' };
}
function loadKeys() {
    try { return JSON.parse(fs.readFileSync(keysFile, 'utf8')).keys; } catch { return []; }
}
function saveKeys(keys) {
    fs.writeFileSync(`${keysFile}.tmp`, JSON.stringify({ keys }), { mode: 0o600 });
    fs.renameSync(`${keysFile}.tmp`, keysFile);
}
let keys = loadKeys();
if (!keys.some(k => k.alg === alg)) { keys.unshift(newKey(alg)); saveKeys(keys); }
let secret;
try { secret = fs.readFileSync(`${keysFile}.secret`, 'utf8').trim(); } catch {
    secret = crypto.randomBytes(24).toString('base64url');
    fs.writeFileSync(`${keysFile}.secret`, secret, { mode: 0o600 });
}
const cookieKeys = [crypto.randomBytes(24).toString('hex')];

// the first key of alg in the set signs
const signingKid = () => keys.find(k => k.alg === alg).kid;

function makeProvider(issuer) {
    return new Provider(issuer, {
        jwks: { keys },
        cookies: { keys: cookieKeys },
        // registration checks a client's scope against these
        scopes: ['openid', 'offline_access', ...scopes.split(' ')],
        clients: [{ client_id: 'phantom-tests', client_secret: secret, grant_types: ['client_credentials'],
            response_types: [], redirect_uris: [] }],
        // a client may ask for every scope later (step-up), whatever it
        // registered with: the package would hold it to those otherwise
        extraClientMetadata: { properties: ['scope'], validator: (ctx, key, value, metadata) => {
            if (key === 'scope') metadata.scope = scopes;
        } },
        pkce: { required: () => true },
        // the default ID token alg is RS256, which a set without RSA keys cannot sign
        clientDefaults: { id_token_signed_response_alg: alg, grant_types: ['authorization_code'],
            response_types: ['code'] },
        features: {
            devInteractions: { enabled: true },
            registration: { enabled: true },
            clientCredentials: { enabled: true },
            resourceIndicators: {
                enabled: true,
                useGrantedResource: () => true,
                getResourceServerInfo: (ctx, indicator) => {
                    if (!resources.has(indicator)) throw new errors.InvalidTarget();
                    return { scope: scopes, audience: indicator, accessTokenTTL: ttl,
                        accessTokenFormat: 'jwt', jwt: { sign: { alg, kid: signingKid() } } };
                },
            },
        },
        ttl: { AccessToken: ttl, ClientCredentials: ttl },
    });
}

let provider;
let handler;
const tls = opt('tls-cert') ? { cert: fs.readFileSync(opt('tls-cert')), key: fs.readFileSync(opt('tls-key')) } : null;
const onRequest = (req, res) => {
    res.on('finish', () => console.error(`as: ${req.method} ${req.url.split('?')[0]} ${res.statusCode}`));
    handler(req, res);
};
const server = tls ? https.createServer(tls, onRequest) : http.createServer(onRequest);
server.listen(Number(opt('port', '0')), '127.0.0.1', () => {
    const issuer = tls ? `https://${opt('host', 'localhost')}:${server.address().port}`
        : `http://127.0.0.1:${server.address().port}`;
    provider = makeProvider(issuer);
    handler = provider.callback();
    // a rotation rebuilds the provider with the new key set; clients and
    // grants live in the package's process-wide memory store and stay
    process.on('SIGHUP', () => {
        keys.unshift(newKey(alg));
        saveKeys(keys);
        provider = makeProvider(issuer);
        handler = provider.callback();
        console.error(`as: rotated, ${alg} tokens signed by ${signingKid()}`);
    });
    fs.writeFileSync(`${opt('port-file')}.tmp`, `${server.address().port}\n`);
    fs.renameSync(`${opt('port-file')}.tmp`, opt('port-file'));
    console.error(`as: ${issuer} serving, ${alg} tokens signed by ${signingKid()}, resources ${[...resources].join(' ')}`);
});
process.on('SIGTERM', () => { server.close(); server.closeAllConnections(); process.exit(0); });
