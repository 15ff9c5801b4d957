#!/bin/bash
# auth.mode oauth fetching the keys from a real (tiny) authorization server
# on loopback (oauth_as.py: RFC 8414 metadata, a JWK set, introspection):
# a cold start with nothing reachable answers 503 and logs why; the master
# fetches the keys on its own once the server is up; opaque tokens go
# through RFC 7662 introspection (active false is 401); without a master
# (CGI) the request's process fetches the keys itself, also for a
# rotated-in kid, and the next process uses what it published. Rotation,
# the random-kid flood and a stopped server with a master:
# oauth_keys.sh.
. "${top_srcdir:-.}/tests/lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
command -v jq >/dev/null || skip_all "jq not installed"
. "$top_srcdir/tests/oauth-lib.sh"
why=$(oauth_supported) || skip_all "$why"
JT="python3 $top_srcdir/tests/jwt_tool.py"
K=$T_DIR/keys
AS=$T_DIR/as
mkdir -p "$AS"
oauth_keygen "$K" k1:ec k2:ec
oauth_jwks "$K" k1:k1 >"$AS/jwks.json"
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
    introspection: { endpoint: "${ISS}introspect", client_id: phantom, secret_file: intro.secret, cache_s: 5, negative_cache_s: 6 }
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
wait_for 5 grep -Eq "auth.oauth: fetching the keys failed: http://127.0.0.1:$ASPORT/.well-known/oauth-authorization-server: (Couldn't connect|cannot connect: Connection refused).*no key yet: requests get 503" "$PH_LOG"
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
NEG_AT=$(date +%s%N)
call "opaque-token-2"
is "$STATUS" 401 "active false: 401"
is "$(header WWW-Authenticate | grep -o 'error="[a-z_]*"')" 'error="invalid_token"' "active false: invalid_token"
introspections() { grep -c "POST /introspect" "$AS/hits"; }
n=$(introspections)
for i in 1 2 3 4 5 6 7 8; do call "opaque-token-2"; echo "$STATUS"; done >"$T_DIR/neg.out"
is "$(sort -u "$T_DIR/neg.out")" 401 "8 more requests with it: 401"
asked=$(( $(introspections) - n ))
[ "$asked" -le 1 ]
ok "... from the remembered answer: $asked introspections (at most one: the other worker's first)"
n=$(introspections)
for i in 1 2 3 4 5 6; do call "opaque-bad-$i"; done
is "$(( $(introspections) - n ))" 6 "6 other bad tokens: one introspection each"
# past introspection.negative_cache_s (6 s) since the first answer
sleep "$(awk -v t="$(( NEG_AT / 1000000 + 6200 - $(date +%s%N) / 1000000 ))" 'BEGIN { print (t > 0 ? t / 1000 : 0) }')"
printf '{"active":true,"sub":"bob","scope":"mcp:read","iss":"%s","exp":%d}' "$ISS" $((NOW + 600)) >"$AS/introspect.json"
call "opaque-token-2"
is "$STATUS" 200 "after negative_cache_s the endpoint is asked again (now it says active)"
printf '{"active":true,"sub":"bob","iss":"https://evil.example.com/"}' >"$AS/introspect.json"
call "opaque-token-3"
is "$STATUS" 401 "an introspected token of another issuer: 401"
grep -qF "invalid OAuth token: the introspected token's iss \"https://evil.example.com/\" is not auth.oauth.issuer \"$ISS\"" "$PH_LOG"
ok "the log names the introspection's iss and the configured issuer"

# ---- a remembered token whose key left the set: refused once the keys are
# fetched again (refresh_s 10), not served until it expires
call "$T1"
is "$STATUS" 200 "a remembered token of k1"
oauth_jwks "$K" k2:k2 >"$AS/jwks.json"
refused_t1() { call "$T1"; [ "$STATUS" = 401 ]; }
wait_for 25 refused_t1
ok "k1 left the published set: its remembered token is refused after the next fetch"
call "$T2"
is "$STATUS" 200 "a token of k2 is served"
oauth_jwks "$K" k1:k1 >"$AS/jwks.json"

# ---- without a master (CGI): the worker fetches under the lock itself
conf "$T_DIR/cgi.yaml" 0 4 cgicache
BODY1=$(req 1 server/discover)
cgi() { CGI_ARGS="-c $T_DIR/cgi.yaml" cgi_post "$BODY1" "HTTP_AUTHORIZATION=Bearer $1" \
	"$(mhdr server/discover | cut -d' ' -f1)" "$(mhdr server/discover | cut -d' ' -f2)"; }
cgi "$T1"
is "$STATUS" 200 "CGI, cold cache: the request's process fetched the keys itself"
published cgicache
ok "... and published them for the next processes"
oauth_jwks "$K" k1:k1 k2:k2 >"$AS/jwks.json"
K9=$($JT sign "$K/k2.pem" ES256 '{"kid":"k9"}' "$(claims)")
sleep 4.1 # past min_refresh_s since the last fetch
before=$(hits)
cgi "$T2"
is "$STATUS:$(( $(hits) - before ))" "200:1" "CGI, a rotated-in kid: the process fetched the key set once and accepted it"
cgi "$K9"
is "$STATUS:$(( $(hits) - before ))" "401:1" "an unknown kid right after (within min_refresh_s): 401, no second fetch"
before=$(hits)
cgi "$T2"
is "$STATUS:$(( $(hits) - before ))" "200:0" "the next CGI process uses the published keys without a fetch"
done_testing
