#!/bin/bash
# auth.mode oauth fetching the keys from a real (tiny) authorization server
# on loopback (oauth_as.py: RFC 8414 metadata, a JWK set, introspection):
# a cold start with nothing reachable answers 503 and logs why; the master
# fetches the keys on its own once the server is up; a rotated-in key is
# accepted after one refresh; with the server stopped the cached keys keep
# serving; 1,000 tokens with random kids cause at most one fetch per
# min_refresh_s; without a master (CGI) a worker fetches itself; opaque
# tokens go through RFC 7662 introspection (active false is 401).
. "${top_srcdir:-.}/tests/lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
command -v jq >/dev/null || skip_all "jq not installed"
. "$top_srcdir/tests/oauth-lib.sh"
why=$(oauth_supported) || skip_all "$why"
JT="python3 $top_srcdir/tests/jwt_tool.py"
K=$T_DIR/keys
AS=$T_DIR/as
mkdir -p "$K" "$AS"
for k in k1 k2; do openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$K/$k.pem" 2>/dev/null; done
printf '{"keys":[%s]}' "$($JT jwk "$K/k1.pem" k1)" >"$AS/jwks.json"
echo s3cret >"$AS/secret"
echo s3cret >"$T_DIR/intro.secret"
ASPORT=$(free_port)
ISS=http://127.0.0.1:$ASPORT/
RES=https://mcp.example.com/mcp
as_start() {
	python3 "$top_srcdir/tests/integration/oauth_as.py" "$ASPORT" "$AS" &
	AS_PID=$!
	T_PIDS+=("$AS_PID")
	wait_port "$ASPORT"
}
as_stop() { kill "$AS_PID"; wait "$AS_PID" 2>/dev/null; }
hits() { grep -c "GET /jwks" "$AS/hits" 2>/dev/null || echo 0; }
conf() { # conf FILE WORKERS MIN_REFRESH_S CACHE
	cat >"$1" <<YAML
server: { name: oauth-keys, version: "1.0" }
workers: $2
auth:
  mode: oauth
  metadata:
    document: { resource: "$RES" }
  oauth:
    issuer: "$ISS"
    min_refresh_s: $3
    refresh_s: 10
    fetch_timeout_ms: 1000
    cache_dir: $4
    introspection: { endpoint: "${ISS}introspect", client_id: phantom, secret_file: intro.secret, cache_s: 5 }
YAML
}
NOW=$(date +%s)
claims() { printf '{"iss":"%s","aud":"%s","sub":"alice","exp":%d%s}' "$ISS" "$RES" $((NOW + 900)) "${1:+,$1}"; }
T1=$($JT sign "$K/k1.pem" ES256 '{"kid":"k1"}' "$(claims)")
T2=$($JT sign "$K/k2.pem" ES256 '{"kid":"k2"}' "$(claims)")
call() { mpost "$U" 1 server/discover '{}' -H "Authorization: Bearer $1"; }

# ---- cold start: no key, the authorization server not reachable: 503
conf "$T_DIR/master.yaml" 2 1 cache
"$PHANTOM" -c "$T_DIR/master.yaml" -t >/dev/null 2>&1
ok "-t accepts issuer discovery with introspection"
phantom_listen "$T_DIR/master.yaml" || { echo "not ok - phantom starts"; exit 1; }
nginx_start "$PH_ADDR" || { echo "not ok - nginx starts"; exit 1; }
U=$NGINX_URL
call "$T1"
is "$STATUS" 503 "cold start with the issuer unreachable: 503"
is "$(jqr .error.message)" "Service Unavailable: the authorization server's keys are not available" "503: message"
grep -q "auth: cannot check OAuth tokens: " "$PH_LOG"
ok "the 503 is logged"
wait_for 5 grep -q "auth.oauth: fetching the keys failed: http://127.0.0.1:$ASPORT/.well-known/oauth-authorization-server: Couldn't connect.*no key yet: requests get 503" "$PH_LOG"
ok "the log says why: the issuer's metadata could not be fetched"
mpost "$U" 2 server/discover '{}'
is "$STATUS" 401 "no token is still 401"

# ---- the authorization server comes up: the master fetches on its own
as_start || { echo "not ok - the authorization server starts"; exit 1; }
wait_for 8 test -s "$AS/hits"
ok "the master fetched the metadata without any request asking"
published() { compgen -G "$T_DIR/$1/jwks-*.json" >/dev/null; }
wait_for 5 published cache
ok "the keys are published in cache_dir"
stat -c %a "$T_DIR/cache" | grep -qx 700
ok "cache_dir was created mode 0700"
call "$T1"
is "$STATUS" 200 "a token of the fetched key: 200"
call "$T1"
is "$STATUS" 200 "and again (from the token cache)"

# ---- rotation: a token of a key the server just published
printf '{"keys":[%s,%s]}' "$($JT jwk "$K/k1.pem" k1)" "$($JT jwk "$K/k2.pem" k2)" >"$AS/jwks.json"
before=$(hits)
sleep 1.1 # past min_refresh_s since the last fetch
call "$T2"
is "$STATUS" 200 "a token of a rotated-in key: accepted after one refresh"
is "$(( $(hits) - before ))" 1 "that took exactly one fetch of the key set"
call "$T1"
is "$STATUS" 200 "the old key still works"

# ---- the authorization server stops: the cached keys keep serving
as_stop
sleep 1.2
for t in "$T1" "$T2"; do
	call "$t"
	is "$STATUS" 200 "authorization server down: a token of a cached key still works"
done
T3=$($JT sign "$K/k1.pem" ES256 '{"kid":"k1"}' "$(claims '"jti":"fresh"')")
call "$T3"
is "$STATUS" 200 "... also one never seen before (verified with the cached keys)"
call "$($JT sign "$K/k2.pem" ES256 '{"kid":"k9"}' "$(claims)")"
is "$STATUS" 401 "an unknown kid with the server down: 401, not 503 (keys are there)"
wait_for 5 grep -q "the last keys keep serving" "$PH_LOG"
ok "the failed fetch is logged, saying the last keys keep serving"

# ---- 1,000 random kids: at most one fetch per min_refresh_s
as_start
conf "$T_DIR/flood.yaml" 2 30 flood
phantom_listen "$T_DIR/flood.yaml" || { echo "not ok - phantom starts"; exit 1; }
nginx_start "$PH_ADDR" || { echo "not ok - nginx starts"; exit 1; }
U=$NGINX_URL
call "$T1"
is "$STATUS" 200 "a second server, min_refresh_s 30: its first token verified"
before=$(hits)
python3 - "$U" "$T1" >"$T_DIR/flood.out" <<'PY'
import http.client, json, random, sys, urllib.parse
url = urllib.parse.urlsplit(sys.argv[1])
head, payload, sig = sys.argv[2].split(".")
import base64
def b64(d): return base64.urlsafe_b64encode(d).rstrip(b"=").decode()
body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {}}}})
codes = {}
for i in range(1000):
    kid = "%032x" % random.getrandbits(128)
    h = b64(json.dumps({"alg": "ES256", "typ": "at+jwt", "kid": kid}).encode())
    c = http.client.HTTPConnection(url.hostname, url.port)
    c.request("POST", url.path, body, {"Content-Type": "application/json",
              "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28",
              "Mcp-Method": "server/discover", "Authorization": "Bearer %s.%s.%s" % (h, payload, sig)})
    r = c.getresponse()
    r.read()
    codes[r.status] = codes.get(r.status, 0) + 1
    c.close()
print(json.dumps(codes))
PY
is "$(cat "$T_DIR/flood.out")" '{"401": 1000}' "1,000 tokens with random kids: each 401"
fetched=$(( $(hits) - before ))
[ "$fetched" -le 1 ]
ok "... and at most one fetch of the key set for all of them ($fetched)"
call "$T1"
is "$STATUS" 200 "a good token right after the flood: 200"

# ---- opaque tokens: RFC 7662 introspection
printf '{"active":true,"sub":"bob","scope":"mcp:read","iss":"%s","exp":%d}' "$ISS" $((NOW + 600)) >"$AS/introspect.json"
call "opaque-token-1"
is "$STATUS" 200 "an opaque token the introspection endpoint says is active: 200"
grep -q "^token=opaque-token-1&token_type_hint=access_token$" "$AS/introspect.body"
ok "the endpoint got the token as a form, with the client's Basic credentials"
n=$(grep -c "POST /introspect" "$AS/hits")
call "opaque-token-1"
is "$STATUS:$(grep -c "POST /introspect" "$AS/hits")" "200:$n" "the answer is cached (no second introspection)"
printf '{"active":false}' >"$AS/introspect.json"
call "opaque-token-2"
is "$STATUS" 401 "active false: 401"
is "$(header WWW-Authenticate | grep -o 'error="[a-z_]*"')" 'error="invalid_token"' "active false: invalid_token"
printf '{"active":true,"sub":"bob","iss":"https://evil.example.com/"}' >"$AS/introspect.json"
call "opaque-token-3"
is "$STATUS" 401 "an introspected token of another issuer: 401"

# ---- without a master (CGI): the worker fetches under the lock itself
conf "$T_DIR/cgi.yaml" 0 1 cgicache
BODY1=$(req 1 server/discover)
CGI_ARGS="-c $T_DIR/cgi.yaml" cgi_post "$BODY1" "HTTP_AUTHORIZATION=Bearer $T1" "$(mhdr server/discover | cut -d' ' -f1)" \
	"$(mhdr server/discover | cut -d' ' -f2)"
is "$STATUS" 200 "CGI, cold cache: the request's process fetched the keys itself"
published cgicache
ok "... and published them for the next processes"
before=$(hits)
CGI_ARGS="-c $T_DIR/cgi.yaml" cgi_post "$BODY1" "HTTP_AUTHORIZATION=Bearer $T2" "$(mhdr server/discover | cut -d' ' -f1)" \
	"$(mhdr server/discover | cut -d' ' -f2)"
is "$STATUS:$(( $(hits) - before ))" "200:0" "the next CGI process uses the published keys without a fetch"
done_testing
