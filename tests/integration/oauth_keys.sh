#!/bin/bash
# auth.mode oauth and the authorization server's keys (oidc-provider, tokens
# from its client_credentials grant), Phantom with a master and 3 workers:
# after a rotation, a token of the new key waits for the master to refresh
# the keys (auth.oauth.refresh_wait_ms), then gets 503 with Retry-After: 1
# (no worker fetches them itself: with the master stopped nothing is
# fetched), then is accepted on every worker after one fetch; with the
# master running the first request is served after its fetch; tokens of the old key still
# are; a flood of 1,000 tokens naming unknown kids fetches at most once per
# auth.oauth.min_refresh_s for the whole host and ends in 401; with the
# authorization server stopped, tokens (even ones never seen before) keep
# working on the cached keys and an unknown kid is 401; with
# refresh_wait_ms 0 a token of a new key gets 503 at once, then is served.
# Each refusal is followed by a request that is served.
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/oauth-lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
node_setup || skip_all "npm packages not installed (run scripts/test.sh)"
why=$(oauth_supported) || skip_all "no auth.mode oauth in this build: $why"
MIN_REFRESH=2

oauth_front || { echo "not ok 1 - nginx starts"; exit 1; }
as_start RS256 "$OAUTH_RESOURCE" || { echo "not ok 1 - the authorization server starts"; exit 1; }
OAUTH_WORKERS=3 oauth_yaml "$T_DIR/phantom.yaml" "refresh_s: 3600" "min_refresh_s: $MIN_REFRESH" "refresh_wait_ms: 3000"
oauth_phantom "$T_DIR/phantom.yaml" || { echo "not ok 1 - phantom starts"; exit 1; }
U=$OAUTH_RESOURCE
fetches() { grep -c 'GET /jwks ' "$AS_LOG"; }
# call TOKEN: tools/call echo with TOKEN; sets STATUS, BODY, HEADERS
call() { mpost "$U" 7 tools/call '{"name":"echo","arguments":{"text":"k"}}' -H "Authorization: Bearer $1"; }
# calls TOKEN N: N calls (they reach the several workers); prints the statuses, counted
calls() { local i; for i in $(seq 1 "$2"); do call "$1"; echo "$STATUS"; done | sort | uniq -c | tr -s ' '; }
served() { call "$T1"; is "$STATUS/$(jqr '.result.content[0].text')" 200/k "next request after $1 still served"; }

T1=$(as_token mcp:read)
[ -n "$T1" ]; ok "the authorization server issues a token"
is "$(calls "$T1" 6)" " 6 200" "a token of the first key is accepted on every worker"
sleep "$MIN_REFRESH"

# settled TOKEN: calls with TOKEN until the answer is not the 503 of a key
# refresh under way (a client honouring Retry-After), for up to 5 s
not_waiting() { call "$1"; [ "$STATUS" != 503 ]; }
settled() { wait_for 5 not_waiting "$1"; }

# ---- rotation: a new signing key; the workers ask the master
N0=$(fetches)
KID=$(as_rotate)
T2=$(as_token mcp:read)
is "$(jwt_field "$T2" 0 .kid)" "$KID" "after the rotation the AS signs with the new key"
kill -STOP "$PH_PID" # the master: only it may fetch
call "$T2"
is "$STATUS/$(header Retry-After)" 503/1 "a token of the new key: 503 with Retry-After: 1 while the keys are refreshed"
is "$(jqr .error.message)" "Service Unavailable: the authorization server's keys are being refreshed" "... saying so"
compgen -G "$T_DIR/oauth-cache/jwks-*.json.want" >/dev/null
ok "... and the worker left its request for the master"
is "$(calls "$T2" 2)" " 2 503" "the master stopped: the workers keep answering 503 (after refresh_wait_ms)"
is "$(( $(fetches) - N0 ))" 0 "... and none fetched the key set itself"
served "a 503 of a refresh"
kill -CONT "$PH_PID"
settled "$T2"
is "$STATUS" 200 "once the master refreshed the keys, the token is accepted"
is "$(calls "$T2" 6)" " 6 200" "... on every worker"
is "$(( $(fetches) - N0 ))" 1 "... after one fetch of the key set"
is "$(calls "$T1" 3)" " 3 200" "the old key's tokens still are (it is still published)"
sleep "$MIN_REFRESH"
N0=$(fetches)
KID=$(as_rotate)
call "$(as_token mcp:read)"
is "$STATUS/$(( $(fetches) - N0 ))" 200/1 \
	"another rotation, the master running: the first request waits for the master's fetch and is served"

# ---- a flood of unknown kids: at most one fetch per min_refresh_s
# forge PREFIX: a token naming an unknown kid, issued an hour ago
forge() { jwts_with_kids "$T2" "$1" 1 3600; }
jwts_with_kids "$T2" flood 1000 | while read -r t; do
	printf '%s\n' "url = \"$U\"" 'header = "Content-Type: application/json"' \
		'header = "Accept: application/json, text/event-stream"' "header = \"MCP-Protocol-Version: $MODERN\"" \
		'header = "Mcp-Method: server/discover"' "header = \"Authorization: Bearer $t\"" \
		"data = \"@$T_DIR/flood.body\"" 'output = "/dev/null"' 'write-out = "%{http_code}\n"' next
done | sed '$d' >"$T_DIR/flood.cfg"
req 8 server/discover >"$T_DIR/flood.body"
N0=$(fetches)
T0=$(date +%s%N)
curl -s --no-progress-meter --parallel --parallel-max 8 -K "$T_DIR/flood.cfg" >"$T_DIR/flood.out" 2>"$T_DIR/flood.err"
SECS=$(( ($(date +%s%N) - T0) / 1000000000 + 1 ))
N=$(( $(fetches) - N0 ))
is "$(grep -cvxE '401|503' "$T_DIR/flood.out")/$(wc -l <"$T_DIR/flood.out")" 0/1000 \
	"1,000 tokens naming unknown kids: each 401 (or 503 while a refresh ran: $(grep -cx 503 "$T_DIR/flood.out"))"
[ "$N" -le $(( SECS / MIN_REFRESH + 1 )) ]
ok "... with $N key-set fetches in ${SECS} s (at most one per ${MIN_REFRESH} s)"
settled "$(forge one-more)"
is "$STATUS" 401 "an unknown kid, once the refresh it asked for ended: 401"
like "$(header WWW-Authenticate)" 'error="invalid_token"' "... invalid_token"
served "the flood"

# ---- refresh_wait_ms 0: a worker never waits; 503 at once, then served
# once the master's fetch ended
kill "$PH_PID"
wait "$PH_PID" 2>/dev/null
OAUTH_WORKERS=3 oauth_yaml "$T_DIR/nowait.yaml" "refresh_s: 3600" "min_refresh_s: $MIN_REFRESH" "refresh_wait_ms: 0"
oauth_phantom "$T_DIR/nowait.yaml" || { echo "not ok - phantom restarts with refresh_wait_ms 0"; exit 1; }
sleep "$MIN_REFRESH"
N0=$(fetches)
KID=$(as_rotate)
T4=$(as_token mcp:read)
call "$T4"
is "$STATUS/$(header Retry-After)" 503/1 "refresh_wait_ms 0: a token of a new key gets 503 at once"
settled "$T4"
is "$STATUS/$(( $(fetches) - N0 ))" 200/1 "... and is served once the master's one fetch ended"
served "a 503 without a wait"
# a second rotation within min_refresh_s of that fetch: the new token was
# issued after it, so it is not refused (before: 401 at once) but told when
# the next fetch may come
KID=$(as_rotate)
T5=$(as_token mcp:read)
call "$T5"
like "$STATUS/$(header Retry-After)" "^503/[12]$" \
	"a second rotation within min_refresh_s: 503 with Retry-After the seconds left ($(header Retry-After))"
grep -q "a token issued after the last fetch of the key set names a kid it lacks: the next fetch is allowed in [12] s (auth.oauth.min_refresh_s is $MIN_REFRESH)" "$PH_LOG"
ok "... and the log names the interval"
settled "$T5"
is "$STATUS" 200 "... then it is served"

# ---- the authorization server stopped
T3=$(as_token mcp:read)
as_stop
is "$(calls "$T3" 6)" " 6 200" "AS stopped: a token never seen before is verified with the cached keys"
is "$(calls "$T2" 3)" " 3 200" "AS stopped: known tokens keep working"
sleep "$MIN_REFRESH"
settled "$(forge while-down)"
is "$STATUS" 401 "AS stopped: a token naming an unknown kid is 401 once the refresh failed"
wait_for 5 grep -q "fetching the keys failed: .*; the last keys keep serving" "$PH_LOG"
ok "the failed fetch is logged, saying the last keys keep serving"
served "a refresh that found no authorization server"
grep -qF -- "$(cut -d. -f3 <<<"$T3")" "$PH_LOG"
[ $? -ne 0 ]; ok "no token in Phantom's log"
done_testing
