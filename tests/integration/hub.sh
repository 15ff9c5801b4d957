#!/bin/bash
# The hub holds listen streams so that workers never wait: with workers: 2,
# a thousand streams open at once through nginx, lighttpd and Apache are all
# acknowledged while tools/call is served; a reload that adds a tool tells
# exactly the streams that asked about tools; a reload that changes nothing
# tells nobody; a hub killed with SIGKILL is replaced, its streams end, new
# listens are served and no worker died; SIGTERM ends every stream with its
# result before the connection closes.
. "${top_srcdir:-.}/tests/lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
command -v python3 >/dev/null || skip_all "python3 not installed"
CLIENTS=$top_srcdir/tests/integration/listen_clients.py
N=${HUB_STREAMS:-1000}

cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: hub-test, version: "1.0" }
workers: 2
shutdown_timeout: 5
subscriptions: { max_ms: 600000, keepalive_ms: 1000, max_per_principal: 0, control_socket: $T_DIR/hub.sock }
tools:
  - name: echo
    description: echoes its input
    exec: [/bin/sh, $top_srcdir/tests/handlers/hub_echo.sh]
prompts:
  - name: greet
    description: a greeting
    messages: [{ role: user, text: hello }]
YAML
behind_nginx phantom_listen "$T_DIR/phantom.yaml"
hub=$(hub_of "$PH_PID")
workers=$(workers_of "$PH_PID" | tr '\n' ' ')
[ -n "$hub" ]; ok "the master runs a hub beside its workers"
is "$(nworkers "$PH_PID")" 2 "and its two workers"

# summary FILE KEY: counts of the streams' reports, by jq expression
count() { jq -s "map(select($2)) | length" "$1"; }

# ---- a thousand streams, half asking about tools, half about prompts ------------
mkdir -p "$T_DIR/dump"
LISTEN_DUMP=$T_DIR/dump python3 "$CLIENTS" "$U" "$N" 120 "$T_DIR/ready1" '{"toolsListChanged":true}' '{"promptsListChanged":true}' \
	>"$T_DIR/run1.json" & cp=$!
wait_for 90 test -e "$T_DIR/ready1"
is "$(cat "$T_DIR/ready1")" "$N" "all $N streams are acknowledged with 2 workers"
mpost "$U" 7 tools/call '{"name":"echo","arguments":{}}'
is "$STATUS" 200 "tools/call is served while the streams are open"
is "$(jqr .result.content[0].text)" echo "and answers normally"
# a reload that changes nothing tells nobody
kill -HUP "$PH_PID"
wait_for 30 grep -q "lists changed: none" "$PH_LOG"
[ "$(grep -c 'lists changed: none' "$PH_LOG")" = 1 ]; ok "a reload that changes nothing is seen as such"
# a reload that adds a tool tells the streams that asked about tools (the
# new file is put in place at once, never seen half written)
sed 's|^prompts:|  - name: echo2\n    description: echoes too\n    exec: [/bin/sh, '"$top_srcdir"'/tests/handlers/hub_echo.sh]\nprompts:|' \
	"$T_DIR/phantom.yaml" >"$T_DIR/phantom2.yaml"
mv "$T_DIR/phantom2.yaml" "$T_DIR/phantom.yaml"
"$PHANTOM" -t -c "$T_DIR/phantom.yaml" >/dev/null 2>&1; ok "the changed configuration is valid"
kill -HUP "$PH_PID"
wait_for 30 grep -q "lists changed: tools;" "$PH_LOG"
[ "$(grep -c 'lists changed: tools;' "$PH_LOG")" = 1 ]; ok "the hub sees that only the tools changed"
sleep 2
kill -TERM "$PH_PID"
wait "$cp"
half=$((N / 2))
for i in $(jq -r 'select(.acked != true or .result != 1 or .error > 0 or .tools + .prompts + .resources > 1
	or (.filter.promptsListChanged and .tools + .prompts > 0)) | .i' "$T_DIR/run1.json" | head -3); do
	jq -c "select(.i == $i)" "$T_DIR/run1.json" | sed 's/^/# odd stream: /'
	head -c 1500 "$T_DIR/dump/$i.txt" | sed 's/^/#   /'
done
is "$(count "$T_DIR/run1.json" '.filter.toolsListChanged and .tools == 1')" "$half" \
	"every stream that asked about tools got tools/list_changed exactly once"
is "$(count "$T_DIR/run1.json" '.filter.promptsListChanged and .tools == 0 and .prompts == 0')" "$half" \
	"no stream that asked only about prompts got anything"
is "$(count "$T_DIR/run1.json" '.result == 1 and .closed')" "$N" \
	"SIGTERM: every stream got its result before the connection closed"
is "$(count "$T_DIR/run1.json" '.error > 0')" 0 "no stream got an error"
wait_gone "$PH_PID" 10; ok "the server stopped"
grep -q "hub .* exiting with 0 streams open" "$PH_LOG"; ok "the hub ended every stream before exiting"

# ---- the hub dies: replaced, its streams end, nobody else notices ----------------
: >"$PH_LOG"
phantom_listen "$T_DIR/phantom.yaml" || { echo "not ok - phantom restarts"; exit 1; }
nginx_start "$PH_ADDR" || { echo "not ok - nginx restarts"; exit 1; }
U=$NGINX_URL
hub=$(hub_of "$PH_PID")
workers=$(workers_of "$PH_PID" | tr '\n' ' ')
python3 "$CLIENTS" "$U" 50 60 "$T_DIR/ready2" >"$T_DIR/run2.json" & cp=$!
wait_for 45 test -e "$T_DIR/ready2"
is "$(cat "$T_DIR/ready2")" 50 "50 streams are open"
# an application announces its own change through the control socket
is "$(stat -c %a "$T_DIR/hub.sock")" 600 "the control socket is mode 0600"
is "$("$PHANTOM" -c "$T_DIR/phantom.yaml" --notify tools/list_changed)" "ok 50" \
	"--notify tools/list_changed reaches the 50 streams"
"$PHANTOM" -c "$T_DIR/phantom.yaml" --notify tools/nonsense 2>"$T_DIR/notify.err"
is "$?" 1 "--notify of an unknown notification fails"
like "$(cat "$T_DIR/notify.err")" "unknown notification" "and says why"
sleep 0.5
kill -KILL "$hub"
wait "$cp"
is "$(count "$T_DIR/run2.json" '.closed')" 50 "the streams of a killed hub end"
is "$(count "$T_DIR/run2.json" '.tools == 1')" 50 "each stream got the announced tools/list_changed once"
wait_for 3 test -n "$(hub_of "$PH_PID")"
new=$(hub_of "$PH_PID")
[ -n "$new" -a "$new" != "$hub" ]; ok "the master starts a new hub at once"
is "$(workers_of "$PH_PID" | tr '\n' ' ')" "$workers" "no worker died or was replaced"
python3 "$CLIENTS" "$U" 20 10 "$T_DIR/ready3" >"$T_DIR/run3.json"
is "$(cat "$T_DIR/ready3")" 20 "new listens are served by the new hub"
mpost "$U" 8 tools/list '{}'
is "$STATUS" 200 "other requests are served as before"
grep -q "hub $hub killed by signal 9" "$PH_LOG"; ok "the master logs the hub's death"

# ---- lighttpd and Apache mod_proxy_fcgi in front: the same hand-over --------------
front_checks() { # NAME URL COUNT
	local name=$1 url=$2 n=$3
	rm -f "$T_DIR/ready-$name"
	python3 "$CLIENTS" "$url" "$n" 90 "$T_DIR/ready-$name" >"$T_DIR/run-$name.json" & cp=$!
	wait_for 60 test -e "$T_DIR/ready-$name"
	is "$(cat "$T_DIR/ready-$name" 2>/dev/null)" "$n" "$name: $n streams acknowledged with 2 workers"
	mpost "$url" 9 tools/call '{"name":"echo","arguments":{}}'
	is "$(jqr .result.content[0].text)" echo "$name: tools/call is served meanwhile"
	sed -i -e "s|name: echo2$|name: echo-$name|" -e "s|name: echo-[a-z]*$|name: echo-$name|" "$T_DIR/phantom.yaml"
	kill -HUP "$PH_PID"
	sleep 2
	kill -TERM "$PH_PID"
	wait "$cp"
	jq -c 'select(.tools != 1 or .result != 1 or .closed != true)' "$T_DIR/run-$name.json" | head -3 |
		sed 's/^/# odd stream: /'
	is "$(count "$T_DIR/run-$name.json" '.tools == 1 and .result == 1 and .closed')" "$n" \
		"$name: every stream got list_changed, then its result at SIGTERM"
	wait_gone "$PH_PID" 10
}
phantom_listen "$T_DIR/phantom.yaml" || { echo "not ok - phantom restarts"; exit 1; }
if lighttpd_start "$PH_ADDR"; then
	front_checks lighttpd "$LIGHTTPD_URL" 200
else
	echo "not ok - lighttpd starts"
fi
phantom_listen "$T_DIR/phantom.yaml" || { echo "not ok - phantom restarts"; exit 1; }
if apache_start "$top_srcdir/conf/apache.conf" "" \
	-e "s#unix:/run/phantom/phantom.sock|fcgi://phantom/#fcgi://$PH_ADDR/#"; then
	front_checks apache "$APACHE_URL" 100
else
	echo "not ok - apache starts"
fi
done_testing
