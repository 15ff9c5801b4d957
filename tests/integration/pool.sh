#!/bin/bash
# The worker pool by demand (workers: {mode: dynamic | ondemand}), through
# the real nginx: 16 calls of a 2 s exec tool at once run at once (not in
# waves), and 100 tools/list and module tools/call requests made during
# them are answered promptly; the pool grew, and after the idle timeout
# shrank back to its minimum (counted in the process table and on
# /metrics), the persistent processes of the ended workers with it; no
# request is lost across a SIGHUP in the middle of such a burst; a burst
# larger than the maximum waits and is answered whole, with one "pool
# reached its maximum" line; connections that stall half-way through their
# parameters hold workers, which count as busy, so the pool grows past them;
# ondemand starts with no worker; SIGUSR2 logs the pool's state; SIGTERM
# waits for the calls in flight; a maximum too large for the host's memory
# is warned about at start. A maximum under the defaults of start and
# max_idle (ondemand max 3, static max 2) passes -t and runs.
. "${top_srcdir:-.}/tests/lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
command -v python3 >/dev/null || skip_all "python3 not installed"
LOAD=$top_srcdir/tests/integration/pool_load.py
STALL=$top_srcdir/tests/integration/pool_stall.py

B=$T_DIR/bin
mkdir -p "$B"
printf '#!/bin/sh\ncat >/dev/null\nsleep 2\nprintf %s\n' \
	"'{\"content\":[{\"type\":\"text\",\"text\":\"slept\"}]}\\n'" >"$B/slow.sh"
# the persistent example, copied so that its processes are this test's own
cp "$top_srcdir/examples/scripts/echo_persistent.sh" "$B/kept.sh"
chmod 0755 "$B" "$B/slow.sh" "$B/kept.sh"
# pool_conf FILE WORKERS [HTTP]: the test's configuration with that workers
# mapping (and those more members of the http section)
pool_conf() {
	cat >"$1" <<YAML
server: { name: pool-test, version: "1.0" }
workers: $2
http: { health: /healthz, metrics: { path: /metrics }${3:+, $3} }
tools:
  - { name: slow, description: sleeps 2 s, exec: [$B/slow.sh], timeout_ms: 20000 }
  - { name: echo, module: phantom_example.so, symbol: echo, input: {text: string} }
  - { name: kept, exec: [$B/kept.sh], persistent: {start: true}, input: {text: string} }
YAML
}
# serve START FILE: Phantom started by START (phantom_unix, phantom_listen)
# behind nginx; sets M, LOG, U and BASE
serve() {
	"$1" "$2" || { echo "not ok $((T_N + 1)) - phantom starts"; exit 1; }
	M=$PH_PID LOG=$PH_LOG
	nginx_start "$PH_BACKEND" || { echo "not ok $((T_N + 1)) - nginx starts"; exit 1; }
	U=$NGINX_URL BASE=${NGINX_URL%/mcp}
}
pool_conf "$T_DIR/dynamic.yaml" '{ mode: dynamic, max: 24, start: 2, min_idle: 2, max_idle: 4, idle_timeout_ms: 1500 }'
serve phantom_unix "$T_DIR/dynamic.yaml"
gauge() { curl -s "$BASE/metrics" | awk -v k="$1" '$1 == k { print $2 }'; }
# kept: the persistent processes running (one per worker)
kept() { pgrep -c -f "$B/kept.sh"; }
# count OP N WHAT: compares the workers (WHAT workers) or persistent
# processes (WHAT kept) now with N, for wait_for, which runs it again each time
count() { local n; if [ "$3" = kept ]; then n=$(kept); else n=$(nworkers "$M"); fi; [ "$n" "$1" "$2" ]; }
field() { jq -r ".$2" "$1"; }

workers_are "$M" 2 "dynamic: the pool starts with workers.start (2)"
wait_for 3 count -eq 2 kept; is "$(kept)" 2 "each worker started its persistent process"

# ---- 16 slow calls at once, 100 fast requests during them ---------------------------
python3 "$LOAD" "$U" 16 100 >"$T_DIR/burst1.json" &
lp=$!
# the slow calls are in flight (python may take a while to start here)
wait_for 5 count -ge 17 workers
sleep 0.2
peak=$(nworkers "$M") mpeak=$(gauge phantom_pool_workers) kpeak=$(kept)
wait "$lp"
R=$T_DIR/burst1.json
is "$(field "$R" slow_ok)" 16 "burst: the 16 slow calls are answered"
is "$(field "$R" fast_ok)" 100 "burst: the 100 tools/list and module tools/call are answered right"
diag "fast requests during 16 slow calls: p50 $(field "$R" p50_ms) ms, p99 $(field "$R" p99_ms) ms, max $(field "$R" max_ms) ms; slowest slow call $(field "$R" slow_max_s) s"
# the issue's bound: answered within 100 ms, read as the p99 (measured
# 1 to 3 ms, under ASan and beside the whole suite too); the slowest one
# only has to show it did not wait for a slow call
awk -v p="$(field "$R" p99_ms)" 'BEGIN { exit !(p < 100) }'
ok "burst: the fast requests' p99 ($(field "$R" p99_ms) ms) is under 100 ms"
awk -v p="$(field "$R" max_ms)" 'BEGIN { exit !(p < 1000) }'
ok "burst: no fast request waited for a slow call (slowest $(field "$R" max_ms) ms)"
awk -v s="$(field "$R" slow_max_s)" 'BEGIN { exit !(s < 3.5) }'
ok "burst: the slow calls ran at once, not in waves (longest $(field "$R" slow_max_s) s)"
[ "$peak" -ge 17 ]; ok "burst: the pool grew to $peak workers (process table)"
[ "${mpeak:-0}" -ge 17 ]; ok "burst: /metrics said $mpeak workers"
[ "$kpeak" -ge 17 ]; ok "burst: each new worker has its persistent process ($kpeak)"

# ---- back to the minimum after the idle timeout ------------------------------------
wait_for 8 count -eq 2 workers
is "$(nworkers "$M")" 2 "idle: the pool shrank back to min_idle (process table)"
# the master's own count (SIGUSR2): a scrape would be a request itself,
# and a dynamic pool forks a spare for it
kill -USR2 "$M"
wait_for 3 grep -q 'pool: 0 busy, 2 idle, 2 workers of at most 24' "$LOG"
ok "idle: the master counts 0 busy, 2 idle, 2 workers (SIGUSR2)"
# (3/1: the spare the pool forks as the scrape takes one of the 2 idle)
like "$(gauge phantom_pool_workers)/$(gauge 'phantom_workers{state="busy"}')" '^[23]/1$' \
	"idle: /metrics counts the 2 workers (and a spare), 1 busy: the one answering it"
wait_for 3 count -eq 2 kept
is "$(kept)" 2 "idle: the persistent processes of the ended workers died with them"
! grep -q 'killed by signal\|exited with status' "$LOG"
ok "idle: the workers that ended exited cleanly"
curl -s "$BASE/healthz" >"$T_DIR/h.json"
is "$(jq -c '[.workers.max, .workers.max_reached, (.listen_queue | type)]' "$T_DIR/h.json")" '[24,0,"number"]' \
	"health: the pool's maximum, times reached and the listen queue (a unix socket's, from sock_diag)"

# ---- SIGHUP in the middle of a burst --------------------------------------------------
python3 "$LOAD" "$U" 16 100 100 >"$T_DIR/burst2.json" &
lp=$!
wait_for 5 count -ge 17 workers
sleep 0.1
kill -HUP "$M"
wait "$lp"
R=$T_DIR/burst2.json
is "$(field "$R" slow_ok)/$(field "$R" fast_ok)" 16/100 "SIGHUP mid-burst: no request lost (16 slow, 100 fast)"
wait_for 3 grep -q 'configuration reloaded; generation 1' "$LOG"; ok "SIGHUP: the reload is logged"
wait_for 8 count -eq 2 workers
is "$(nworkers "$M")" 2 "SIGHUP: the new generation is back to its minimum after the burst"

# ---- SIGUSR2: the pool's state in the log -----------------------------------------------
kill -USR2 "$M"
wait_for 3 sh -c "grep 'pool: 0 busy, 2 idle, 2 workers of at most 24; the maximum reached 0 times; listen queue 0 of [0-9]*' '$LOG' | grep -q ."
ok "SIGUSR2 logs busy, idle, total, maximum, times reached and the listen queue"

# ---- connections stalled in their parameters --------------------------------------
# Six connections straight to the socket send half their parameters and
# stall; a worker reading one holds it until http.params_timeout_ms (20 s
# here), so it counts as busy from the accept and the pool grows past them.
# Measured: answered in under 10 ms with the pool at 8 workers; while a
# worker counted as busy only once it had read a request, the pool stayed
# at 2 and the discover had no answer within the client's 15 s.
pool_conf "$T_DIR/stall.yaml" '{ mode: dynamic, max: 16, start: 2, min_idle: 2, max_idle: 2, idle_timeout_ms: 1500 }' \
	'params_timeout_ms: 20000'
phantom_unix "$T_DIR/stall.yaml" || { echo "not ok $((T_N + 1)) - phantom starts"; exit 1; }
M=$PH_PID LOG=$PH_LOG
wait_for 3 count -eq 2 workers
python3 "$STALL" "$PH_SOCK" 6 "$T_DIR/release" >"$T_DIR/stall.out" &
lp=$!
wait_for 20 test -s "$T_DIR/stall.out"
read -r st secs <"$T_DIR/stall.out"
is "${st:-0}" 200 "stalled: a discover is answered while 6 connections stall in their parameters"
awk -v s="${secs:-99}" 'BEGIN { exit !(s < 8) }'
ok "stalled: it did not wait for their timeout (${secs:-none} s; params_timeout_ms is 20 s)"
n=$(nworkers "$M")
[ "$n" -ge 7 ]; ok "stalled: the pool grew past the 6 workers they hold ($n workers)"
kill -USR2 "$M"
wait_for 3 grep -q 'pool: [0-9]* busy' "$LOG"
busy=$(grep -o 'pool: [0-9]* busy' "$LOG" | tail -1 | grep -o '[0-9][0-9]*')
[ "${busy:-0}" -ge 6 ]; ok "stalled: the master counts the workers holding them busy ($busy)"
touch "$T_DIR/release"
wait "$lp"
fcgi_post "$PH_SOCK" "$(req 1 server/discover)" $(mhdr server/discover)
is "$STATUS" 200 "stalled: the next request after they went away is served"
wait_for 8 count -le 2 workers
ok "stalled: the pool shrank back once they went away ($(nworkers "$M") workers)"

# ---- a burst larger than the maximum (ondemand, TCP) ---------------------------------------
# max 3, under max_idle's default (4), which the pool then takes as 3
pool_conf "$T_DIR/ondemand.yaml" '{ mode: ondemand, max: 3, idle_timeout_ms: 1000 }'
OUT=$("$PHANTOM" -c "$T_DIR/ondemand.yaml" -t 2>&1)
is "$?/$(tail -1 <<<"$OUT")" "0/$T_DIR/ondemand.yaml: configuration OK" "ondemand with max 3: -t passes"
serve phantom_listen "$T_DIR/ondemand.yaml"
grep -q 'started 0 workers (ondemand pool, at most 3)' "$LOG"; ok "ondemand: no worker at start"
# the start check's probe connection got one: it ends after the idle timeout
wait_for 4 count -eq 0 workers
is "$(nworkers "$M")" 0 "ondemand: no worker while no request comes"
python3 "$LOAD" "$U" 6 4 >"$T_DIR/full.json" &
lp=$!
wait_for 5 count -eq 3 workers
sleep 0.5
# the master says it: a scrape would wait in that queue itself
kill -USR2 "$M"
wait_for 2 grep -q 'pool: 3 busy' "$LOG"
queued=$(grep -o 'listen queue [0-9]*' "$LOG" | tail -1 | grep -o '[0-9]*$')
wait "$lp"
R=$T_DIR/full.json
is "$(field "$R" slow_ok)/$(field "$R" fast_ok)" 6/4 "over the maximum: the requests that waited are all answered"
awk -v s="$(field "$R" slow_max_s)" 'BEGIN { exit !(s >= 3.5) }'
ok "over the maximum: the extra slow calls waited for a worker ($(field "$R" slow_max_s) s)"
[ "${queued:-0}" -ge 2 ]; ok "over the maximum: SIGUSR2 showed $queued connections in the TCP listen queue"
is "$(grep -c 'pool reached its maximum of 3 workers' "$LOG")" 1 "over the maximum: one \"pool reached its maximum\" line"
[ "$(gauge phantom_pool_max_reached_total)" -ge 1 ]; ok "over the maximum: counted in phantom_pool_max_reached_total"
wait_for 6 count -eq 0 workers
is "$(nworkers "$M")" 0 "ondemand: every worker ended after the idle timeout"
mpost "$U" 1 tools/call '{"name":"echo","arguments":{"text":"again"}}'
is "$(jqr '.result.content[0].text')" again "ondemand: a request after that forks a worker and is answered"
is "$(gauge phantom_pool_workers)/$(gauge 'phantom_workers{state="busy"}')" 1/1 \
	"ondemand: /metrics counts the one worker, answering it"

# ---- SIGTERM waits for the calls in flight ------------------------------------------------
python3 "$LOAD" "$U" 3 0 >"$T_DIR/stop.json" &
lp=$!
wait_for 5 count -eq 3 workers
sleep 0.5
kill -TERM "$M"
wait "$lp"
is "$(field "$T_DIR/stop.json" slow_ok)" 3 "SIGTERM: the 3 slow calls in flight are answered"
wait_gone "$M" 5; ok "SIGTERM: then the master exits"
! grep -q 'workers.memory_percent' "$LOG"; ok "memory: no warning for max 3 workers"

# ---- static with max 2, under the defaults of start and max_idle ---------------------------
pool_conf "$T_DIR/static.yaml" '{ mode: static, max: 2 }'
OUT=$("$PHANTOM" -c "$T_DIR/static.yaml" -t 2>&1)
is "$?/$(tail -1 <<<"$OUT")" "0/$T_DIR/static.yaml: configuration OK" "static with max 2: -t passes"
serve phantom_unix "$T_DIR/static.yaml"
workers_are "$M" 2 "static with max 2: two workers"
mpost "$U" 1 tools/call '{"name":"echo","arguments":{"text":"static"}}'
is "$(jqr '.result.content[0].text')" static "static with max 2: a request is answered"

# ---- the maximum checked against the host's memory -------------------------------------------
printf '%s
' 'workers: { mode: dynamic, max: 256, start: 1, min_idle: 1, max_idle: 1, memory_percent: 1 }' \
	>"$T_DIR/memory.yaml"
phantom_listen "$T_DIR/memory.yaml" || { echo "not ok $((T_N + 1)) - phantom starts"; exit 1; }
wait_for 4 grep -q 'workers.max 256 x [0-9]* KiB .* is more than workers.memory_percent 1% of this host' "$PH_LOG"
ok "memory: max 256 x a worker's measured RSS over 1% of the host's memory is warned about"
done_testing
