#!/bin/bash
# auth.mode oauth and the authorization server's keys (oidc-provider, tokens
# from its client_credentials grant): a token signed with a new key after a
# rotation is accepted after one key-set fetch, tokens of the old key still
# are; a flood of tokens naming unknown kids fetches at most once per
# auth.oauth.min_refresh_s for the whole host; with the authorization server
# stopped, tokens (even ones never seen before) keep working on the cached
# keys and an unknown kid is 401. Each refusal is followed by a request
# that is served.
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/oauth-lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
node_setup || skip_all "npm packages not installed (run scripts/test.sh)"
why=$(oauth_supported) || skip_all "no auth.mode oauth in this build: $why"
MIN_REFRESH=2

oauth_front || { echo "not ok 1 - nginx starts"; exit 1; }
as_start RS256 "$OAUTH_RESOURCE" || { echo "not ok 1 - the authorization server starts"; exit 1; }
OAUTH_WORKERS=3 oauth_yaml "$T_DIR/phantom.yaml" "refresh_s: 3600" "min_refresh_s: $MIN_REFRESH"
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

# ---- rotation: a new signing key
N0=$(fetches)
KID=$(as_rotate)
T2=$(as_token mcp:read)
is "$(jwt_field "$T2" 0 .kid)" "$KID" "after the rotation the AS signs with the new key"
is "$(calls "$T2" 6)" " 6 200" "a token of the new key is accepted on every worker"
is "$(( $(fetches) - N0 ))" 1 "... after one fetch of the key set"
is "$(calls "$T1" 3)" " 3 200" "the old key's tokens still are (it is still published)"

# ---- a flood of unknown kids: at most one fetch per min_refresh_s
forge() { jwts_with_kids "$T2" "$1" 1; }
jwts_with_kids "$T2" flood 300 | while read -r t; do
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
is "$(sort "$T_DIR/flood.out" | uniq -c | tr -s ' ')" " 300 401" "300 tokens naming unknown kids: all 401"
[ "$N" -le $(( SECS / MIN_REFRESH + 1 )) ]
ok "... with $N key-set fetches in ${SECS} s (at most one per ${MIN_REFRESH} s)"
call "$(forge one-more)"
like "$(header WWW-Authenticate)" 'error="invalid_token"' "an unknown kid is invalid_token"
served "the flood"

# ---- the authorization server stopped
T3=$(as_token mcp:read)
as_stop
is "$(calls "$T3" 6)" " 6 200" "AS stopped: a token never seen before is verified with the cached keys"
is "$(calls "$T2" 3)" " 3 200" "AS stopped: known tokens keep working"
sleep "$MIN_REFRESH"
call "$(forge while-down)"
is "$STATUS" 401 "AS stopped: a token naming an unknown kid is 401"
served "a refresh that found no authorization server"
grep -qF -- "$(cut -d. -f3 <<<"$T3")" "$PH_LOG"
[ $? -ne 0 ]; ok "no token in Phantom's log"
done_testing
