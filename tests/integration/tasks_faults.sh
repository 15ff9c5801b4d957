#!/bin/bash
# Tasks when something fails under them, through nginx: a task store that
# cannot be written (read-only) acknowledges no cancel and no answer, and a
# cancel still stops the task's process; a hub killed with SIGKILL leaves
# its task supervisors to the master, which reaps them (no zombie waits for
# an init that a container may not have).
. "${top_srcdir:-.}/tests/lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"

EXT='{"extensions":{"io.modelcontextprotocol/tasks":{}}}'
STORE=$T_DIR/tasks
mkdir -p "$STORE"
# a store that can be made read-only: its own tmpfs for root (who writes
# through file modes), the file mode for anyone else
if [ "$(id -u)" = 0 ]; then
	mount -t tmpfs -o size=8m,mode=0700 phantom-tasks "$STORE" 2>/dev/null && RO=mount
	T_CLEANUP+=("umount -l '$STORE'")
else
	RO=chmod
fi
store_ro() { if [ "$RO" = mount ]; then mount -o remount,ro "$STORE"; else chmod 0500 "$STORE"; fi; }
store_rw() { if [ "$RO" = mount ]; then mount -o remount,rw "$STORE"; else chmod 0700 "$STORE"; fi; }
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
cat >"$T_DIR/confirm.sh" <<'SH'
#!/bin/sh
ans=$(jq -c '.inputResponses.ok // empty')
if [ -z "$ans" ]; then
	printf '{"inputRequired":{"inputRequests":{"ok":{"method":"elicitation/create","params":{"message":"Go?","requestedSchema":{"type":"object","properties":{}}}}}}}'
	exit 0
fi
printf '{"content":[{"type":"text","text":"answer %s"}]}' "$(printf '%s' "$ans" | jq -r .action)"
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
  - { name: confirm, description: asks first, task: required, exec: [$T_DIR/confirm.sh] }
  - { name: stubborn, description: ignores SIGTERM, task: required, exec: [$T_DIR/stubborn.sh] }
YAML
behind_nginx phantom_listen "$T_DIR/phantom.yaml"

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

# ---- a task store that cannot be written ----------------------------------------------
if [ -n "${RO:-}" ]; then
	call 10 tools/call '{"name":"sleeper","arguments":{"seconds":60}}'
	long=$(jqr .result.taskId)
	call 11 tools/call '{"name":"confirm","arguments":{}}'
	asks=$(jqr .result.taskId)
	until_status "$asks" input_required 5
	wait_for 5 pgrep -f "$T_DIR/sleeper.sh" >/dev/null
	store_ro
	call 12 tasks/cancel "{\"taskId\":\"$long\"}"
	is "$(jqr .error.code)" -32603 "a read-only store: tasks/cancel is not acknowledged but answers -32603"
	like "$(jqr .error.message)" "cancel could not be recorded.*task store cannot be written.*being stopped" \
		"saying the cancel could not be recorded and the process is stopped anyway"
	wait_for 5 sh -c "! pgrep -f '$T_DIR/sleeper.sh' >/dev/null"
	! pgrep -f "$T_DIR/sleeper.sh" >/dev/null; ok "the task's process was stopped all the same"
	call 13 tasks/update "{\"taskId\":\"$asks\",\"inputResponses\":{\"ok\":{\"action\":\"accept\",\"content\":{}}}}"
	is "$(jqr .error.code)" -32603 "tasks/update is not acknowledged either: -32603"
	like "$(jqr .error.message)" "answers could not be recorded.*still waits" "saying the answers were not recorded"
	call 14 tasks/get "{\"taskId\":\"$asks\"}"
	is "$(jqr .result.status)/$(jqr '.result.inputRequests | keys | join(",")')" input_required/ok \
		"the task still asks, so the client can answer again"
	store_rw
	call 15 tasks/update "{\"taskId\":\"$asks\",\"inputResponses\":{\"ok\":{\"action\":\"accept\",\"content\":{}}}}"
	is "$(jqr .result.resultType)" complete "once the store is writable the same answer is acked"
	until_status "$asks" completed 5; ok "and the task completes with it"
	call 16 tasks/get "{\"taskId\":\"$asks\"}"
	is "$(jqr '.result.result.content[0].text')" "answer accept" "with the answer"
else
	diag "the store cannot be made read-only here (root without mount): its checks are skipped"
fi

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
