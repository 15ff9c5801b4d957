#!/bin/bash
# The cluster code that calls into hiredis, under valgrind: ASan cannot see
# inside the library. A real redis-server on a loopback port (a password,
# database 2, append-only with appendfsync always) and two Phantom hosts, a
# and b, their masters, hubs, workers and task supervisors all under
# valgrind, each behind its own nginx, so that every request goes to the
# host the test names:
#   - a legacy 2025-11-25 session made on a is used on b (tools/call), its
#     level set on b, and deleted on b: a refuses it;
#   - a call parked on a (delete_file asks elicitation/create) is answered
#     on b: the answer crosses Redis to a's mailbox and the call completes;
#   - a task made on a is read on b (tasks/get, its result); a task asking
#     for input is answered on b (tasks/update) and ends on a; a task running
#     on a is cancelled from b;
#   - --notify on a reaches a listen stream held by b (the hubs' pub/sub);
#   - limits.rate: every request runs the shared counter's script;
#   - Redis killed (SIGKILL) while the hosts run: stateless calls are served,
#     tasks/get answers -32603; Redis started again on the same port: the
#     hubs reconnect and subscribe again, the records are still there, new
#     sessions and tasks cross the hosts again;
#   - both hosts stop cleanly (SIGTERM), and no process reported anything.
# The workers use the synchronous client (src/lib/ph_redis.c), the hubs the
# asynchronous adapter (src/process/ph_hub_cluster_conn.c).
. "${top_srcdir:-.}/tests/lib.sh"
vg_supported
command -v nginx >/dev/null || skip_all "nginx not installed"
command -v jq >/dev/null || skip_all "jq not installed"
cluster_supported

# ---- Redis on a free loopback port ---------------------------------------------------
RDIR=$T_DIR/redis
mkdir -p "$RDIR"
RPORT=$(free_port)
RPASS=vgpass$(head -c 12 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
printf '%s\n' "$RPASS" >"$T_DIR/redis.pass"
printf 'requirepass %s\n' "$RPASS" >"$RDIR/redis.conf"
rcli() { REDISCLI_AUTH=$RPASS redis-cli -h 127.0.0.1 -p "$RPORT" -n 2 "$@"; }
pong() { [ "$(rcli ping 2>/dev/null)" = PONG ]; }
# redis_start: a daemon, not a job of this shell (which would say "Killed"
# when the test kills it); REDIS_PID from its pid file
redis_start() {
	rm -f "$RDIR/pid"
	redis-server "$RDIR/redis.conf" --port "$RPORT" --bind 127.0.0.1 --dir "$RDIR" \
		--appendonly yes --appendfsync always --save '' --maxmemory-policy noeviction \
		--daemonize yes --pidfile "$RDIR/pid" --logfile "$RDIR/log" || return 1
	wait_for 20 test -s "$RDIR/pid" || return 1
	REDIS_PID=$(cat "$RDIR/pid")
	T_PIDS+=("$REDIS_PID")
	wait_for 20 pong
}
redis_start || { echo "not ok 1 - redis-server starts"; sed 's/^/#   /' "$RDIR/log"; exit 1; }

# ---- the two hosts under valgrind ---------------------------------------------------------
head -c 48 /dev/urandom | base64 >"$T_DIR/secret"
SB=$T_DIR/sandbox
mkdir -p "$SB"
# quick: a task's answer; slow: a task that runs until stopped; ask: a task
# that asks to confirm, then answers with what it was told
cat >"$T_DIR/quick.sh" <<'SH'
#!/bin/sh
cat >/dev/null
echo '{"content":[{"type":"text","text":"quick done"}]}'
SH
printf '#!/bin/sh\ncat >/dev/null\necho $$ >"%s/slow.pid"\nexec sleep 300\n' "$T_DIR" >"$T_DIR/slow.sh"
cat >"$T_DIR/ask.sh" <<'SH'
#!/bin/sh
c=$(jq -r '.inputResponses.confirm.content.confirm // empty')
if [ -z "$c" ]; then
	echo '{"inputRequired":{"inputRequests":{"confirm":{"method":"elicitation/create","params":{"message":"Go on?","requestedSchema":{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}}}}}}'
else
	echo "{\"content\":[{\"type\":\"text\",\"text\":\"confirmed $c\"}]}"
fi
SH
chmod 0755 "$T_DIR/quick.sh" "$T_DIR/slow.sh" "$T_DIR/ask.sh"
# valgrind is slow: cluster.timeout_ms and the park generous
host_conf() {
	cat <<YAML
server: { name: cluster-valgrind, version: "1.0" }
workers: 2
shutdown_timeout: 10
request_state: { secret_file: secret }
subscriptions: { control_socket: $T_DIR/$1.ctl }
sessions: { park_timeout_ms: 120000 }
limits: { rate: { requests: 10000, per_seconds: 1 } }
cluster:
  redis: "redis://127.0.0.1:$RPORT/2"
  password_file: redis.pass
  host: $1
  timeout_ms: 3000
  backoff_max_ms: 1000
tools:
  - { name: hello, description: answers at once, exec: [./quick.sh] }
  - { name: quick, description: a task that answers at once, task: required, exec: [./quick.sh] }
  - { name: slow, description: a task that runs until stopped, task: required, exec: [./slow.sh] }
  - { name: ask, description: a task that asks first, task: required, exec: [./ask.sh] }
$(delete_file_yaml "$SB")
YAML
}
for h in a b; do
	host_conf $h >"$T_DIR/$h.yaml"
	W=$(vg_wrapper "vg-$h")
	# valgrind starts slowly: up to 120 s for the port
	PHANTOM=$W T_START_S=120 phantom_listen "$T_DIR/$h.yaml" ||
		{ echo "not ok 1 - host $h starts under valgrind"; exit 1; }
	nginx_start "$PH_ADDR" || { echo "not ok 1 - nginx for host $h starts"; exit 1; }
	eval "VGW_$h=\$W PID_$h=\$PH_PID LOG_$h=\$PH_LOG URL_$h=\$NGINX_URL"
done
# shellcheck disable=SC2154 # set by the eval above
A=$URL_a B=$URL_b LOG_A=$LOG_a LOG_B=$LOG_b
# subscribed LOG N: the host's hub logged N times that Redis is reachable
subscribed() { [ "$(grep -c 'hub: cluster: Redis at .* reachable;' "$1")" -ge "$2" ]; }
wait_for 120 subscribed "$LOG_A" 1 && wait_for 60 subscribed "$LOG_B" 1
ok "both hosts start under valgrind and their hubs connect to Redis"
hello() { mpost "$1" 1 tools/call '{"name":"hello","arguments":{}}' --max-time 60; [ "$(jqr '.result.content[0].text')" = "quick done" ]; }
wait_for 120 hello "$A" && wait_for 120 hello "$B"
ok "both hosts serve a stateless tools/call (limits.rate counted in Redis)"

# ---- a legacy session made on a, used and deleted on b ---------------------------------------
V=(-H "MCP-Protocol-Version: 2025-11-25")
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"sh","version":"1"}}}'
# lpost URL SID BODY [CURL-ARGS...]: a request of the legacy session SID
lpost() { local u=$1 s=$2 b=$3; shift 3; post "$u" "$b" "${V[@]}" -H "Mcp-Session-Id: $s" --max-time 60 "$@"; }
post "$A" "$INIT" --max-time 60
SID=$(header Mcp-Session-Id)
is "$STATUS/$(jqr .result.protocolVersion)" 200/2025-11-25 "host a: initialize (2025-11-25)"
lpost "$B" "$SID" '{"jsonrpc":"2.0","method":"notifications/initialized"}'
is "$STATUS" 202 "host b takes the session's notifications/initialized"
lpost "$B" "$SID" '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hello","arguments":{}}}'
is "$STATUS/$(jqr '.result.content[0].text')" "200/quick done" "host b: the session's tools/call"
lpost "$B" "$SID" '{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"warning"}}'
is "$STATUS/$(jqr .result)" "200/{}" "host b: logging/setLevel (the session's record in Redis)"
lpost "$A" "$SID" '{"jsonrpc":"2.0","id":4,"method":"tools/list"}'
is "$STATUS/$(jqr '.result.tools | length')" 200/5 "host a: the session's tools/list"

# ---- a call parked on a, answered on b ------------------------------------------------------
echo y >"$SB/f.txt"
CALL=$T_DIR/call
curl -sN -X POST -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
	"${V[@]}" -H "Mcp-Session-Id: $SID" --max-time 240 \
	--data-binary '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"delete_file","arguments":{"path":"f.txt"}}}' \
	"$A" >"$CALL" 2>/dev/null &
CALL_PID=$!
T_PIDS+=("$CALL_PID")
wait_for 120 grep -qs '"method":"elicitation/create"' "$CALL"
ok "host a: the call's stream carries elicitation/create"
EID=$(grep '^data: ' "$CALL" | sed 's/^data: //' | jq -c 'select(.method != null) | .id' | head -1)
lpost "$B" "$SID" "{\"jsonrpc\":\"2.0\",\"id\":$EID,\"result\":{\"action\":\"accept\",\"content\":{\"confirm\":\"yes\"}}}"
is "$STATUS" 202 "host b takes the answer"
wait_gone "$CALL_PID" 120
is "$(grep '^data: ' "$CALL" | sed 's/^data: //' | jq -r 'select(.id == 5) | .result.content[0].text')" \
	"Deleted f.txt." "the call completes on host a's stream"
grep -q 'park: an answer for a call parked on another host is in its mailbox' "$LOG_B" &&
	grep -q 'resumed here with an answer taken by another host' "$LOG_A"
ok "the answer went through host a's mailbox in Redis"

code=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "${V[@]}" -H "Mcp-Session-Id: $SID" --max-time 60 "$B")
is "$code" 204 "host b: the session's DELETE"
lpost "$A" "$SID" '{"jsonrpc":"2.0","id":6,"method":"tools/list"}'
is "$STATUS" 404 "host a refuses the deleted session"
lpost "$B" "$SID" '{"jsonrpc":"2.0","id":7,"method":"tools/list"}'
is "$STATUS" 404 "and so does host b"

# ---- tasks across the hosts ---------------------------------------------------------------
EXT='{"extensions":{"io.modelcontextprotocol/tasks":{}}}'
# tcall URL ID METHOD PARAMS: a 2026-07-28 request declaring the tasks extension
tcall() {
	local name; name=$(printf '%s' "$4" | jq -r '.name // .taskId // empty')
	post "$1" "$(printf '%s' "$4" | jq -c --argjson id "$2" --arg m "$3" --arg v "$MODERN" --argjson caps "$EXT" \
		'{jsonrpc:"2.0",id:$id,method:$m,params:(. + {_meta:{"io.modelcontextprotocol/protocolVersion":$v,
		"io.modelcontextprotocol/clientCapabilities":$caps}})}')" \
		-H "MCP-Protocol-Version: $MODERN" -H "Mcp-Method: $3" ${name:+-H "Mcp-Name: $name"} --max-time 60
}
tget() { tcall "$1" 10 tasks/get "{\"taskId\":\"$2\"}"; }
status_on() { tget "$1" "$2"; [ "$(jqr .result.status)" = "$3" ]; }
tcall "$A" 11 tools/call '{"name":"quick","arguments":{}}'
QUICK=$(jqr .result.taskId)
like "$QUICK" '^[0-9a-f]{32}$' "host a makes a task"
wait_for 120 status_on "$B" "$QUICK" completed
ok "host b reads it completed (tasks/get)"
is "$(jqr '.result.result.content[0].text')" "quick done" "host b gives its result"

tcall "$A" 12 tools/call '{"name":"ask","arguments":{}}'
ASK=$(jqr .result.taskId)
wait_for 120 status_on "$B" "$ASK" input_required
ok "host b reads host a's task waiting for input"
is "$(jqr '.result.inputRequests.confirm.method')" elicitation/create "with its request"
tcall "$B" 13 tasks/update "{\"taskId\":\"$ASK\",\"inputResponses\":{\"confirm\":{\"action\":\"accept\",\"content\":{\"confirm\":true}}}}"
is "$STATUS/$(jqr '.error.code // "none"')" 200/none "host b: tasks/update answers it"
wait_for 120 status_on "$A" "$ASK" completed
ok "the task on host a ends"
is "$(jqr '.result.result.content[0].text')" "confirmed true" "with the answer given on host b"

rm -f "$T_DIR/slow.pid"
tcall "$A" 14 tools/call '{"name":"slow","arguments":{}}'
SLOW=$(jqr .result.taskId)
wait_for 120 test -s "$T_DIR/slow.pid"
SLOW_PID=$(cat "$T_DIR/slow.pid")
tcall "$B" 15 tasks/cancel "{\"taskId\":\"$SLOW\"}"
is "$STATUS/$(jqr '.error.code // "none"')" 200/none "host b cancels host a's running task"
wait_gone "$SLOW_PID" 120
ok "its process on host a is stopped"
wait_for 60 status_on "$A" "$SLOW" cancelled
ok "host a reads it cancelled"

# ---- --notify on a reaches a listen stream on b -----------------------------------------------
LS=$T_DIR/listen
curl -sN -X POST -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
	-H "MCP-Protocol-Version: $MODERN" -H 'Mcp-Method: subscriptions/listen' --max-time 600 \
	--data-binary "$(req '"L"' subscriptions/listen '{"notifications":{"toolsListChanged":true}}')" "$B" >"$LS" 2>/dev/null &
LS_PID=$!
T_PIDS+=("$LS_PID")
wait_for 120 grep -qs 'subscriptions/acknowledged' "$LS"
ok "host b holds a listen stream"
told() { [ "$(grep -c 'notifications/tools/list_changed' "$LS")" -ge "$1" ]; }
# notify_until N: --notify on host a until b's stream has been told N times
notify_until() {
	for _ in $(seq 1 30); do
		"$PHANTOM" -c "$T_DIR/a.yaml" --notify tools/list_changed >/dev/null 2>&1
		wait_for 4 told "$1" && return 0
	done
	return 1
}
notify_until 1
ok "--notify on host a reaches it through Redis"

# ---- Redis killed and started again on the same port --------------------------------------
kill -KILL "$REDIS_PID"
wait_gone "$REDIS_PID" 10 && ! pong
ok "Redis killed"
hello "$A" && hello "$B"
ok "without Redis both hosts serve stateless calls"
tget "$B" "$QUICK"
is "$STATUS/$(jqr .error.code)" 200/-32603 "and tasks/get answers -32603 at once"
unreachable() { grep -q 'hub: cluster: Redis at .* unreachable' "$1"; }
wait_for 60 unreachable "$LOG_A" && wait_for 60 unreachable "$LOG_B"
ok "both hubs notice"
redis_start || echo "# redis-server did not start again"
pong; ok "Redis started again on port $RPORT"
wait_for 120 subscribed "$LOG_A" 2 && wait_for 120 subscribed "$LOG_B" 2
ok "both hubs connect again by themselves"
notify_until 2
ok "announcements cross the hosts again"
wait_for 120 status_on "$B" "$QUICK" completed
ok "the task record made before is still there (append-only file)"
post "$B" "$INIT" --max-time 60
SID2=$(header Mcp-Session-Id)
lpost "$A" "$SID2" '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hello","arguments":{}}}'
is "$STATUS/$(jqr '.result.content[0].text')" "200/quick done" "a new session made on b is used on a"
newtask() { tcall "$B" 20 tools/call '{"name":"quick","arguments":{}}'; NEW=$(jqr .result.taskId); [ "$NEW" != null ]; }
wait_for 60 newtask && wait_for 120 status_on "$A" "$NEW" completed
ok "a new task made on b is read on a"
code=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "${V[@]}" -H "Mcp-Session-Id: $SID2" --max-time 60 "$A")
is "$code" 204 "and the session deleted on a"

# ---- a clean stop, and nothing reported -----------------------------------------------------
kill "$LS_PID" 2>/dev/null
# shellcheck disable=SC2154
for h in a b; do
	eval "pid=\$PID_$h"
	kill -TERM "$pid"
	wait_gone "$pid" 120
	ok "host $h stops on SIGTERM"
done
# shellcheck disable=SC2154
vg_clean "$VGW_a" 4 "host a's master, hub, workers and task supervisors"
# shellcheck disable=SC2154
vg_clean "$VGW_b" 4 "host b's master, hub and workers"
! grep -qF "$RPASS" "$LOG_A" "$LOG_B"
ok "the Redis password is in no log"
done_testing
