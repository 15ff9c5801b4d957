#!/bin/bash
# The OAuth code that calls into libcrypto and libcurl, under valgrind: ASan
# cannot see reads inside those libraries (an ES256 signature of 1 byte made libcrypto read 63 bytes past it, and only valgrind said so).
# First the unit tests that reach libcrypto (test_jwt: every algorithm,
# signatures of 1 to 600 bytes, hostile tokens and JWK sets); then
# Phantom itself, its master, hub and workers under valgrind behind nginx,
# against oauth_as.py on loopback: the master discovers the issuer and
# fetches the key set (libcurl), the workers verify tokens of each
# algorithm, refuses short signatures and claims cut by a NUL, and asks
# the introspection endpoint about opaque tokens (libcurl again). Every
# process must end with no memory error.
. "${top_srcdir:-.}/tests/lib.sh"
vg_supported
command -v nginx >/dev/null || skip_all "nginx not installed"
command -v jq >/dev/null || skip_all "jq not installed"
. "$top_srcdir/tests/oauth-lib.sh"
why=$(oauth_supported) || skip_all "$why"

# ---- the unit tests that reach libcrypto
vg_unit test_jwt

# ---- Phantom under valgrind: discovery, key fetch, verification, introspection
JT="python3 $top_srcdir/tests/jwt_tool.py"
K=$T_DIR/keys
AS=$T_DIR/as
mkdir -p "$AS"
oauth_keygen "$K" rsa:rsa ec:ec ed:ed25519
oauth_jwks "$K" rsa:r1 ec:e1 ed:d1 >"$AS/jwks.json"
echo s3cret >"$AS/secret"
echo s3cret >"$T_DIR/intro.secret"
RES=https://mcp.example.com/mcp
tiny_as "$AS" || { echo "not ok - the authorization server starts"; exit 1; }
cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: oauth-valgrind, version: "1.0" }
workers: 2
auth:
  mode: oauth
  metadata:
    document: { resource: "$RES" }
  oauth:
    issuer: "$ISS"
    algorithms: [RS256, PS256, ES256, EdDSA]
    cache_dir: cache
    fetch_timeout_ms: 5000
    introspection: { endpoint: "${ISS}introspect", client_id: phantom, secret_file: intro.secret, cache_s: 5 }
YAML
VGW=$(vg_wrapper phantom)
# valgrind starts slowly: up to 60 s for the port
PHANTOM=$VGW T_START_S=60 phantom_listen "$T_DIR/phantom.yaml" || { echo "not ok - phantom starts under valgrind"; exit 1; }
nginx_start "$PH_ADDR" || { echo "not ok - nginx starts"; exit 1; }
U=$NGINX_URL
NOW=$(date +%s)
claims() { printf '{"iss":"%s","aud":"%s","sub":"alice","exp":%d%s}' "$ISS" "$RES" $((NOW + 900)) "${1:+,$1}"; }
call() { mpost "$U" 1 server/discover '{}' -H "Authorization: Bearer $1"; }
served() { call "$1"; [ "$STATUS" = 200 ]; }
GOOD=$($JT sign "$K/ec.pem" ES256 '{"kid":"e1"}' "$(claims)")
# the master fetches the keys; a worker under valgrind answers slowly
wait_for 60 served "$GOOD"
ok "a token of the discovered key set is served (status $STATUS)"
for a in rsa:RS256:r1 rsa:PS256:r1 ed:EdDSA:d1; do
	IFS=: read -r key alg kid <<<"$a"
	call "$($JT sign "$K/$key.pem" "$alg" "{\"kid\":\"$kid\"}" "$(claims)")"
	is "$STATUS" 200 "$alg: 200"
done
for n in 1 3 62 63 65; do
	sig=$(head -c "$n" /dev/zero | tr '\0' 'Z' | base64 -w0 | tr '+/' '-_' | tr -d '=')
	call "${GOOD%.*}.$sig"
	is "$STATUS" 401 "ES256 with a $n-byte signature: 401"
done
call "$($JT sign "$K/ec.pem" ES256 '{"kid":"e1"}' "$(claims '"sub":"alice\u0000-attacker"')")"
is "$STATUS" 401 "a sub cut by a NUL: 401"
call "$($JT sign "$K/ec.pem" ES256 '{"kid":"e1\u0000x"}' "$(claims)")"
is "$STATUS" 401 "a kid cut by a NUL: 401"
printf '{"active":true,"sub":"bob","iss":"%s","exp":%d}' "$ISS" $((NOW + 600)) >"$AS/introspect.json"
call "opaque-token-1"
is "$STATUS" 200 "an opaque token through introspection: 200"
printf '{"active":true,"sub":"bob\\u0000x","iss":"%s","exp":%d}' "$ISS" $((NOW + 600)) >"$AS/introspect.json"
call "opaque-token-2"
is "$STATUS" 401 "an introspected sub cut by a NUL: 401"
printf '{"active":true,"sub\\u0000":"x","sub":"bob","exp":%d}' $((NOW + 600)) >"$AS/introspect.json"
call "opaque-token-3"
is "$STATUS" 503 "an introspection answer with a member name cut by a NUL is the endpoint's fault: 503"
call "$GOOD"
is "$STATUS" 200 "a good token is still served"

kill -TERM "$PH_PID"
wait_gone "$PH_PID" 60
ok "phantom stops on SIGTERM"
vg_clean "$VGW" 4 "the master, the hub and the workers"
done_testing
