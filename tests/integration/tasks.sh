#!/bin/bash
# Tools that run as tasks (io.modelcontextprotocol/tasks), through nginx:
# a long task survives a reload and the recycling of every worker and
# completes; its record is there at once and is the same on every worker;
# another principal cannot see, answer or cancel it; a handler asking for
# input mid-task gets the answers on its next round; cancel stops a handler
# that ignores SIGTERM; a burst of tasks stays within the limits with every
# record consistent; a restart marks the tasks it interrupted failed and
# keeps the finished ones; without the extension an optional tool answers
# inline and a required one is refused; task ids name their host.
. "${top_srcdir:-.}/tests/lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
command -v python3 >/dev/null || skip_all "python3 not installed"

EXT='{"extensions":{"io.modelcontextprotocol/tasks":{}}}'
bearer_token T_ALICE H_ALICE; bearer_token T_BOB H_BOB
STORE=$T_DIR/tasks

# the handlers: sleep for arguments.seconds; ask for a confirmation first;
# ignore SIGTERM (the whole group) and note its pid
cat >"$T_DIR/sleeper.sh" <<'SH'
#!/bin/sh
in=$(cat)
s=$(printf '%s' "$in" | jq -r '.arguments.seconds // 1')
sleep "$s"
printf '{"content":[{"type":"text","text":"slept %s"}]}' "$s"
SH
cat >"$T_DIR/confirm.sh" <<'SH'
#!/bin/sh
in=$(cat)
sleep "$(printf '%s' "$in" | jq -r '.arguments.delay // 0')"
ans=$(printf '%s' "$in" | jq -c '.inputResponses.ok // empty')
if [ -z "$ans" ]; then
	printf '{"inputRequired":{"inputRequests":{"ok":{"method":"elicitation/create","params":{"message":"Go?","requestedSchema":{"type":"object","properties":{"go":{"type":"boolean"}}}}}},"state":{"round":1}}}'
	exit 0
fi
state=$(printf '%s' "$in" | jq -c '.state')
printf '{"content":[{"type":"text","text":"answer %s state %s"}]}' "$(printf '%s' "$ans" | jq -r .action)" "$(printf '%s' "$state" | jq -r .round)"
SH
cat >"$T_DIR/stubborn.sh" <<SH
#!/bin/sh
trap '' TERM
echo \$\$ >"$T_DIR/stubborn.pid"
sleep 120
echo '{"content":[]}'
SH
# await: true: asks two questions on fd 3 while it runs, reads the answers
# as one line on stdin
cat >"$T_DIR/asker.sh" <<'SH'
#!/bin/sh
read -r doc
sleep "$(printf '%s' "$doc" | jq -r '.arguments.delay // 0')"
echo '{"inputRequired":{"inputRequests":{"a":{"method":"elicitation/create","params":{"message":"A?","requestedSchema":{"type":"object","properties":{}}}},"b":{"method":"elicitation/create","params":{"message":"B?","requestedSchema":{"type":"object","properties":{}}}}}}}' >&3
read -r answers
a=$(printf '%s' "$answers" | jq -r '.inputResponses.a.content.v')
b=$(printf '%s' "$answers" | jq -r '.inputResponses.b.content.v')
printf '{"content":[{"type":"text","text":"pid %s a=%s b=%s"}]}' "$$" "$a" "$b"
SH
printf '#!/bin/sh\ncat >/dev/null\nhead -c 5000 /dev/zero | tr "\\0" x\n' >"$T_DIR/big.sh"
chmod 0755 "$T_DIR"/*.sh

# conf FILE HOST: the test server, its task store in STORE
conf() {
	cat >"$1" <<YAML
server: { name: tasks-test, version: "1.0" }
workers: 2
max_requests: 4
shutdown_timeout: 3
limits: { exec_grace_ms: 500 }
subscriptions: { control_socket: '' }
tasks: { dir: $STORE, host: $2, poll_interval_ms: 200, max_running: 40, max_per_principal: 30, max_records: 5000,
         max_result: 4096, purge_interval_ms: 500 }
auth:
  mode: bearer
  tokens:
    - { principal: alice, sha256: $H_ALICE }
    - { principal: bob, sha256: $H_BOB }
tools:
  - { name: sleeper, description: sleeps, input: { seconds: { type: number } }, task: optional, exec: [$T_DIR/sleeper.sh] }
  - { name: must, description: only as a task, task: required, exec: [$T_DIR/sleeper.sh] }
  - { name: confirm, description: asks first, input: { delay: { type: number } }, task: required, exec: [$T_DIR/confirm.sh] }
  - { name: stubborn, description: ignores SIGTERM, task: required, exec: [$T_DIR/stubborn.sh] }
  - { name: asker, description: asks while it runs, input: { delay: { type: number } }, task: required, await: true, exec: [$T_DIR/asker.sh] }
  - { name: big, description: answers too much, task: required, exec: [$T_DIR/big.sh] }
  - { name: brief, description: kept three seconds, input: { seconds: { type: number } }, task: required, task_ttl_ms: 3000, exec: [$T_DIR/sleeper.sh] }
YAML
}
conf "$T_DIR/phantom.yaml" alpha
# stdio has no auth and no hub
sed -e '/^auth:/,/^tools:/{/^tools:/!d}' "$T_DIR/phantom.yaml" >"$T_DIR/stdio.yaml"
behind_nginx phantom_listen "$T_DIR/phantom.yaml"

# tpost WHO ID METHOD PARAMS [CAPS]: a 2026-07-28 request as WHO (alice or
# bob) declaring CAPS (default: the tasks extension), Mcp-Name from
# params.name or params.taskId
tpost() {
	local who=$1 id=$2 method=$3 params=$4 caps=${5:-$EXT} tok name
	tok=$T_ALICE; [ "$who" = bob ] && tok=$T_BOB
	name=$(printf '%s' "$params" | jq -r '.name // .taskId // empty')
	local body; body=$(printf '%s' "$params" | jq -c --argjson id "$id" --arg m "$method" --arg v "$MODERN" \
		--argjson caps "$caps" '{jsonrpc:"2.0",id:$id,method:$m,params:(. + {_meta:{
		"io.modelcontextprotocol/protocolVersion":$v,"io.modelcontextprotocol/clientCapabilities":$caps}})}')
	post "$U" "$body" -H "Authorization: Bearer $tok" -H "MCP-Protocol-Version: $MODERN" \
		-H "Mcp-Method: $method" ${name:+-H "Mcp-Name: $name"}
}
# status WHO TASK: the task's status as WHO sees it (or the error code)
status() {
	tpost "$1" 9 tasks/get "{\"taskId\":\"$2\"}"
	jqr '.result.status // .error.code'
}
# wait_status WHO TASK STATUS SECONDS
wait_status() {
	local i
	for ((i = 0; i < $4 * 10; i++)); do
		[ "$(status "$1" "$2")" = "$3" ] && return 0
		sleep 0.1
	done
	return 1
}

# ---- discovery, and calls without the extension ------------------------------------
tpost alice 1 server/discover '{}'
is "$(jqr '.result.capabilities.extensions["io.modelcontextprotocol/tasks"] | type')" object \
	"server/discover lists the tasks extension"
tpost alice 2 tools/call '{"name":"sleeper","arguments":{"seconds":0}}' '{}'
is "$(jqr '.result.resultType')/$(jqr '.result.content[0].text')" "complete/slept 0" \
	"task: optional without the extension answers inline"
tpost alice 3 tools/call '{"name":"must","arguments":{}}' '{}'
is "$STATUS/$(jqr .error.code)" 400/-32021 "task: required without the extension is -32021"
is "$(jqr '.error.data.requiredCapabilities.extensions["io.modelcontextprotocol/tasks"] | type')" object \
	"and its data names the extension"

# ---- what the configuration refuses ------------------------------------------------
export PHANTOM_MODULE_PATH=${PHANTOM_MODULE_PATH:-$top_builddir/tests/modules/.libs}
bad() { # bad YAML-TOOL WHAT: -t refuses a configuration with this tool
	printf 'tools:\n  - %s\n' "$1" >"$T_DIR/bad.yaml"
	out=$("$PHANTOM" -c "$T_DIR/bad.yaml" -t 2>&1); rc=$?
	is "$rc" 1 "-t refuses $2"
	diag "$(head -1 <<<"$out")"
}
bad '{ name: m, module: testmod.so, symbol: all_content, task: required }' "a module handler as a task"
like "$out" "module handler cannot run as a task" "and says why"
bad '{ name: m, exec: [/bin/true], task: sometimes }' "an unknown task mode"
bad '{ name: m, exec: [/bin/true], await: true }' "await without task"
bad '{ name: m, exec: [/bin/true], task: optional, persistent: true }' "a persistent handler as a task"

# ---- no hub: stdio ------------------------------------------------------------------------
printf '%s\n' "$(jq -nc --arg v "$MODERN" --argjson caps "$EXT" '{jsonrpc:"2.0",id:1,method:"tools/call",params:{name:"must",
	arguments:{},_meta:{"io.modelcontextprotocol/protocolVersion":$v,"io.modelcontextprotocol/clientCapabilities":$caps}}}')" \
	"$(jq -nc --arg v "$MODERN" --argjson caps "$EXT" '{jsonrpc:"2.0",id:2,method:"tools/call",params:{name:"sleeper",
	arguments:{seconds:0},_meta:{"io.modelcontextprotocol/protocolVersion":$v,"io.modelcontextprotocol/clientCapabilities":$caps}}}')" |
	timeout 20 "$PHANTOM" -c "$T_DIR/stdio.yaml" --stdio >"$T_DIR/stdio.out" 2>"$T_DIR/stdio.err"
is "$(jq -r 'select(.id == 1) | .error.code' "$T_DIR/stdio.out")" -32603 "stdio (no hub): a required task tool answers -32603"
like "$(jq -r 'select(.id == 1) | .error.message' "$T_DIR/stdio.out")" "hub" "saying tasks need the hub"
is "$(jq -r 'select(.id == 2) | .result.content[0].text' "$T_DIR/stdio.out")" "slept 0" "an optional one answers inline"

# ---- a long task through a reload and the recycling of every worker ---------------
LONG=${TASKS_LONG_S:-30}
tpost alice 4 tools/call "{\"name\":\"sleeper\",\"arguments\":{\"seconds\":$LONG}}"
long=$(jqr .result.taskId)
is "$(jqr .result.resultType)/$(jqr .result.status)" task/working "a call of a task tool answers at once with a working task"
like "$long" '^alpha\.[0-9a-f]{32}$' "the task id names its host (tasks.host) and 128 random bits"
[ -f "$STORE/$long.json" ]; ok "its record is in the task store before the answer"
is "$(jqr '.result.ttlMs')/$(jqr '.result.pollIntervalMs')" "3600000/200" "ttlMs and pollIntervalMs come from tasks.*"
same=1
for i in 1 2 3 4 5 6; do [ "$(status alice "$long")" = working ] || same=0; done
is "$same" 1 "tasks/get on either worker sees it working"
before=$(workers_of "$PH_PID" | sort | tr '\n' ' ')
kill -HUP "$PH_PID"
sleep 1
for i in $(seq 1 12); do tpost alice 10 server/discover '{}' >/dev/null; done
after=$(workers_of "$PH_PID" | sort | tr '\n' ' ')
common=$(comm -12 <(tr ' ' '\n' <<<"$before" | sed '/^$/d') <(tr ' ' '\n' <<<"$after" | sed '/^$/d') | wc -l)
is "$common" 0 "every worker was replaced (reload, max_requests) while the task ran"
is "$(status alice "$long")" working "the task still runs"

# ---- ownership ----------------------------------------------------------------------
tpost bob 11 tasks/get "{\"taskId\":\"$long\"}"
is "$(jqr .error.code)/$(jqr .error.message)" "-32602/Unknown task: $long" "another principal's tasks/get: -32602 as for an unknown id"
tpost bob 12 tasks/cancel "{\"taskId\":\"$long\"}"
is "$(jqr .error.code)" -32602 "another principal cannot cancel it"
tpost bob 13 tasks/update "{\"taskId\":\"$long\",\"inputResponses\":{}}"
is "$(jqr .error.code)" -32602 "nor update it"
tpost alice 14 tasks/get "{\"taskId\":\"$long\"}" '{}'
is "$(jqr .error.code)" -32021 "tasks/get without the extension: -32021"
post "$U" "$(jq -nc --arg id "$long" --arg v "$MODERN" --argjson caps "$EXT" '{jsonrpc:"2.0",id:15,method:"tasks/get",
	params:{taskId:$id,_meta:{"io.modelcontextprotocol/protocolVersion":$v,"io.modelcontextprotocol/clientCapabilities":$caps}}}')" \
	-H "Authorization: Bearer $T_ALICE" -H "MCP-Protocol-Version: $MODERN" -H "Mcp-Method: tasks/get" -H "Mcp-Name: other"
is "$STATUS/$(jqr .error.code)" 400/-32020 "a Mcp-Name that is not the taskId: -32020"
tpost alice 16 tasks/get '{"taskId":"alpha.0123456789abcdef0123456789abcdef"}'
is "$(jqr .error.code)" -32602 "an unknown id: -32602"
tpost alice 17 tasks/get '{"taskId":"../../etc/passwd"}'
is "$(jqr .error.code)" -32602 "an id that is a path: -32602"

# ---- input while running ---------------------------------------------------------------
tpost alice 20 tools/call '{"name":"confirm","arguments":{}}'
ask=$(jqr .result.taskId)
wait_status alice "$ask" input_required 5; ok "a handler's inputRequired moves its task to input_required"
tpost alice 21 tasks/get "{\"taskId\":\"$ask\"}"
is "$(jqr '.result.inputRequests | keys | join(",")')" ok "tasks/get lists the open request"
tpost alice 22 tasks/update "{\"taskId\":\"$ask\",\"inputResponses\":{\"nope\":{\"action\":\"accept\"}}}"
is "$(jqr .result.resultType)/$(status alice "$ask")" complete/input_required "an unknown key is acked and changes nothing"
tpost alice 23 tasks/update "{\"taskId\":\"$ask\",\"inputResponses\":{\"ok\":{\"action\":\"accept\",\"content\":{\"go\":true}}}}"
is "$(jqr .result.resultType)" complete "the answer is acked"
wait_status alice "$ask" completed 5; ok "the next round completes the task"
tpost alice 24 tasks/get "{\"taskId\":\"$ask\"}"
is "$(jqr '.result.result.content[0].text')" "answer accept state 1" "the handler ran again with the answer and its state"
tpost alice 25 tasks/cancel "{\"taskId\":\"$ask\"}"
is "$(jqr .result.resultType)/$(status alice "$ask")" complete/completed "cancelling a finished task acks and keeps its status"

# await: true: the same process asks on fd 3 and reads the answers on stdin
tpost alice 26 tools/call '{"name":"asker","arguments":{}}'
aw=$(jqr .result.taskId)
wait_status alice "$aw" input_required 5; ok "await: a question on fd 3 moves the task to input_required"
tpost alice 27 tasks/get "{\"taskId\":\"$aw\"}"
is "$(jqr '.result.inputRequests | keys | join(",")')" a,b "both open requests are listed"
apid=$(pgrep -f "$T_DIR/asker.sh" | head -1)
tpost alice 28 tasks/update "{\"taskId\":\"$aw\",\"inputResponses\":{\"a\":{\"action\":\"accept\",\"content\":{\"v\":\"one\"}}}}"
tpost alice 29 tasks/get "{\"taskId\":\"$aw\"}"
is "$(jqr .result.status)/$(jqr '.result.inputRequests | keys | join(",")')" input_required/b \
	"a partial answer: right after the ack only the other request is open"
tpost alice 30 tasks/update "{\"taskId\":\"$aw\",\"inputResponses\":{\"b\":{\"action\":\"accept\",\"content\":{\"v\":\"two\"}}}}"
wait_status alice "$aw" completed 5; ok "await: the last answer lets it complete"
tpost alice 31 tasks/get "{\"taskId\":\"$aw\"}"
is "$(jqr '.result.result.content[0].text')" "pid $apid a=one b=two" "the process that asked read both answers on its stdin"

# ---- the result's size, and expiry ------------------------------------------------------------
tpost alice 32 tools/call '{"name":"big","arguments":{}}'
bigid=$(jqr .result.taskId)
wait_status alice "$bigid" failed 5; ok "a result over tasks.max_result fails the task"
tpost alice 33 tasks/get "{\"taskId\":\"$bigid\"}"
is "$(jqr .result.error.code)/$(jqr .result.statusMessage)" "-32603/the result is over tasks.max_result" "with -32603 and the reason"
tpost alice 34 tools/call '{"name":"brief","arguments":{"seconds":0}}'
br=$(jqr .result.taskId)
wait_status alice "$br" completed 5; ok "a task with task_ttl_ms 3000 completes"
ended=$(jq -r ._ended_ms "$STORE/$br.json")
is "$(status alice "$br")" completed "it is still there before its ttlMs has passed"
for i in $(seq 1 100); do [ "$(status alice "$br")" = -32602 ] && break; sleep 0.1; done
gone=$(date +%s%3N)
is "$(status alice "$br")" -32602 "after its ttlMs it is unknown"
[ $((gone - ended)) -ge 3000 ]; ok "not before its ttlMs (unknown $((gone - ended)) ms after it ended)"
wait_for 5 test ! -e "$STORE/$br.json"; ok "and the hub's pass removed its record"

# ---- status pushed to listen streams that asked for the task ---------------------------
# listen WHO TASKIDS-JSON OUT [SECONDS]: a subscriptions/listen stream until
# SECONDS (6) pass without an event, its SSE data lines in OUT (in the
# background)
listen() {
	python3 - "$U" "$([ "$1" = bob ] && echo "$T_BOB" || echo "$T_ALICE")" "$MODERN" "$2" "$EXT" "${4:-6}" >"$3" <<'PY' &
import json, sys, urllib.request
url, tok, ver, ids, caps, secs = sys.argv[1:7]
body = {"jsonrpc": "2.0", "id": "L", "method": "subscriptions/listen",
        "params": {"notifications": {"taskIds": json.loads(ids)},
                   "_meta": {"io.modelcontextprotocol/protocolVersion": ver,
                             "io.modelcontextprotocol/clientCapabilities": json.loads(caps)}}}
req = urllib.request.Request(url, json.dumps(body).encode(), {
    "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
    "Authorization": "Bearer " + tok, "MCP-Protocol-Version": ver, "Mcp-Method": "subscriptions/listen"})
try:
    with urllib.request.urlopen(req, timeout=float(secs)) as r:
        for line in r:
            if line.startswith(b"data: "):
                print(line[6:].decode().strip(), flush=True)
except Exception:
    pass
PY
}
# (a task of 5 s: the three streams are open before it ends, even on a
# busy machine)
tpost alice 35 tools/call '{"name":"sleeper","arguments":{"seconds":5}}'
pushed=$(jqr .result.taskId)
listen alice "[\"$pushed\",\"alpha.0123456789abcdef0123456789abcdef\"]" "$T_DIR/l-mine.out"
listen alice "[\"$ask\"]" "$T_DIR/l-other.out"
listen bob "[\"$pushed\"]" "$T_DIR/l-bob.out"
for f in l-mine l-other l-bob; do wait_for 10 grep -q acknowledged "$T_DIR/$f.out"; done
wait_status alice "$pushed" completed 10
sleep 1
ack() { jq -c 'select(.method == "notifications/subscriptions/acknowledged") | .params.notifications.taskIds' "$1" | head -1; }
is "$(ack "$T_DIR/l-mine.out")" "[\"$pushed\"]" "listen taskIds: the ack lists the principal's task, not an unknown id"
is "$(ack "$T_DIR/l-bob.out")" "[]" "another principal's listen is not granted the task"
is "$(jq -r "select(.method == \"notifications/tasks\" and .params.taskId == \"$pushed\") | .params.status" "$T_DIR/l-mine.out" | tail -1)" \
	completed "the stream that asked for the task hears it completed (notifications/tasks)"
is "$(jq -r 'select(.method == "notifications/tasks") | .params.result.content[0].text' "$T_DIR/l-mine.out" | tail -1)" "slept 5" \
	"with the task as tasks/get shows it"
is "$(jq -r 'select(.method == "notifications/tasks") | .params._meta["io.modelcontextprotocol/subscriptionId"]' "$T_DIR/l-mine.out" | tail -1)" L \
	"tagged with the subscription id"
is "$(grep -c notifications/tasks "$T_DIR/l-other.out")/$(grep -c notifications/tasks "$T_DIR/l-bob.out")" 0/0 \
	"no other stream hears of it"
# a task that asks for input (a handler's inputRequired, or a question on
# fd 3 with await: true) after its stream is open: its supervisor tells the
# hub, which pushes input_required (the supervisors could not reach it)
tpost alice 41 tools/call '{"name":"confirm","arguments":{"delay":3}}'
lask=$(jqr .result.taskId)
tpost alice 42 tools/call '{"name":"asker","arguments":{"delay":3}}'
lawait=$(jqr .result.taskId)
listen alice "[\"$lask\",\"$lawait\"]" "$T_DIR/l-ask.out" 12
wait_for 5 grep -q acknowledged "$T_DIR/l-ask.out"
wait_status alice "$lask" input_required 6 && wait_status alice "$lawait" input_required 6
sleep 0.5
pushed_of() { jq -r "select(.method == \"notifications/tasks\" and .params.taskId == \"$1\") | $2" "$T_DIR/l-ask.out" | head -1; }
is "$(pushed_of "$lask" .params.status)/$(pushed_of "$lask" '.params.inputRequests | keys | join(",")')" input_required/ok \
	"listen taskIds: a handler's inputRequired is pushed as input_required with its request"
is "$(pushed_of "$lawait" .params.status)/$(pushed_of "$lawait" '.params.inputRequests | keys | join(",")')" input_required/a,b \
	"and so is an await question on fd 3"
tpost alice 43 tasks/update "{\"taskId\":\"$lask\",\"inputResponses\":{\"ok\":{\"action\":\"accept\",\"content\":{\"go\":true}}}}"
wait_status alice "$lask" completed 5; ok "the answered task then completes"
wait_for 3 grep -q "\"taskId\":\"$lask\".*\"status\":\"completed\"\|\"status\":\"completed\".*\"taskId\":\"$lask\"" "$T_DIR/l-ask.out"
is "$(jq -r "select(.method == \"notifications/tasks\" and .params.taskId == \"$lask\") | .params.status" "$T_DIR/l-ask.out" | paste -sd ' ')" \
	"input_required working completed" "the stream hears each change once: input_required, working, completed"
tpost alice 44 tasks/cancel "{\"taskId\":\"$lawait\"}"
is "$(jqr .result.resultType)" complete "and the other is cancelled"
post "$U" "$(jq -nc --arg v "$MODERN" '{jsonrpc:"2.0",id:36,method:"subscriptions/listen",params:{notifications:{taskIds:["x"]},
	_meta:{"io.modelcontextprotocol/protocolVersion":$v,"io.modelcontextprotocol/clientCapabilities":{}}}}')" \
	-H "Authorization: Bearer $T_ALICE" -H "MCP-Protocol-Version: $MODERN" -H "Mcp-Method: subscriptions/listen"
is "$(jqr .error.code)" -32021 "listen with taskIds without the extension: -32021"

# ---- cancel of a handler that ignores SIGTERM ------------------------------------------
rm -f "$T_DIR/stubborn.pid"
tpost alice 30 tools/call '{"name":"stubborn","arguments":{}}'
stub=$(jqr .result.taskId)
wait_file "$T_DIR/stubborn.pid" 50
spid=$(cat "$T_DIR/stubborn.pid" 2>/dev/null)
tpost alice 31 tasks/cancel "{\"taskId\":\"$stub\"}"
is "$(jqr '.result | keys | join(",")')" "_meta,resultType" "the cancel ack is an empty complete result"
t0=$SECONDS
wait_status alice "$stub" cancelled 10; ok "the task is cancelled"
diag "cancelled after $((SECONDS - t0)) s"
sleep 0.3
! kill -0 "$spid" 2>/dev/null; ok "its handler, which ignored SIGTERM, was killed"

# ---- a burst: limits hold, every record consistent --------------------------------------
N=${TASKS_BURST:-1000}
python3 - "$U" "$T_ALICE" "$MODERN" "$N" >"$T_DIR/burst.json" <<'PY'
import json, sys, urllib.request, concurrent.futures as cf
url, tok, ver, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
caps = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
def call(i):
    body = {"jsonrpc": "2.0", "id": i, "method": "tools/call",
            "params": {"name": "sleeper", "arguments": {"seconds": 2},
                       "_meta": {"io.modelcontextprotocol/protocolVersion": ver,
                                 "io.modelcontextprotocol/clientCapabilities": caps}}}
    req = urllib.request.Request(url, json.dumps(body).encode(), {
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "Authorization": "Bearer " + tok, "MCP-Protocol-Version": ver,
        "Mcp-Method": "tools/call", "Mcp-Name": "sleeper"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.loads(r.read())
    except Exception as e:
        return {"exception": str(e)}
with cf.ThreadPoolExecutor(64) as ex:
    for res in ex.map(call, range(n)):
        print(json.dumps(res))
PY
made=$(jq -s '[.[] | select(.result.resultType == "task")] | length' "$T_DIR/burst.json")
refused=$(jq -s '[.[] | select(.error.message | tostring | test("tasks.max_per_principal|tasks.max_running"))] | length' "$T_DIR/burst.json")
other=$(jq -s "length - $made - $refused" "$T_DIR/burst.json")
diag "burst of $N: $made tasks, $refused refused by a limit, $other other answers"
is "$other" 0 "every call of the burst got a task or the documented limit error"
[ "$made" -ge 1 ] && [ "$made" -le $((N)) ]; ok "some tasks were made"
peak=0
for i in $(seq 1 20); do
	n=$(pgrep -c -f "$T_DIR/sleeper.sh" || true)
	[ "$n" -gt "$peak" ] && peak=$n
	sleep 0.1
done
[ "$peak" -le 30 ]; ok "at most tasks.max_per_principal (30) task processes ran at once (peak $peak)"
ids=$(jq -r 'select(.result.resultType == "task") | .result.taskId' "$T_DIR/burst.json")
for id in $ids; do wait_status alice "$id" completed 15 || break; done
bad=0
for id in $ids; do
	jq -e '.status == "completed" and .result.content[0].text == "slept 2" and (._sup.pid | type) == "number"' \
		"$STORE/$id.json" >/dev/null || bad=$((bad + 1))
done
is "$bad" 0 "every record of the burst is complete and consistent"
is "$(find "$STORE" -name '.*.tmp' | wc -l)" 0 "no half-written record is left in the store"

# ---- the long task completes -----------------------------------------------------------------
wait_status alice "$long" completed $((LONG + 10)); ok "the ${LONG} s task completed"
tpost alice 40 tasks/get "{\"taskId\":\"$long\"}"
is "$(jqr '.result.result.content[0].text')" "slept $LONG" "with its result"

# ---- a restart while a task runs -------------------------------------------------------------
tpost alice 50 tools/call '{"name":"sleeper","arguments":{"seconds":60}}'
cut=$(jqr .result.taskId)
tpost alice 51 tools/call '{"name":"sleeper","arguments":{"seconds":0}}'
quick=$(jqr .result.taskId)
wait_status alice "$quick" completed 5
kill -TERM "$PH_PID"
wait_gone "$PH_PID" 10
! pgrep -f "$T_DIR/sleeper.sh" >/dev/null; ok "the server stopped, and no task process outlived it"
phantom_listen "$T_DIR/phantom.yaml" || { echo "not ok - phantom restarts"; exit 1; }
nginx_start "$PH_ADDR"
U=$NGINX_URL
wait_status alice "$cut" failed 5; ok "the task the restart cut short is failed"
tpost alice 52 tasks/get "{\"taskId\":\"$cut\"}"
like "$(jqr .result.statusMessage)" "stopped|restarted" "its statusMessage says the server stopped"
is "$(status alice "$quick")" completed "a finished task is kept across the restart"
tpost alice 53 server/discover '{}'
is "$STATUS/$(jqr .result.resultType)" 200/complete "the restarted server serves"
# ---- a record planted as a symbolic link is not read
tpost alice 54 tasks/get "{\"taskId\":\"$quick\"}"
jq -c . <<<"$BODY" >/dev/null
cp "$STORE/$quick.json" "$T_DIR/planted.json"
fake=alpha.$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
sed "s/$quick/$fake/g" "$T_DIR/planted.json" >"$T_DIR/fake.json"
ln -s "$T_DIR/fake.json" "$STORE/$fake.json"
tpost alice 55 tasks/get "{\"taskId\":\"$fake\"}"
is "$(jqr .error.code)" -32602 "a task record that is a symbolic link is not read (an unknown task)"

# ---- a task store another user could write: no task is created in it
mkdir -m 0777 "$T_DIR/open-store" && chmod 0777 "$T_DIR/open-store"
sed "s#dir: $STORE,#dir: $T_DIR/open-store,#" "$T_DIR/phantom.yaml" >"$T_DIR/open.yaml"
kill -TERM "$PH_PID"
wait_gone "$PH_PID" 10
phantom_listen "$T_DIR/open.yaml" || { echo "not ok - phantom starts on the open store"; exit 1; }
nginx_start "$PH_ADDR"
U=$NGINX_URL
tpost alice 56 tools/call '{"name":"must","arguments":{}}'
is "$(jqr '.error.message // .result.content[0].text')" "The task could not be created: its record could not be written" \
	"a task store writable by every user: no task is created"
grep -q "it is writable by its group or by every user" "$PH_LOG"; ok "... and the log says why"
is "$(ls -A "$T_DIR/open-store" | wc -l)" 0 "nothing was written there"
grep -q 'ERROR: AddressSanitizer\|runtime error' "$PH_LOG" && fail=1 || fail=0
is "$fail" 0 "no sanitizer report in the server log"
done_testing
