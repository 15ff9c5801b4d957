#!/bin/bash
# cluster: the hubs of three Phantom hosts (each its own master, hub and
# control socket, one request_state secret) share a real redis-server
# (unix socket, append-only file), behind one nginx upstream with plain
# round-robin and no affinity:
#  - --notify tools/list_changed given to one host reaches the listen
#    streams held by all three, once each (the originating hub does not
#    hear its own announcement back);
#  - a handler's resources/updated and --notify resources/updated reach
#    streams subscribed on the other hosts;
#  - nothing readable crosses Redis (the channel carries sealed bytes);
#  - Redis stopped (SIGSTOP): tools/call keeps answering, --notify still
#    tells this host's streams, the hubs log the outage once; restarted on
#    its append-only file, they subscribe again by themselves and
#    announcements flow again;
#  - the hub never waits on Redis: with Redis stopped and cluster.timeout_ms
#    far above subscriptions.keepalive_ms, listen streams keep getting
#    their keep-alives and --notify's notifications without a long gap,
#    also while a task's supervisor on that host dies (the hub marks its
#    record failed once Redis is back).
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/reglib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
command -v jq >/dev/null || skip_all "jq not installed"
command -v python3 >/dev/null || skip_all "python3 not installed"
cluster_supported
CLIENTS=$top_srcdir/tests/integration/listen_clients.py

# ---- Redis on a unix socket, append-only ---------------------------------------------------
RS=$T_DIR/redis.sock
redis_start() {
	redis-server --port 0 --unixsocket "$RS" --unixsocketperm 700 --dir "$T_DIR" \
		--appendonly yes --save '' --daemonize no >>"$T_DIR/redis.log" 2>&1 &
	REDIS_PID=$!
	T_PIDS+=("$REDIS_PID")
	wait_for 10 test -S "$RS"
}
redis_start || { echo "not ok 1 - redis-server starts"; exit 1; }

head -c 48 /dev/urandom | base64 >"$T_DIR/secret"
SB=$T_DIR/sandbox
mkdir -p "$SB" "$T_DIR/data"
echo one >"$T_DIR/data/watched.txt"
printf '#!/bin/sh\ncat >/dev/null\nprintf '"'"'{"content":[{"type":"text","text":"done"}],"resourcesUpdated":["app://counter"]}\\n'"'"'\n' \
	>"$T_DIR/bump.sh"
printf '#!/bin/sh\ncat >/dev/null\nprintf '"'"'{"contents":[{"uri":"app://counter","text":"7"}]}\\n'"'"'\n' >"$T_DIR/counter.sh"
printf '#!/bin/sh\ncat >/dev/null\nsleep 3\nprintf '"'"'{"content":[{"type":"text","text":"napped"}]}\\n'"'"'\n' >"$T_DIR/nap.sh"
printf '#!/bin/sh\ncat >/dev/null\nexec sleep 20\n' >"$T_DIR/long.sh"
chmod 0755 "$T_DIR/bump.sh" "$T_DIR/counter.sh" "$T_DIR/nap.sh" "$T_DIR/long.sh"
# host_conf NAME [TOOL-LINE]: the configuration of host NAME (its own control socket)
host_conf() {
	cat >"$T_DIR/$1.yaml" <<YAML
server: { name: cluster-test, version: "1.0" }
workers: 2
shutdown_timeout: 3
request_state: { secret_file: secret }
subscriptions: { max_ms: 600000, keepalive_ms: 300, control_socket: $T_DIR/$1.ctl }
cluster: { redis: "unix:$RS", host: $1, timeout_ms: ${TIMEOUT_MS:-400}, backoff_max_ms: 500 }
sessions: { park_timeout_ms: 20000 }
tools:
  - { name: bump, description: announces a change of app://counter, exec: [./bump.sh] }
  - { name: nap, description: a task of three seconds, task: required, exec: [./nap.sh] }
  - { name: two_round, exec: [$top_srcdir/tests/handlers/mrtr_handler.sh] }
${2:-}
$(delete_file_yaml "$SB")
resources:
  - { uri: "app://counter", name: counter, exec: [./counter.sh] }
  - { uri: "file:///watched", name: watched, file: data/watched.txt }
YAML
}
ADDRS=() LOGS=() MASTERS=()
for h in a b c; do
	host_conf $h
	phantom_listen "$T_DIR/$h.yaml" || { echo "not ok 1 - host $h starts"; exit 1; }
	ADDRS+=("$PH_ADDR") LOGS+=("$PH_LOG") MASTERS+=("$PH_PID")
done
NGINX_WORKERS=1
nginx_start "${ADDRS[0]}; server ${ADDRS[1]}; server ${ADDRS[2]}" || { echo "not ok 1 - nginx starts"; exit 1; }
U=$NGINX_URL
notify() { local h=$1; shift; "$PHANTOM" -c "$T_DIR/$h.yaml" --notify "$@"; }
# subscribed N: every hub logged that Redis is reachable N times
subscribed() {
	local n
	for l in "${LOGS[@]}"; do
		n=$(grep -c 'hub: cluster: Redis at .* reachable;' "$l")
		[ "$n" -ge "$1" ] || return 1
	done
}
# numsub: how many hubs Redis has subscribed to the announcement channel
numsub() {
	local ch; ch=$(redis-cli -s "$RS" PUBSUB CHANNELS 'phantom:a:*' 2>/dev/null)
	[ -n "$ch" ] && redis-cli -s "$RS" PUBSUB NUMSUB "$ch" 2>/dev/null | sed -n 2p || echo 0
}
wait_for 20 subscribed 1
is "$(numsub)" 3 "Redis has the three hubs subscribed to one announcement channel"
ok "the three hubs connect to Redis and subscribe"

# ---- --notify on one host reaches the streams held by all three ---------------------------
# six streams (two a host), read for 20 s; LISTEN_PROGRESS counts what they got meanwhile
LISTEN_PROGRESS=$T_DIR/progress python3 "$CLIENTS" "$U" 6 20 "$T_DIR/ready" \
	'{"toolsListChanged":true,"resourceSubscriptions":["app://counter"]}' >"$T_DIR/streams.json" & LP=$!
wait_for 30 test -e "$T_DIR/ready"
is "$(cat "$T_DIR/ready")" 6 "six listen streams are acknowledged through round-robin nginx"
is "$(notify a tools/list_changed)" "ok 2" "--notify tools/list_changed on host a tells its own two streams"
wait_for 10 sh -c "[ \"\$(cut -d' ' -f3 '$T_DIR/progress')\" = 6 ]"
ok "all six streams, on the three hosts, get notifications/tools/list_changed"
for i in 1 2; do
	wait_for 5 grep -q 'tools/list_changed from another host told 2 streams' "${LOGS[$i]}"
	ok "host $((i + 1))'s hub told its own two streams"
done
! grep -q 'from another host' "${LOGS[0]}"
ok "host a's hub does not hear its own announcement back"
mpost "$U" 1 tools/call '{"name":"bump","arguments":{}}'
is "$(jqr '.result.content[0].text')" done "a handler on one host announces resourcesUpdated"
is "$(notify b resources/updated app://counter)" "ok 2" "--notify resources/updated on host b tells its own two"
wait "$LP"
is "$(jq -c '.tools' "$T_DIR/streams.json" | sort | uniq -c | tr -s ' ')" " 6 1" \
	"each of the six streams got tools/list_changed exactly once"
is "$(jq -c '.updated' "$T_DIR/streams.json" | sort | uniq -c | tr -s ' ')" ' 6 ["app://counter","app://counter"]' \
	"each got both resources/updated (the handler's, --notify's), on whichever host it was"

# ---- a reload announces from the host that reloads; the sharing goes on ----------------
rm -f "$T_DIR/ready"
LISTEN_PROGRESS=$T_DIR/progress3 python3 "$CLIENTS" "$U" 3 12 "$T_DIR/ready" '{"toolsListChanged":true}' \
	>"$T_DIR/reload.json" & LP=$!
wait_for 30 test -e "$T_DIR/ready"
is "$(cat "$T_DIR/ready")" 3 "three listen streams, one a host"
host_conf a "  - { name: added, description: added by a reload, exec: [./bump.sh] }"
kill -HUP "${MASTERS[0]}"
wait_for 10 grep -q 'configuration reloaded; lists changed: tools' "${LOGS[0]}"
ok "host a reloads with a new tool"
wait_for 10 sh -c "[ \"\$(cut -d' ' -f3 '$T_DIR/progress3')\" = 1 ]"
ok "its own stream hears tools/list_changed"
wait_for 20 sh -c "[ \"\$(redis-cli -s '$RS' PUBSUB NUMSUB \$(redis-cli -s '$RS' PUBSUB CHANNELS 'phantom:a:*') | sed -n 2p)\" = 3 ]"
ok "after the reload the three hubs are subscribed"
notify b tools/list_changed >/dev/null
wait "$LP"
is "$(jq -c '.tools' "$T_DIR/reload.json" | sort | tr '\n' ' ')" "1 1 2 " \
	"the reload told host a's stream only; --notify on b then told all three"

# ---- a file on a disk the three hosts share: each stream told once -----------------------
rm -f "$T_DIR/ready"
python3 "$CLIENTS" "$U" 3 10 "$T_DIR/ready" '{"resourceSubscriptions":["file:///watched"]}' >"$T_DIR/files.json" & LP=$!
wait_for 30 test -e "$T_DIR/ready"
is "$(cat "$T_DIR/ready")" 3 "three listen streams subscribed to a file, one a host"
sleep 0.5
echo three >"$T_DIR/data/watched.txt"
wait "$LP"
is "$(jq -c '.updated' "$T_DIR/files.json" | sort | uniq -c | tr -s ' ')" ' 3 ["file:///watched"]' \
	"one change of the file: each stream told once (its own hub's watcher, or another's announcement)"

# ---- a task's changes reach listen streams with its id on every host -----------------------
EXT='{"extensions":{"io.modelcontextprotocol/tasks":{}}}'
tpost() { post "$U" "$(jq -nc --argjson id "$1" --arg m "$2" --argjson p "$3" --arg v "$MODERN" --argjson caps "$EXT" \
	'{jsonrpc:"2.0",id:$id,method:$m,params:($p + {_meta:{"io.modelcontextprotocol/protocolVersion":$v,
	"io.modelcontextprotocol/clientCapabilities":$caps}})}')" -H "MCP-Protocol-Version: $MODERN" -H "Mcp-Method: $2" \
	${4:+-H "Mcp-Name: $4"}; }
tpost 30 tools/call '{"name":"nap","arguments":{}}' nap
TASK=$(jqr .result.taskId)
like "$TASK" '.{16,}' "a task starts on one host"
# three listen streams for it, one a host
tlisten() {
	python3 - "$U" "$MODERN" "$TASK" "$EXT" >"$1" <<'PY' &
import json, sys, urllib.request
url, ver, task, caps = sys.argv[1:5]
body = {"jsonrpc": "2.0", "id": "L", "method": "subscriptions/listen",
        "params": {"notifications": {"taskIds": [task]},
                   "_meta": {"io.modelcontextprotocol/protocolVersion": ver,
                             "io.modelcontextprotocol/clientCapabilities": json.loads(caps)}}}
req = urllib.request.Request(url, json.dumps(body).encode(), {
    "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": ver, "Mcp-Method": "subscriptions/listen"})
try:
    with urllib.request.urlopen(req, timeout=10) as r:
        for line in r:
            if line.startswith(b"data: "):
                print(line[6:].decode().strip(), flush=True)
except Exception:
    pass
PY
}
TL=()
for i in 1 2 3; do tlisten "$T_DIR/tl$i"; TL+=($!); wait_for 10 grep -qs acknowledged "$T_DIR/tl$i"; done
for i in 1 2 3; do
	wait_for 15 grep -qs '"status":"completed"' "$T_DIR/tl$i"
	ok "listen stream $i (each on its host) hears the task completed"
done
kill "${TL[@]}" 2>/dev/null

# ---- an answer to a pushed request that reaches another host ------------------------------
V=(-H "MCP-Protocol-Version: 2025-11-25")
post "$U" '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"sh","version":"1"}}}'
SID=$(header Mcp-Session-Id)
S=(-H "Mcp-Session-Id: $SID")
echo y >"$SB/f.txt"
CALL=$T_DIR/call
curl -sN -X POST -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
	"${V[@]}" "${S[@]}" \
	--data-binary '{"jsonrpc":"2.0","id":50,"method":"tools/call","params":{"name":"delete_file","arguments":{"path":"f.txt"}}}' \
	"$U" >"$CALL" 2>/dev/null &
PID=$!
wait_for 10 grep -qs '"method":"elicitation/create"' "$CALL"
ok "a legacy call's stream carries elicitation/create"
ID=$(grep '^data: ' "$CALL" | sed 's/^data: //' | jq -c 'select(.method != null) | .id' | head -1)
HOLD=
for i in 0 1 2; do grep -q 'parked for' "${LOGS[$i]}" && HOLD=$i; done
ANS="{\"jsonrpc\":\"2.0\",\"id\":$ID,\"result\":{\"action\":\"accept\",\"content\":{\"confirm\":\"yes\"}}}"
# round-robin: of the next two requests at least one reaches a host that does not hold the call
post "$U" "$ANS" "${V[@]}" "${S[@]}"
is "$STATUS" 202 "the answer is taken with 202 by whichever host it reaches"
wait_for 10 sh -c "! kill -0 $PID 2>/dev/null"
is "$(grep '^data: ' "$CALL" | sed 's/^data: //' | jq -r 'select(.id == 50) | .result.content[0].text')" \
	"Deleted f.txt." "the call completes on its stream"
test ! -e "$SB/f.txt"; ok "the file is deleted"
# the same again, until the answer is sent to a host that did not push the request
forwarded=0
for round in 1 2 3; do
	echo y >"$SB/f.txt"
	curl -sN -X POST -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
		"${V[@]}" "${S[@]}" \
		--data-binary "{\"jsonrpc\":\"2.0\",\"id\":$((60 + round)),\"method\":\"tools/call\",\"params\":{\"name\":\"delete_file\",\"arguments\":{\"path\":\"f.txt\"}}}" \
		"$U" >"$CALL.$round" 2>/dev/null &
	PID=$!
	wait_for 10 grep -qs '"method":"elicitation/create"' "$CALL.$round"
	ID=$(grep '^data: ' "$CALL.$round" | sed 's/^data: //' | jq -c 'select(.method != null) | .id' | head -1)
	post "$U" "{\"jsonrpc\":\"2.0\",\"id\":$ID,\"result\":{\"action\":\"accept\",\"content\":{\"confirm\":\"yes\"}}}" "${V[@]}" "${S[@]}"
	[ "$STATUS" = 202 ] || echo "# round $round: $STATUS $BODY"
	wait_for 10 sh -c "! kill -0 $PID 2>/dev/null"
	[ "$(grep '^data: ' "$CALL.$round" | sed 's/^data: //' | jq -r "select(.id == $((60 + round))) | .result.content[0].text")" = "Deleted f.txt." ] &&
		[ ! -e "$SB/f.txt" ] && forwarded=$((forwarded + 1))
done
is "$forwarded" 3 "three more calls: each answer taken by the host it reached completes its call"
# two rounds: the call resumed by a host's hub after an answer taken elsewhere asks again
curl -sN -X POST -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
	"${V[@]}" "${S[@]}" \
	--data-binary '{"jsonrpc":"2.0","id":90,"method":"tools/call","params":{"name":"two_round","arguments":{}}}' \
	"$U" >"$CALL.two" 2>/dev/null &
PID=$!
pushed() { grep '^data: ' "$CALL.two" | sed 's/^data: //' | jq -c "select(.method != null) | .id" | sed -n "${1}p"; }
wait_for 10 sh -c "grep -qs 'Step 1' '$CALL.two'"
ok "a two-round call asks its first question"
post "$U" "{\"jsonrpc\":\"2.0\",\"id\":$(pushed 1),\"result\":{\"action\":\"accept\",\"content\":{\"name\":\"Ada\"}}}" "${V[@]}" "${S[@]}"
is "$STATUS" 202 "its first answer: 202"
wait_for 10 sh -c "grep -qs 'Step 2' '$CALL.two'"
ok "the call resumed and asks its second question on the same stream"
post "$U" "{\"jsonrpc\":\"2.0\",\"id\":$(pushed 2),\"result\":{\"action\":\"accept\",\"content\":{\"color\":\"green\"}}}" "${V[@]}" "${S[@]}"
is "$STATUS" 202 "its second answer: 202"
wait_for 10 sh -c "! kill -0 $PID 2>/dev/null"
is "$(grep '^data: ' "$CALL.two" | sed 's/^data: //' | jq -r 'select(.id == 90) | .result.content[0].text')" \
	"Ada likes green" "the call completes with both answers"
n=$(cat "${LOGS[@]}" | grep -c 'park: an answer for a call parked on another host is in its mailbox')
[ "$n" -ge 1 ]; ok "at least one answer went through another host's mailbox ($n)"
is "$(cat "${LOGS[@]}" | grep -c 'resumed here with an answer taken by another host')" "$n" \
	"and each resumed its call on the host that held it"

# ---- a legacy session's DELETE and log level, on every host -----------------------------
post "$U" '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
SID2=$(header Mcp-Session-Id)
S2=(-H "Mcp-Session-Id: $SID2")
post "$U" '{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"warning"}}' "${V[@]}" "${S2[@]}"
is "$STATUS" 200 "logging/setLevel on one host"
keys=$(redis-cli -s "$RS" --scan --pattern 'phantom:s:*' | wc -l)
[ "$keys" -ge 1 ]; ok "the session's record is in Redis under an opaque key ($keys)"
good=0
for i in 1 2 3; do
	post "$U" "{\"jsonrpc\":\"2.0\",\"id\":$((2 + i)),\"method\":\"tools/list\"}" "${V[@]}" "${S2[@]}"
	[ "$STATUS" = 200 ] && good=$((good + 1))
done
is "$good" 3 "the session's requests succeed on the three hosts"
code=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "${V[@]}" "${S2[@]}" "$U")
is "$code" 204 "DELETE on one host: 204"
gone=0
for i in 1 2 3; do
	post "$U" "{\"jsonrpc\":\"2.0\",\"id\":$((10 + i)),\"method\":\"tools/list\"}" "${V[@]}" "${S2[@]}"
	[ "$STATUS" = 404 ] && gone=$((gone + 1))
done
is "$gone" 3 "right after, the ended session is 404 on the three hosts"

# ---- a legacy session's subscription and GET stream on other hosts ------------------------
post "$U" '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
SID3=$(header Mcp-Session-Id)
S3=(-H "Mcp-Session-Id: $SID3")
post "$U" '{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"file:///watched"}}' "${V[@]}" "${S3[@]}"
is "$STATUS/$(jqr .result)" "200/{}" "resources/subscribe on one host"
# sget FILE [CURL-ARGS]: the session's GET stream in the background
sget() {
	local f=$1; shift
	timeout 60 curl -sN -D "$f.h" -o "$f" -H 'Accept: text/event-stream' "${V[@]}" "${S3[@]}" "$@" "$U" &
	GPID=$!
	T_PIDS+=("$GPID")
	wait_for 20 grep -qsi '^content-type: text/event-stream' "$f.h"
}
# two GET streams one after the other: round-robin puts them on two hosts, at least one
# of them not the host that took the subscription
sget "$T_DIR/g1"; ok "a GET stream opens"
G1=$GPID
sget "$T_DIR/g2"; ok "a second GET stream opens"
G2=$GPID
sleep 0.5
notify c resources/updated file:///watched >/dev/null
wait_for 10 grep -q 'notifications/resources/updated' "$T_DIR/g1"
ok "--notify resources/updated on a third host reaches the first GET stream"
wait_for 10 grep -q 'notifications/resources/updated' "$T_DIR/g2"
ok "and the second"
is "$(grep -c 'notifications/resources/updated' "$T_DIR/g1")/$(grep -c 'notifications/resources/updated' "$T_DIR/g2")" \
	1/1 "each once"
echo two >"$T_DIR/data/watched.txt"
wait_for 10 sh -c "[ \$(grep -c 'notifications/resources/updated' '$T_DIR/g2') -ge 2 ]"
ok "a change of the subscribed file reaches the GET stream too"
LAST=$(grep '^id: ' "$T_DIR/g2" | tail -1 | sed 's/^id: //')
like "$LAST" '^[0-9]+$' "the events carry ids (the last: $LAST)"
kill "$G1" "$G2" 2>/dev/null
wait "$G1" "$G2" 2>/dev/null
sleep 0.5
# an event while no stream is open: held for the next GET, wherever it lands
notify a resources/updated file:///watched >/dev/null
sleep 0.5
sget "$T_DIR/g3" -H "Last-Event-ID: $LAST"; ok "a GET stream with Last-Event-ID opens"
G3=$GPID
sget "$T_DIR/g4" -H "Last-Event-ID: $LAST"; ok "and another, on the next host"
G4=$GPID
wait_for 10 grep -q "^id: $((LAST + 1))\$" "$T_DIR/g3"
ok "the first replays the event sent while no stream was open (id $((LAST + 1)))"
wait_for 10 grep -q "^id: $((LAST + 1))\$" "$T_DIR/g4"
ok "so does the second, on another host"
kill "$G3" "$G4" 2>/dev/null

# ---- nothing readable in Redis --------------------------------------------------------------
redis-cli -s "$RS" PSUBSCRIBE '*' >"$T_DIR/sniff" 2>&1 & SN=$!
T_PIDS+=("$SN")
sleep 0.5
notify c resources/updated app://secret-name-of-a-resource >/dev/null
notify c tools/list_changed >/dev/null
wait_for 5 sh -c "[ \$(grep -Ec '^phantom:a:[0-9a-f]{32}\$' '$T_DIR/sniff') -ge 2 ]"
ok "the announcements cross Redis on the prefix's channel"
! grep -q 'secret-name\|list_changed\|app://' "$T_DIR/sniff"
ok "and carry no URI, method or origin in clear"
# every value Redis holds, whatever its type
for k in $(redis-cli -s "$RS" --scan); do
	echo "$k"
	case $(redis-cli -s "$RS" TYPE "$k") in
	hash) redis-cli -s "$RS" HGETALL "$k" ;;
	list) redis-cli -s "$RS" LRANGE "$k" 0 -1 ;;
	string) redis-cli -s "$RS" GET "$k" ;;
	esac
done >"$T_DIR/dump" 2>&1
! grep -aq 'warning\|confirm\|delete_file\|f\.txt\|app://\|file://\|watched\|"sid"\|host a\|tools/\|notifications' "$T_DIR/dump"
ok "a dump of every key and value in Redis shows no level, answer, tool, file, URI or session in clear"
kill "$SN" 2>/dev/null

# ---- Redis stopped, then restarted on its append-only file ----------------------------------
rm -f "$T_DIR/ready"
LISTEN_PROGRESS=$T_DIR/progress2 python3 "$CLIENTS" "$U" 3 60 "$T_DIR/ready" '{"toolsListChanged":true}' \
	>"$T_DIR/streams2.json" & LP=$!
wait_for 30 test -e "$T_DIR/ready"
is "$(cat "$T_DIR/ready")" 3 "three more listen streams, one a host"
# a call parked before Redis stops
echo y >"$SB/f.txt"
curl -sN -X POST -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
	"${V[@]}" "${S[@]}" \
	--data-binary '{"jsonrpc":"2.0","id":70,"method":"tools/call","params":{"name":"delete_file","arguments":{"path":"f.txt"}}}' \
	"$U" >"$CALL.stop" 2>/dev/null &
PARKED=$!
wait_for 10 grep -qs '"method":"elicitation/create"' "$CALL.stop"
ID=$(grep '^data: ' "$CALL.stop" | sed 's/^data: //' | jq -c 'select(.method != null) | .id' | head -1)
kill -STOP "$REDIS_PID"
good=0
for i in $(seq 1 6); do
	mpost "$U" $((10 + i)) tools/call '{"name":"bump","arguments":{}}'
	[ "$STATUS" = 200 ] && [ "$(jqr '.result.content[0].text')" = done ] && good=$((good + 1))
done
is "$good" 6 "Redis stopped: tools/call keeps answering on the three hosts"
good=0
for i in 1 2 3; do
	post "$U" "{\"jsonrpc\":\"2.0\",\"id\":$((80 + i)),\"method\":\"tools/list\"}" "${V[@]}" "${S[@]}" --max-time 10
	[ "$STATUS" = 200 ] && good=$((good + 1))
done
is "$good" 3 "a legacy session's requests keep answering on the three hosts"
# the answer to the parked call, sent to each host in turn: the one that holds the call
# takes it; another cannot store it and says so at once (no hang)
answers=
for i in 1 2 3; do
	post "$U" "{\"jsonrpc\":\"2.0\",\"id\":$ID,\"result\":{\"action\":\"accept\",\"content\":{\"confirm\":\"yes\"}}}" \
		"${V[@]}" "${S[@]}" --max-time 10
	case $STATUS/$(jqr .error.code) in
	202/*) answers="$answers 202" ;;
	*/-32603) like "$(jqr .error.message)" "cluster's Redis did not answer within cluster.timeout_ms" \
		"an answer that needs another host's mailbox: -32603 saying Redis did not answer" ;;
	*/-32600) answers="$answers taken" ;; # answered already by the holder
	*) answers="$answers $STATUS" ;;
	esac
done
like "$answers" "202" "the host that holds the call takes the answer with 202 ($answers)"
wait_for 10 sh -c "! kill -0 $PARKED 2>/dev/null"
is "$(grep '^data: ' "$CALL.stop" | sed 's/^data: //' | jq -r 'select(.id == 70) | .result.content[0].text')" \
	"Deleted f.txt." "and the call completes on its stream"
down() { for l in "${LOGS[@]}"; do grep -q 'hub: cluster: Redis at .* unreachable' "$l" || return 1; done; }
wait_for 10 down
ok "each hub notices that Redis does not answer and logs it"
like "$(notify a tools/list_changed)" "^ok [1-9]" "--notify still tells host a's own stream at once"
sleep 2
for l in "${LOGS[@]}"; do
	is "$(grep -c 'hub: cluster: Redis at .* unreachable' "$l")" 1 "the outage is logged once by $(basename "$l")"
done
kill -CONT "$REDIS_PID"
wait_for 20 subscribed 2
ok "Redis continued: the hubs subscribe again by themselves"
wait_for 20 sh -c "[ \"\$(redis-cli -s '$RS' PUBSUB NUMSUB \$(redis-cli -s '$RS' PUBSUB CHANNELS 'phantom:a:*') | sed -n 2p)\" = 3 ]"
ok "(Redis counts three subscribers again)"
redis-cli -s "$RS" SHUTDOWN NOSAVE >/dev/null 2>&1
wait_gone "$REDIS_PID" 10
redis_start || echo "# redis-server did not start again"
three() { [ "$(numsub)" = 3 ]; }
wait_for 30 three
ok "Redis restarted on its append-only file: the three hubs subscribe again"
wait_for 5 sh -c "[ \"\$(cut -d' ' -f3 '$T_DIR/progress2')\" = 1 ]"
ok "(until then one stream had been told: host a's)"
# a hub may still be making its command connection: --notify until the announcement crosses
for _ in $(seq 1 20); do
	notify b tools/list_changed >/dev/null
	wait_for 1 sh -c "[ \"\$(cut -d' ' -f3 '$T_DIR/progress2')\" = 3 ]" && break
done
[ "$(cut -d' ' -f3 "$T_DIR/progress2")" = 3 ]
ok "notifications flow between the hosts again: the three streams have been told"
mpost "$U" 99 tools/list
is "$STATUS" 200 "the hosts keep serving"
kill "$LP" 2>/dev/null

# ---- the hub never waits on Redis --------------------------------------------------------
# host a reloads with cluster.timeout_ms 5000: a hub that sent Redis a command and waited
# for it (its lease, its pass over the task records) would stall all its streams that
# long while Redis is stopped. Keep-alives come every subscriptions.keepalive_ms (300 ms);
# no gap on any stream may pass GAP_MS, eight times that (generous on a loaded machine).
# Meanwhile the supervisor of a task on host a dies: a hub that marked its record failed
# (lock, GET, SET) on a connection it waited for would stall its streams as long.
KA_MS=300 # subscriptions.keepalive_ms in host_conf
GAP_MS=$((8 * KA_MS))
n=$(grep -c 'configuration reloaded' "${LOGS[0]}")
TIMEOUT_MS=5000 host_conf a "  - { name: added, description: added by a reload, exec: [./bump.sh] }
  - { name: long, description: a task of twenty seconds on host a only, task: required, exec: [./long.sh] }"
kill -HUP "${MASTERS[0]}"
wait_for 10 sh -c "[ \$(grep -c 'configuration reloaded' '${LOGS[0]}') -gt $n ]"
ok "host a reloads with cluster.timeout_ms 5000"
# each stream's lines, each with the time it was read: "TIME keepalive|tools|ack|other"
rm -f "$T_DIR/ready"
python3 - "$U" 3 24 "$T_DIR/ready" "$T_DIR/gap" <<'PY' & GP=$!
import socket, sys, time, json, selectors
from urllib.parse import urlparse
url, n, secs, ready, out = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5]
u = urlparse(url)
host, port = u.hostname, u.port or 80
body = json.dumps({"jsonrpc": "2.0", "id": "G", "method": "subscriptions/listen",
    "params": {"notifications": {"toolsListChanged": True}, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}}).encode()
req = ("POST %s HTTP/1.0\r\nHost: %s\r\nContent-Type: application/json\r\n"
       "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
       "Mcp-Method: subscriptions/listen\r\nContent-Length: %d\r\n\r\n" % (u.path or "/", u.netloc, len(body))).encode() + body
sel = selectors.DefaultSelector()
files, bufs, acked = [], {}, set()
for i in range(n):
    s = socket.create_connection((host, port))
    s.sendall(req)
    sel.register(s, selectors.EVENT_READ, i)
    bufs[i] = b""
    files.append(open("%s.%d" % (out, i), "w"))
end = time.time() + secs
while time.time() < end and sel.get_map():
    for key, _ in sel.select(0.5):
        i, s = key.data, key.fileobj
        d = s.recv(65536)
        now = time.time()
        if not d:
            sel.unregister(s)
            continue
        bufs[i] += d
        while b"\n" in bufs[i]:
            line, bufs[i] = bufs[i].split(b"\n", 1)
            kind = ("keepalive" if line.startswith(b": keepalive") else
                    "ack" if b"subscriptions/acknowledged" in line else
                    "tools" if b"tools/list_changed" in line else "other")
            if kind == "ack":
                acked.add(i)
                if len(acked) == n:
                    open(ready, "w").write("%d\n" % n)
            if kind != "other":
                files[i].write("%.3f %s\n" % (now, kind))
                files[i].flush()
PY
wait_for 30 test -e "$T_DIR/ready"
is "$(cat "$T_DIR/ready")" 3 "three listen streams, one a host"
# only host a has the tool long: round-robin nginx brings the call there within three
LTASK=
for i in 1 2 3 4 5 6; do
	tpost $((60 + i)) tools/call '{"name":"long","arguments":{}}' long
	LTASK=$(jqr '.result.taskId // empty')
	[ -n "$LTASK" ] && break
done
like "$LTASK" '.{16,}' "a task of twenty seconds starts on host a"
# sup_of_a: the pid of a task supervisor under host a's master
sup_of_a() {
	local p pp
	for p in $(pgrep -x phantom-task); do
		pp=$(ps -o ppid= -p "$p" | tr -d ' ')
		[ -n "$pp" ] && [ "$(ps -o ppid= -p "$pp" | tr -d ' ')" = "${MASTERS[0]}" ] && { echo "$p"; return 0; }
	done
	return 1
}
wait_for 10 sup_of_a >/dev/null
SUP=$(sup_of_a)
like "$SUP" '^[0-9]+$' "its supervisor runs under host a's hub"
sleep 2
T0=$(date +%s.%N)
kill -STOP "$REDIS_PID"
sleep 1
kill -KILL "$SUP"
ok "Redis stopped: the task's supervisor on host a is killed"
sleep 4
like "$(notify a tools/list_changed)" "^ok [1-9]" "Redis stopped: --notify on host a tells its own stream"
sleep 5
T1=$(date +%s.%N)
kill -CONT "$REDIS_PID"
wait "$GP"
# the longest wait for a line from Redis's stop until its continuation (and the first line after)
for i in 0 1 2; do
	gap=$(awk -v t0="$T0" -v t1="$T1" 'NR > 1 && $1 >= t0 && prev <= t1 && ($1 - prev) * 1000 > max { max = ($1 - prev) * 1000 }
		{ prev = $1 } END { if (prev < t1 && (t1 - prev) * 1000 > max) max = (t1 - prev) * 1000; printf "%d", max }' "$T_DIR/gap.$i")
	n=$(awk -v t0="$T0" -v t1="$T1" '$1 >= t0 && $1 <= t1 && $2 == "keepalive"' "$T_DIR/gap.$i" | wc -l)
	[ "$gap" -le "$GAP_MS" ] && [ "$n" -ge 3 ]
	ok "stream $i: keep-alives flow while Redis is stopped ($n; the longest gap $gap ms, bound $GAP_MS)"
done
[ "$(cat "$T_DIR"/gap.? | grep -c tools)" -ge 1 ]
ok "the stream on host a got --notify's notification"
lget() { tpost 70 tasks/get "$(jq -nc --arg t "$LTASK" '{taskId:$t}')" "$LTASK"; }
for _ in $(seq 1 40); do
	lget
	[ "$(jqr .result.status)" = failed ] && break
	sleep 0.5
done
is "$(jqr .result.status)" failed "Redis back: the task whose supervisor died is failed"
like "$(jqr '.result.statusMessage')" "process was lost" "... as a lost process"
t_stop
for l in "${LOGS[@]}"; do
	! grep -qi 'password\|AddressSanitizer\|runtime error' "$l"
	ok "$(basename "$l"): no secret and no sanitizer report"
done
done_testing
