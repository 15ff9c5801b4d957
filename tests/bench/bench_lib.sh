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
# trees meanwhile (SLICE_CPU=cpu_ns: their nanoseconds); SLICE_H: a header
# to send ("Name: value")
slice() {
	local url=$1 c0 c1 s0 s1 out h=(); shift
	[ -n "${SLICE_H:-}" ] && h=(-H "$SLICE_H")
	c0=$(${SLICE_CPU:-cpu_ticks} "$@")
	s0=($(steal_now))
	out=$(MCP_METHOD=tools/call MCP_NAME=echo MCP_ARGS='{"text":"hi"}' \
		wrk -t2 -c"$CONNS" -d"${PAIR_SECS}s" --timeout 5s -s "$LUA" "${h[@]}" "$url" 2>&1 | grep '^RESULT')
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

# groups LABEL A_URL A_PIDS B_URL B_PIDS: GROUPS_N groups of slices of A, B,
# B, A (PIDS: a space-separated list, whose trees' CPU is counted); prints
# each group and the two summary lines, throughput and CPU a request, B
# against A. GROUP_A_H and GROUP_B_H: a request header each side sends
# (SLICE_H of slice), none when empty; GROUP_A and GROUP_B: the sides'
# names in what is printed (default A and B). Sets GROUPS_TA and GROUPS_TB:
# each side's req/s summed over its slices.
groups() {
	local label=$1 au=$2 ap=$3 bu=$4 bp=$5 g a b c d rr=() cr=() ta=0 tb=0 ca=0 cb=0 na=0 nb=0
	local A=${GROUP_A:-A} B=${GROUP_B:-B}
	for g in $(seq "$GROUPS_N"); do
		a=($(SLICE_H=${GROUP_A_H:-} slice "$au" $ap)) b=($(SLICE_H=${GROUP_B_H:-} slice "$bu" $bp))
		c=($(SLICE_H=${GROUP_B_H:-} slice "$bu" $bp)) d=($(SLICE_H=${GROUP_A_H:-} slice "$au" $ap))
		ta=$(awk -v s="$ta" -v x="${a[0]}" -v y="${d[0]}" 'BEGIN { print s + x + y }')
		tb=$(awk -v s="$tb" -v x="${b[0]}" -v y="${c[0]}" 'BEGIN { print s + x + y }')
		ca=$((ca + a[1] + d[1])) na=$((na + a[2] + d[2]))
		cb=$((cb + b[1] + c[1])) nb=$((nb + b[2] + c[2]))
		# this group's ratios (req/s, CPU a request) and CPU us a request
		set -- $(awk -v a="${a[0]}" -v b="${b[0]}" -v c="${c[0]}" -v d="${d[0]}" \
			-v ca=$((a[1] + d[1])) -v cb=$((b[1] + c[1])) -v na=$((a[2] + d[2])) -v nb=$((b[2] + c[2])) \
			'BEGIN {
			ua = na > 0 ? ca / 1e3 / na : 0; ub = nb > 0 ? cb / 1e3 / nb : 0
			printf "%.4f %.4f %.1f %.1f", (a + d > 0 ? (b + c) / (a + d) : 0), (ua > 0 ? ub / ua : 0), ua, ub }')
		rr+=("$1") cr+=("$2")
		printf "  %-5s group %2d: $A %6.0f %6.0f  $B %6.0f %6.0f req/s  ratio %s   CPU us/req $A %s $B %s  ratio %s  (steal %s)\n" \
			"$label" "$g" "${a[0]}" "${d[0]}" "${b[0]}" "${c[0]}" "$1" "$3" "$4" "$2" \
			"$(awk -v x="${a[3]}" -v y="${b[3]}" -v z="${c[3]}" -v w="${d[3]}" 'BEGIN { printf "%.3f", (x + y + z + w) / 4 }')"
	done
	GROUPS_TA=$ta GROUPS_TB=$tb
	set -- $(printf '%s\n' "${rr[@]}" | spread)
	echo "$label: throughput $B/$A $(awk -v a="$ta" -v b="$tb" 'BEGIN { printf "%.3f", (a > 0 ? b / a : 0) }')" \
		"(groups: median $1, $2 to $3; mean +- 2 s.e. $4 to $5)"
	set -- $(printf '%s\n' "${cr[@]}" | spread)
	awk -v ca="$ca" -v cb="$cb" -v na="$na" -v nb="$nb" -v l="$label" -v A="$A" -v B="$B" -v s="median $1, $2 to $3; mean +- 2 s.e. $4 to $5" 'BEGIN {
		ua = na > 0 ? ca / 1e3 / na : 0; ub = nb > 0 ? cb / 1e3 / nb : 0
		printf "%s: CPU a request %s %.1f us, %s %.1f us: %s/%s %.3f (groups: %s; %d and %d requests)\n",
			l, A, ua, B, ub, B, A, (ua > 0 ? ub / ua : 0), s, na, nb }'
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

# callgrind_ir BIN CONF LUA SECONDS: the instructions a request of BIN's
# worker costs: BIN -c CONF under callgrind, one worker behind nginx, the
# counters zeroed after 2 s of wrk -c1 with LUA (MCP_METHOD, MCP_NAME and
# MCP_ARGS from the environment), then SECONDS of it. Sets IR to
# "INSTRUCTIONS REQUESTS" (what the machine's load barely moves).
callgrind_ir() {
	local bin=$1 conf=$2 lua=$3 secs=$4 wrap out pid f
	wrap=$T_DIR/vg-$RANDOM.sh
	out=$T_DIR/cg-$RANDOM
	printf '#!/bin/sh\nexec valgrind -q --tool=callgrind --callgrind-out-file=%s.%%p %s "$@"\n' \
		"$out" "$bin" >"$wrap"
	chmod +x "$wrap"
	phantom_nginx "$wrap" "$conf" tcp --workers 1 || return 1
	pid=$PN_PID
	wrk -t1 -c1 -d2s -s "$lua" "$PN_URL" >/dev/null 2>&1
	callgrind_control -z "$pid" >/dev/null 2>&1
	set -- $(wrk -t1 -c1 -d"${secs}s" --timeout 5s -s "$lua" "$PN_URL" 2>&1 | grep '^RESULT')
	callgrind_control -d "$pid" >/dev/null 2>&1
	f=$(ls -t "$out.$pid"* 2>/dev/null | grep -v "\.$pid\$" | head -1)
	IR="$(awk '/^(summary|totals):/ { print $2; exit }' "$f") ${7:-0}"
	kill "$pid"
}
