#!/bin/bash
# Concurrent stdio (stdio.concurrency): calls that may run a handler run in
# processes of their own. The SDK v2 client over stdio sees a fast tool sent
# after a slow one answered first, tools/list not held up, and an aborted
# call stopped (its process gone) while the others go on. A shell driver
# then checks the queue beyond stdio.concurrency, whole lines under load,
# EOF with calls in flight (all answered, then exit), shutdown_timeout
# bounding that wait, a cancel for a call still waiting for its turn, and a
# persistent handler kept warm by the call processes (replaced after a new
# initialize or a reload), also for calls still queued when stdin ends.
. "${top_srcdir:-.}/tests/lib.sh"

mkdir -p "$T_DIR/bin"
cat >"$T_DIR/bin/sleeper.sh" <<SH
#!/bin/sh
# writes its pid, then takes a long time
cat >/dev/null
echo \$\$ >"$T_DIR/sleeper.pid"
sleep 30
echo '{"content":[{"type":"text","text":"woke"}]}'
SH
cat >"$T_DIR/bin/nap.sh" <<'SH'
#!/bin/sh
# naps for the time it is given (arguments.s), then says which call it was
input=$(cat)
s=$(printf '%s' "$input" | sed -n 's/.*"s":"\{0,1\}\([0-9.]*\).*/\1/p')
sleep "${s:-0.5}"
echo '{"content":[{"type":"text","text":"napped"}]}'
SH
cat >"$T_DIR/bin/big.sh" <<'SH'
#!/bin/sh
# a 300 kB answer: more than a pipe holds, written in many pieces
cat >/dev/null
printf '{"content":[{"type":"text","text":"'
head -c 300000 /dev/zero | tr '\0' x
printf '"}]}\n'
SH
cp "$top_srcdir/examples/scripts/echo_persistent.sh" "$T_DIR/bin/pecho.sh"
chmod +x "$T_DIR"/bin/*.sh
conf() { # FILE [MORE YAML LINES...]
	local f=$1; shift
	test_conf "$f" stdio-concurrent \
		"tools:" \
		"  - { name: echo, input: {text: {type: string, required: true}}, module: phantom_example.so, symbol: echo }" \
		"  - { name: count_to, input: {n: integer, delay_ms: integer}, module: phantom_example.so, symbol: count_to }" \
		"  - { name: sleeper, exec: [\"$T_DIR/bin/sleeper.sh\"], timeout_ms: 60000 }" \
		"  - { name: nap, input: {s: number}, exec: [\"$T_DIR/bin/nap.sh\"], timeout_ms: 60000 }" \
		"  - { name: big, exec: [\"$T_DIR/bin/big.sh\"], timeout_ms: 60000, max_output: 1000000 }" \
		"  - { name: pecho, input: {text: string}, exec: [\"$T_DIR/bin/pecho.sh\"], persistent: true }" \
		"$@"
}
conf "$T_DIR/phantom.yaml"

# ---- the SDK v2 client ------------------------------------------------------------------
if node_setup; then
	node_client sdk-stdio-concurrent.mjs --stdio "$PHANTOM" --arg -c --arg "$T_DIR/phantom.yaml" \
		--arg --stdio --pidfile "$T_DIR/sleeper.pid"
else
	echo "ok $((T_N += 1)) - SDK v2 client # SKIP npm packages not installed"
fi

# ---- a shell driver ---------------------------------------------------------------------
init='{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
call() { printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"%s","arguments":%s}}\n' "$1" "$2" "${3:-{\}}"; }
cancel() { printf '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s}}\n' "$1"; }
ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

# more calls than stdio.concurrency: they wait their turn and all get answered
conf "$T_DIR/two.yaml" "stdio: { concurrency: 2 }"
t0=$(date +%s%N)
{ echo "$init"; for i in 1 2 3 4 5 6; do call "$i" nap '{"s":0.5}'; done; echo '{"jsonrpc":"2.0","id":7,"method":"ping"}'; } |
	"$PHANTOM" -c "$T_DIR/two.yaml" --stdio >"$T_DIR/out" 2>"$T_DIR/err"
ms=$(ms_since "$t0")
is "$(jq -r 'select(.result.content[0].text == "napped") | .id' "$T_DIR/out" | sort | tr '\n' ' ')" "1 2 3 4 5 6 " \
	"six calls with stdio.concurrency 2: all answered"
[ "$ms" -ge 1400 ] && [ "$ms" -lt 2800 ]; ok "two at a time: three rounds of 0.5 s ($ms ms)"
is "$(sed -n 2p "$T_DIR/out" | jq -r .id)" 7 "the ping behind them is answered at once"

# a queue of one: stdin waits while it is full, and every call still gets its turn
conf "$T_DIR/q1.yaml" "stdio: { concurrency: 2, queue: 1 }"
{ echo "$init"; for i in 1 2 3 4 5; do call "$i" nap '{"s":0.3}'; done; echo '{"jsonrpc":"2.0","id":6,"method":"ping"}'; } |
	"$PHANTOM" -c "$T_DIR/q1.yaml" --stdio >"$T_DIR/out" 2>"$T_DIR/err"
is "$(jq -r 'select(.result) | .id' "$T_DIR/out" | sort | tr '\n' ' ')" "1 2 3 4 5 6 i " \
	"stdio.queue 1: five calls and a ping behind them all answered"

# whole lines: big answers from calls running at once, mixed with small ones
{ echo "$init"; for i in 1 2 3 4; do call "$i" big; call "1$i" echo '{"text":"s"}'; done; } |
	"$PHANTOM" -c "$T_DIR/phantom.yaml" --stdio >"$T_DIR/out" 2>"$T_DIR/err"
is "$(wc -l <"$T_DIR/out")" 9 "nine answers for nine requests"
jq -e . "$T_DIR/out" >/dev/null; ok "every line is one whole JSON message (no two mixed)"
is "$(jq -r 'select(.id < 10) | .result.content[0].text | length' "$T_DIR/out" | sort -u)" 300000 \
	"each 300 kB answer arrives whole"

# EOF with calls in flight: every call is answered, then the process exits
t0=$(date +%s%N)
{ echo "$init"; call 1 nap '{"s":1}'; call 2 count_to '{"n":5,"delay_ms":100}'; call 3 nap '{"s":0.2}'; } |
	"$PHANTOM" -c "$T_DIR/phantom.yaml" --stdio >"$T_DIR/out" 2>"$T_DIR/err"
rc=$? ms=$(ms_since "$t0")
is "$rc" 0 "exit status 0 after EOF with calls in flight"
is "$(jq -r 'select(.result) | .id' "$T_DIR/out" | sort | tr '\n' ' ')" "1 2 3 i " "every call in flight at EOF is answered"
l3=$(grep -n '"id":3,' "$T_DIR/out" | cut -d: -f1) l1=$(grep -n '"id":1,' "$T_DIR/out" | cut -d: -f1)
[ "${l3:-9}" -lt "${l1:-0}" ]; ok "in the order they finish (the short nap before the long one)"
[ "$ms" -lt 2500 ]; ok "and the process exits once they are done ($ms ms)"

# ... but for at most shutdown_timeout: then what still runs is killed
conf "$T_DIR/short.yaml" "shutdown_timeout: 1"
rm -f "$T_DIR/sleeper.pid"
t0=$(date +%s%N)
{ echo "$init"; call 1 sleeper; call 2 nap '{"s":0.1}'; sleep 0.5; } |
	"$PHANTOM" -c "$T_DIR/short.yaml" --stdio >"$T_DIR/out" 2>"$T_DIR/err"
ms=$(ms_since "$t0")
[ "$ms" -ge 1000 ] && [ "$ms" -lt 4000 ]; ok "a call over shutdown_timeout after EOF: the process exits after it ($ms ms)"
is "$(jq -r 'select(.result) | .id' "$T_DIR/out" | sort | tr '\n' ' ')" "2 i " "the call that finished in time is answered"
is "$(jq -r 'select(.id == 1) | .error.message' "$T_DIR/out")" \
	"Server stopping: the input ended and shutdown_timeout (1 s) passed before this call finished; it was not completed" \
	"the killed call is answered with an error saying why"
grep -q "1 call not done 1s after the end of input; answered with an error (shutdown_timeout)" "$T_DIR/err"
ok "the kill is logged"
pid=$(cat "$T_DIR/sleeper.pid" 2>/dev/null)
[ -n "$pid" ] && wait_gone "$pid" 3; ok "the killed call's exec process is gone"

# shutdown_timeout counts from the end of input, calls still waiting included:
# 40 one-second calls at 4 at once with shutdown_timeout 2 cannot all run;
# each is answered once, those that did not finish with the error
conf "$T_DIR/forty.yaml" "shutdown_timeout: 2" "stdio: { concurrency: 4 }"
{ echo "$init"; for i in $(seq 1 40); do call "$i" nap '{"s":1}'; done; } |
	"$PHANTOM" -c "$T_DIR/forty.yaml" --stdio >"$T_DIR/out" 2>"$T_DIR/err"
is "$(jq -r 'select((.id | type) == "number") | .id' "$T_DIR/out" | sort -n | uniq | wc -l):$(grep -c '"id":[0-9]' "$T_DIR/out")" \
	40:40 "40 calls queued at EOF, shutdown_timeout 2: each answered once"
done_n=$(jq -r 'select(.result.content[0].text == "napped") | .id' "$T_DIR/out" | wc -l)
stopped=$(jq -r 'select(.error.message // "" | test("shutdown_timeout \\(2 s\\)")) | .id' "$T_DIR/out" | wc -l)
is "$((done_n + stopped))" 40 "... each with its result or the shutdown error ($done_n done, $stopped stopped)"
[ "$stopped" -gt 0 ]; ok "the bound holds: the calls that could not finish in it are answered with the error"
# the same, one call at a time in the process (stdio.concurrency 1): the
# call running is not interrupted, those after the bound are answered so
conf "$T_DIR/serial.yaml" "shutdown_timeout: 1" "stdio: { concurrency: 1 }"
{ echo "$init"; for i in $(seq 1 6); do call "$i" nap '{"s":0.5}'; done; } |
	"$PHANTOM" -c "$T_DIR/serial.yaml" --stdio >"$T_DIR/out" 2>"$T_DIR/err"
done_n=$(jq -r 'select(.result.content[0].text == "napped") | .id' "$T_DIR/out" | wc -l)
stopped=$(jq -r 'select(.error.message // "" | test("shutdown_timeout \\(1 s\\)")) | .id' "$T_DIR/out" | wc -l)
is "$((done_n + stopped))" 6 "stdio.concurrency 1: six calls, each answered ($done_n done, $stopped stopped)"
[ "$stopped" -gt 0 ] && [ "$done_n" -gt 0 ]; ok "... the first served, those past the bound answered with the error"

# a cancel: the running call stops, a waiting one is dropped, the others go on
conf "$T_DIR/one.yaml" "stdio: { concurrency: 2 }"
rm -f "$T_DIR/sleeper.pid"
stdio_start "$T_DIR/err" "$T_DIR/one.yaml"
ph=$STDIO_PID
{ echo "$init"; call '"a"' sleeper; call '"b"' nap '{"s":1.5}'; call '"c"' nap '{"s":0.1}'; } >&"$STDIO_IN"
wait_file "$T_DIR/sleeper.pid"; pid=$(cat "$T_DIR/sleeper.pid")
cancel '"c"' >&"$STDIO_IN"   # still waiting for a turn: never runs
cancel '"a"' >&"$STDIO_IN"
wait_gone "$pid" 3; ok "the cancelled call's exec process is gone"
stdio_send '{"jsonrpc":"2.0","id":"p","method":"ping"}'
got=
while stdio_read line 5; do
	got+="$(jq -r .id <<<"$line") "
	[ "$(jq -r .id <<<"$line")" = b ] && break
done
is "$got" "i p b " "the cancelled calls get no answer; the ping and the call next to them do"
# call processes stay for the next calls, as workers do; nothing a call
# started is left below them
kids=$(pgrep -P "$ph" | wc -l)
[ "$kids" -le 2 ]; ok "at most stdio.concurrency (2) call processes stay, free ($kids)"
below=0
for k in $(pgrep -P "$ph"); do below=$((below + $(pgrep -P "$k" | wc -l))); done
is "$below" 0 "no handler process is left below them once the calls are done"
stdio_stop 3; ok "EOF ends the process"
grep -q 'phantom\[[0-9]*\] method=tools/call target=nap' "$T_DIR/err"; ok "the calls log from their own process"

# a persistent handler stays warm from call to call; a new initialize (other
# capabilities) or a reload replaces the call processes, and it starts again
stdio_start "$T_DIR/err" "$T_DIR/one.yaml"
ph=$STDIO_PID
answer() { # ID: waits for the answer to ID (5 s), prints its text
	local line
	while stdio_read line 5; do
		[ "$(jq -r .id <<<"$line")" = "$1" ] && { jq -r '.result.content[0].text' <<<"$line"; return; }
	done
}
stdio_send "$init"; answer i >/dev/null
texts=
for i in 1 2 3; do call "$i" pecho "{\"text\":\"t$i\"}" >&"$STDIO_IN"; texts+="$(answer "$i") "; done
is "$texts" "t1 t2 t3 " "a persistent exec tool over concurrent stdio answers each call"
is "$(grep -c 'target=pecho status=200 .*exec=fresh' "$T_DIR/err")/$(grep -c 'target=pecho status=200 .*exec=warm' "$T_DIR/err")" \
	1/2 "its process started once and served the next calls warm"
stdio_send "${init/\"id\":\"i\"/\"id\":\"i2\"}"; answer i2 >/dev/null
call 4 pecho '{"text":"t4"}' >&"$STDIO_IN"
is "$(answer 4)" t4 "after a second initialize the call is answered"
is "$(grep -c 'target=pecho status=200 .*exec=fresh' "$T_DIR/err")" 2 \
	"... by a new call process (the old one held the first initialize's capabilities)"
kill -HUP "$ph"
sleep 0.3
call 5 pecho '{"text":"t5"}' >&"$STDIO_IN"
is "$(answer 5)" t5 "after a reload the call is answered"
is "$(grep -c 'target=pecho status=200 .*exec=fresh' "$T_DIR/err")" 3 "... by a call process of the new configuration"
stdio_stop 3; ok "EOF ends the process, call processes and their persistent handlers with it"
wait_for 2 eval '[ "$(pgrep -f "$T_DIR/bin/pecho.sh" | wc -l)" = 0 ]'; ok "no persistent handler is left"

# calls still queued when stdin ends go to the warm call processes, not
# to a process (and a persistent handler) forked for each
{ echo "$init"; for i in $(seq 1 300); do call "$i" pecho "{\"text\":\"q$i\"}"; done; } |
	"$PHANTOM" -c "$T_DIR/one.yaml" --stdio >"$T_DIR/out" 2>"$T_DIR/err"
is "$(jq -r 'select((.id | type) == "number" and .result.content[0].text == "q\(.id)") | .id' "$T_DIR/out" | wc -l)" 300 \
	"300 pipelined calls to a persistent tool, stdin closed at once: all answered"
fresh=$(grep -c 'target=pecho status=200 .*exec=fresh' "$T_DIR/err")
[ "$fresh" -le 2 ]; ok "by the warm call processes ($fresh fresh starts for stdio.concurrency 2)"
is "$(grep -c 'target=pecho status=200 .*exec=warm' "$T_DIR/err")" $((300 - fresh)) "the others warm"
echo '{"jsonrpc":"2.0","id":1,"method":"ping"}' | "$PHANTOM" -c "$T_DIR/one.yaml" --stdio >"$T_DIR/out" 2>/dev/null
is "$(jq -r .id "$T_DIR/out")" 1 "a plain request is answered as before"
wait_for 2 eval '[ "$(pgrep -f "$T_DIR/bin/pecho.sh" | wc -l)" = 0 ]'; ok "and no persistent handler is left"
done_testing
