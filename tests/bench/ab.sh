#!/bin/bash
# tests/bench/ab.sh: two Phantom builds compared on the module path, paired
# (not part of make check).
#
#   bash tests/bench/ab.sh BUILD_DIR_A BUILD_DIR_B
#
# Each build dir holds a built phantom-fcgi and examples/module (make). Both
# serve tools/call echo of the example module, each under spawn-fcgi with
# BENCH_WORKERS (default 4) workers behind an nginx of its own, over loopback
# TCP and then over a unix socket (AB_UNIX=0: TCP only). AB_GROUPS (default
# 8) groups of four wrk slices of AB_SECONDS (default 2) each run A, B, B, A:
# a drift of the machine over a group cancels to first order, and neither
# side always runs first.
#
# Two figures a transport, B against A:
#   - throughput: B's summed req/s over A's, with the median and range of
#     the groups' own ratios;
#   - CPU a request: the run time of each side's FastCGI processes over a
#     slice (/proc/PID/task/*/schedstat: utime + stime before their rounding
#     to clock ticks), divided by the requests it served, nginx left out. On
#     a shared machine this is the figure to rely on: other load takes
#     throughput from both sides unevenly, and changes the CPU one request
#     costs much less (caches shared with it still move it some).
# And, unless AB_IR=0 (or without valgrind), the instructions a request
# (Ir) of each side: one worker under callgrind behind nginx, counters
# zeroed after 2 s of requests, then AB_IR_SECONDS (default 5) of wrk -c1:
# what the machine's load barely moves (one build's runs spread over some
# 450 of 33,000), the figure a fast path of a few hundred instructions
# shows in.
if [ $# -ne 2 ]; then
	echo "usage: $0 BUILD_DIR_A BUILD_DIR_B" >&2
	exit 2
fi
A_DIR=$(cd "$1" && pwd) || exit 2
B_DIR=$(cd "$2" && pwd) || exit 2
top_builddir=$A_DIR PHANTOM=$A_DIR/phantom-fcgi
. "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/tests/lib.sh"
. "$top_srcdir/tests/bench/bench_lib.sh"
set +u
CONNS=${BENCH_CONNECTIONS:-16}
W=${BENCH_WORKERS:-4}
LUA=$top_srcdir/tests/bench/mcp.lua
PAIR_SECS=${AB_SECONDS:-2}
GROUPS_N=${AB_GROUPS:-8}
SLICE_CPU=cpu_ns

for t in wrk nginx spawn-fcgi; do
	command -v "$t" >/dev/null || { echo "ab: $t is needed" >&2; exit 2; }
done
for d in "$A_DIR" "$B_DIR"; do
	for f in "$d/phantom-fcgi" "$d/examples/module/.libs/phantom_example.so"; do
		[ -e "$f" ] || { echo "ab: $f is missing: build first (make)" >&2; exit 2; }
	done
done

# ab_conf DIR: the configuration serving DIR's example module
ab_conf() {
	local f
	f=$T_DIR/ab-$RANDOM.yaml
	cat >"$f" <<YAML
server: { name: phantom-ab, version: "1" }
max_requests: 0
tools:
  - { name: echo, input: {text: {type: string, required: true}}, module: $1/examples/module/.libs/phantom_example.so, symbol: echo }
YAML
	echo "$f"
}

# ir_side DIR: the instructions a tools/call request costs DIR's build:
# sets IR to "INSTRUCTIONS REQUESTS"
ir_side() {
	MCP_METHOD=tools/call MCP_NAME=echo MCP_ARGS='{"text":"hi"}' \
		callgrind_ir "$1/phantom-fcgi" "$(ab_conf "$1")" "$LUA" "${AB_IR_SECONDS:-5}"
}

echo "ab: A $A_DIR"
echo "ab: B $B_DIR"
echo "ab: $W FastCGI workers a side, wrk -t2 -c$CONNS, $GROUPS_N groups of A B B A, ${PAIR_SECS}s a slice, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
CONF_A=$(ab_conf "$A_DIR") CONF_B=$(ab_conf "$B_DIR")
for how in tcp unix; do
	{ [ "$how" = unix ] && [ "${AB_UNIX:-1}" = 0 ]; } || [ "$GROUPS_N" = 0 ] && continue
	phantom_nginx "$A_DIR/phantom-fcgi" "$CONF_A" "$how" --workers "$W" || exit 1
	AU=$PN_URL AP=$PN_PID
	phantom_nginx "$B_DIR/phantom-fcgi" "$CONF_B" "$how" --workers "$W" || exit 1
	BU=$PN_URL BP=$PN_PID
	sleep 0.5
	groups "$how" "$AU" "$AP" "$BU" "$BP"
done
if [ "${AB_IR:-1}" != 0 ] && command -v valgrind >/dev/null && command -v callgrind_control >/dev/null; then
	ir_side "$A_DIR"; IA=($IR)
	ir_side "$B_DIR"; IB=($IR)
	awk -v ia="${IA[0]:-0}" -v na="${IA[1]:-0}" -v ib="${IB[0]:-0}" -v nb="${IB[1]:-0}" 'BEGIN {
		a = na > 0 ? ia / na : 0; b = nb > 0 ? ib / nb : 0
		printf "instructions a request (callgrind, one worker): A %.0f, B %.0f: B - A %+.0f, B/A %.4f (%d and %d requests)\n",
			a, b, b - a, (a > 0 ? b / a : 0), na, nb }'
fi
echo "ab: load after the runs $(cut -d' ' -f1-3 /proc/loadavg)"
