#!/bin/bash
# tests/bench/bench.sh: throughput, latency and memory of Phantom against a
# ceiling and a peer, in one run on one machine (not part of make check).
#
#   cd build && bash ../tests/bench/bench.sh        # or: make bench
#
# Targets, each driven by wrk (tests/bench/mcp.lua) for BENCH_SECONDS with
# BENCH_CONNECTIONS connections:
#   phantom module    tools/call echo (examples/module, a C handler)   via nginx
#   phantom script    tools/call echo_script (a POSIX sh exec handler) via nginx
#   phantom resource  resources/read info://hello (static text)         via nginx
#   phantom py_once   tools/call echo_py (tests/bench/echo.py, Python, one process
#                     per call)                                         via nginx
#   phantom py_warm   tools/call echo_py_warm (the same program, persistent: true)
#   ceiling           tests/fcgi_trivial under spawn-fcgi, a fixed 200-byte
#                     JSON answer from plain libfcgi, behind its own nginx
#   static            resources/read and the persistent Python tool from the
#                     static build (make static; STATIC_PHANTOM: another one)
#   peer              the TypeScript SDK v2 server (v2-server.mjs --mode
#                     minimal: tools/call echo, resources/read info://hello)
# Phantom and the ceiling run BENCH_WORKERS FastCGI processes on loopback
# TCP, and again on a unix socket (the bundled configuration's transport;
# BENCH_UNIX=0 skips that part). RSS is the peak sum of every process of a side (nginx included),
# sampled every 0.2 s. CPU is the time the side's FastCGI processes (and
# what they ran), nginx left out, spent a request: the figure other load on
# the machine disturbs least. BENCH_ROUNDS (default 3) runs every target
# that many times, alternating, and keeps each target's best round (its
# memory figures are the first round's, and only the first runs beside the
# sampler); with several rounds the module's ratios to the ceiling are also
# given as the median of the rounds' ratios (each round runs the ceiling
# just before the module). The ratio the module is held to (>= 0.95) is then
# measured apart, in BENCH_PAIRS (default 12) groups of ceiling, module,
# module, ceiling of BENCH_PAIR_SECONDS (default 2) each, on TCP and on the
# unix socket (0 groups: not measured). The peer's npm packages are installed into
# $PHANTOM_TEST_CACHE (default ~/.cache/phantom-tests) when missing; set
# PEER_SERVER to the v2-server.mjs to use (default ../shared/tools/...).
if [ -z "${top_builddir:-}" ]; then top_builddir=$PWD; fi
. "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/tests/lib.sh"
. "$top_srcdir/tests/bench/bench_lib.sh"
set +u
SECS=${BENCH_SECONDS:-5}
CONNS=${BENCH_CONNECTIONS:-16}
W=${BENCH_WORKERS:-4}
PHANTOM=${PHANTOM:-$top_builddir/phantom-fcgi}
TRIVIAL=$top_builddir/tests/fcgi_trivial
MODDIR=$top_builddir/examples/module/.libs
LUA=$top_srcdir/tests/bench/mcp.lua
PEER_SERVER=${PEER_SERVER:-$top_srcdir/../shared/tools/mcp-clients/v2-server.mjs}
# the pinned packages scripts/test.sh installs (tests/node/package.json) hold
# the peer's too; otherwise they are installed into a cache of their own
if [ -d "${PHANTOM_NPM_DIR:-/var/cache/phantom-npm}/node_modules/@modelcontextprotocol/node" ]; then
	CACHE=${PHANTOM_NPM_DIR:-/var/cache/phantom-npm}
else
	CACHE=${PHANTOM_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/phantom-tests}/peer-server-2.4.0
fi

for t in wrk nginx spawn-fcgi curl jq; do
	command -v "$t" >/dev/null || { echo "bench: $t is needed" >&2; exit 2; }
done
for f in "$PHANTOM" "$TRIVIAL" "$MODDIR/phantom_example.so"; do
	[ -e "$f" ] || { echo "bench: $f is missing: build first (make check TESTS=)" >&2; exit 2; }
done

# ---- memory of process trees ------------------------------------------------------
# The sampler runs beside the measurement, so it reads /proc with bash alone:
# a fork per process and sample (ps, awk) took the CPU it was measuring, and
# more of it from the side with more processes.
# kib_of FILE KEY: sets KIB to the kB figure of the line "KEY: N kB" (0 when none)
kib_of() {
	local k v rest
	KIB=0
	while read -r k v rest; do
		if [ "$k" = "$2" ]; then KIB=$v; return; fi
	done 2>/dev/null <"$1"
}
# mem_sum FIELD PIDS...: sets MEM to the summed VmRSS (FIELD=rss) or Pss
# (FIELD=pss) of the trees
mem_sum() {
	local field=$1 p root; shift
	MEM=0
	for root in "$@"; do
		TREE=()
		tree_into "$root"
		for p in "${TREE[@]}"; do
			if [ "$field" = rss ]; then kib_of "/proc/$p/status" VmRSS:
			else kib_of "/proc/$p/smaps_rollup" Pss:; fi
			MEM=$((MEM + KIB))
		done
	done
}
mem_kib() { mem_sum "$@"; echo "$MEM"; }
# sample_peak FILE WEBPID|- PIDS...: until killed, writes the peaks
# "rss_all rss_without_web pss_all" (KiB) to FILE
sample_peak() {
	local file=$1 web=$2 a=0 b=0 c=0 x y z changed sfd; shift 2
	exec {sfd}<> <(:) # read -t on it waits 0.2 s without running sleep
	while :; do
		mem_sum rss "$@"; y=$MEM; x=$y
		mem_sum pss "$@"; z=$MEM
		if [ "$web" != - ]; then
			mem_sum rss "$web"; x=$((y + MEM))
			mem_sum pss "$web"; z=$((z + MEM))
		fi
		changed=
		[ "$x" -gt "$a" ] && a=$x changed=1
		[ "$y" -gt "$b" ] && b=$y changed=1
		[ "$z" -gt "$c" ] && c=$z changed=1
		# whole lines only (it is killed at any time), and only when a peak moved
		[ -n "$changed" ] && echo "$a $b $c" >"$file.new" && mv -f "$file.new" "$file"
		read -r -t 0.2 -u "$sfd"
	done
}

# run LABEL URL METHOD NAME ARGS WEBPID|- PIDS...: checks one request, then
# wrk with memory sampling; stores "rps p50 p99 rss rss_noweb pss cpu_us"
# in R[LABEL] (cpu_us: CPU microseconds a request of PIDS' trees), unless
# an earlier round of LABEL was faster
declare -A R ALL # ALL[LABEL]: the req/s of every round, in order
run() {
	local label=$1 url=$2 method=$3 name=$4 args=$5 web=$6 body check sp out c0 c1 cpu; shift 6
	if [ "$method" = resources/read ]; then body="{\"uri\":\"$name\"}"; else body="{\"name\":\"$name\",\"arguments\":$args}"; fi
	check=$(curl -s -X POST -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
		-H "MCP-Protocol-Version: $MODERN" -H "Mcp-Method: $method" -H "Mcp-Name: $name" \
		--data-binary "$(jq -c --arg m "$method" '{jsonrpc:"2.0",id:1,method:$m,params:(. + {_meta:{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}})}' <<<"$body")" "$url" |
		sed -n 's/^data: //p;/^{/p' | tail -1)
	if [ -z "$check" ] || [ "$(jq -r '(.error // .result.isError // false) | if . == false then "ok" else "bad" end' <<<"$check" 2>/dev/null)" != ok ]; then
		echo "bench: $label: the probe request failed: $check" >&2
		R[$label]=${R[$label]:-0 0 0 0 0 0 0}
		return
	fi
	# the memory of the first round is kept: later ones run without the
	# sampler (it reads /proc for every process of a side, and Phantom's
	# side has more of them)
	sp=
	if [ -z "${R[$label]:-}" ]; then
		sample_peak "$T_DIR/peak.$label" "$web" "$@" &
		sp=$!
	fi
	c0=$(cpu_ticks "$@")
	out=$(MCP_METHOD=$method MCP_NAME=$name MCP_ARGS=$args \
		wrk -t2 -c"$CONNS" -d"${SECS}s" --timeout 5s -s "$LUA" "$url" 2>&1 | grep '^RESULT')
	c1=$(cpu_ticks "$@")
	[ -n "$sp" ] && { kill "$sp" 2>/dev/null; wait "$sp" 2>/dev/null; }
	set -- $out
	ALL[$label]="${ALL[$label]:-} ${2:-0}"
	{ [ "${5:-1}" != 0 ] || [ "${6:-1}" != 0 ]; } && echo "bench: $label: non-2xx=$5 socket errors=$6" >&2
	cpu=$(awk -v t=$((c1 - c0)) -v hz="$HZ" -v n="${7:-0}" 'BEGIN { if (n > 0) printf "%.1f", t * 1e6 / hz / n; else print 0 }')
	if [ -z "${R[$label]:-}" ]; then
		R[$label]="$2 $3 $4 $(cat "$T_DIR/peak.$label" 2>/dev/null || echo 0 0 0) $cpu"
	elif awk -v a="${2:-0}" -v b="${R[$label]%% *}" 'BEGIN { exit !(a > b) }'; then
		# memory from the first round: later ones run beside the
		# persistent processes the earlier ones started
		local m; m=$(cut -d' ' -f4-6 <<<"${R[$label]}")
		R[$label]="$2 $3 $4 $m $cpu"
	fi
}

# ---- Phantom -------------------------------------------------------------------------
cat >"$T_DIR/bench.yaml" <<YAML
server: { name: phantom-bench, version: "1" }
max_requests: 0
tools:
  - { name: echo, input: {text: {type: string, required: true}}, module: $MODDIR/phantom_example.so, symbol: echo }
  - name: echo_script
    input_schema: {type: object, properties: {text: {type: string}}, required: [text]}
    exec: [$top_srcdir/examples/scripts/echo_script.sh]
  - { name: echo_py, input: {text: string}, exec: [$top_srcdir/tests/bench/echo.py] }
  - { name: echo_py_warm, input: {text: string}, exec: [$top_srcdir/tests/bench/echo.py], persistent: true }
resources:
  - { uri: "info://hello", name: hello, text: "Hello, world." }
YAML
phantom_nginx "$PHANTOM" "$T_DIR/bench.yaml" tcp --workers "$W" || exit 1
PH_PID=$PN_PID PH_URL=$PN_URL PH_NGINX=$PN_NGINX

# ---- the ceiling -----------------------------------------------------------------------
TRIV_PORT=$(free_port)
spawn-fcgi -a 127.0.0.1 -p "$TRIV_PORT" -F "$W" -P "$T_DIR/trivial.pid" -- "$TRIVIAL" >/dev/null
TRIV_PIDS=$(cat "$T_DIR/trivial.pid")
for p in $TRIV_PIDS; do T_PIDS+=("$p"); done
wait_port "$TRIV_PORT"
nginx_start "127.0.0.1:$TRIV_PORT" || { echo "bench: nginx did not start" >&2; exit 1; }
CEIL_URL=$NGINX_URL
CEIL_NGINX=$(cat "$NGINX_DIR/nginx.pid")

# ---- the same over unix sockets ------------------------------------------------------------
if [ "${BENCH_UNIX:-1}" != 0 ]; then
	phantom_nginx "$PHANTOM" "$T_DIR/bench.yaml" unix --workers "$W" || exit 1
	PHU_PID=$PN_PID PHU_URL=$PN_URL PHU_NGINX=$PN_NGINX
	TRIVU_SOCK=$T_DIR/trivial-bench.sock
	spawn-fcgi -s "$TRIVU_SOCK" -M 0666 -F "$W" -P "$T_DIR/trivial-unix.pid" -- "$TRIVIAL" >/dev/null
	TRIVU_PIDS=$(cat "$T_DIR/trivial-unix.pid")
	for p in $TRIVU_PIDS; do T_PIDS+=("$p"); done
	wait_for 5 test -S "$TRIVU_SOCK"
	nginx_start "unix:$TRIVU_SOCK" || { echo "bench: nginx did not start" >&2; exit 1; }
	CEILU_URL=$NGINX_URL
	CEILU_NGINX=$(cat "$NGINX_DIR/nginx.pid")
fi

# ---- the static build (make static), when there is one ------------------------------------
# It loads no modules, so it is held to the dynamic build (>= 0.95) on what
# both serve: resources/read, the server's own path, and the persistent
# Python tool, the fast way to a tool without a module.
STATIC=${STATIC_PHANTOM:-$top_builddir/static/phantom-fcgi}
ST_URL=
if [ -x "$STATIC" ]; then
	grep -v 'module:' "$T_DIR/bench.yaml" >"$T_DIR/bench-static.yaml"
	if phantom_nginx "$STATIC" "$T_DIR/bench-static.yaml" tcp --workers "$W"; then
		ST_PID=$PN_PID ST_URL=$PN_URL ST_NGINX=$PN_NGINX
	else
		echo "bench: the static build did not start" >&2
	fi
else
	echo "bench: no static build at $STATIC (make static): no static / dynamic ratios" >&2
fi

# ---- the peer ------------------------------------------------------------------------------
PEER_URL=
if command -v node >/dev/null && command -v npm >/dev/null && [ -f "$PEER_SERVER" ]; then
	if [ ! -d "$CACHE/node_modules/@modelcontextprotocol/node" ]; then
		mkdir -p "$CACHE"
		printf '%s\n' '{"private":true,"type":"module","dependencies":{' \
			'"@modelcontextprotocol/server":"2.4.0","@modelcontextprotocol/node":"2.1.2","zod":"4.6.7"}}' \
			>"$CACHE/package.json"
		(cd "$CACHE" && timeout 600 npm install --no-audit --no-fund --loglevel=error >"$T_DIR/npm.log" 2>&1) ||
			echo "bench: could not install the peer: $(tail -1 "$T_DIR/npm.log")" >&2
	fi
	if [ -d "$CACHE/node_modules/@modelcontextprotocol/node" ]; then
		mkdir -p "$CACHE/peer"
		cp "$PEER_SERVER" "$CACHE/peer/v2-server.mjs"
		PORT=$(free_port)
		(cd "$CACHE/peer" && exec node v2-server.mjs --mode minimal --port "$PORT") 2>"$T_DIR/peer.log" &
		PEER_PID=$!
		T_PIDS+=("$PEER_PID")
		wait_port "$PORT" && PEER_URL=http://127.0.0.1:$PORT/mcp
	fi
fi
[ -n "$PEER_URL" ] || echo "bench: no peer (node, npm or $PEER_SERVER missing)" >&2

sleep 1
IDLE_PH=$(( $(mem_kib rss "$PH_PID") + $(mem_kib rss "$PH_NGINX") ))
IDLE_CEIL=$(( $(mem_kib rss $TRIV_PIDS) + $(mem_kib rss "$CEIL_NGINX") ))
IDLE_PEER=0
IDLE_ST=0
[ -n "$ST_URL" ] && IDLE_ST=$(( $(mem_kib rss "$ST_PID") + $(mem_kib rss "$ST_NGINX") ))
[ -n "$PEER_URL" ] && IDLE_PEER=$(mem_kib rss "$PEER_PID")

echo "bench: $W FastCGI workers, wrk -t2 -c$CONNS -d${SECS}s, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "${BENCH_ROUNDS:-3}"); do
run ceiling "$CEIL_URL" tools/call echo '{"text":"hi"}' "$CEIL_NGINX" $TRIV_PIDS
run module "$PH_URL" tools/call echo '{"text":"hi"}' "$PH_NGINX" "$PH_PID"
run script "$PH_URL" tools/call echo_script '{"text":"hi"}' "$PH_NGINX" "$PH_PID"
run resource "$PH_URL" resources/read info://hello '{}' "$PH_NGINX" "$PH_PID"
run py_once "$PH_URL" tools/call echo_py '{"text":"hi"}' "$PH_NGINX" "$PH_PID"
run py_warm "$PH_URL" tools/call echo_py_warm '{"text":"hi"}' "$PH_NGINX" "$PH_PID"
if [ "${BENCH_UNIX:-1}" != 0 ]; then
	run ceiling_unix "$CEILU_URL" tools/call echo '{"text":"hi"}' "$CEILU_NGINX" $TRIVU_PIDS
	run module_unix "$PHU_URL" tools/call echo '{"text":"hi"}' "$PHU_NGINX" "$PHU_PID"
	run py_warm_unix "$PHU_URL" tools/call echo_py_warm '{"text":"hi"}' "$PHU_NGINX" "$PHU_PID"
fi
if [ -n "$ST_URL" ]; then
	run static_resource "$ST_URL" resources/read info://hello '{}' "$ST_NGINX" "$ST_PID"
	run static_py_warm "$ST_URL" tools/call echo_py_warm '{"text":"hi"}' "$ST_NGINX" "$ST_PID"
fi
if [ -n "$PEER_URL" ]; then
	run peer_tool "$PEER_URL" tools/call echo '{"text":"hi"}' - "$PEER_PID"
	run peer_resource "$PEER_URL" resources/read info://hello '{}' - "$PEER_PID"
fi
done

# ---- module against the ceiling, paired ----------------------------------------------------
# The rounds above give each target one run of BENCH_SECONDS beside the
# memory sampler, and a single run of this 2-core machine spreads by +-10%.
# The ratio the module is held to is measured apart: BENCH_PAIRS groups of
# four slices of BENCH_PAIR_SECONDS, ceiling, module, module, ceiling
# (ABBA: a drift of the machine over a group cancels, to first order, and
# neither side always runs first), with no sampler beside them. The ratio
# is the module's summed req/s over the ceiling's; the groups' own ratios
# give its spread (median, range, and the mean +- two standard errors).
# pairs LABEL CEIL_URL CEIL_PIDS MODULE_URL MODULE_PIDS: sets PAIRS[LABEL] to
# "ratio median min max lo hi cpu_ratio steal_ratio steal_pct" and prints
# the groups; steal_ratio: the same sums with each slice's req/s taken to
# the whole machine (divided by 1 - its steal fraction)
declare -A PAIRS
pairs() {
	local label=$1 cu=$2 cp=$3 mu=$4 mp=$5 g a b c d rs=() ca=0 cb=0 na=0 nb=0 sums="0 0 0 0 0"
	for g in $(seq "$NPAIRS"); do
		a=($(slice "$cu" $cp)) b=($(slice "$mu" $mp)) c=($(slice "$mu" $mp)) d=($(slice "$cu" $cp))
		rs+=("$(awk -v a="${a[0]}" -v b="${b[0]}" -v c="${c[0]}" -v d="${d[0]}" \
			'BEGIN { if (a + d > 0) printf "%.4f", (b + c) / (a + d); else print 0 }')")
		# the sums: ceiling, module, both taken to the whole machine, steal
		sums=$(awk -v s="$sums" -v a="${a[0]}" -v b="${b[0]}" -v c="${c[0]}" -v d="${d[0]}" \
			-v sa="${a[3]}" -v sb="${b[3]}" -v sc="${c[3]}" -v sd="${d[3]}" 'BEGIN {
			split(s, v, " ")
			printf "%f %f %f %f %f", v[1] + a + d, v[2] + b + c,
				v[3] + a / (1 - sa) + d / (1 - sd), v[4] + b / (1 - sb) + c / (1 - sc), v[5] + sa + sb + sc + sd
		}')
		ca=$((ca + a[1] + d[1])) na=$((na + a[2] + d[2]))
		cb=$((cb + b[1] + c[1])) nb=$((nb + b[2] + c[2]))
		printf '  %-12s group %2d: ceiling %6.0f %6.0f  module %6.0f %6.0f  ratio %s  (steal %s %s %s %s)\n' \
			"$label" "$g" "${a[0]}" "${d[0]}" "${b[0]}" "${c[0]}" "${rs[-1]}" "${a[3]}" "${b[3]}" "${c[3]}" "${d[3]}"
	done
	PAIRS[$label]=$(printf '%s\n' "${rs[@]}" | sort -n | awk -v sums="$sums" -v g="$NPAIRS" \
		-v ca="$ca" -v cb="$cb" -v na="$na" -v nb="$nb" '
		{ v[NR] = $1; s += $1; q += $1 * $1 }
		END {
			split(sums, t, " ")
			med = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			m = s / NR; sd = NR > 1 ? sqrt((q - NR * m * m) / (NR - 1)) : 0; se = sd / sqrt(NR)
			cpu = (na > 0 && nb > 0 && ca > 0) ? (cb / nb) / (ca / na) : 0
			printf "%.3f %.3f %.3f %.3f %.3f %.3f %.2f %.3f %.1f", (t[1] > 0 ? t[2] / t[1] : 0), med, v[1], v[NR],
				m - 2 * se, m + 2 * se, cpu, (t[3] > 0 ? t[4] / t[3] : 0), 100 * t[5] / (4 * g)
		}')
}
NPAIRS=${BENCH_PAIRS:-12}
PAIR_SECS=${BENCH_PAIR_SECONDS:-2}
if [ "$NPAIRS" -gt 0 ]; then
	echo "bench: module against the ceiling, $NPAIRS groups of ceiling, module, module, ceiling, ${PAIR_SECS}s each"
	pairs tcp "$CEIL_URL" "$TRIV_PIDS" "$PH_URL" "$PH_PID"
	[ "${BENCH_UNIX:-1}" != 0 ] && pairs unix "$CEILU_URL" "$TRIVU_PIDS" "$PHU_URL" "$PHU_PID"
fi
echo "bench: load after the runs $(cut -d' ' -f1-3 /proc/loadavg)"

mb() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
echo
echo "RSS: peak sum of VmRSS during the run (all processes of the side; 'app' leaves nginx out);"
echo "PSS: the same with shared pages divided among the processes that map them."
echo "CPU: microseconds of CPU a request in the side's own processes (nginx left out)."
printf '%-14s %9s %8s %8s %9s %9s %9s %9s %8s\n' target req/s p50_ms p99_ms idle_RSS RSS app_RSS PSS cpu_us
row() {
	local label=$1 idle=$2; set -- ${R[$1]:-0 0 0 0 0 0 0}
	printf '%-14s %9.0f %8s %8s %8sM %8sM %8sM %8sM %8s\n' "$label" "$1" "$2" "$3" "$(mb "$idle")" "$(mb "$4")" "$(mb "$5")" "$(mb "$6")" "$7"
}
row ceiling "$IDLE_CEIL"
row module "$IDLE_PH"
row script "$IDLE_PH"
row resource "$IDLE_PH"
row py_once "$IDLE_PH"
row py_warm "$IDLE_PH"
if [ "${BENCH_UNIX:-1}" != 0 ]; then row ceiling_unix "$IDLE_CEIL"; row module_unix "$IDLE_PH"; row py_warm_unix "$IDLE_PH"; fi
if [ -n "$ST_URL" ]; then row static_resource "$IDLE_ST"; row static_py_warm "$IDLE_ST"; fi
if [ -n "$PEER_URL" ]; then row peer_tool "$IDLE_PEER"; row peer_resource "$IDLE_PEER"; fi

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "n/a" }'; }
col() { local c=$2; set -- ${R[$1]:-0 0 0 0 0 0 0}; echo "${!c}"; }
# paired A B: A / B in each round (B runs just before A in a round, so the
# two see the same machine), as "MEDIAN (round 1, round 2, ...)"
paired() {
	local a=(${ALL[$1]:-}) b=(${ALL[$2]:-}) rs=() i med
	for i in "${!a[@]}"; do rs+=("$(ratio "${a[$i]}" "${b[$i]:-0}")"); done
	[ "${#rs[@]}" -gt 0 ] || { echo n/a; return; }
	med=$(printf '%s\n' "${rs[@]}" | sort -n | awk '{ v[NR] = $1 } END {
		printf "%.2f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
	echo "$med ($(printf '%s, ' "${rs[@]}" | sed 's/, $//'))"
}
maxcol() { local c=$1 m=0 v; shift; for l in "$@"; do v=$(col "$l" "$c"); [ "$v" -gt "$m" ] 2>/dev/null && m=$v; done; echo "$m"; }
echo
# pair_line LABEL: the paired measurement of LABEL, in words
pair_line() {
	set -- ${PAIRS[$1]:-}
	[ -n "${1:-}" ] || return
	echo "  paired ($NPAIRS ABBA groups)      $1   (target >= 0.95; groups: median $2, $3 to $4; mean +- 2 s.e. $5 to $6; CPU a request $7)"
	echo "  the same, each slice taken to the whole machine  $8   (the hypervisor took $9% of it: steal in /proc/stat)"
}
echo "module tools/call / ceiling      $(ratio "$(col module 1)" "$(col ceiling 1)")   (best rounds)"
[ "${BENCH_ROUNDS:-3}" -gt 1 ] &&
	echo "  the same, median of the rounds  $(paired module ceiling)"
pair_line tcp
echo "CPU a request, module / ceiling  $(ratio "$(col module 7)" "$(col ceiling 7)")"
echo "persistent Python / per-call Python  $(ratio "$(col py_warm 1)" "$(col py_once 1)")   (target >= 30)"
echo "persistent Python / module       $(ratio "$(col py_warm 1)" "$(col module 1)")"
if [ "${BENCH_UNIX:-1}" != 0 ]; then
	echo "unix socket: module / ceiling    $(ratio "$(col module_unix 1)" "$(col ceiling_unix 1)")   (best rounds)"
	[ "${BENCH_ROUNDS:-3}" -gt 1 ] &&
		echo "  the same, median of the rounds  $(paired module_unix ceiling_unix)"
	pair_line unix
	echo "unix socket: CPU a request, module / ceiling  $(ratio "$(col module_unix 7)" "$(col ceiling_unix 7)")"
	echo "unix socket: persistent Python / module  $(ratio "$(col py_warm_unix 1)" "$(col module_unix 1)")"
	echo "unix socket / TCP, ceiling       $(ratio "$(col ceiling_unix 1)" "$(col ceiling 1)")"
fi
if [ -n "$ST_URL" ]; then
	echo "static / dynamic build, resources/read  $(ratio "$(col static_resource 1)" "$(col resource 1)")   (target >= 0.95; best rounds; the static build loads no modules)"
	[ "${BENCH_ROUNDS:-3}" -gt 1 ] &&
		echo "  the same, median of the rounds  $(paired static_resource resource)"
	echo "static / dynamic build, persistent Python tools/call  $(ratio "$(col static_py_warm 1)" "$(col py_warm 1)")   (target >= 0.95)"
	echo "static / dynamic build, CPU a request, resources/read  $(ratio "$(col static_resource 7)" "$(col resource 7)")"
fi
if [ -n "$PEER_URL" ]; then
	echo "module tools/call / peer         $(ratio "$(col module 1)" "$(col peer_tool 1)")   (target >= 10)"
	echo "script tools/call / peer         $(ratio "$(col script 1)" "$(col peer_tool 1)")   (target >= 1)"
	echo "resources/read / peer            $(ratio "$(col resource 1)" "$(col peer_resource 1)")"
	echo "persistent Python / peer         $(ratio "$(col py_warm 1)" "$(col peer_tool 1)")   (target >= 2)"
	echo "per-call Python / peer           $(ratio "$(col py_once 1)" "$(col peer_tool 1)")"
	PEER_RSS=$(maxcol 4 peer_tool peer_resource)
	PEER_PSS=$(maxcol 6 peer_tool peer_resource)
	echo "Phantom / peer, peak RSS         $(ratio "$(maxcol 4 module script resource)" "$PEER_RSS")   (target <= 0.10; nginx + master + $W workers)"
	echo "Phantom / peer, peak RSS, no nginx $(ratio "$(maxcol 5 module script resource)" "$PEER_RSS")"
	echo "Phantom / peer, peak PSS         $(ratio "$(maxcol 6 module script resource)" "$PEER_PSS")"
	echo "Phantom with persistent Python / peer, peak RSS  $(ratio "$(col py_warm 4)" "$PEER_RSS")   ($W Python processes included)"
	echo "Phantom with persistent Python / peer, peak PSS  $(ratio "$(col py_warm 6)" "$PEER_PSS")"
fi
