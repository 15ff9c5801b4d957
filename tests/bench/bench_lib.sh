# tests/bench/bench_lib.sh: what the benchmark scripts share (sourced after
# tests/lib.sh): process trees, their CPU time, one wrk slice, a Phantom
# behind its own nginx, and the spread of paired groups.
#
# Variables the functions read: CONNS (wrk connections), LUA (the wrk
# script, tests/bench/mcp.lua), PAIR_SECS (seconds of a slice).

# tree_into PID: appends PID and its descendants to the array TREE (bash
# alone: the memory sampler of bench.sh calls it beside the measurement)
tree_into() {
	local t k kids
	TREE+=("$1")
	for t in /proc/"$1"/task/*/children; do
		kids=()
		read -r -a kids 2>/dev/null <"$t" # (the order: a process may be gone)
		for k in "${kids[@]}"; do tree_into "$k"; done
	done
}
tree() { TREE=(); tree_into "$1"; printf '%s\n' "${TREE[@]}"; }

# cpu_ticks PIDS...: CPU time (clock ticks, utime + stime of /proc/PID/stat)
# of the trees so far, the exited children they reaped included
cpu_ticks() {
	local total=0 p v
	for root in "$@"; do
		for p in $(tree "$root"); do
			v=$(awk '{ print $14 + $15 + $16 + $17 }' "/proc/$p/stat" 2>/dev/null)
			total=$((total + ${v:-0}))
		done
	done
	echo "$total"
}
HZ=$(getconf CLK_TCK)

# cpu_ns PIDS...: CPU time (nanoseconds) the processes of the trees ran so
# far, from /proc/PID/task/*/schedstat: the time utime + stime are scaled
# to, without their rounding to a clock tick (10 ms, a tenth of what a
# worker runs in a second of the module path). Exited processes are not
# counted: for long-lived ones (the workers of max_requests: 0).
cpu_ns() {
	local total=0 p t v rest
	for root in "$@"; do
		for p in $(tree "$root"); do
			for t in /proc/"$p"/task/*/schedstat; do
				read -r v rest 2>/dev/null <"$t" || continue
				total=$((total + v))
			done
		done
	done
	echo "$total"
}

# steal_now: "ALL STEAL" clock ticks of the machine so far (/proc/stat): the
# time the hypervisor gave to others is what spreads this VM's runs most
steal_now() {
	local cpu rest
	read -r cpu rest </proc/stat
	set -- $rest
	echo "$(($1 + $2 + $3 + $4 + ${5:-0} + ${6:-0} + ${7:-0} + ${8:-0})) ${8:-0}"
}

# slice URL PIDS...: "REQ_PER_S CPU REQUESTS STEAL_FRACTION" of one wrk
# run of PAIR_SECS on URL (tools/call echo), CPU the clock ticks of PIDS'
# trees meanwhile (SLICE_CPU=cpu_ns: their nanoseconds)
slice() {
	local url=$1 c0 c1 s0 s1 out; shift
	c0=$(${SLICE_CPU:-cpu_ticks} "$@")
	s0=($(steal_now))
	out=$(MCP_METHOD=tools/call MCP_NAME=echo MCP_ARGS='{"text":"hi"}' \
		wrk -t2 -c"$CONNS" -d"${PAIR_SECS}s" --timeout 5s -s "$LUA" "$url" 2>&1 | grep '^RESULT')
	s1=($(steal_now))
	c1=$(${SLICE_CPU:-cpu_ticks} "$@")
	set -- $out
	{ [ "${5:-1}" != 0 ] || [ "${6:-1}" != 0 ]; } && echo "bench: $url: non-2xx=${5:-?} socket errors=${6:-?}" >&2
	echo "${2:-0} $((c1 - c0)) ${7:-0} $(awk -v t=$((s1[0] - s0[0])) -v s=$((s1[1] - s0[1])) \
		'BEGIN { printf "%.4f", (t > 0 ? s / t : 0) }')"
}

# spread: reads one number a line; prints "median min max lo hi", lo and
# hi the mean -+ two standard errors
spread() {
	sort -n | awk '
		{ v[NR] = $1; s += $1; q += $1 * $1 }
		END {
			if (NR == 0) { print "0 0 0 0 0"; exit }
			med = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			m = s / NR; sd = NR > 1 ? sqrt((q - NR * m * m) / (NR - 1)) : 0; se = sd / sqrt(NR)
			printf "%.3f %.3f %.3f %.3f %.3f", med, v[1], v[NR], m - 2 * se, m + 2 * se
		}'
}

# phantom_nginx PHANTOM CONF tcp|unix [ARGS...]: runs PHANTOM -c CONF ARGS
# under spawn-fcgi on a loopback port or a unix socket, behind an
# nginx of its own (conf/nginx.conf). Sets PN_PID (spawn-fcgi's child, the
# master), PN_URL and PN_NGINX (nginx's pid); returns 1 when either did not
# start.
phantom_nginx() {
	local bin=$1 conf=$2 how=$3 backend log; shift 3
	log=$T_DIR/phantom-$how-$RANDOM.log
	if [ "$how" = unix ]; then
		backend=$T_DIR/phantom-$RANDOM.sock
		spawn-fcgi -n -s "$backend" -M 0666 -- "$bin" -c "$conf" "$@" 2>"$log" &
		PN_PID=$!
		T_PIDS+=("$PN_PID")
		wait_for 5 test -S "$backend" || { echo "bench: $bin did not start" >&2; cat "$log" >&2; return 1; }
		backend=unix:$backend
	else
		backend=127.0.0.1:$(free_port)
		spawn-fcgi -n -a 127.0.0.1 -p "${backend##*:}" -- "$bin" -c "$conf" "$@" 2>"$log" &
		PN_PID=$!
		T_PIDS+=("$PN_PID")
		wait_port "${backend##*:}" || { echo "bench: $bin did not start" >&2; cat "$log" >&2; return 1; }
	fi
	nginx_start "$backend" || { echo "bench: nginx did not start" >&2; return 1; }
	PN_URL=$NGINX_URL
	PN_NGINX=$(cat "$NGINX_DIR/nginx.pid")
}
