#!/bin/bash
# Legacy 2025-11-25 sessions behind the real nginx: initialize answers with
# Mcp-Session-Id, a sealed token; a forged, truncated, other-principal,
# expired or ended id gets 404 (and the next request is served); a request
# without one is served statelessly; DELETE ends a session for every worker
# of the host; a 2026-07-28 request never sees a session id.
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/reglib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"

bearer_token T_ALICE H_ALICE; bearer_token T_BOB H_BOB
head -c 48 /dev/urandom | base64 >"$T_DIR/secret"
cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: sessions-test, version: "1.0" }
workers: 3
request_state: { secret_file: secret }
sessions: { max_age: 3600 }
auth:
  mode: bearer
  tokens:
    - { principal: alice, sha256: $H_ALICE }
    - { principal: bob, sha256: $H_BOB }
tools:
  - { name: echo, input: {text: {type: string, required: true}}, module: phantom_example.so, symbol: echo }
YAML
behind_nginx phantom_up "$T_DIR/phantom.yaml"
A=(-H "Authorization: Bearer $T_ALICE")
B=(-H "Authorization: Bearer $T_BOB")
V=(-H "MCP-Protocol-Version: 2025-11-25")
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}'
LIST='{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
INITIALIZED='{"jsonrpc":"2.0","method":"notifications/initialized"}'

post "$U" "$INIT" "${A[@]}"
SID=$(header Mcp-Session-Id)
is "$STATUS/$(jqr .result.protocolVersion)" 200/2025-11-25 "legacy initialize: 200 with the negotiated version"
like "$SID" '^[!-~]{40,}$' "initialize answers with an Mcp-Session-Id of visible ASCII"
post "$U" "$INIT" "${A[@]}"
[ "$(header Mcp-Session-Id)" != "$SID" ]; ok "a second initialize gets another session id"

post "$U" "$INITIALIZED" "${A[@]}" "${V[@]}" -H "Mcp-Session-Id: $SID"
is "$STATUS" 202 "notifications/initialized on the session: 202"
for i in 1 2 3 4 5 6; do
	post "$U" "$LIST" "${A[@]}" "${V[@]}" -H "Mcp-Session-Id: $SID"
	[ "$STATUS/$(jqr '.result.tools[0].name')" = 200/echo ] || break
done
is "$STATUS/$(jqr '.result.tools[0].name')" 200/echo "tools/list on the session, six times (every worker opens it)"
[ -z "$(header Mcp-Session-Id)" ]; ok "only initialize sends Mcp-Session-Id"

post "$U" "$LIST" "${A[@]}" "${V[@]}"
is "$STATUS/$(jqr '.result.tools[0].name')" 200/echo "a legacy request without a session id is served statelessly"

# a 2026-07-28 request is untouched: no session id, and a session header is ignored
mpost "$U" 3 server/discover '{}' "${A[@]}" -H "Mcp-Session-Id: garbage"
is "$STATUS/$(jqr .result.resultType)" 200/complete "a 2026-07-28 request ignores Mcp-Session-Id"
[ -z "$(header Mcp-Session-Id)" ]; ok "a 2026-07-28 answer carries no Mcp-Session-Id"

bad() { # LABEL SID WHY: a request on a session id that must not open
	local label=$1 sid=$2 why=$3
	post "$U" "$LIST" "${A[@]}" "${V[@]}" -H "Mcp-Session-Id: $sid"
	is "$STATUS/$(jqr .error.code)" 404/-32001 "$label: 404 with -32001"
	like "$(jqr .error.message)" "^Session not found: $why" "$label: the message says why"
	post "$U" "$LIST" "${A[@]}" "${V[@]}" -H "Mcp-Session-Id: $SID"
	is "$STATUS" 200 "the next request after $label is served"
}
bad "a forged session id" "$(newtok)$(newtok)" "this Mcp-Session-Id was not issued"
bad "a truncated session id" "${SID:0:$((${#SID} - 3))}" "this Mcp-Session-Id was not issued"
bad "a session id with one character changed" "${SID:0:20}$( [ "${SID:20:1}" = A ] && echo B || echo A)${SID:21}" \
	"this Mcp-Session-Id was not issued"
post "$U" "$LIST" "${B[@]}" "${V[@]}" -H "Mcp-Session-Id: $SID"
is "$STATUS/$(jqr .error.code)" 404/-32001 "alice's session id used by bob: 404"
like "$(jqr .error.message)" "another principal" "the message says it was issued to another principal"
post "$U" "$LIST" "${V[@]}" -H "Mcp-Session-Id: $SID"
is "$STATUS" 401 "no credentials on a session: 401 first"

# ---- DELETE ends the session on every worker
curl -s -o /dev/null -w '%{http_code}' -X DELETE "${A[@]}" "$U" >"$T_DIR/st"
is "$(cat "$T_DIR/st")" 405 "DELETE without a session id: 405 as before"
curl -s -o "$T_DIR/b" -w '%{http_code}' -X DELETE "${B[@]}" "${V[@]}" -H "Mcp-Session-Id: $SID" "$U" >"$T_DIR/st"
is "$(cat "$T_DIR/st")/$(jq -r .error.code "$T_DIR/b")" 404/-32001 "DELETE of alice's session by bob: 404"
curl -s -o /dev/null -w '%{http_code}' -X DELETE "${A[@]}" "${V[@]}" -H "Mcp-Session-Id: $SID" "$U" >"$T_DIR/st"
is "$(cat "$T_DIR/st")" 204 "DELETE with the session id: 204"
gone=0
for i in 1 2 3 4 5 6; do
	post "$U" "$LIST" "${A[@]}" "${V[@]}" -H "Mcp-Session-Id: $SID"
	[ "$STATUS/$(jqr .error.code)" = 404/-32001 ] && gone=$((gone + 1))
done
is "$gone" 6 "after DELETE every request on the session gets 404 (six, any worker)"
like "$(jqr .error.message)" "was ended" "the message says the session was ended"
post "$U" "$INITIALIZED" "${A[@]}" "${V[@]}" -H "Mcp-Session-Id: $SID"
is "$STATUS" 404 "a notification on an ended session: 404"
curl -s -o /dev/null -w '%{http_code}' -X DELETE "${A[@]}" "${V[@]}" -H "Mcp-Session-Id: $SID" "$U" >"$T_DIR/st"
is "$(cat "$T_DIR/st")" 404 "DELETE of an ended session: 404"
post "$U" "$INIT" "${A[@]}"
SID2=$(header Mcp-Session-Id)
post "$U" "$LIST" "${A[@]}" "${V[@]}" -H "Mcp-Session-Id: $SID2"
is "$STATUS" 200 "the client initializes again and its new session works"

# ---- a reload keeps the ended ids (the hub keeps them, the key is the same)
kill -HUP "$PH_PID"; sleep 1
post "$U" "$LIST" "${A[@]}" "${V[@]}" -H "Mcp-Session-Id: $SID"
is "$STATUS" 404 "after SIGHUP the ended session still gets 404"
post "$U" "$LIST" "${A[@]}" "${V[@]}" -H "Mcp-Session-Id: $SID2"
is "$STATUS" 200 "after SIGHUP a live session still opens"

# ---- expiry (sessions.max_age), as a CGI program: the id needs no hub
cat >"$T_DIR/short.yaml" <<YAML
server: { name: sessions-cgi, version: "1.0" }
request_state: { secret_file: secret }
sessions: { max_age: 1 }
YAML
CGI_ARGS="-c $T_DIR/short.yaml"
cgi_post "$INIT"
SID3=$(header Mcp-Session-Id)
cgi_post "$LIST" HTTP_MCP_SESSION_ID="$SID3"
is "$STATUS" 200 "CGI: the session opens at once"
cgi_post "$LIST" HTTP_MCP_SESSION_ID="$SID"
is "$STATUS" 404 "CGI: a session of another principal (alice's, anonymous here) gets 404"
sleep 2.2
cgi_post "$LIST" HTTP_MCP_SESSION_ID="$SID3"
is "$STATUS/$(jqr .error.code)" 404/-32001 "CGI: after sessions.max_age the session gets 404"
like "$(jqr .error.message)" "expired" "the message says it expired"
cgi_init=$(cgi_post "$INIT"; header Mcp-Session-Id)
env -i GATEWAY_INTERFACE=CGI/1.1 REQUEST_METHOD=DELETE REQUEST_URI=/mcp HTTP_HOST=localhost \
	HTTP_MCP_SESSION_ID="$cgi_init" "$PHANTOM" $CGI_ARGS </dev/null >"$T_DIR/cgi.del" 2>/dev/null
cgi_parse "$T_DIR/cgi.del"
is "$STATUS" 405 "CGI (no hub): DELETE of a live session is 405, as the transport allows"
like "$(jqr .error.message)" "without the hub" "the message says why"
done_testing
