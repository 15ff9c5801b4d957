#!/bin/bash
# Phantom under `spawn-fcgi -n` (spawn-fcgi creates the socket and execs
# Phantom with it on fd 0), on a unix socket and on TCP 127.0.0.1, with
# --workers N (a master), with --pool (the configuration's pool by demand)
# and without (one process), behind the real nginx; and scripts/run.sh's
# invocation, which must run the bundled configuration's pool as it is.
. "${top_srcdir:-.}/tests/lib.sh"
command -v spawn-fcgi >/dev/null || skip_all "spawn-fcgi not installed"
command -v nginx >/dev/null || skip_all "nginx not installed"

nap_tool "$T_DIR/bin"
test_conf "$T_DIR/phantom.yaml" spawn-test 'tools:' \
	"  - { name: nap, description: Answers after 0.4 s, exec: [$T_DIR/bin/nap.sh] }"

# round WHAT: requests through nginx against the current backend
round() {
	local w=$1 U=$NGINX_URL
	mpost "$U" 1 server/discover '{}'
	is "$STATUS/$(jqr '.result._meta["io.modelcontextprotocol/serverInfo"].name')" 200/spawn-test \
		"$w: discover through nginx"
	post "$U" '{"jsonrpc":"2.0","id":2,"result":{}}'
	is "$STATUS/$(jqr .error.code)/$(jqr .id)" 400/-32600/2 "$w: a posted response gets 400 -32600"
	post "$U" "$(req 3 server/discover)" -H 'Host: evil.example.com'
	is "$STATUS" 403 "$w: a foreign Host gets 403"
	for i in 1 2 3 4 5 6; do
		mpost "$U" "$((10 + i))" server/discover '{}'
		[ "$STATUS" = 200 ] || break
	done
	is "$STATUS" 200 "$w: six more requests served"
	grep -q "method=server/discover target=- status=200" "$PH_LOG"
	ok "$w: spawn-fcgi -n keeps Phantom's stderr (the request log)"
}

# stop WHAT: SIGTERM ends Phantom with status 0
stop() {
	kill "$PH_PID"
	wait "$PH_PID"; is "$?" 0 "$1: SIGTERM ends Phantom with status 0"
	nginx -c "$NGINX_DIR/nginx.conf" -e "$NGINX_DIR/error.log" -s stop
}

spawn_fcgi_unix "$T_DIR/phantom.yaml" --workers 3 || { echo "not ok 1 - spawn-fcgi starts"; exit 1; }
nginx_start "$PH_BACKEND" || { echo "not ok 1 - nginx starts"; exit 1; }
wait_for 3 test "$(ps -o comm= -p "$PH_PID")" = phantom-master
ok "unix, --workers 3: spawn-fcgi -n execs Phantom in place (its master, phantom-master)"
workers_are "$PH_PID" 3 "unix, --workers 3: the master runs 3 workers"
like "$(stat -c %a "$PH_SOCK")" '^666$' "unix: the socket has the mode given with -M"
round "unix, --workers 3"
naps_at_once "$NGINX_URL" "$PH_LOG" "unix, --workers 3"
stop "unix, --workers 3"
wait_for 2 sh -c "! pgrep -P $PH_PID >/dev/null"; ok "unix, --workers 3: no worker is left"

spawn_fcgi_unix "$T_DIR/phantom.yaml" || { echo "not ok $((T_N + 1)) - spawn-fcgi starts"; exit 1; }
nginx_start "$PH_BACKEND" || { echo "not ok $((T_N + 1)) - nginx starts"; exit 1; }
round "unix, single process"
is "$(nworkers "$PH_PID")" 0 "unix, no --workers: one process, no master"
stop "unix, single process"

spawn_fcgi_tcp "$T_DIR/phantom.yaml" --workers 2 || { echo "not ok $((T_N + 1)) - spawn-fcgi starts"; exit 1; }
nginx_start "$PH_BACKEND" || { echo "not ok $((T_N + 1)) - nginx starts"; exit 1; }
workers_are "$PH_PID" 2 "TCP, --workers 2: the master runs 2 workers"
# bound to 0.0.0.0 it would also answer on 127.0.0.2
! (exec 3<>"/dev/tcp/127.0.0.2/${PH_ADDR##*:}") 2>/dev/null
ok "TCP: spawn-fcgi -a 127.0.0.1 listens on 127.0.0.1 only"
round "TCP, --workers 2"
stop "TCP, --workers 2"

# --pool: the workers mapping of the configuration on the inherited socket
test_conf "$T_DIR/pool.yaml" spawn-test 'workers: { mode: dynamic, max: 8, start: 3, min_idle: 1, max_idle: 3 }' \
	'tools:' "  - { name: nap, description: Answers after 0.4 s, exec: [$T_DIR/bin/nap.sh] }"
spawn_fcgi_unix "$T_DIR/pool.yaml" --pool || { echo "not ok $((T_N + 1)) - spawn-fcgi starts"; exit 1; }
nginx_start "$PH_BACKEND" || { echo "not ok $((T_N + 1)) - nginx starts"; exit 1; }
workers_are "$PH_PID" 3 "unix, --pool: the master starts the configuration's workers.start (3)"
grep -q 'started 3 workers (dynamic pool, at most 8)' "$PH_LOG"; ok "unix, --pool: a dynamic pool of at most 8"
round "unix, --pool"
naps_at_once "$NGINX_URL" "$PH_LOG" "unix, --pool"
stop "unix, --pool"

# ---- scripts/run.sh's invocation: the bundled configuration's pool, as configured ------
# The arguments run.sh gives phantom-fcgi under spawn-fcgi -n after -c "$conf",
# with the workers: section of conf/phantom.yaml (a pool by demand): it must
# run that pool, not a static one of its own.
run_args=$(sed -n 's/^setsid spawn-fcgi -n .* -- "\$bin" -c "\$conf" \(.*\) \\$/\1/p' \
	"$top_srcdir/scripts/run.sh")
[ -n "$run_args" ]; ok "scripts/run.sh runs phantom-fcgi under spawn-fcgi -n (with: $run_args)"
bundled=$top_srcdir/conf/phantom.yaml
b_max=$(awk '/^workers:/ { w = 1; next } w && /^[^ #]/ { exit } w && $1 == "max:" { print $2 }' "$bundled")
b_start=$(awk '/^workers:/ { w = 1; next } w && /^[^ #]/ { exit } w && $1 == "start:" { print $2 }' "$bundled")
gate=$T_DIR/gate
mkdir -p "$gate"
# gate.sh: an exec tool that says it runs (a file per call), then waits
# for the file "open" (at most 20 s) before it answers
cat >"$T_DIR/bin/gate.sh" <<SH
#!/bin/sh
cat >/dev/null
: >"$gate/in.\$\$"
i=0
while [ ! -e "$gate/open" ] && [ \$i -lt 400 ]; do sleep 0.05; i=\$((i + 1)); done
printf '{"content":[{"type":"text","text":"through"}]}\n'
SH
chmod 0755 "$T_DIR/bin/gate.sh"
test_conf "$T_DIR/bundled-pool.yaml" spawn-test 'tools:' \
	"  - { name: gate, description: Waits, exec: [$T_DIR/bin/gate.sh] }"
awk '/^workers:/ { w = 1 } w && /^[^ #]/ && !/^workers:/ { exit } w' "$bundled" >>"$T_DIR/bundled-pool.yaml"
# shellcheck disable=SC2086 # the arguments as run.sh writes them
spawn_fcgi_unix "$T_DIR/bundled-pool.yaml" $run_args || { echo "not ok $((T_N + 1)) - spawn-fcgi starts"; exit 1; }
nginx_start "$PH_BACKEND" || { echo "not ok $((T_N + 1)) - nginx starts"; exit 1; }
grep -q "started $b_start workers (dynamic pool, at most $b_max)" "$PH_LOG"
ok "run.sh's invocation: the bundled dynamic pool ($b_start at start, at most $b_max), not a static one"
# 8 calls that each hold a worker until the gate opens: a pool that stays
# at 4 runs 4 of them; one by demand forks workers for the other 4
gpids=()
for i in 1 2 3 4 5 6 7 8; do
	curl -s -o "$T_DIR/gate.$i" -X POST -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' -H "MCP-Protocol-Version: $MODERN" \
		-H 'Mcp-Method: tools/call' -H 'Mcp-Name: gate' \
		--data-binary "$(req "3$i" tools/call '{"name":"gate","arguments":{}}')" "$NGINX_URL" &
	gpids+=($!)
done
wait_for 15 test "$(ls "$gate" | grep -c '^in\.')" -ge 8
is "$(ls "$gate" | grep -c '^in\.')" 8 "run.sh's invocation: 8 slow calls run at once (the pool grew past $b_start)"
: >"$gate/open"
wait "${gpids[@]}"
is "$(cat "$T_DIR"/gate.[1-8] | jq -r '.result.content[0].text' | sort | uniq -c | tr -s ' ')" " 8 through" \
	"run.sh's invocation: all 8 answered"
stop "run.sh's invocation"

spawn_fcgi_tcp "$T_DIR/phantom.yaml" || { echo "not ok $((T_N + 1)) - spawn-fcgi starts"; exit 1; }
nginx_start "$PH_BACKEND" || { echo "not ok $((T_N + 1)) - nginx starts"; exit 1; }
round "TCP, single process"
is "$(nworkers "$PH_PID")" 0 "TCP, no --workers: one process, no master"
stop "TCP, single process"
done_testing
