#!/bin/bash
# Persistent exec handlers through the real nginx: a warm process serves
# the next call, and every way a program can misbehave (never answering,
# answering twice or for another id, closing stdout, flooding fd 3 or
# stderr, a child holding the pipes, a crash, output over the cap,
# max_calls, max_rss, idle_ms, cancellation) ends with the process
# replaced, the worker free again within the timeout, no fd leaked, no
# zombie; each is followed by a call that succeeds. Reload and stop kill
# the processes; the log line says warm or fresh.
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/reglib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
[ -x /usr/bin/python3 ] || skip_all "python3 not installed"

PY=$top_srcdir/tests/handlers/persist_modes.py
IN='input: {mode: string, file: string}'
cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: persistent-test, version: "1.0" }
workers: 1
limits: { exec_timeout_ms: 5000, exec_grace_ms: 200 }
tools:
  - { name: p, exec: [$PY], persistent: true, timeout_ms: 800, max_output: 4096, $IN }
  - { name: maxc, exec: [$PY], persistent: {max_calls: 2}, $IN }
  - { name: idle, exec: [$PY], persistent: {idle_ms: 1000}, $IN }
  - { name: c, exec: [$PY], persistent: true, $IN }
  - { name: rss, exec: [$PY], persistent: {max_rss: 50000000}, $IN }
  - { name: pre, exec: [$PY], persistent: {start: true}, $IN }
  - { name: sh_loop, exec: [$top_srcdir/examples/scripts/echo_persistent.sh], persistent: true, input: {text: string} }
YAML
# the shipped PHP loop, where php is installed (scripts/test.sh installs php-cli)
HAVE_PHP=
if command -v php >/dev/null; then
	HAVE_PHP=1
	printf '  - { name: php_loop, exec: [%s, %s], persistent: true, input: {text: string} }\n' \
		"$(command -v php)" "$top_srcdir/examples/scripts/echo_persistent.php" >>"$T_DIR/phantom.yaml"
	# a host whose php.ini shows errors on stdout (PHP's own default)
	printf '  - { name: php_warn, exec: [%s, -d, display_errors=stdout, %s], persistent: true, input_schema: {type: object, properties: {text: {}}} }\n' \
		"$(command -v php)" "$top_srcdir/examples/scripts/echo_persistent.php" >>"$T_DIR/phantom.yaml"
fi
behind_nginx phantom_up "$T_DIR/phantom.yaml"

# pcall TOOL MODE [CURL-ARGS...]: one call; TEXT is the answer's text, PID
# the process that served it (empty on a failure)
pcall() {
	local tool=$1 mode=$2; shift 2
	mcall "$U" 1 tools/call "{\"name\":\"$tool\",\"arguments\":{\"mode\":\"$mode\",\"file\":\"$T_DIR/child.pid\"}}" "$@"
	TEXT=$(fjq '.result.content[0].text')
	PID=$(printf '%s' "$TEXT" | sed -n 's/^pid=\([0-9]*\) .*/\1/p')
}
# failed MODE: the last call was the generic tool failure
failed() { is "$(fjq .result.isError)/$TEXT" "true/Tool execution failed" "$1: the call fails with the generic error"; }
# after WHAT: the next call succeeds, served by a fresh process
after() {
	local old=$LAST
	pcall p ok
	is "$(fjq .result.isError)" false "the call after $1 succeeds"
	[ -n "$PID" ] && [ "$PID" != "$old" ]; ok "... served by a new process"
	like "$TEXT" "calls=1$" "... which has served one call"
	[ -z "$old" ] || wait_gone "$old" 2; ok "... and the old process is gone"
	LAST=$PID
}
ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
# fds: the worker's open fds, less the five (stdin, stdout, stderr, fd 3,
# pidfd) of each persistent process it runs now
fds() { echo $(( $(ls "/proc/$WORKER/fd" | wc -l) - 5 * $(pgrep -c -P "$WORKER") )); }

# ---- start: true ----------------------------------------------------------------
wait_for 5 pgrep -f "$PY" >/dev/null; ok "persistent {start: true}: the process runs before any call"
PRE=$(pgrep -f "$PY" | tr '\n' ' ')
is "$(wc -w <<<"$PRE")" 1 "... only that one (the others start at their first call)"
pcall pre ok
is "$PID/$TEXT" "${PRE% }/pid=${PRE% } calls=1" "its first call is served by it"
grep -q 'target=pre status=200 .*exec=warm' "$PH_LOG"; ok "... warm"

# ---- warm processes -----------------------------------------------------------
pcall p ok
is "$(fjq .result.isError)" false "a persistent tool answers"
like "$TEXT" "calls=1$" "the first call starts the process"
FIRST=$PID
pcall p ok
is "$PID/$TEXT" "$FIRST/pid=$FIRST calls=2" "the second call is served by the same, warm process"
grep -q 'target=p status=200 .*exec=fresh' "$PH_LOG"; ok "the log line of the first call says exec=fresh"
grep -q 'target=p status=200 .*exec=warm' "$PH_LOG"; ok "... and of the second exec=warm"
LAST=$FIRST
WORKER=$PH_PID # workers: 1 is one process, no master
FDS0=$(fds)

# ---- failures during a call ---------------------------------------------------
T0=$(date +%s%N); pcall p hang; T=$(ms_since "$T0")
failed "never answering"
[ "$T" -lt 2000 ]; ok "never answering holds the worker for the timeout (800 ms) only (${T} ms)"
grep -q "tool p: .*timed out" "$PH_LOG"; ok "the log says it timed out"
after "a timeout"

pcall p twice
is "$(fjq .result.isError)" false "answering twice: the first answer is used"
after "an answer twice"
# both lines in one read, or the second one seen before the next call
grep -Eq "tool p: .*(wrote more than one answer line|wrote on stdout .*between calls)" "$PH_LOG"; ok "the log says it answered twice"

pcall p late
is "$(fjq .result.isError)" false "an answer followed by a late second one: the first is used"
sleep 0.5
after "a late second answer"
grep -q "tool p: the persistent process wrote on stdout (or closed it) between calls" "$PH_LOG"; ok "the log says it wrote between calls"

pcall p wrongid
failed "answering for another id"
grep -q "tool p: the persistent process answered for call id [0-9]*, expected [0-9]*" "$PH_LOG"; ok "the log names both ids"
after "a wrong id"

pcall p noid
failed "an answer without an id"
after "a missing id"

pcall p notjson
failed "an answer that is not JSON"
grep -q "tool p: the persistent process did not answer with one JSON object line" "$PH_LOG"; ok "the log says so"
after "a line that is not JSON"

T0=$(date +%s%N); pcall p close; T=$(ms_since "$T0")
failed "closing stdout"
[ "$T" -lt 1500 ]; ok "closing stdout ends the call at once (${T} ms)"
grep -q "tool p: .*closed its stdout without answering" "$PH_LOG"; ok "the log says it closed its stdout"
after "closing stdout"

T0=$(date +%s%N); pcall p flood3; T=$(ms_since "$T0")
failed "flooding fd 3"
[ "$T" -lt 2000 ]; ok "flooding fd 3 holds the worker for the timeout only (${T} ms)"
after "a flood on fd 3"

T0=$(date +%s%N); pcall p floodstderr; T=$(ms_since "$T0")
failed "flooding stderr"
[ "$T" -lt 2000 ]; ok "flooding stderr holds the worker for the timeout only (${T} ms)"
grep -q "tool p: stderr: yyyy" "$PH_LOG"; ok "the flood on stderr goes to the log"
[ "$(stat -c %s "$PH_LOG")" -lt 1000000 ]; ok "... a bounded part of it"
after "a flood on stderr"

rm -f "$T_DIR/child.pid"
T0=$(date +%s%N); pcall p fork; T=$(ms_since "$T0")
failed "dying with a child that holds the pipes"
[ "$T" -lt 1500 ]; ok "the child holding the pipes does not hold the call (${T} ms)"
wait_file "$T_DIR/child.pid" && wait_gone "$(cat "$T_DIR/child.pid")" 2; ok "the child is killed with the process group"
after "a child holding the pipes"

rm -f "$T_DIR/child.pid"
pcall p forkhang
failed "hanging with a child that holds the pipes"
wait_file "$T_DIR/child.pid" && wait_gone "$(cat "$T_DIR/child.pid")" 2; ok "the child of a timed-out process is killed too"
after "a timeout with a child"

pcall p crash
failed "a crash"
grep -q "tool p: .*killed by signal 11" "$PH_LOG"; ok "the log names the signal"
after "a crash"

pcall p exit
failed "exiting without an answer"
after "an exit"

pcall p big
failed "an answer over max_output"
grep -q "tool p: .*more output than allowed" "$PH_LOG"; ok "the log says the answer was too large"
after "too much output"

# ---- between calls --------------------------------------------------------------
pcall p diesoon
is "$(fjq .result.isError)" false "a process that dies after answering: the answer counts"
DEAD=$PID
wait_gone "$DEAD" 2; ok "it is gone"
sleep 0.3
is "$(zombies_below "$PH_PID")" 0 "its exit is reaped while the worker waits (no zombie)"
grep -q "tool p: the persistent process exited between calls" "$PH_LOG"; ok "the log says it exited between calls"
after "an exit between calls"

# ---- cancellation ----------------------------------------------------------------
pcall c ok; LAST=$PID
curl -s -N --max-time 1 -o /dev/null -X POST -H 'Content-Type: application/json' \
	-H "MCP-Protocol-Version: $MODERN" -H 'Mcp-Method: tools/call' -H 'Mcp-Name: c' \
	--data-binary "$(PTOKEN=c1 mbody 2 tools/call '{"name":"c","arguments":{"mode":"slow"}}')" "$U"
wait_gone "$LAST" 3; ok "a client closing the stream kills the persistent process"
grep -q "tool c: .*cancelled" "$PH_LOG"; ok "the log says the call was cancelled"
pcall c ok
is "$(fjq .result.isError)" false "the call after a cancellation succeeds"
[ -n "$PID" ] && [ "$PID" != "$LAST" ]; ok "... served by a new process"

# ---- recycling -------------------------------------------------------------------
pcall maxc ok; A=$PID
pcall maxc ok; B=$PID
pcall maxc ok; C=$PID
is "$A" "$B" "max_calls 2: the second call is warm"
[ -n "$C" ] && [ "$C" != "$B" ]; ok "... the third call has a new process"
wait_gone "$B" 2; ok "... and the one that served max_calls is gone"
grep -q "tool maxc: persistent process $B served max_calls (2): recycled" "$PH_LOG"; ok "the log says why"

pcall rss grow; A=$PID
is "$(fjq .result.isError)" false "a call that grows the process past max_rss still answers"
wait_gone "$A" 2; ok "the process over max_rss is recycled after the call"
grep -q "tool rss: persistent process $A uses [0-9]* bytes, over max_rss (50000000): recycled" "$PH_LOG"; ok "the log says why"
pcall rss ok
[ -n "$PID" ] && [ "$PID" != "$A" ]; ok "the next call succeeds on a new process"

pcall idle ok; A=$PID
pcall idle ok
is "$PID" "$A" "idle_ms 1000: a call soon after is warm"
wait_gone "$A" 5; ok "after idle_ms without a call the process is stopped while the worker waits"
grep -q "tool idle: persistent process $A stopped: idle" "$PH_LOG"; ok "the log says it idled"
pcall idle ok
[ -n "$PID" ] && [ "$PID" != "$A" ]; ok "the next call succeeds on a new process"
IDLE=$PID

# ---- the loops in examples/scripts ---------------------------------------------------
# loop TOOL TEXT WHAT: two calls; both echo TEXT, the second from the warm process
loop() {
	local tool=$1 text=$2 args
	args=$(jq -cn --arg t "$text" --arg n "$tool" '{name:$n,arguments:{text:$t}}')
	mcall "$U" 1 tools/call "$args"
	is "$(fjq .result.isError)/$(fjq '.result.content[0].text')" "false/$text" "$3: the first call echoes the text"
	mcall "$U" 2 tools/call "$args"
	is "$(fjq .result.isError)/$(fjq '.result.content[0].text')" "false/$text" "$3: so does the second"
	grep -q "target=$tool status=200 .*exec=fresh" "$PH_LOG"; ok "$3: the first call started the process"
	grep -q "target=$tool status=200 .*exec=warm" "$PH_LOG"; ok "$3: the second was served by it, warm"
}
loop sh_loop "hello from sh" "echo_persistent.sh"
if [ -n "$HAVE_PHP" ]; then
	loop php_loop 'héllo "quoted" a/b \\ back' "echo_persistent.php"
	mcall "$U" 3 tools/call '{"name":"php_loop","arguments":{}}'
	is "$(fjq .result.isError)/$(fjq '.result.content[0].text')" "false/" "echo_persistent.php: no text, an empty one"
	mcall "$U" 4 tools/call '{"name":"php_warn","arguments":{"text":["not","a","string"]}}'
	is "$(fjq .result.isError)/$(fjq '.result.content[0].text')" "false/Array" \
		"echo_persistent.php with display_errors=stdout: a PHP warning does not break the answer line"
	grep -q "tool php_warn: stderr: .*Array to string conversion" "$PH_LOG"; ok "... it is in the server log"
else
	T_N=$((T_N + 1)); echo "ok $T_N # SKIP php is not installed: echo_persistent.php is not tested"
fi

# ---- what is left behind -----------------------------------------------------------
pcall p ok
# the idle tool's last process stops idle_ms after its call: counted while
# the worker closes its pipes and reaps it, the sum would be off by that
# one process, so the count is taken once it is gone (a leak stays a leak)
wait_gone "$IDLE" 5
fds_back() { [ "$(fds)" = "$FDS0" ]; }
wait_for 2 fds_back
is "$(fds)" "$FDS0" "after all of this the worker has as many fds open as before"
[ "$(fds)" = "$FDS0" ] || ls -la "/proc/$WORKER/fd" | sed "s/^/#   /"
is "$(zombies_below "$PH_PID")" 0 "no zombie below the server"
is "$(count_below "$PH_PID" sleep)" 0 "no stray process below the server"

# ---- reload and stop ------------------------------------------------------------------
pcall p ok; OLD=$PID
kill -HUP "$PH_PID"
wait_gone "$OLD" 5; ok "a reload stops the persistent processes of the old configuration"
pcall p ok
is "$(fjq .result.isError)" false "the new configuration serves the tool"
[ -n "$PID" ] && [ "$PID" != "$OLD" ]; ok "... with a process of its own"
NEW=$PID
kill "$PH_PID"
wait_gone "$PH_PID" 5; ok "the server stops"
wait_gone "$NEW" 2; ok "... and its persistent processes with it"

# ---- configuration ----------------------------------------------------------------------
bad() {
	printf '%s\n' "$2" >"$T_DIR/bad.yaml"
	OUT=$("$PHANTOM" -c "$T_DIR/bad.yaml" -t 2>&1); RC=$?
	is "$RC" 1 "-t refuses $1"
	like "$OUT" "$3" "... and says: $3"
}
bad "persistent that is not a boolean or mapping" 'tools: [{name: t, exec: [/bin/cat], persistent: [1]}]' 'bad.yaml:1: .*persistent: expected true, false or a mapping'
bad "an unknown key under persistent" 'tools: [{name: t, exec: [/bin/cat], persistent: {max_call: 3}}]' "unknown key 'persistent.max_call'"
bad "max_calls out of range" 'tools: [{name: t, exec: [/bin/cat], persistent: {max_calls: 0}}]' 'max_calls: expected an integer from 1'
bad "persistent on a module" 'tools: [{name: t, module: testmod.so, symbol: echo, persistent: true}]' "'persistent' applies to exec handlers"
bad "persistent without exec" 'tools: [{name: t, text: x, persistent: true}]' "'persistent' needs 'exec'|unknown key|needs a handler"
done_testing
