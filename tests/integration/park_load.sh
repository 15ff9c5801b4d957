#!/bin/bash
# 10,000 calls parked in the hub at once, through the shipped
# conf/nginx.conf: a legacy 2025-11-25 client holds PARK_LOAD_N (default
# 10000, sessions.max_parked's default) tools/call streams open, each
# waiting for its answer to an elicitation/create pushed mid-call; the call
# after them ends at once with the error result naming sessions.max_parked,
# the workers keep serving other requests quickly meanwhile, one parked
# call still completes when answered, and closing the rest frees them all.
# The hub's memory with all of them parked is reported (# hub RSS).
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/reglib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
command -v python3 >/dev/null || skip_all "python3 not installed"
N=${PARK_LOAD_N:-10000}
# every parked call is two connections in nginx and one in the hub; the
# shipped nginx.conf holds 2 x 12000 (worker_rlimit_nofile 20000)
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
[ "$(ulimit -n)" -ge $((N + 200)) ] || skip_all "the open-file limit ($(ulimit -n)) is below $((N + 200))"

cat >"$T_DIR/ask.sh" <<'SH'
#!/bin/sh
# persistent: one call a line; asks once, answers once asked
while IFS= read -r req; do
	id=${req##*\"id\":}; id=${id%\}}
	case $req in
	*'"inputResponses":'*) printf '{"id":%s,"content":[{"type":"text","text":"went on"}]}\n' "$id" ;;
	*) printf '{"id":%s,"inputRequired":{"inputRequests":{"go":{"method":"elicitation/create","params":{"mode":"form","message":"Go on?","requestedSchema":{"type":"object","properties":{"go":{"type":"boolean"}}}}}},"state":{"n":1}}}\n' "$id" ;;
	esac
done
SH
chmod +x "$T_DIR/ask.sh"
head -c 48 /dev/urandom | base64 >"$T_DIR/secret"
cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: park-load, version: "1.0" }
workers: 2
request_state: { secret_file: secret }
sessions: { park_timeout_ms: 600000, max_parked: $N }
tools:
  - name: ask
    exec: [$T_DIR/ask.sh]
    persistent: true
YAML
behind_nginx phantom_up "$T_DIR/phantom.yaml"
# the shipped limits hold N parked calls only when nginx's two workers share
# them evenly: give each room for all of them
if [ "$(ulimit -n)" -ge $((3 * N)) ]; then
	sed -i -e "s/^worker_rlimit_nofile [0-9]*;/worker_rlimit_nofile $((3 * N));/" \
		-e "s/worker_connections [0-9]*;/worker_connections $((2 * N + 1000));/" "$NGINX_DIR/nginx.conf"
	NM=$(cat "$NGINX_DIR/nginx.pid") OLDW=$(pgrep -P "$(cat "$NGINX_DIR/nginx.pid")" | tr '\n' ' ')
	nginx -c "$NGINX_DIR/nginx.conf" -e "$NGINX_DIR/error.log" -s reload
	# the calls go only to workers with the new limits: wait (however long
	# a loaded machine takes) until the old ones, idle, have gone and new
	# ones serve; an old one would refuse past its shipped limits
	# shellcheck disable=SC2086
	wait_for 60 sh -c "for w in $OLDW; do kill -0 \$w 2>/dev/null && exit 1; done; [ -n \"\$(pgrep -P $NM)\" ]" ||
		diag "nginx's old workers are still there after 60 s"
fi
HUB=$(hub_of "$PH_PID")
rss() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
RSS0=$(rss "$HUB")

post "$U" '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"load","version":"1"}}}'
SID=$(header Mcp-Session-Id)
like "$SID" '.{40,}' "a legacy session"

# twenty tools/list of the session; sets GOOD and MS (the mean, in ms)
lists() {
	local t0 i; t0=$(date +%s%N) GOOD=0
	for i in $(seq 1 20); do
		post "$U" "{\"jsonrpc\":\"2.0\",\"id\":$i,\"method\":\"tools/list\"}" -H "MCP-Protocol-Version: 2025-11-25" -H "Mcp-Session-Id: $SID"
		[ "$STATUS" = 200 ] && [ "$(jqr '.result.tools[0].name')" = ask ] && GOOD=$((GOOD + 1))
	done
	MS=$(( ($(date +%s%N) - t0) / 20000000 ))
}
lists
BASE_MS=$MS
ST=$T_DIR/status REL=$T_DIR/release
: >"$ST"
port=${U#http://127.0.0.1:}; port=${port%%/*}
timeout 900 python3 "$top_srcdir/tests/integration/park_load.py" 127.0.0.1 "$port" "$SID" "$N" "$ST" "$REL" \
	2>"$T_DIR/client.err" &
CLIENT=$!
wait_for 600 grep -q '^held' "$ST"
P=$(awk '/^parked/ {print $2, $3}' "$ST")
is "${P% *}" "$N" "$N calls parked at once, each with elicitation/create on its stream"
diag "parking $N calls took ${P#* } s"
like "$(sed -n 's/^over //p' "$ST")" 'sessions.max_parked is '"$N"'.*"isError":true' \
	"the call after them ends at once with an error result naming sessions.max_parked"
is "$(grep -c 'parked now' "$PH_LOG")" "$((N + 1))" \
	"the hub logged each call it took and the one it refused"
like "$(grep 'parked now' "$PH_LOG" | tail -1)" "sessions.max_parked.*\\($N parked now\\)" \
	"and it still holds $N"
RSS1=$(rss "$HUB")
diag "hub RSS: ${RSS0} kB before, ${RSS1} kB with $N calls parked ($(( (RSS1 - RSS0) * 1024 / N )) bytes a call)"

# the workers keep serving, quickly, while the calls are parked
lists
is "$GOOD" 20 "20 tools/list of the session while $N calls are parked: all 200"
diag "tools/list (curl and jq included): $BASE_MS ms each before, $MS ms with $N calls parked"
mcall "$U" 1 tools/list '{}'
is "$STATUS" 200 "a 2026-07-28 request too"
[ "$MS" -lt 2000 ]; ok "the workers answer in under 2 s each ($MS ms)"

touch "$REL"
wait_for 120 grep -q '^done' "$ST"
is "$(sed -n 's/^answered //p' "$ST")" "202 went on" "one of the $N parked calls, answered, completes on its stream"
wait "$CLIENT"; is "$?" 0 "the client finished"
[ -s "$T_DIR/client.err" ] && sed 's/^/#   /' "$T_DIR/client.err" | tail -5
wait_for 60 sh -c "grep 'parked now' '$PH_LOG' | tail -1 | grep -q '(0 parked now)'"
like "$(grep 'parked now' "$PH_LOG" | tail -1)" "dropped: the client went away \\(0 parked now\\)" \
	"the clients gone, the hub frees every parked call"
diag "hub RSS after: $(rss "$HUB") kB"
post "$U" '{"jsonrpc":"2.0","id":9,"method":"tools/list"}' -H "MCP-Protocol-Version: 2025-11-25" -H "Mcp-Session-Id: $SID"
is "$STATUS" 200 "and serves on"
done_testing
