#!/bin/bash
# Several hosts, one service (cluster:): a real redis-server on a unix
# socket in the test directory (appendonly yes), three Phantom hosts each
# with its own master, hub, socket, task directory and control socket,
# behind one nginx upstream with plain round-robin and no affinity.
#   - a stateless call never connects to Redis;
#   - the ten tasks-* scenarios of the official conformance suite pass
#     through the balancer, and so do its 2025-11-25 (legacy sessions,
#     requests pushed mid-call) and 2026-07-28 scenarios;
#   - a task made on one host is read on the other two and cancelled from
#     the third (its process is gone);
#   - limits.rate of 10 a second and auth.fail_limit count once for the
#     three hosts;
#   - Redis holds no principal, argument or result in clear, and its keys
#     say nothing;
#   - a host killed with SIGKILL while it runs a task: the others fail the
#     task once its lease lapses;
#   - Redis stopped (SIGSTOP): tools/call keeps answering, tasks/get answers
#     -32603 rather than hanging; Redis restarted on its append-only file:
#     the records are still there;
#   - a host whose Redis is not there at start serves stateless calls.
# the hosts' addresses, URLs, pids and logs are set with eval (ADDR_a...)
# shellcheck disable=SC2154
. "${top_srcdir:-.}/tests/lib.sh"
HERE=$top_srcdir/tests/conformance
command -v nginx >/dev/null || skip_all "nginx not installed"
command -v jq >/dev/null || skip_all "jq not installed"
cluster_supported
node_setup || skip_all "npm packages not installed (run scripts/test.sh)"
. "$HERE/suite.sh"

EXT='{"extensions":{"io.modelcontextprotocol/tasks":{}}}'
NEEDLE=$(head -c 9 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
ARG_NEEDLE=argneedle$NEEDLE
RESULT_NEEDLE=resultneedle$NEEDLE
PRINCIPAL=principalneedle$NEEDLE
HOSTS="a b c"

# ---- Redis --------------------------------------------------------------------
RDIR=$T_DIR/redis
mkdir -p "$RDIR"
RSOCK=$T_DIR/redis.sock
# a password (AUTH from cluster.password_file) and database 3 (SELECT)
RPASS=redispass$(head -c 12 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
printf '%s\n' "$RPASS" >"$T_DIR/redis.pass"
printf 'requirepass %s\n' "$RPASS" >"$RDIR/redis.conf"
rcli() { REDISCLI_AUTH=$RPASS redis-cli -s "$RSOCK" -n 3 "$@"; }
redis_start() {
	redis-server "$RDIR/redis.conf" --port 0 --unixsocket "$RSOCK" --unixsocketperm 700 \
		--dir "$RDIR" --appendonly yes --save '' --maxmemory-policy noeviction \
		--daemonize no >>"$RDIR/log" 2>&1 &
	REDIS_PID=$!
	T_PIDS+=("$REDIS_PID")
	wait_for 10 sh -c "REDISCLI_AUTH='$RPASS' redis-cli -s '$RSOCK' ping 2>/dev/null | grep -q PONG"
}
redis_start
ok "redis-server starts on a unix socket with appendonly yes and a password"

# ---- the three hosts ----------------------------------------------------------------
cat >"$T_DIR/slow.sh" <<SH
#!/bin/sh
cat >/dev/null
echo \$\$ >"$T_DIR/slow.pid"
exec sleep 300
SH
cat >"$T_DIR/quick.sh" <<SH
#!/bin/sh
cat >/dev/null
echo '{"content":[{"type":"text","text":"$RESULT_NEEDLE"}]}'
SH
# mid: runs until the test creates mid.go (at most a minute), then answers
cat >"$T_DIR/mid.sh" <<SH
#!/bin/sh
cat >/dev/null
i=0
while [ ! -e "$T_DIR/mid.go" ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done
echo '{"content":[{"type":"text","text":"mid done"}]}'
SH
chmod 0755 "$T_DIR/slow.sh" "$T_DIR/quick.sh" "$T_DIR/mid.sh"
cat >"$T_DIR/extra-tools.yaml" <<YAML
  - { name: cl_slow, description: runs until stopped, task: required, exec: [$T_DIR/slow.sh] }
  - { name: cl_mid, description: runs until told, task: required, exec: [$T_DIR/mid.sh] }
  - { name: cl_quick, description: answers at once, task: required, exec: [$T_DIR/quick.sh],
      input: { word: { type: string } } }
YAML
SECRET=$(head -c 48 /dev/urandom | base64 | tr -d '\n')
printf '%s\n' "$SECRET" >"$T_DIR/secret"
# host_conf HOST EXTRA-FILE: the conformance fixture app as one host of the cluster
# (the extra tools go last in tools:, before prompts:, so the fixture's first tool
# stays the first: http-header-validation calls it)
host_conf() {
	local h=$1
	sed -e "s#\\./fixtures\\.pl#$HERE/fixtures.pl#g" \
	    -e "s#\([ :]\)static-binary.png#\1$HERE/static-binary.png#g" \
	    -e "s#manifest: skills/manifest.yaml#manifest: $HERE/skills/manifest.yaml#" \
	    -e "s#dir: /tmp/phantom-conformance-tasks#dir: $T_DIR/tasks-$h\\n  purge_interval_ms: 300#" \
	    -e "s#^workers: 8#workers: 4#" \
	    -e "s#^subscriptions:#subscriptions:\\n  control_socket: $T_DIR/hub-$h.sock#" \
	    -e "s#secret_env: PHANTOM_CONFORMANCE_SECRET#secret_file: $T_DIR/secret#" \
	    -e "/^prompts:/e cat $T_DIR/extra-tools.yaml" \
	    "$HERE/phantom.yaml"
	cat <<YAML
cluster:
  redis: "unix:$RSOCK?db=3"
  password_file: $T_DIR/redis.pass
  host: host-$h
  prefix: "cl-test:"
  timeout_ms: 300
  lease_ms: 10000
  backoff_max_ms: 1000
YAML
	[ -n "${2:-}" ] && cat "$2"
}
for h in $HOSTS; do
	host_conf "$h" >"$T_DIR/$h.yaml"
	out=$("$PHANTOM" -t -c "$T_DIR/$h.yaml" 2>&1)
	ok "host $h: its configuration loads (-t)" || printf '%s\n' "$out" | sed 's/^/#   /'
	phantom_listen "$T_DIR/$h.yaml" || { echo "not ok - phantom $h starts"; done_testing; exit 1; }
	eval "ADDR_$h=\$PH_ADDR PID_$h=\$PH_PID LOG_$h=\$PH_LOG"
	nginx_start "$PH_ADDR" || { echo "not ok - nginx for $h starts"; done_testing; exit 1; }
	eval "URL_$h=\$NGINX_URL"
done
# one upstream, round-robin, no affinity
nginx_start "$ADDR_a; server $ADDR_b; server $ADDR_c" || { echo "not ok - nginx starts"; done_testing; exit 1; }
U=$NGINX_URL
grep -q "server $ADDR_a; server $ADDR_b; server $ADDR_c;" "$NGINX_DIR/nginx.conf" &&
	! grep -Eq '^[^#]*(hash|ip_hash|sticky)' "$NGINX_DIR/nginx.conf"
ok "one nginx upstream of the three hosts, plain round-robin"

# tcall URL ID METHOD PARAMS [CURL-ARGS...]: a request declaring the tasks extension
tcall() {
	local url=$1 id=$2 m=$3 p=$4 name; shift 4
	name=$(printf '%s' "$p" | jq -r '.name // .taskId // empty')
	post "$url" "$(printf '%s' "$p" | jq -c --argjson id "$id" --arg m "$m" --arg v "$MODERN" --argjson caps "$EXT" \
		'{jsonrpc:"2.0",id:$id,method:$m,params:(. + {_meta:{"io.modelcontextprotocol/protocolVersion":$v,
		"io.modelcontextprotocol/clientCapabilities":$caps}})}')" \
		-H "MCP-Protocol-Version: $MODERN" -H "Mcp-Method: $m" ${name:+-H "Mcp-Name: $name"} \
		${AUTH:+-H "Authorization: Bearer $AUTH"} "$@"
}
status_on() { tcall "$1" 90 tasks/get "{\"taskId\":\"$2\"}"; [ "$(jqr .result.status)" = "$3" ]; }

# ---- a stateless call never touches Redis: only the three hubs connect -----------
# (each hub's two asynchronous connections, named phantom-hub-cmd and -sub: its
# lease and its pass over the task records go over the first; conns counts the rest)
conns() { rcli client list | grep -v 'cmd=client' | grep -vc 'name=phantom-hub-'; }
hubconns() { rcli client list | grep -c 'name=phantom-hub-'; }
hubs_only() { [ "$(hubconns)" = 6 ] && [ "$(conns)" = 0 ]; }
wait_for 20 hubs_only
ok "the three hubs hold their two connections to Redis each, and nothing else does"
good=0
for i in $(seq 1 30); do
	mpost "$U" "$i" tools/call '{"name":"test_simple_text","arguments":{}}'
	[ "$(jqr '.result.content[0].type')" = text ] && good=$((good + 1))
done
is "$good" 30 "stateless tools/call through the balancer"
is "$(conns)" 0 "and no worker connected to Redis for them"

# ---- the tasks scenarios through the balancer --------------------------------------
# shellcheck disable=SC2086
run_each "cluster tasks" tasks warn "$U" $TASKS

# ---- the 2025-11-25 and 2026-07-28 scenarios through the balancer ------------------
# (a legacy session's requests, its DELETE and the answers to requests pushed
# mid-call land on any host: the hubs share them through Redis)
run_2025 "cluster 2025-11-25" "$U"
run_2026 "cluster 2026-07-28" "$U"

# ---- a task made on one host, read on the others, cancelled from the third -------
tcall "$URL_a" 1 tools/call '{"name":"cl_quick","arguments":{"word":"'"$ARG_NEEDLE"'"}}'
QUICK=$(jqr .result.taskId)
like "$QUICK" '^[0-9a-f]{32}$' "host a makes a task"
for h in b c; do
	eval "url=\$URL_$h"
	wait_for 20 status_on "$url" "$QUICK" completed
	ok "host $h reads the task host a made, completed"
done
tcall "$URL_c" 2 tasks/get "{\"taskId\":\"$QUICK\"}"
is "$(jqr '.result.result.content[0].text')" "$RESULT_NEEDLE" "host c gives its result"
rm -f "$T_DIR/slow.pid"
tcall "$URL_a" 3 tools/call '{"name":"cl_slow","arguments":{}}'
SLOW=$(jqr .result.taskId)
wait_file "$T_DIR/slow.pid"
SLOW_PID=$(cat "$T_DIR/slow.pid" 2>/dev/null)
kill -0 "$SLOW_PID" 2>/dev/null
ok "the slow task's process runs on host a"
status_on "$URL_b" "$SLOW" working
ok "host b sees it working"
tcall "$URL_c" 4 tasks/cancel "{\"taskId\":\"$SLOW\"}"
is "$(jqr '.error.code // "none"')" none "host c cancels it"
wait_gone "$SLOW_PID" 20
ok "its process on host a is gone"
wait_for 20 status_on "$URL_b" "$SLOW" cancelled
ok "host b reads it cancelled"

# ---- reload: a principal and a rate limit of 10 a second ----------------------------
bearer_token T_ALICE H_ALICE
bearer_token T_RATER H_RATER
cat >"$T_DIR/phase2.yaml" <<YAML
auth:
  mode: bearer
  tokens:
    - { principal: $PRINCIPAL, sha256: $H_ALICE }
    - { principal: rater, sha256: $H_RATER }
  fail_limit: 4
  fail_window_s: 60
limits:
  rate: { requests: 10, per_seconds: 1 }
YAML
for h in $HOSTS; do
	host_conf "$h" "$T_DIR/phase2.yaml" >"$T_DIR/$h.yaml"
	eval "kill -HUP \$PID_$h"
done
refuses_anonymous() { AUTH='' tcall "$1" 5 tools/list '{}'; [ "$STATUS" = 401 ]; }
for h in $HOSTS; do
	eval "url=\$URL_$h"
	wait_for 20 refuses_anonymous "$url"
	ok "host $h reloaded with auth and limits.rate"
done

AUTH=$T_ALICE
tcall "$U" 6 tools/call '{"name":"cl_quick","arguments":{"word":"'"$ARG_NEEDLE"'"}}'
OWNED=$(jqr .result.taskId)
like "$OWNED" '^[0-9a-f]{32}$' "a principal's task through the balancer"
wait_for 20 status_on "$U" "$OWNED" completed
ok "it completes, read through the balancer"
AUTH=$T_RATER tcall "$U" 7 tasks/get "{\"taskId\":\"$OWNED\"}"
is "$(jqr .error.code)" -32602 "another principal does not see it on any host"

# limits.rate: 10 a second for the three hosts together (each alone would
# let 10 a second through: 30 together)
t0=$(date +%s%N)
seq 1 90 | xargs -P 6 -I@@ curl -s -o /dev/null -w '%{http_code}\n' -X POST "$U" \
	-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
	-H "MCP-Protocol-Version: $MODERN" -H 'Mcp-Method: tools/call' -H 'Mcp-Name: test_simple_text' \
	-H "Authorization: Bearer $T_RATER" \
	--data-binary "$(req 8 tools/call '{"name":"test_simple_text","arguments":{}}')" >"$T_DIR/rate.out"
t1=$(date +%s%N)
passed=$(grep -c '^200$' "$T_DIR/rate.out")
limited=$(grep -c '^429$' "$T_DIR/rate.out")
ms=$(( (t1 - t0) / 1000000 ))
# a bucket of 10 refilled at 10 a second: 10 + 10 x seconds at most
allowed=$(( 10 + 10 * ms / 1000 ))
diag "limits.rate: $passed of 90 passed, $limited limited, in $ms ms (one shared bucket: at most $allowed)"
[ "$passed" -ge 9 ] && [ "$passed" -le $(( allowed * 3 / 2 + 3 )) ] && [ $((passed + limited)) -eq 90 ]
ok "limits.rate counts once across the three hosts"

# auth.fail_limit: 4 invalid tokens a minute from an address, for the three
# hosts together (each alone would take 4 before it refuses: 12)
: >"$T_DIR/fail.out"
for i in $(seq 1 12); do
	AUTH=$(newtok) tcall "$U" $((60 + i)) tools/list '{}'
	echo "$STATUS" >>"$T_DIR/fail.out"
done
n401=$(grep -c '^401$' "$T_DIR/fail.out")
n429=$(grep -c '^429$' "$T_DIR/fail.out")
diag "auth.fail_limit: $n401 invalid tokens checked, $n429 refused with 429"
[ "$n401" -ge 4 ] && [ "$n401" -le 5 ] && [ $((n401 + n429)) -eq 12 ]
ok "auth.fail_limit counts once across the three hosts"

# ---- nothing readable in Redis -----------------------------------------------------
rcli --scan >"$T_DIR/keys"
[ -s "$T_DIR/keys" ] && ! grep -Ev '^cl-test:[a-z]{1,2}:[0-9a-f]{32}$' "$T_DIR/keys" >/dev/null
ok "every key is the prefix, a kind and a hash ($(wc -l <"$T_DIR/keys") keys)"
: >"$T_DIR/values"
while IFS= read -r k; do
	case $(rcli type "$k") in
	string) rcli --raw get "$k" >>"$T_DIR/values" ;;
	hash) rcli --raw hgetall "$k" >>"$T_DIR/values" ;;
	*) rcli --raw dump "$k" >>"$T_DIR/values" ;;
	esac
done <"$T_DIR/keys"
cat "$T_DIR/keys" >>"$T_DIR/values"
[ -s "$T_DIR/values" ] &&
	! grep -aq -e "$PRINCIPAL" -e "$ARG_NEEDLE" -e "$RESULT_NEEDLE" -e "$QUICK" -e cl_quick -e host- \
		-e rater -e 'ui://' "$T_DIR/values"
ok "no principal, task id, argument, result, tool or host name in Redis"

# ---- a host killed with SIGKILL while it runs a task ------------------------------------
AUTH=$T_ALICE
rm -f "$T_DIR/slow.pid"
tcall "$URL_c" 9 tools/call '{"name":"cl_slow","arguments":{}}'
LOST=$(jqr .result.taskId)
wait_file "$T_DIR/slow.pid"
# the whole host at once: every process stopped first, so that none lives
# to write the task's end (the hub reaping the supervisor, the supervisor
# told of the hub's death), then killed
descendants() { local p; for p in $(pgrep -P "$1"); do descendants "$p"; echo "$p"; done; }
victims="$PID_c $(descendants "$PID_c")"
# shellcheck disable=SC2086
kill -STOP $victims
# shellcheck disable=SC2086
kill -9 $victims
{ wait "$PID_c"; } 2>/dev/null # no "Killed" from the shell
lost_failed() { status_on "$URL_a" "$LOST" failed; }
wait_for 60 lost_failed
ok "host a reports host c's task failed once c's lease lapsed"
like "$(jqr .result.statusMessage)" 'lease' "it says the host stopped renewing its lease"
status_on "$URL_b" "$LOST" failed
ok "host b too"

# ---- Redis stopped -----------------------------------------------------------------
# the balancer of the two hosts left
nginx_start "$ADDR_a; server $ADDR_b" || { echo "not ok - nginx starts"; done_testing; exit 1; }
U2=$NGINX_URL
tcall "$U2" 19 tools/call '{"name":"cl_mid","arguments":{}}'
MID=$(jqr .result.taskId)
like "$MID" '^[0-9a-f]{32}$' "a task runs as Redis is stopped"
kill -STOP "$REDIS_PID"
good=0
for i in $(seq 1 10); do
	tcall "$U2" $((20 + i)) tools/call '{"name":"test_simple_text","arguments":{}}' --max-time 20
	[ "$STATUS" = 200 ] && [ "$(jqr '.result.content[0].type')" = text ] && good=$((good + 1))
done
is "$good" 10 "Redis stopped: tools/call keeps answering"
tcall "$U2" 40 tasks/get "{\"taskId\":\"$OWNED\"}" --max-time 30
is "$STATUS:$(jqr .error.code)" "200:-32603" "Redis stopped: tasks/get answers -32603, not a hang"
like "$(jqr .error.message)" 'unreachable' "saying the task store is unreachable"
# the task ends while Redis is stopped: it was not taken for cancelled
# (its record could not be read), and its end waits for Redis
touch "$T_DIR/mid.go"
ended_unwritten() { cat "$T_DIR"/phantom-*.log | grep -q "task $MID ended while the task store is unreachable"; }
wait_for 30 ended_unwritten
ok "the task ends while Redis is stopped, its end waiting to be written"
kill -CONT "$REDIS_PID"
mid_done() { status_on "$U2" "$MID" completed && [ "$(jqr '.result.result.content[0].text')" = "mid done" ]; }
wait_for 30 mid_done
ok "once Redis answers again, its end is written: completed, with its result"
# each host logged the change once, not once a request
for h in a b; do
	eval "log=\$LOG_$h"
	n=$(grep -c 'cluster: Redis at .* is unreachable' "$log")
	[ "$n" -ge 1 ] && [ "$n" -le 3 ]
	ok "host $h logged Redis unreachable once per change ($n)"
done

# ---- Redis restarted on its append-only file ----------------------------------------
rcli shutdown >/dev/null 2>&1
wait_gone "$REDIS_PID" 20
redis_start
ok "redis-server restarts on its append-only file"
back() { tcall "$U2" 41 tasks/get "{\"taskId\":\"$OWNED\"}"; [ "$(jqr .result.status)" = completed ]; }
wait_for 30 back
ok "the task record survived the restart"
# each host tries Redis again after its backoff (at most backoff_max_ms)
for h in a b; do
	eval "url=\$URL_$h"
	new_task() { tcall "$url" 42 tools/call '{"name":"cl_quick","arguments":{"word":"x"}}'; NEW=$(jqr .result.taskId); [ "$NEW" != null ]; }
	wait_for 30 new_task && wait_for 20 status_on "$url" "$NEW" completed
	ok "host $h runs new tasks again"
	wait_for 30 status_on "$url" "$OWNED" completed
	ok "host $h reads the record made before the restart"
done
for h in a b; do
	eval "pid=\$PID_$h"
	kill -0 "$pid" 2>/dev/null
	ok "host $h still running"
done

cat "$T_DIR"/phantom-*.log >"$T_DIR/all.log"
! grep -qF "$RPASS" "$T_DIR/all.log"
ok "the Redis password is in no log"

# ---- a host whose Redis is not there at start ---------------------------------------
host_conf d | sed "s#redis: \"unix:$RSOCK?db=3\"#redis: \"unix:$T_DIR/none.sock\"#" >"$T_DIR/d.yaml"
grep -q none.sock "$T_DIR/d.yaml"
ok "host d names a Redis that is not there"
phantom_listen "$T_DIR/d.yaml" && nginx_start "$PH_ADDR"
ok "host d starts all the same"
AUTH=''
mpost "$NGINX_URL" 50 tools/call '{"name":"test_simple_text","arguments":{}}'
is "$(jqr '.result.content[0].type')" text "and serves stateless calls"
tcall "$NGINX_URL" 51 tools/call '{"name":"cl_quick","arguments":{"word":"x"}}' --max-time 20
is "$(jqr .error.code)" -32603 "a call that would become a task answers -32603"
grep -q 'cluster: Redis at .*none.sock is unreachable' "$PH_LOG"
ok "host d logs that Redis is unreachable"
done_testing
