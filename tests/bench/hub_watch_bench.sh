#!/bin/bash
# tests/bench/hub_watch_bench.sh: resource subscriptions in the hub, in one
# run on one machine (not part of make check).
#
#   cd build && bash ../tests/bench/hub_watch_bench.sh     # or: make bench-hub-watch
#
# Phantom (workers: 4, behind nginx with conf/nginx.conf) is started twice:
#   1. WATCH_STREAMS listen streams asking for tools and prompts
#      list_changed only;
#   2. the same streams, each also subscribed to WATCH_SUBS files of one
#      template directory (WATCH_STREAMS x WATCH_SUBS subscriptions, one
#      inotify watch).
# Each time the hub's VmRSS is read with the streams open; in run 2 one
# file is rewritten (after an untimed warm-up fan-out of
# prompts/list_changed) and the time from the write to the last stream reading
# notifications/resources/updated is taken, beside the time from
# `phantom-fcgi --notify tools/list_changed` to the last stream reading
# tools/list_changed measured in the same run (the baseline: the same
# fan-out through the same streams without inotify). Reported: the hub's
# bytes per subscription ((RSS 2 - RSS 1) / subscriptions) and the two
# fan-out times with their ratio.
if [ -z "${top_builddir:-}" ]; then top_builddir=$PWD; fi
. "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/tests/lib.sh"
set +u
N=${WATCH_STREAMS:-2000}
K=${WATCH_SUBS:-100}
CLIENTS=$top_srcdir/tests/integration/listen_clients.py
for t in nginx jq python3; do
	command -v "$t" >/dev/null || { echo "hub_watch_bench: $t is needed" >&2; exit 2; }
done
HARD=$(ulimit -Hn)
[ "$HARD" = unlimited ] && HARD=1048576
ulimit -Sn "$HARD"
rss() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
now() { date +%s.%N; }

mkdir -p "$T_DIR/w"
for i in $(seq 1 "$K"); do : >"$T_DIR/w/f$i"; done
chmod -R a+rwX "$T_DIR/w"
cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: watch-bench, version: "1.0" }
workers: 4
subscriptions: { max_ms: 3600000, keepalive_ms: 500, max_per_principal: 0,
                 control_socket: $T_DIR/hub.sock, max_resource_subscriptions: $K }
tools:
  - { name: t, description: a tool, exec: [/bin/true] }
prompts:
  - { name: p, description: a prompt, messages: [ { role: user, text: hi } ] }
resource_templates:
  - { uri_template: "file:///w/{name}", name: w, dir: w }
YAML
subs=$(seq 1 "$K" | jq -R '"file:///w/f" + .' | jq -sc '{toolsListChanged: true, promptsListChanged: true, resourceSubscriptions: .}')

# run FILTER OUT: N streams with FILTER; sets RSS (KiB, the hub's)
run() {
	local filter=$1 out=$2 cp
	phantom_listen "$T_DIR/phantom.yaml" || { echo "hub_watch_bench: phantom does not start" >&2; exit 1; }
	nginx_start "$PH_ADDR" || { echo "hub_watch_bench: nginx does not start" >&2; exit 1; }
	rm -f "$T_DIR/ready"
	LISTEN_BATCH=500 python3 "$CLIENTS" "$NGINX_URL" "$N" 600 "$T_DIR/ready" "$filter" >"$out" & cp=$!
	wait_for 300 test -e "$T_DIR/ready"
	[ "$(cat "$T_DIR/ready")" = "$N" ] || echo "# only $(cat "$T_DIR/ready") of $N streams acknowledged"
	sleep 1
	RSS=$(rss "$(hub_of "$PH_PID")")
	if [ -n "$3" ]; then "$3"; fi
	kill -TERM "$PH_PID"
	wait "$cp"
	wait_gone "$PH_PID" 30
	nginx -c "$NGINX_DIR/nginx.conf" -e "$NGINX_DIR/error.log" -s stop 2>/dev/null
}
fanout() {
	# the first fan-out after the streams opened is the slowest whatever it
	# carries: a prompts/list_changed that nothing times goes first
	"$PHANTOM" -c "$T_DIR/phantom.yaml" --notify prompts/list_changed >/dev/null
	sleep 5
	T_LIST=$(now)
	"$PHANTOM" -c "$T_DIR/phantom.yaml" --notify tools/list_changed >/dev/null
	sleep 5
	T_FILE=$(now)
	printf 'changed' >"$T_DIR/w/f1"
	sleep 5
}
run '{"toolsListChanged":true,"promptsListChanged":true}' "$T_DIR/run1.json"
rss1=$RSS
run "$subs" "$T_DIR/run2.json" fanout
rss2=$RSS
last() { jq -s "map(.$1 // empty) | max" "$T_DIR/run2.json"; }
got() { jq -s "map(select(.$1 != null)) | length" "$T_DIR/run2.json"; }
list_ms=$(echo "($(last t_tools) - $T_LIST) * 1000" | bc -l)
file_ms=$(echo "($(last t_updated) - $T_FILE) * 1000" | bc -l)
printf 'streams %d, subscriptions %d (%d per stream, one watched directory)\n' "$N" $((N * K)) "$K"
printf 'hub RSS: %d KiB without subscriptions, %d KiB with: %.0f bytes per subscription\n' \
	"$rss1" "$rss2" "$(echo "($rss2 - $rss1) * 1024 / ($N * $K)" | bc -l)"
printf 'fan-out to the last stream: tools/list_changed (--notify) %.1f ms to %d streams, resources/updated (file written) %.1f ms to %d streams; ratio %.2f\n' \
	"$list_ms" "$(got t_tools)" "$file_ms" "$(got t_updated)" "$(echo "$file_ms / $list_ms" | bc -l)"
