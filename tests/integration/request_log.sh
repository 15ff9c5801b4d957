#!/bin/bash
# The request log of FastCGI workers behind nginx (log.buffer, log.flush_ms):
# an idle worker writes its request's line at once; under load the lines are
# gathered into fewer writes, yet every request served has its one whole
# line, also when the server is stopped in the middle of the load; with
# log.buffer 0 each line is a write of its own.
. "${top_srcdir:-.}/tests/lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
command -v wrk >/dev/null || skip_all "wrk not installed"

# a request line of server/discover, whole
LINE='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z phantom\[[0-9]+\] method=server/discover target=- status=200 code=- us=[0-9]+$'
# any line: a time, then phantom[PID]
ANY='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]{12}Z phantom\[[0-9]+\] '

# lines_since N: the request lines of server/discover after the first N lines of the log
lines_since() { tail -n +"$(($1 + 1))" "$PH_LOG" | grep -cE "$LINE"; }
nlines() { wc -l <"$PH_LOG"; }

# writes_of PID SECONDS OUT: the write(2) calls on standard error of a
# worker for that long (strace), one per line of OUT
writes_of() {
	timeout "$2" strace -qq -e trace=write -e signal=none -s 100000 -p "$1" -o "$3.raw" 2>/dev/null
	grep '^write(2, ' "$3.raw" >"$3" || true
}

# max_requests 0 unless given: a worker that strace watches must not exit
# (a sanitizer build's leak check refuses to run under ptrace)
start() {
	test_conf "$T_DIR/phantom.yaml" request-log 'workers: 2' "${MAXREQ:-max_requests: 0}" "$@"
	phantom_unix "$T_DIR/phantom.yaml" || { echo "not ok 1 - phantom starts"; exit 1; }
	nginx_start "$PH_BACKEND" || { echo "not ok 1 - nginx starts"; exit 1; }
}

# ---- the default: gathered under load ---------------------------------------------
# flush_ms a minute: only the worker's going idle can write a lone line
start 'log: { flush_ms: 60000 }'
n0=$(nlines)
mpost "$NGINX_URL" 1 server/discover '{}'
is "$STATUS" 200 "a request"
wait_for 2 test "$(lines_since "$n0")" = 1
is "$(lines_since "$n0")" 1 "an idle worker writes the line of its request at once (log.flush_ms 60000)"

n0=$(nlines)
wrk_start 3 "$NGINX_URL" "$T_DIR/wrk1"
if command -v strace >/dev/null; then
	sleep 1
	writes_of "$(workers_of "$PH_PID" | head -1)" 1 "$T_DIR/writes1"
	diag "a worker under load: $(wc -l <"$T_DIR/writes1") writes on stderr, $(grep -c '\\n20' "$T_DIR/writes1") holding more than one line"
	[ "$(grep -c '\\n20[0-9][0-9]-' "$T_DIR/writes1")" -gt 0 ]
	ok "under load a worker writes several lines in one write"
fi
wrk_result "$T_DIR/wrk1"
[ "$OK200" -gt 100 ]; ok "the load was served ($OK200 requests)"
wait_for 2 test "$(lines_since "$n0")" -ge "$OK200"
got=$(lines_since "$n0")
[ "$got" -ge "$OK200" ] && [ "$got" -le $((OK200 + 8)) ]
ok "every request served has its line ($got lines, $OK200 answers, 8 connections)"
is "$(tail -n +"$((n0 + 1))" "$PH_LOG" | grep -cvE "$ANY")" 0 "and every line is whole"

# ---- stopped under load: nothing held is lost ----------------------------------------
n0=$(nlines)
wrk_start 3 "$NGINX_URL" "$T_DIR/wrk2"
sleep 1.5
kill -TERM "$PH_PID"
wait_gone "$PH_PID" 10
[ ! -e "/proc/$PH_PID" ]; ok "SIGTERM under load stops the server"
wrk_result "$T_DIR/wrk2"
got=$(lines_since "$n0")
[ "$OK200" -gt 50 ] && [ "$got" -ge "$OK200" ]
ok "stopped under load, the workers wrote every line they held ($got lines, $OK200 answers)"
is "$(tail -n +"$((n0 + 1))" "$PH_LOG" | grep -cvE "$ANY")" 0 "every line whole"
t_stop

# ---- workers recycled under load (max_requests): each writes what it held ----------------
MAXREQ='max_requests: 200' start
n0=$(nlines)
wrk_start 3 "$NGINX_URL" "$T_DIR/wrk4"
wrk_result "$T_DIR/wrk4"
wait_for 2 test "$(lines_since "$n0")" -ge "$OK200"
got=$(lines_since "$n0")
# the workers that served it, each at most 200 requests
tail -n +"$((n0 + 1))" "$PH_LOG" | grep -E "$LINE" | sed 's/^[^ ]* phantom\[\([0-9]*\)\].*/\1/' | sort | uniq -c >"$T_DIR/by_pid"
recycled=$(wc -l <"$T_DIR/by_pid")
most=$(sort -rn "$T_DIR/by_pid" | head -1 | awk '{print $1}')
[ "$recycled" -ge 5 ] && [ "${most:-999}" -le 200 ] && [ "$got" -ge "$OK200" ] && [ "$got" -le $((OK200 + 8)) ]
ok "workers recycled under load ($recycled of them, at most $most requests each) wrote every line ($got lines, $OK200 answers)"
is "$(tail -n +"$((n0 + 1))" "$PH_LOG" | grep -cvE "$ANY")" 0 "every line whole"
t_stop

# ---- a worker that crashes under load writes what it held ----------------------------
# a module that dereferences NULL, then one that calls abort(), while wrk
# keeps both workers busy (so each holds lines); a sanitizer build leaves
# the signals to Phantom
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0:handle_sigbus=0:handle_abort=0"
start 'log: { flush_ms: 60000 }' 'tools: [ { name: crash, module: testmod.so, symbol: crash, input: { how: { type: string } } } ]'
n0=$(nlines)
wrk_start 3 "$NGINX_URL" "$T_DIR/wrk5"
sleep 1
mpost "$NGINX_URL" 1 tools/call '{"name":"crash","arguments":{"how":"segv"}}'
is "$STATUS" 502 "a module that segfaults: nginx answers 502"
sleep 0.7
mpost "$NGINX_URL" 2 tools/call '{"name":"crash","arguments":{"how":"abort"}}'
is "$STATUS" 502 "a module that aborts: 502"
wrk_result "$T_DIR/wrk5"
wait_for 2 test "$(lines_since "$n0")" -ge "$OK200"
got=$(lines_since "$n0")
[ "$OK200" -gt 50 ] && [ "$got" -ge "$OK200" ] && [ "$got" -le $((OK200 + 8)) ]
ok "the workers that crashed wrote the lines they held ($got lines, $OK200 answers)"
is "$(tail -n +"$((n0 + 1))" "$PH_LOG" | grep -cvE "$ANY")" 0 "every line whole"
grep -qE 'signal (11|6)|SIGSEGV|SIGABRT' "$PH_LOG"; ok "the master logged the crashes"
mpost "$NGINX_URL" 3 server/discover '{}'
is "$STATUS" 200 "the next request is served"
t_stop
unset ASAN_OPTIONS

# ---- log.buffer 0: a write a line ---------------------------------------------------------
start 'log: { buffer: 0 }'
n0=$(nlines)
wrk_start 3 "$NGINX_URL" "$T_DIR/wrk3"
if command -v strace >/dev/null; then
	sleep 1
	writes_of "$(workers_of "$PH_PID" | head -1)" 1 "$T_DIR/writes3"
	[ "$(wc -l <"$T_DIR/writes3")" -gt 0 ] && [ "$(grep -c '\\n20[0-9][0-9]-' "$T_DIR/writes3")" = 0 ]
	ok "log.buffer 0: each line in a write of its own ($(wc -l <"$T_DIR/writes3") writes)"
fi
wrk_result "$T_DIR/wrk3"
wait_for 2 test "$(lines_since "$n0")" -ge "$OK200"
got=$(lines_since "$n0")
[ "$OK200" -gt 100 ] && [ "$got" -ge "$OK200" ] && [ "$got" -le $((OK200 + 8)) ]
ok "log.buffer 0: every request has its line ($got lines, $OK200 answers)"
t_stop
done_testing
