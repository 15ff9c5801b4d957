#!/bin/bash
# Tasks when something fails under them, through nginx: a hub killed with
# SIGKILL leaves its task supervisors to the master, which reaps them (no
# zombie waits for an init that a container may not have).
. "${top_srcdir:-.}/tests/lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"

EXT='{"extensions":{"io.modelcontextprotocol/tasks":{}}}'
STORE=$T_DIR/tasks
mkdir -p "$STORE"
# the handlers: sleep for arguments.seconds; ignore SIGTERM (noting its pid)
cat >"$T_DIR/sleeper.sh" <<'SH'
#!/bin/sh
s=$(jq -r '.arguments.seconds // 1')
sleep "$s"
printf '{"content":[{"type":"text","text":"slept %s"}]}' "$s"
SH
cat >"$T_DIR/stubborn.sh" <<SH
#!/bin/sh
trap '' TERM
echo \$\$ >"$T_DIR/stubborn.pid"
sleep 120
echo '{"content":[]}'
SH
chmod 0755 "$T_DIR"/*.sh
cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: tasks-faults, version: "1.0" }
workers: 2
shutdown_timeout: 3
limits: { exec_grace_ms: 3000 }
subscriptions: { control_socket: '' }
tasks: { dir: $STORE, poll_interval_ms: 200, purge_interval_ms: 500 }
tools:
  - { name: sleeper, description: sleeps, input: { seconds: { type: number } }, task: required, exec: [$T_DIR/sleeper.sh] }
  - { name: stubborn, description: ignores SIGTERM, task: required, exec: [$T_DIR/stubborn.sh] }
YAML
phantom_listen "$T_DIR/phantom.yaml" || { echo "not ok 1 - phantom starts"; exit 1; }
nginx_start "$PH_ADDR" || { echo "not ok 1 - nginx starts"; exit 1; }
U=$NGINX_URL

# call ID METHOD PARAMS: a 2026-07-28 request declaring the tasks extension,
# Mcp-Name from params.name or params.taskId
call() {
	local name body
	name=$(printf '%s' "$3" | jq -r '.name // .taskId // empty')
	body=$(printf '%s' "$3" | jq -c --argjson id "$1" --arg m "$2" --argjson meta "$(meta "$EXT")" \
		'{jsonrpc:"2.0",id:$id,method:$m,params:(. + {_meta:$meta})}')
	post "$U" "$body" -H "MCP-Protocol-Version: $MODERN" -H "Mcp-Method: $2" ${name:+-H "Mcp-Name: $name"}
}
# until_status TASK STATUS SECONDS: waits for the task to reach STATUS
until_status() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		call 9 tasks/get "{\"taskId\":\"$1\"}"
		[ "$(jqr .result.status)" = "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

# ---- a hub killed while a task runs ----------------------------------------------------
call 1 tools/call '{"name":"stubborn","arguments":{}}'
orphan=$(jqr .result.taskId)
wait_file "$T_DIR/stubborn.pid" 50
hub=$(hub_of "$PH_PID")
sup=$(pgrep -P "$hub" -x phantom-task | head -1)
[ -n "$sup" ]; ok "the task runs under a supervisor, a child of the hub"
kill -KILL "$hub"
# the supervisor stops its handler (which ignores SIGTERM: exec_grace_ms)
wait_for 2 test "$(ps -o ppid= -p "$sup" 2>/dev/null | tr -d ' ')" = "$PH_PID"
is "$(ps -o ppid= -p "$sup" 2>/dev/null | tr -d ' ')" "$PH_PID" \
	"the orphaned supervisor is the master's child (the master is the subreaper), not PID 1's"
wait_for 10 test ! -e "/proc/$sup"
[ ! -e "/proc/$sup" ]; ok "and the master reaps it when it ends: no zombie is left"
diag "the supervisor's state then: $(ps -o stat= -p "$sup" 2>/dev/null || echo gone)"
! kill -0 "$(cat "$T_DIR/stubborn.pid")" 2>/dev/null; ok "its handler was stopped"
until_status "$orphan" failed 5; ok "the task the crash cut short is failed"
call 2 tools/call '{"name":"sleeper","arguments":{"seconds":0}}'
after=$(jqr .result.taskId)
until_status "$after" completed 5; ok "the new hub runs a new task to completion"

done_testing
