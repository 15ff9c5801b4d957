#!/bin/bash
# A legacy 2025-11-25 session's state in the host's hub, behind the real
# nginx with three workers: logging/setLevel applies to the session's later
# requests on every worker; resources/subscribe delivers
# notifications/resources/updated on the session's GET stream (the SDK v1
# client, then curl), a reload list_changed; event ids and Last-Event-ID
# replay from sessions.replay; two GET streams on one session both get
# every event; the limits (sessions.max_subscriptions, max_state,
# state_idle) answer as documented; DELETE ends the state and its streams;
# without a session id GET is 405 and a 2026-07-28 request sees none of it.
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/reglib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"

bearer_token T_ALICE H_ALICE; bearer_token T_BOB H_BOB
head -c 48 /dev/urandom | base64 >"$T_DIR/secret"
mkdir -p "$T_DIR/data"
echo one >"$T_DIR/data/watched.txt"; echo two >"$T_DIR/data/other.txt"; echo s >"$T_DIR/data/secret.txt"
CTL=$T_DIR/ctl.sock
conf() { # MAX_STATE STATE_IDLE EXTRA-TOOL
	cat <<YAML
server: { name: state-test, version: "1.0" }
workers: 3
request_state: { secret_file: secret }
sessions: { max_subscriptions: 2, replay: 3, max_state: $1, state_idle: $2 }
subscriptions: { control_socket: $CTL, keepalive_ms: 1000 }
auth:
  mode: bearer
  tokens:
    - { principal: alice, sha256: $H_ALICE }
    - { principal: bob, sha256: $H_BOB }
  allow:
    bob: { tools: [log_levels, added_tool], resources: ["file:///watched", "file:///other"] }
tools:
  - { name: log_levels, input: {delay: {type: number}}, exec: [$top_srcdir/tests/handlers/log_levels.sh] }
  - { name: slow_levels, exec: [$top_srcdir/tests/handlers/log_levels.sh, "0.4"] }
$3
resources:
  - { uri: "file:///watched", name: watched, file: data/watched.txt }
  - { uri: "file:///other", name: other, file: data/other.txt }
  - { uri: "file:///secret", name: secret, file: data/secret.txt }
YAML
}
conf 1000 3600 "" >"$T_DIR/phantom.yaml"
conf 1000 3600 "  - { name: added_tool, exec: [$top_srcdir/tests/handlers/log_levels.sh] }" >"$T_DIR/more.yaml"
"$PHANTOM" -t -c "$T_DIR/phantom.yaml" >"$T_DIR/t.out" 2>&1; ok "the configuration is valid"
phantom_up "$T_DIR/phantom.yaml" || { echo "not ok - phantom starts"; exit 1; }
nginx_start "$PH_ADDR" || { echo "not ok - nginx starts"; exit 1; }
U=$NGINX_URL
A=(-H "Authorization: Bearer $T_ALICE")
B=(-H "Authorization: Bearer $T_BOB")
V=(-H "MCP-Protocol-Version: 2025-11-25")
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
rpc() { printf '{"jsonrpc":"2.0","id":%s,"method":"%s","params":%s}' "$1" "$2" "${3:-{\}}"; }
# session AUTH...: a new session of that principal in SID
session() { post "$U" "$INIT" "$@"; SID=$(header Mcp-Session-Id); }
# sget FILE SID AUTH... [-H Last-Event-ID: N]: a GET stream in the background
# into FILE; its curl's pid in GPID
sget() {
	local f=$1 sid=$2; shift 2
	timeout 60 curl -sN -D "$f.h" -o "$f" -H 'Accept: text/event-stream' "${V[@]}" -H "Mcp-Session-Id: $sid" \
		"$@" "$U" &
	GPID=$!
	T_PIDS+=("$GPID")
	wait_for 50 grep -qsi '^content-type: text/event-stream' "$f.h"
}
notify() { "$PHANTOM" -c "$T_DIR/phantom.yaml" --notify tools/list_changed >/dev/null; }
ids() { grep '^id: ' "$1" | sed 's/^id: //' | tr '\n' ' ' | sed 's/ $//'; }

# ---- the SDK v1 client: levels, subscriptions, list_changed
if node_setup; then
	node_client sdk-v1-state.mjs --url "$U" --token "$T_BOB" --file "$T_DIR/data/watched.txt" \
		--uri file:///watched --conf "$T_DIR/phantom.yaml" --conf-new "$T_DIR/more.yaml" --pid "$PH_PID"
	conf 1000 3600 "" >"$T_DIR/phantom.yaml"; kill -HUP "$PH_PID"; sleep 1
else
	echo "ok $((T_N += 1)) # SKIP the npm clients are not installed"
fi

# ---- setLevel reaches every worker: three calls at once run on three workers
session "${A[@]}"
S1=$SID
post "$U" "$(rpc 2 logging/setLevel '{"level":"error"}')" "${A[@]}" "${V[@]}" -H "Mcp-Session-Id: $S1"
is "$STATUS/$(jqr .result)" "200/{}" "logging/setLevel on a session: {}"
LP=()
for i in 1 2 3; do
	curl -s -o "$T_DIR/lv$i" -X POST -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' "${A[@]}" "${V[@]}" -H "Mcp-Session-Id: $S1" \
		--data-binary "$(rpc 3 tools/call '{"name":"slow_levels","arguments":{}}')" "$U" &
	LP+=($!)
done
wait "${LP[@]}"
levels() { grep '^data: ' "$1" | sed 's/^data: //' | jq -r 'select(.method == "notifications/message") | .params.level' | tr '\n' ' ' | sed 's/ $//'; }
pids=$(for i in 1 2 3; do grep '^data: ' "$T_DIR/lv$i" | sed 's/^data: //' | jq -r '.result.content[0].text // empty'; done | sort -u | wc -l)
is "$pids" 3 "three calls at once ran on three workers"
is "$(levels "$T_DIR/lv1")|$(levels "$T_DIR/lv2")|$(levels "$T_DIR/lv3")" \
	"error critical alert emergency|error critical alert emergency|error critical alert emergency" \
	"each of them sent only the levels at or above error"
post "$U" "$(rpc 4 logging/setLevel '{"level":"loud"}')" "${A[@]}" "${V[@]}" -H "Mcp-Session-Id: $S1"
is "$STATUS/$(jqr .error.code)" 200/-32602 "an unknown level: -32602"
post "$U" "$(rpc 5 tools/call '{"name":"log_levels","arguments":{}}')" "${A[@]}" "${V[@]}" -H "Mcp-Session-Id: $S1"
is "$(printf '%s\n' "$BODY" | grep -c '"notifications/message"')" 4 "the level set before stays"
post "$U" "$(rpc 6 tools/call '{"name":"log_levels","arguments":{}}')" "${A[@]}" "${V[@]}"
is "$(printf '%s\n' "$BODY" | grep -c '"notifications/message"')" 8 "a request without the session id gets every level"

# ---- subscriptions: access, the limit, delivery on the GET stream
session "${B[@]}"
S2=$SID
post "$U" "$(rpc 2 resources/subscribe '{"uri":"file:///secret"}')" "${B[@]}" "${V[@]}" -H "Mcp-Session-Id: $S2"
is "$STATUS/$(jqr .error.code)/$(jqr .error.data.uri)" "200/-32002/file:///secret" \
	"resources/subscribe to a resource bob may not read: -32002"
post "$U" "$(rpc 3 resources/subscribe '{"uri":"file:///nope"}')" "${B[@]}" "${V[@]}" -H "Mcp-Session-Id: $S2"
is "$(jqr .error.code)" -32002 "resources/subscribe to an unknown resource: -32002"
post "$U" "$(rpc 4 resources/subscribe '{"uri":"file:///watched"}')" "${B[@]}" "${V[@]}" -H "Mcp-Session-Id: $S2"
is "$STATUS/$(jqr .result)" "200/{}" "resources/subscribe: {}"
sget "$T_DIR/g1" "$S2" "${B[@]}"; ok "GET with the session id opens a text/event-stream"
G1=$GPID
sget "$T_DIR/g2" "$S2" "${B[@]}"; ok "a second GET stream on the same session opens too"
G2=$GPID
echo changed >"$T_DIR/data/watched.txt"
wait_for 50 grep -q 'resources/updated' "$T_DIR/g1"
wait_for 50 grep -q 'resources/updated' "$T_DIR/g2"
grep '^data: ' "$T_DIR/g1" | sed 's/^data: //' | jq -e 'select(.method == "notifications/resources/updated") | .params.uri == "file:///watched"' >/dev/null
ok "a change of the file: notifications/resources/updated with its uri on the GET stream"
grep -q 'resources/updated' "$T_DIR/g2"; ok "the second GET stream gets it too"
like "$(ids "$T_DIR/g1")" '^1$' "the event carries id 1"
post "$U" "$(rpc 5 resources/subscribe '{"uri":"file:///other"}')" "${B[@]}" "${V[@]}" -H "Mcp-Session-Id: $S2"
is "$(jqr .result)" "{}" "a second subscription (sessions.max_subscriptions is 2)"
post "$U" "$(rpc 6 resources/subscribe '{"uri":"file:///watched"}')" "${B[@]}" "${V[@]}" -H "Mcp-Session-Id: $S2"
is "$(jqr .result)" "{}" "subscribing again to the same resource is not another one"
session "${A[@]}"; S3=$SID
post "$U" "$(rpc 2 resources/subscribe '{"uri":"file:///watched"}')" "${A[@]}" "${V[@]}" -H "Mcp-Session-Id: $S3"
post "$U" "$(rpc 3 resources/subscribe '{"uri":"file:///other"}')" "${A[@]}" "${V[@]}" -H "Mcp-Session-Id: $S3"
post "$U" "$(rpc 4 resources/subscribe '{"uri":"file:///secret"}')" "${A[@]}" "${V[@]}" -H "Mcp-Session-Id: $S3"
is "$STATUS/$(jqr .error.code)" 200/-32603 "a third subscription: -32603"
like "$(jqr .error.message)" "sessions.max_subscriptions \\(2\\)" "the message names sessions.max_subscriptions"
post "$U" "$(rpc 5 tools/list)" "${A[@]}" "${V[@]}" -H "Mcp-Session-Id: $S3"
is "$STATUS/$(jqr '.result.tools | length')" 200/2 "the session is still served"
post "$U" "$(rpc 7 resources/unsubscribe '{"uri":"file:///watched"}')" "${B[@]}" "${V[@]}" -H "Mcp-Session-Id: $S2"
is "$(jqr .result)" "{}" "resources/unsubscribe: {}"
echo again >"$T_DIR/data/watched.txt"; echo again >"$T_DIR/data/other.txt"
wait_for 50 grep -q 'file:///other' "$T_DIR/g1"; sleep 0.3
is "$(grep -c 'file:///watched' "$T_DIR/g1")/$(grep -c 'file:///other' "$T_DIR/g1")" 1/1 \
	"after unsubscribe only the other subscription is announced"

# ---- list_changed, event ids and Last-Event-ID
notify
wait_for 50 grep -q 'tools/list_changed' "$T_DIR/g1"
grep -q 'notifications/tools/list_changed' "$T_DIR/g1"; ok "--notify tools/list_changed reaches the GET stream"
is "$(ids "$T_DIR/g1")" "1 2 3" "event ids count up in the session"
is "$(ids "$T_DIR/g2")" "1 2 3" "the second stream got the same events"
kill "$G1" "$G2" 2>/dev/null; wait "$G1" "$G2" 2>/dev/null
notify; notify; sleep 0.3
sget "$T_DIR/g3" "$S2" "${B[@]}" -H "Last-Event-ID: 3"
wait_for 50 grep -q '^id: 5' "$T_DIR/g3"
is "$(ids "$T_DIR/g3")" "4 5" "Last-Event-ID 3: the two events missed are replayed"
kill "$GPID" 2>/dev/null
sget "$T_DIR/g4" "$S2" "${B[@]}" -H "Last-Event-ID: 1"
wait_for 50 grep -q '^id: 5' "$T_DIR/g4"
is "$(ids "$T_DIR/g4")" "3 4 5" "Last-Event-ID older than sessions.replay (3): the three held are sent"
grep -q '^: events 2 to 2 are no longer held (sessions.replay is 3)' "$T_DIR/g4"
ok "after a comment naming the events lost"
kill "$GPID" 2>/dev/null
sget "$T_DIR/g5" "$S2" "${B[@]}" -H "Last-Event-ID: 99"
sleep 0.3
is "$(ids "$T_DIR/g5")" "" "an id the session never sent: nothing replayed"
kill "$GPID" 2>/dev/null

# ---- GET without a session id, with a bad one, and the 2026-07-28 side
code() { curl -s -o "$T_DIR/cb" -w '%{http_code}' --max-time 5 -H "Accept: ${ACC:-text/event-stream}" "$@" "$U"; }
is "$(code "${B[@]}")" 405 "GET without a session id: 405 as before"
is "$(code "${B[@]}" "${V[@]}" -H "Mcp-Session-Id: $(newtok)$(newtok)")/$(jq -r .error.code "$T_DIR/cb")" \
	404/-32001 "GET with a forged session id: 404 -32001"
is "$(code "${A[@]}" "${V[@]}" -H "Mcp-Session-Id: $S2")" 404 "GET with bob's session id by alice: 404"
is "$(ACC=application/json code "${B[@]}" -H "Mcp-Session-Id: $S2")" 405 \
	"GET that does not accept text/event-stream: 405"
is "$(code "${B[@]}" -H "MCP-Protocol-Version: 2026-07-28" -H "Mcp-Session-Id: $S2")" 405 \
	"a 2026-07-28 GET with a session id: 405, the session is not looked at"
mpost "$U" 3 server/discover '{}' "${B[@]}"
is "$(jqr '.result.capabilities.tools.listChanged')" true "2026-07-28 discover: as before"
[ -z "$(header Mcp-Session-Id)" ]; ok "a 2026-07-28 answer carries no session id"
post "$U" "$INIT" "${B[@]}"
is "$(jqr .result.capabilities.resources.subscribe)/$(jqr .result.capabilities.tools.listChanged)" true/true \
	"legacy initialize behind the master: subscribe and listChanged advertised"

# ---- DELETE ends the state: its GET stream ends, a new GET is 404
sget "$T_DIR/g6" "$S2" "${B[@]}"
G6=$GPID
curl -s -o /dev/null -w '%{http_code}' -X DELETE "${B[@]}" "${V[@]}" -H "Mcp-Session-Id: $S2" "$U" >"$T_DIR/st"
is "$(cat "$T_DIR/st")" 204 "DELETE of a session with a GET stream: 204"
t0=$(date +%s)
wait "$G6"
[ $(($(date +%s) - t0)) -lt 5 ]; ok "the session's GET stream ends"
is "$(code "${B[@]}" "${V[@]}" -H "Mcp-Session-Id: $S2")" 404 "GET on the ended session: 404"

# ---- sessions.max_state and sessions.state_idle (reloaded)
conf 1 1 "" >"$T_DIR/phantom.yaml"; kill -HUP "$PH_PID"
wait_for 50 grep -q "hub: configuration reloaded" "$PH_LOG"; sleep 1.5
session "${A[@]}"; S4=$SID
post "$U" "$(rpc 2 logging/setLevel '{"level":"error"}')" "${A[@]}" "${V[@]}" -H "Mcp-Session-Id: $S4"
is "$(jqr .result)" "{}" "after the others went idle (sessions.state_idle 1) a session may set its level"
session "${A[@]}"; S5=$SID
post "$U" "$(rpc 2 logging/setLevel '{"level":"error"}')" "${A[@]}" "${V[@]}" -H "Mcp-Session-Id: $S5"
is "$STATUS/$(jqr .error.code)" 200/-32603 "another session over sessions.max_state 1: -32603"
like "$(jqr .error.message)" "sessions.max_state is 1" "the message names sessions.max_state"
is "$(code "${A[@]}" "${V[@]}" -H "Mcp-Session-Id: $S5")/$(jq -r .error.message "$T_DIR/cb")" \
	"503/Too many sessions hold state on this host (sessions.max_state is 1); end unused sessions with DELETE or try again later" \
	"its GET stream: 503 naming the limit"
post "$U" "$(rpc 3 tools/call '{"name":"log_levels","arguments":{}}')" "${A[@]}" "${V[@]}" -H "Mcp-Session-Id: $S5"
is "$STATUS/$(printf '%s\n' "$BODY" | grep -c '"notifications/message"')" 200/8 \
	"the session is served, with every level"
sleep 2.5
post "$U" "$(rpc 3 tools/call '{"name":"log_levels","arguments":{}}')" "${A[@]}" "${V[@]}" -H "Mcp-Session-Id: $S4"
is "$(printf '%s\n' "$BODY" | grep -c '"notifications/message"')" 8 \
	"after sessions.state_idle the level is forgotten: every level again"
post "$U" "$(rpc 2 logging/setLevel '{"level":"error"}')" "${A[@]}" "${V[@]}" -H "Mcp-Session-Id: $S5"
is "$(jqr .result)" "{}" "and there is room for the other session"
# ---- without a hub (CGI) nothing is promised
cat >"$T_DIR/cgi.yaml" <<YAML
server: { name: state-cgi, version: "1.0" }
request_state: { secret_file: secret }
tools:
  - { name: log_levels, exec: [$top_srcdir/tests/handlers/log_levels.sh] }
resources:
  - { uri: "file:///watched", name: watched, file: data/watched.txt }
YAML
CGI_ARGS="-c $T_DIR/cgi.yaml"
cgi_post "$INIT"
is "$(jqr .result.capabilities.resources.subscribe)/$(jqr .result.capabilities.tools.listChanged)/$(jqr .result.capabilities.logging)" \
	"null/null/{}" "CGI: a legacy initialize promises neither subscribe nor listChanged (logging stays)"
mpost "$U" 99 server/discover '{}' "${A[@]}"
is "$STATUS/$(jqr .result.resultType)" 200/complete "a 2026-07-28 request after all of it is served"
done_testing
