#!/bin/bash
# Two Phantom hosts (same request_state secret) behind one nginx upstream
# WITHOUT `hash $http_mcp_session_id consistent`: the plain requests of a
# legacy 2025-11-25 session succeed on either host, but the answer to a
# request pushed mid-call that reaches the host which did not send it is
# refused with a message telling the operator to route by Mcp-Session-Id;
# the same answer sent again reaches the right host and completes the call.
# One nginx worker, so consecutive requests alternate between the hosts.
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/reglib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
command -v jq >/dev/null || skip_all "jq not installed"

SB=$T_DIR/sandbox
mkdir -p "$SB"
head -c 48 /dev/urandom | base64 >"$T_DIR/secret"
cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: hosts-test, version: "1.0" }
workers: 2
request_state: { secret_file: secret }
sessions: { park_timeout_ms: 20000 }
tools:
$(delete_file_yaml "$SB")
YAML
phantom_up "$T_DIR/phantom.yaml" || { echo "not ok 1 - host A starts"; exit 1; }
A_ADDR=$PH_ADDR A_LOG=$PH_LOG
phantom_up "$T_DIR/phantom.yaml" || { echo "not ok 1 - host B starts"; exit 1; }
B_ADDR=$PH_ADDR B_LOG=$PH_LOG
NGINX_WORKERS=1
nginx_start "$A_ADDR; server $B_ADDR" || { echo "not ok 1 - nginx starts"; exit 1; }
U=$NGINX_URL
! grep -q 'hash ' "$NGINX_DIR/nginx.conf" || grep -q '#hash ' "$NGINX_DIR/nginx.conf"
ok "one round-robin upstream of two hosts, no hash on the session id"
V=(-H "MCP-Protocol-Version: 2025-11-25")

post "$U" '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"sh","version":"1"}}}'
SID=$(header Mcp-Session-Id)
like "$SID" '.{40,}' "initialize gives a session id"
S=(-H "Mcp-Session-Id: $SID")

# plain requests of the session: every one succeeds, on both hosts
good=0
for i in 1 2 3 4 5 6; do
	post "$U" "{\"jsonrpc\":\"2.0\",\"id\":$((10 + i)),\"method\":\"tools/list\"}" "${V[@]}" "${S[@]}"
	[ "$STATUS" = 200 ] && [ "$(jqr '.result.tools[0].name')" = delete_file ] && good=$((good + 1))
done
is "$good" 6 "six tools/list of the session in a row: all 200 with the tools"
post "$U" '{"jsonrpc":"2.0","method":"notifications/initialized"}' "${V[@]}" "${S[@]}"
is "$STATUS" 202 "a notification of the session: 202"
wait_for 3 sh -c "grep -q 'tools/list' '$A_LOG' && grep -q 'tools/list' '$B_LOG'"
ok "both hosts served requests of the session (their logs show tools/list)"

# a call that asks mid-call: parked on one host, its answer alternates
echo y >"$SB/f.txt"
CALL=$T_DIR/call
curl -sN -X POST -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
	"${V[@]}" "${S[@]}" \
	--data-binary '{"jsonrpc":"2.0","id":50,"method":"tools/call","params":{"name":"delete_file","arguments":{"path":"f.txt"}}}' \
	"$U" >"$CALL" 2>/dev/null &
PID=$!
wait_for 5 grep -q '"method":"elicitation/create"' "$CALL"
ok "the call's stream carries elicitation/create"
ID=$(grep '^data: ' "$CALL" | sed 's/^data: //' | jq -c 'select(.method != null) | .id' | head -1)
like "$ID" '^"ph-[0-9a-f]{8}-[0-9a-f]{12}-0"$' "the pushed id names the host that sent it (ph-HOST-CALL-N)"
if grep -q 'parked for' "$A_LOG"; then HOLD=$A_LOG OTHER=$B_LOG; else HOLD=$B_LOG OTHER=$A_LOG; fi
grep -q 'parked for' "$HOLD" && ! grep -q 'parked for' "$OTHER"
ok "the call is parked in one host's hub only"

ANS="{\"jsonrpc\":\"2.0\",\"id\":$ID,\"result\":{\"action\":\"accept\",\"content\":{\"confirm\":\"yes\"}}}"
# the answer goes to the next host in turn: the one that did not send it
post "$U" "$ANS" "${V[@]}" "${S[@]}"
is "$STATUS/$(jqr .error.code)" 400/-32600 "the answer on the host that did not send the request: 400 -32600"
like "$(jqr .error.message)" "sent by another host" "the message says another host sent the request"
like "$(jqr .error.message)" 'route the requests of a session to one host by Mcp-Session-Id \(conf/nginx.conf: hash \$http_mcp_session_id consistent\)' \
	"and tells the operator to route by Mcp-Session-Id as conf/nginx.conf documents"
grep -q "route the requests of a session to one host by Mcp-Session-Id" "$top_srcdir/man/phantom.yaml.5"
ok "phantom.yaml(5) documents the same"
test -e "$SB/f.txt"; ok "nothing was deleted"
kill -0 "$PID" 2>/dev/null; ok "the call still waits on its stream"
# again: now the host that holds the call
post "$U" "$ANS" "${V[@]}" "${S[@]}"
is "$STATUS" 202 "the same answer on the host that holds the call: 202"
wait_for 6 sh -c "! kill -0 $PID 2>/dev/null"
is "$(grep '^data: ' "$CALL" | sed 's/^data: //' | jq -r 'select(.id == 50) | .result.content[0].text')" \
	"Deleted f.txt." "the call completes on its stream"
test ! -e "$SB/f.txt"; ok "the file is deleted"

# a pushed id of this shape no host sent: the host that gets it says so
post "$U" '{"jsonrpc":"2.0","id":"ph-00000000-000000000000-0","result":{}}' "${V[@]}" "${S[@]}"
is "$STATUS/$(jqr .error.code)" 400/-32600 "an answer for a host that does not exist: 400 -32600"
post "$U" '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' "${V[@]}" "${S[@]}"
is "$STATUS" 200 "both hosts keep serving the session"
post "$U" '{"jsonrpc":"2.0","id":3,"method":"tools/list"}' "${V[@]}" "${S[@]}"
is "$STATUS" 200 "(the other one too)"
done_testing
