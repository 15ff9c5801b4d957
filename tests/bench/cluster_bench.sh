#!/bin/bash
# tests/bench/cluster_bench.sh: several hosts on one Redis (cluster:), in one
# run on one machine (make bench-cluster; not part of make check).
#
#   1. tools/call echo (the example module) through three hosts behind one
#      round-robin nginx, with cluster: against the same three hosts'
#      configuration without it: BENCH_PAIRS groups of ABBA slices of
#      BENCH_PAIR_SECONDS (tests/bench/bench_lib.sh groups); the target is
#      a ratio of at least 0.95 (a stateless call never touches Redis);
#   2. the time from --notify tools/list_changed on one host to each of
#      3 x FANOUT_STREAMS listen streams (round-robin: a third on each host)
#      reading it, FANOUT_RUNS times: p50, p99 and the last stream (the
#      streams end after FANOUT_HOLD_MS, subscriptions.max_ms);
#   3. tasks/get of one finished task through the three hosts against one
#      of them alone (its own nginx), both reading the record from Redis.
# Everything runs on 127.0.0.1 and every process started is stopped at the end.
if [ -z "${top_builddir:-}" ]; then top_builddir=$PWD; fi
. "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/tests/lib.sh"
. "$top_srcdir/tests/bench/bench_lib.sh"
set +u
for t in wrk nginx redis-server redis-cli jq python3; do
	command -v "$t" >/dev/null || { echo "cluster_bench: $t is needed" >&2; exit 2; }
done
MODDIR=$top_builddir/examples/module/.libs
[ -e "$MODDIR/phantom_example.so" ] || { echo "cluster_bench: build first" >&2; exit 2; }
CONNS=${BENCH_CONNECTIONS:-16}
LUA=$top_srcdir/tests/bench/mcp.lua
PAIR_SECS=${BENCH_PAIR_SECONDS:-2}
GROUPS_N=${BENCH_PAIRS:-6}
W=${BENCH_WORKERS:-2}
FAN=${FANOUT_STREAMS:-1000}
RUNS=${FANOUT_RUNS:-2}
CLIENTS=$top_srcdir/tests/integration/listen_clients.py
EXT='{"extensions":{"io.modelcontextprotocol/tasks":{}}}'
HARD=$(ulimit -Hn)
[ "$HARD" = unlimited ] && HARD=1048576
ulimit -Sn "$HARD"

RS=$T_DIR/redis.sock
redis-server --port 0 --unixsocket "$RS" --unixsocketperm 700 --dir "$T_DIR" --appendonly yes \
	--save '' --maxmemory-policy noeviction >"$T_DIR/redis.log" 2>&1 &
T_PIDS+=($!)
wait_for 10 test -S "$RS" || { echo "cluster_bench: redis-server did not start" >&2; exit 1; }
head -c 48 /dev/urandom | base64 >"$T_DIR/secret"
printf '#!/bin/sh\ncat >/dev/null\nprintf '"'"'{"content":[{"type":"text","text":"done"}]}\\n'"'"'\n' >"$T_DIR/quick.sh"
chmod 0755 "$T_DIR/quick.sh"

# conf NAME CLUSTER: a host's configuration (CLUSTER: yes or no)
conf() {
	cat <<YAML
server: { name: cluster-bench, version: "1.0" }
workers: $W
max_requests: 0
request_state: { secret_file: secret }
subscriptions: { max_streams: 20000, max_ms: ${FANOUT_HOLD_MS:-45000}, keepalive_ms: 30000, control_socket: $T_DIR/$1.ctl }
tools:
  - { name: echo, input: {text: {type: string, required: true}}, module: $MODDIR/phantom_example.so, symbol: echo }
  - { name: quick, description: answers at once, task: required, exec: [./quick.sh] }
YAML
	[ "$2" = yes ] && printf 'cluster: { redis: "unix:%s", host: %s }\n' "$RS" "$1"
}
# three HOSTS... behind one nginx: sets URL and PIDS (the masters)
three() {
	local addrs=() h
	PIDS=
	for h in "$@"; do
		phantom_listen "$T_DIR/$h.yaml" || exit 1
		addrs+=("$PH_ADDR") PIDS="$PIDS $PH_PID"
	done
	NGINX_WORKERS=1 nginx_start "${addrs[0]}; server ${addrs[1]}; server ${addrs[2]}" || exit 1
	URL=$NGINX_URL
}
for h in pa pb pc; do conf $h no >"$T_DIR/$h.yaml"; done
for h in ca cb cc; do conf $h yes >"$T_DIR/$h.yaml"; done
three pa pb pc; PLAIN=$URL PLAIN_PIDS=$PIDS
three ca cb cc; CLUSTER=$URL CLUSTER_PIDS=$PIDS
wait_for 20 sh -c "[ \"\$(redis-cli -s '$RS' PUBSUB NUMSUB \$(redis-cli -s '$RS' PUBSUB CHANNELS 'phantom:a:*') | sed -n 2p)\" = 3 ]" ||
	echo "cluster_bench: the three hubs did not subscribe" >&2

# ---- 1. tools/call: with cluster: against without ----------------------------------------
export SLICE_CPU=cpu_ns # CPU a request in nanoseconds, not clock ticks
if [ -z "${BENCH_ONLY:-}" ] || [ "$BENCH_ONLY" = call ]; then
echo "cluster_bench: tools/call echo through three hosts, $GROUPS_N groups of plain, cluster, cluster, plain, ${PAIR_SECS}s each, $CONNS connections"
GROUP_A=plain GROUP_B=cluster groups call "$PLAIN" "$PLAIN_PIDS" "$CLUSTER" "$CLUSTER_PIDS"
fi

# ---- 2. --notify on one host to 3 x FAN listen streams -----------------------------------
N=$((3 * FAN))
[ -n "${BENCH_ONLY:-}" ] && [ "$BENCH_ONLY" != notify ] && RUNS=0
for r in $(seq "$RUNS"); do
	rm -f "$T_DIR/ready" "$T_DIR/progress"
	LISTEN_BATCH=500 LISTEN_PROGRESS=$T_DIR/progress python3 "$CLIENTS" "$CLUSTER" "$N" 120 "$T_DIR/ready" \
		'{"toolsListChanged":true}' >"$T_DIR/fan$r.json" &
	LP=$!
	wait_for 120 test -e "$T_DIR/ready"
	[ "$(cat "$T_DIR/ready")" = "$N" ] || echo "cluster_bench: only $(cat "$T_DIR/ready") of $N streams acknowledged" >&2
	sleep 1
	t0=$(date +%s.%N)
	"$PHANTOM" -c "$T_DIR/ca.yaml" --notify tools/list_changed >/dev/null
	wait_for 60 sh -c "[ \"\$(cut -d' ' -f3 '$T_DIR/progress')\" = $N ]"
	# the streams end at subscriptions.max_ms, and the clients with them
	wait "$LP" 2>/dev/null
	echo "$t0" >"$T_DIR/t0.$r"
done
[ "$RUNS" -gt 0 ] && for r in $(seq "$RUNS"); do
	jq -r --argjson t0 "$(cat "$T_DIR/t0.$r")" 'select(.t_tools != null) | (.t_tools - $t0) * 1000' "$T_DIR/fan$r.json"
done | sort -n | awk -v n="$N" -v runs="$RUNS" '
	{ v[NR] = $1 }
	END {
		if (NR == 0) { print "notify: no stream read it"; exit }
		p50 = int(NR * 0.5) + 1; if (p50 > NR) p50 = NR
		p99 = int(NR * 0.99) + 1; if (p99 > NR) p99 = NR
		printf "notify: --notify on one host to %d listen streams on three hosts, %d runs: %d told; p50 %.1f ms, p99 %.1f ms, last %.1f ms\n",
			n, runs, NR, v[p50], v[p99], v[NR]
	}'

# ---- 3. tasks/get across hosts against one host --------------------------------------------
[ -n "${BENCH_ONLY:-}" ] && [ "$BENCH_ONLY" != tasks ] && { t_stop; exit 0; }
post "$CLUSTER" "$(jq -nc --arg v "$MODERN" --argjson caps "$EXT" '{jsonrpc:"2.0",id:1,method:"tools/call",
	params:{name:"quick",arguments:{},_meta:{"io.modelcontextprotocol/protocolVersion":$v,
	"io.modelcontextprotocol/clientCapabilities":$caps}}}')" \
	-H "MCP-Protocol-Version: $MODERN" -H "Mcp-Method: tools/call" -H "Mcp-Name: quick"
TASK=$(jqr .result.taskId)
sleep 2
printf '%s\t%s\n' "$TASK" "$(jq -nc --arg id "$TASK" --arg v "$MODERN" --argjson caps "$EXT" '{jsonrpc:"2.0",id:1,
	method:"tasks/get",params:{taskId:$id,_meta:{"io.modelcontextprotocol/protocolVersion":$v,
	"io.modelcontextprotocol/clientCapabilities":$caps}}}')" >"$T_DIR/task.bodies"
conf cd yes >"$T_DIR/cd.yaml"
phantom_listen "$T_DIR/cd.yaml" || exit 1
NGINX_WORKERS=1 nginx_start "$PH_ADDR" || exit 1
ONE=$NGINX_URL
tget() {
	BODIES=$T_DIR/task.bodies wrk -t2 -c8 -d"${PAIR_SECS}s" --latency -s "$top_srcdir/tests/bench/tasks.lua" "$1" >"$T_DIR/w.out"
	echo "$(awk '/Requests\/sec/{print $2}' "$T_DIR/w.out") $(awk '/ 99%/{print $2}' "$T_DIR/w.out") $(awk '/bad responses/{print $3}' "$T_DIR/w.out")"
}
one=0 across=0
for g in $(seq "$GROUPS_N"); do
	a=($(tget "$ONE")) b=($(tget "$CLUSTER")) c=($(tget "$CLUSTER")) d=($(tget "$ONE"))
	printf '  tasks/get group %2d: one host %s %s  three hosts %s %s req/s  (p99 %s %s / %s %s; bad %s %s %s %s)\n' \
		"$g" "${a[0]}" "${d[0]}" "${b[0]}" "${c[0]}" "${a[1]}" "${d[1]}" "${b[1]}" "${c[1]}" "${a[2]}" "${b[2]}" "${c[2]}" "${d[2]}"
	one=$(awk -v s="$one" -v x="${a[0]}" -v y="${d[0]}" 'BEGIN { print s + x + y }')
	across=$(awk -v s="$across" -v x="${b[0]}" -v y="${c[0]}" 'BEGIN { print s + x + y }')
done
echo "tasks/get: three hosts / one host $(awk -v a="$one" -v b="$across" 'BEGIN { printf "%.3f", (a > 0 ? b / a : 0) }')" \
	"(the record read from Redis either way)"
t_stop
