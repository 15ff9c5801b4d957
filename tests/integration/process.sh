#!/bin/bash
# The process model under real load through nginx (wrk): a worker killed
# with SIGKILL costs at most its own request and is replaced; SIGHUP under
# load fails nothing; a broken configuration on SIGHUP leaves the old one
# serving; SIGTERM lets a slow request finish; max_requests recycles
# workers; workers that die before serving are restarted with back-off.
# Also the request log line, and the names ps shows: phantom-master,
# phantom-hub, phantom-worker, and phantom-fcgi for a single process.
. "${top_srcdir:-.}/tests/lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
command -v wrk >/dev/null || skip_all "wrk not installed"
command -v cgi-fcgi >/dev/null || skip_all "cgi-fcgi (libfcgi-bin) not installed"

conf=$T_DIR/phantom.yaml
test_conf "$conf" gen-one 'workers: 4' 'resources: [{ uri: "test://one", name: one, text: hi }]'
phantom_unix "$conf" || { echo "not ok 1 - phantom starts"; exit 1; }
M=$PH_PID LOG=$PH_LOG
nginx_start "$PH_BACKEND" || { echo "not ok 1 - nginx starts"; exit 1; }
U=$NGINX_URL
name() { mpost "$U" 1 server/discover '{}'; jqr '.result._meta["io.modelcontextprotocol/serverInfo"].name'; }

workers_are "$M" 4 "the master runs 4 workers"

# ---- process names (comm: ps, top, pgrep -x) ------------------------------------------
# named_workers PID NAME: every worker of master PID is named NAME (a
# worker renames itself as it starts, just after its fork)
named_workers() {
	local w
	for w in $(workers_of "$1"); do [ "$(cat "/proc/$w/comm" 2>/dev/null)" = "$2" ] || return 1; done
}
is "$(cat "/proc/$M/comm")" phantom-master "ps: the master is named phantom-master"
is "$(cat "/proc/$(hub_of "$M")/comm")" phantom-hub "ps: the hub is named phantom-hub"
wait_for 3 named_workers "$M" phantom-worker
named_workers "$M" phantom-worker; ok "ps: each of the 4 workers is named phantom-worker"
is "$(pgrep -x phantom-master | grep -cx "$M")" 1 "pgrep -x phantom-master finds the master"

# ---- the request log line ---------------------------------------------------------
tp=00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01
mpost "$U" 5 resources/read '{"uri":"file:///no/such"}' -H "traceparent: $tp"
is "$STATUS/$(jqr .error.code)" 200/-32602 "resources/read of an unknown uri is an error result"
wait_for 2 grep -q 'target=file:///no/such' "$LOG"
line=$(grep 'target=file:///no/such' "$LOG" | tail -1)
like "$line" '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z ' "log: starts with the time (UTC, ms)"
like "$line" ' phantom\[[0-9]+\] ' "log: the worker pid"
w=$(printf '%s' "$line" | sed -n 's/.*phantom\[\([0-9]*\)\].*/\1/p')
workers_of "$M" | grep -qx "$w"; ok "log: the pid is one of the master's workers"
like "$line" ' method=resources/read ' "log: the method"
like "$line" ' target=file:///no/such ' "log: the target (uri)"
like "$line" ' status=200 code=-32602 ' "log: the HTTP status and the JSON-RPC error code"
like "$line" ' us=[0-9]+( |$)' "log: the duration in microseconds"
like "$line" " traceparent=$tp\$" "log: the client's traceparent"
mpost "$U" 6 server/discover '{}'
line=$(grep 'method=server/discover' "$LOG" | tail -1)
like "$line" ' target=- status=200 code=- us=[0-9]+$' "log: no target, no code, no traceparent when there are none"
post "$U" '{"jsonrpc":"2.0","id":7,"method":"ping","params":{"_meta":{"traceparent":"'"$tp"'"}}}'
wait_for 2 grep -q 'method=ping .*traceparent=' "$LOG"; ok "log: a traceparent in params._meta is logged too"
is "$(grep -c ' method=' "$LOG")" 3 "log: exactly one line per request"

# ---- kill -9 a worker under load ---------------------------------------------------
before=$(workers_of "$M")
victim=$(echo "$before" | head -1)
wrk_start 3 "$U" "$T_DIR/wrk1"
sleep 1
kill -9 "$victim"
wrk_result "$T_DIR/wrk1"
[ "$OK200" -gt 100 ]; ok "kill -9: the load was served ($OK200 requests)"
[ "$NON200" -ge 0 ] && [ $((NON200 + SOCKERR)) -le 1 ]
ok "kill -9: at most the killed worker's one request failed ($NON200 non-200, $SOCKERR socket errors)"
grep -q "worker $victim killed by signal 9" "$LOG"; ok "kill -9: the master logged the death"
workers_are "$M" 4 "kill -9: the master is back to 4 workers"
workers_of "$M" | grep -qx "$victim"; is "$?" 1 "kill -9: the dead worker was replaced by a new one"
is "$(name)" gen-one "kill -9: still serving"

# ---- SIGHUP under load ---------------------------------------------------------------
before=$(workers_of "$M")
sed -i 's/gen-one/gen-two/' "$conf"
wrk_start 3 "$U" "$T_DIR/wrk2"
sleep 0.7
kill -HUP "$M"
sleep 1
kill -HUP "$M"
wrk_result "$T_DIR/wrk2"
[ "$OK200" -gt 100 ]; ok "SIGHUP under load: the load was served ($OK200 requests)"
is "$NON200/$SOCKERR" 0/0 "SIGHUP under load: zero failed requests"
is "$(grep -c 'configuration reloaded; generation' "$LOG")" 2 "SIGHUP: two reloads logged"
workers_are "$M" 4 "SIGHUP: 4 workers after the reloads"
is "$(comm -12 <(echo "$before") <(workers_of "$M") | wc -l)" 0 "SIGHUP: every worker is of the new generation"
is "$(name)" gen-two "SIGHUP: the changed server.name is served"

# ---- SIGHUP with a broken configuration --------------------------------------------
before=$(workers_of "$M")
cp "$conf" "$T_DIR/good.yaml"
printf 'server:\n  name: gen-three\n  colour: blue\nworkers: [\n' >"$conf"
kill -HUP "$M"
wait_for 3 grep -q 'reload failed' "$LOG"; ok "broken config: the reload failure is logged"
grep -q "$conf:[0-9]*: " "$LOG"; ok "broken config: the problem is logged as FILE:LINE"
is "$(name)" gen-two "broken config: the old configuration keeps serving"
is "$(workers_of "$M")" "$before" "broken config: the workers were left alone"
sed 's/gen-two/gen-four/' "$T_DIR/good.yaml" >"$conf"
kill -HUP "$M"
wait_for 3 sh -c "grep -c 'configuration reloaded; generation' '$LOG' | grep -qx 3"
wait_for 3 test "$(name)" = gen-four; ok "a fixed configuration is taken on the next SIGHUP"

# ---- SIGTERM with a slow request in flight --------------------------------------------
# The body comes in two parts a second apart straight to the socket, so the
# worker is inside the body read when SIGTERM arrives. A truncated body
# would be a parse error.
slow() { # TARGET OUT: one slow discover request with cgi-fcgi
	local body; body=$(req 42 server/discover)
	( printf '%s' "${body:0:30}"; sleep 1; printf '%s' "${body:30}" ) |
		env -i REQUEST_METHOD=POST CONTENT_TYPE=application/json "CONTENT_LENGTH=${#body}" \
		REQUEST_URI=/mcp $(mhdr server/discover) cgi-fcgi -bind -connect "$1" >"$2" 2>&1
}
slow "$PH_SOCK" "$T_DIR/slow1" &
sp=$!
sleep 0.4
t0=$(date +%s%N)
kill -TERM "$M"
wait "$sp"
cgi_parse "$T_DIR/slow1"
is "$STATUS/$(jqr .id)/$(jqr .result.resultType)" 200/42/complete "SIGTERM: the slow request in flight completed whole"
wait_gone "$M" 5; ok "SIGTERM: the master exits"
wait "$M"; is "$?" 0 "SIGTERM: exit status 0"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$ms" -lt 3000 ]; ok "SIGTERM: it exited as soon as the request was done (${ms} ms)"
grep -q 'stopping: letting' "$LOG"; ok "SIGTERM: the stop is logged"

# the same without a master (one process)
test_conf "$T_DIR/single.yaml" single
phantom_unix "$T_DIR/single.yaml" --workers 1 || { echo "not ok $((T_N + 1)) - single starts"; exit 1; }
is "$(cat "/proc/$PH_PID/comm")" phantom-fcgi "ps: a single process keeps the program's name"
slow "$PH_SOCK" "$T_DIR/slow2" &
sp=$!
sleep 0.4
kill -TERM "$PH_PID"
wait "$sp"
cgi_parse "$T_DIR/slow2"
is "$STATUS/$(jqr .id)" 200/42 "SIGTERM, single process: the slow request completed"
wait "$PH_PID"; is "$?" 0 "SIGTERM, single process: exit status 0"

# shutdown_timeout bounds the wait
test_conf "$T_DIR/short.yaml" short 'workers: 2' 'shutdown_timeout: 1'
phantom_unix "$T_DIR/short.yaml" || { echo "not ok $((T_N + 1)) - phantom starts"; exit 1; }
body=$(req 43 server/discover)
( printf '%s' "${body:0:30}"; sleep 4; printf '%s' "${body:30}" ) |
	env -i REQUEST_METHOD=POST CONTENT_TYPE=application/json "CONTENT_LENGTH=${#body}" \
	REQUEST_URI=/mcp cgi-fcgi -bind -connect "$PH_SOCK" >/dev/null 2>&1 &
sleep 0.4
t0=$(date +%s%N)
kill -TERM "$PH_PID"
wait "$PH_PID"; rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$ms" -ge 900 ] && [ "$ms" -lt 2500 ]; ok "shutdown_timeout 1: the master waited about 1 s (${ms} ms)"
is "$rc" 0 "shutdown_timeout: exit status 0"
grep -q 'did not finish in 1s; killing it' "$PH_LOG"; ok "shutdown_timeout: the kill is logged"

# ---- max_requests ----------------------------------------------------------------------
test_conf "$T_DIR/recycle.yaml" recycle 'workers: 2' 'max_requests: 5'
phantom_unix "$T_DIR/recycle.yaml" || { echo "not ok $((T_N + 1)) - phantom starts"; exit 1; }
workers_are "$PH_PID" 2 "max_requests: 2 workers at start"
first=$(workers_of "$PH_PID")
good=0
for i in $(seq 1 20); do
	fcgi_post "$PH_SOCK" "$(req "$i" server/discover)" $(mhdr server/discover)
	[ "$STATUS" = 200 ] && good=$((good + 1))
done
is "$good" 20 "max_requests 5: all 20 requests succeeded"
pids=$(grep -o 'phantom\[[0-9]*\] method=server/discover' "$PH_LOG" | sort | uniq -c)
[ "$(echo "$pids" | wc -l)" -ge 4 ]; ok "max_requests 5: 20 requests were served by at least 4 workers"
is "$(echo "$pids" | awk '$1 > 5' | wc -l)" 0 "max_requests 5: no worker served more than 5"
workers_are "$PH_PID" 2 "max_requests: still 2 workers"
# 20 requests cannot fit in two first workers of 5 each; which of them got
# the requests is up to the kernel
[ "$(comm -12 <(echo "$first") <(workers_of "$PH_PID") | wc -l)" -le 1 ]
ok "max_requests: the first workers were recycled"
grep -q 'exited with status\|killed by signal' "$PH_LOG"; is "$?" 1 "max_requests: recycling is not logged as a failure"

# ---- back-off for workers that die before serving ----------------------------------------
test_conf "$T_DIR/backoff.yaml" backoff 'workers: 1'
phantom_unix "$T_DIR/backoff.yaml" --workers 2 || { echo "not ok $((T_N + 1)) - phantom starts"; exit 1; }
workers_are "$PH_PID" 2 "back-off: 2 workers at start"
for i in 1 2 3; do
	v=$(workers_of "$PH_PID" | head -1)
	kill -9 "$v"
	wait_for 2 grep -q "worker $v killed" "$PH_LOG"
	wait_for 3 sh -c "pgrep -P $PH_PID | grep -vx $v | wc -l | grep -qx 2"
done
grep -q 'died before serving; next start in 100 ms' "$PH_LOG"; ok "back-off: first early death waits 100 ms"
grep -q 'next start in 200 ms' "$PH_LOG"; ok "back-off: the second waits 200 ms"
grep -q 'next start in 400 ms' "$PH_LOG"; ok "back-off: the third waits 400 ms"
fcgi_post "$PH_SOCK" "$(req 1 server/discover)" $(mhdr server/discover)
is "$STATUS" 200 "back-off: the pool serves again"
workers_are "$PH_PID" 2 "back-off: both workers are back"

# ---- the JSON log format ---------------------------------------------------------------------
test_conf "$T_DIR/json.yaml" json 'log: { json: true }'
echo '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"traceparent":"'"$tp"'"}}}' |
	"$PHANTOM" -c "$T_DIR/json.yaml" --stdio 2>"$T_DIR/json.log" >/dev/null
is "$(grep '^{' "$T_DIR/json.log" | jq -r '[.method, .status, .traceparent, (.us|type), (.pid|type), (.time|type)]|join(" ")')" \
	"ping 200 $tp number number string" "log.json: one JSON object per request with the same fields"
done_testing
