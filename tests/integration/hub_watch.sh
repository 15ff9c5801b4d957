#!/bin/bash
# resourceSubscriptions on listen streams, behind nginx with a master (the
# hub watches the files; delivery through lighttpd and Apache too): a changed file reaches exactly the streams
# subscribed to it (and only URIs their principal may read), resources/read
# then serves the new bytes, an application announces a resource that is
# not a file with --notify or an exec handler's resourcesUpdated, 100,000
# subscriptions across 100 streams share one watch, the limits
# (max_resource_subscriptions, max_watches) give their documented errors,
# and a client that never reads is dropped at subscriptions.max_queue while
# the others keep being served. Files behind symbolic links (a link, a
# Kubernetes volume's swapped ..data) are watched and followed.
. "${top_srcdir:-.}/tests/lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
command -v python3 >/dev/null || skip_all "python3 not installed"
CLIENTS=$top_srcdir/tests/integration/listen_clients.py
bearer_token T_A H_A; bearer_token T_B H_B

mkdir -p "$T_DIR/data" "$T_DIR/many" "$T_DIR/deep/1" "$T_DIR/deep/2" "$T_DIR/deep/3"
printf 'one\n' >"$T_DIR/data/a.txt"
printf 'two\n' >"$T_DIR/data/b.txt"
for i in $(seq 1 1000); do : >"$T_DIR/many/f$i"; done
for d in 1 2 3; do : >"$T_DIR/deep/$d/x"; done
cp -r "$top_srcdir/skills" "$T_DIR/skills"
chmod -R a+rwX "$T_DIR/data" "$T_DIR/many" "$T_DIR/deep" "$T_DIR/skills"
printf '#!/bin/sh\ncat >/dev/null\nprintf '"'"'{"contents":[{"uri":"app://counter","text":"7"}]}\\n'"'"'\n' >"$T_DIR/counter.sh"
printf '#!/bin/sh\ncat >/dev/null\nprintf '"'"'{"content":[{"type":"text","text":"bumped"}],"resourcesUpdated":["app://counter"]}\\n'"'"'\n' >"$T_DIR/bump.sh"
chmod 0755 "$T_DIR/counter.sh" "$T_DIR/bump.sh"
cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: watch-test, version: "1.0" }
workers: 2
shutdown_timeout: 5
subscriptions: { max_ms: 600000, keepalive_ms: 1000, control_socket: $T_DIR/hub.sock,
                 max_queue: 4096, max_resource_subscriptions: 1000, max_watches: 4 }
tools:
  - { name: bump, description: changes the counter, exec: [./bump.sh] }
resources:
  - { uri: "file:///data/a.txt", name: a, file: data/a.txt }
  - { uri: "file:///data/b.txt", name: b, file: data/b.txt }
  - { uri: "app://counter", name: counter, exec: [./counter.sh] }
skills: { manifest: skills/manifest.yaml }
resource_templates:
  - { uri_template: "file:///many/{name}", name: many, dir: many }
  - { uri_template: "file:///deep/{d}/{f}", name: deep, dir: deep }
auth:
  mode: bearer
  tokens: [ { principal: alice, sha256: $H_A }, { principal: bob, sha256: $H_B } ]
  allow:
    bob: { tools: [bump], resources: ["file:///data/b.txt", "app://counter", "file:///many/{name}", "file:///deep/{d}/{f}"] }
YAML
"$PHANTOM" -t -c "$T_DIR/phantom.yaml" >"$T_DIR/t.out" 2>&1; ok "the configuration is valid"
phantom_listen "$T_DIR/phantom.yaml" || { echo "not ok - phantom starts"; exit 1; }
nginx_start "$PH_ADDR" || { echo "not ok - nginx starts"; exit 1; }
U=$NGINX_URL
AA="Bearer $T_A" AB="Bearer $T_B"
count() { jq -s "map(select($2)) | length" "$1"; }
# listen NAME AUTH SECONDS FILTER...: streams in the background (pid in LP)
listen() {
	local name=$1 auth=$2 secs=$3; shift 3
	rm -f "$T_DIR/ready-$name"
	LISTEN_AUTH=$auth python3 "$CLIENTS" "$U" "$#" "$secs" "$T_DIR/ready-$name" "$@" >"$T_DIR/$name.json" &
	LP=$!
	wait_for 30 test -e "$T_DIR/ready-$name"
}

mpost "$U" 1 server/discover '{}' -H "Authorization: $AA"
is "$(jqr .result.capabilities.resources.subscribe)" true "server/discover advertises resources.subscribe"

# ---- a changed file reaches exactly its subscribers ---------------------------------
listen s1 "$AA" 20 '{"resourceSubscriptions":["file:///data/a.txt"]}' \
	'{"resourceSubscriptions":["file:///data/b.txt"]}' \
	'{"toolsListChanged":true,"resourceSubscriptions":["file:///data/a.txt","file:///nope","app://counter"]}' \
	'{"resourceSubscriptions":["skill://git-workflow/SKILL.md"]}'
LISTEN_AUTH=$AB python3 "$CLIENTS" "$U" 1 20 "$T_DIR/ready-bob" \
	'{"resourceSubscriptions":["file:///data/a.txt","file:///data/b.txt"]}' >"$T_DIR/bob.json" & BP=$!
wait_for 30 test -e "$T_DIR/ready-bob"
is "$(cat "$T_DIR/ready-s1")" 4 "alice's four streams are acknowledged"
sleep 0.3
printf 'one, changed\n' >"$T_DIR/data/a.txt"
printf '\nOne more line.\n' >>"$T_DIR/skills/git-workflow/SKILL.md"
sleep 0.5
is "$("$PHANTOM" -c "$T_DIR/phantom.yaml" --notify resources/updated app://counter)" "ok 1" \
	"--notify resources/updated URI reaches the one stream subscribed to it"
mpost "$U" 2 tools/call '{"name":"bump","arguments":{}}' -H "Authorization: $AA"
is "$(jqr .result.content[0].text)" bumped "a tool whose exec output names resourcesUpdated is served"
is "$(jqr '.result | has("resourcesUpdated")')" false "and the member is not passed to the client"
sleep 0.5
mpost "$U" 3 resources/read '{"uri":"file:///data/a.txt"}' -H "Authorization: $AA"
is "$(jqr .result.contents[0].text)" "one, changed" "resources/read serves the changed file"
mpost "$U" 3 resources/read '{"uri":"skill://git-workflow/SKILL.md"}' -H "Authorization: $AA"
like "$(jqr .result.contents[0].text)" "One more line" "and the changed skill file"
kill -TERM "$PH_PID"; wait "$LP" "$BP"; wait_gone "$PH_PID" 10
is "$(jq -c 'select(.i == 0) | .updated' "$T_DIR/s1.json")" '["file:///data/a.txt"]' \
	"the stream subscribed to a.txt got resources/updated for it once"
is "$(jq -c 'select(.i == 1) | .updated' "$T_DIR/s1.json")" '[]' "the stream subscribed to b.txt got nothing"
is "$(jq -c 'select(.i == 2) | .ack_uris' "$T_DIR/s1.json")" '["file:///data/a.txt","app://counter"]' \
	"an unknown URI is left out of the acknowledgement"
is "$(jq -c 'select(.i == 2) | .updated' "$T_DIR/s1.json")" \
	'["file:///data/a.txt","app://counter","app://counter"]' \
	"the third stream got the file change, --notify and the handler's announcement"
is "$(jq -c '.ack_uris' "$T_DIR/bob.json")" '["file:///data/b.txt"]' \
	"bob's acknowledgement leaves out a URI his allow-list does not grant"
is "$(jq -c '.updated' "$T_DIR/bob.json")" '[]' "and he is not told about it"
is "$(jq -c 'select(.i == 3) | .updated' "$T_DIR/s1.json")" '["skill://git-workflow/SKILL.md"]' \
	"a skill file subscribed to is watched too"
is "$(count "$T_DIR/s1.json" '.result == 1 and .closed')" 4 "every stream ended with its result at SIGTERM"

# ---- 100,000 subscriptions, limits ---------------------------------------------------
phantom_listen "$T_DIR/phantom.yaml" || { echo "not ok - phantom restarts"; exit 1; }
nginx_start "$PH_ADDR" || { echo "not ok - nginx restarts"; exit 1; }
U=$NGINX_URL
all=$(seq 1 1000 | jq -R '"file:///many/f" + .' | jq -sc '{resourceSubscriptions: .}')
over=$(seq 1 1001 | jq -R '"file:///many/f" + .' | jq -sc '{resourceSubscriptions: .}')
mpost "$U" 4 subscriptions/listen "{\"notifications\":$over}" -H "Authorization: $AA"
is "$(jqr .error.code)" -32602 "1001 resourceSubscriptions are refused with -32602"
like "$(jqr .error.message)" "subscriptions.max_resource_subscriptions .1000." "naming the limit"
filters=(); for i in $(seq 1 100); do filters+=("$all"); done
LISTEN_BATCH=20 listen big "$AA" 60 "${filters[@]}"
BIGP=$LP
is "$(cat "$T_DIR/ready-big")" 100 "100 streams with 1000 resourceSubscriptions each are acknowledged"
kill -USR2 "$(hub_of "$PH_PID")"
wait_for 10 grep -q "resource subscriptions" "$PH_LOG"
like "$(grep 'resource subscriptions' "$PH_LOG" | tail -1)" "100 streams, 100000 resource subscriptions, 1 watched" \
	"the hub holds 100,000 subscriptions on one watched directory"
mpost "$U" 5 tools/call '{"name":"bump","arguments":{}}' -H "Authorization: $AA"
is "$(jqr .result.content[0].text)" bumped "tools/call is served meanwhile"
printf 'x' >"$T_DIR/many/f500"
sleep 1
# the watch limit: 4 directories (many/ is one); deep/1..3 and data/ make five
mkdir -p "$T_DIR/dump-lim"
LISTEN_DUMP=$T_DIR/dump-lim listen lim "$AB" 10 \
	'{"resourceSubscriptions":["file:///deep/1/x","file:///deep/2/x","file:///deep/3/x","file:///data/b.txt"]}'
wait "$LP"
like "$(cat "$T_DIR/dump-lim/0.txt")" "Too many watched resources .subscriptions.max_watches is 4." \
	"a stream that needs more than subscriptions.max_watches directories ends with the error naming it"
mpost "$U" 6 tools/list '{}' -H "Authorization: $AA"
is "$STATUS" 200 "and the server keeps serving"
kill -TERM "$PH_PID"; wait "$BIGP"; wait_gone "$PH_PID" 10
is "$(count "$T_DIR/big.json" '.updated == ["file:///many/f500"]')" 100 \
	"a change to one of the files reaches all 100 streams, once each"

# ---- a client that never reads --------------------------------------------------------
# (nginx to the workers over a unix socket: little is buffered on the way)
phantom_unix "$T_DIR/phantom.yaml" || { echo "not ok - phantom restarts"; exit 1; }
nginx_start "$PH_BACKEND" || { echo "not ok - nginx restarts"; exit 1; }
U=$NGINX_URL
listen reader "$AA" 90 '{"resourceSubscriptions":["file:///data/a.txt"]}'
reader=$LP
# the stalled client: a tiny receive buffer, reads its acknowledgement and then nothing
python3 - "$U" "$all" "$T_DIR/stalled" "$AA" <<'PY' & SP=$!
import json, socket, sys, time
from urllib.parse import urlparse
u = urlparse(sys.argv[1])
body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": {
    "notifications": json.loads(sys.argv[2]), "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}}).encode()
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)
s.connect((u.hostname, u.port))
s.sendall(("POST %s HTTP/1.0\r\nHost: %s\r\nContent-Type: application/json\r\n"
           "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
           "Mcp-Method: subscriptions/listen\r\nAuthorization: %s\r\nContent-Length: %d\r\n\r\n"
           % (u.path, u.netloc, sys.argv[4], len(body))).encode() + body)
got = b""
while b"acknowledged" not in got:
    got += s.recv(4096)
open(sys.argv[3], "w").write("acked\n")
time.sleep(120)
PY
wait_for 30 test -e "$T_DIR/stalled"
is "$(cat "$T_DIR/stalled")" acked "a client that will never read is acknowledged"
# rewrite the 1000 files it subscribed to until the hub gives up on it
python3 - "$T_DIR/many" "$PH_LOG" <<'PY'
import os, sys, time
until = time.time() + 60
n = 0
while time.time() < until:
    for i in range(1, 1001):
        with open(os.path.join(sys.argv[1], "f%d" % i), "w") as f:
            f.write("%d" % n)
    n += 1
    if n % 5 == 0 and "does not read (subscriptions.max_queue)" in open(sys.argv[2]).read():
        break
print("# %d rounds of 1000 changes" % n)
PY
grep -q "does not read (subscriptions.max_queue)" "$PH_LOG"; ok "the hub drops the client that does not read"
printf 'one, again\n' >"$T_DIR/data/a.txt"
sleep 0.5
mpost "$U" 7 tools/call '{"name":"bump","arguments":{}}' -H "Authorization: $AA"
is "$(jqr .result.content[0].text)" bumped "tools/call is still served"
kill "$SP" 2>/dev/null
kill -TERM "$PH_PID"; wait "$reader"; wait_gone "$PH_PID" 10
is "$(jq -c '.updated' "$T_DIR/reader.json")" '["file:///data/a.txt"]' \
	"the stream that reads still gets its resources/updated"
is "$(count "$T_DIR/reader.json" '.result == 1')" 1 "and its result at SIGTERM"

# ---- list_changed only to principals whose visible list changed -----------------------
phantom_listen "$T_DIR/phantom.yaml" || { echo "not ok - phantom restarts"; exit 1; }
nginx_start "$PH_ADDR" || { echo "not ok - nginx restarts"; exit 1; }
U=$NGINX_URL
both='{"toolsListChanged":true,"resourcesListChanged":true}'
listen alice "$AA" 30 "$both" "$both"
AP=$LP
listen bob "$AB" 30 "$both" "$both"
# a tool and a resource bob's allow-lists do not grant
sed -i -e 's|^tools:|tools:\n  - { name: other, description: another, exec: [./bump.sh] }|' \
	-e 's|^resources:|resources:\n  - { uri: "file:///data/c.txt", name: c, text: C }|' "$T_DIR/phantom.yaml"
"$PHANTOM" -t -c "$T_DIR/phantom.yaml" >/dev/null 2>&1; ok "the changed configuration is valid"
kill -HUP "$PH_PID"
wait_for 30 grep -q "lists changed: tools resources" "$PH_LOG"
sleep 0.5
kill -TERM "$PH_PID"; wait "$AP" "$LP"; wait_gone "$PH_PID" 10
is "$(count "$T_DIR/alice.json" '.tools == 1 and .resources == 1')" 2 \
	"alice (no allow-lists) is told that tools and resources changed"
is "$(count "$T_DIR/bob.json" '.tools == 0 and .resources == 0 and .result == 1')" 2 \
	"bob, who sees neither new item, is told nothing"
like "$(grep 'lists changed: tools resources' "$PH_LOG")" "4 streams, 4 told" "the hub's log line counts what it told"

# ---- the same delivery through lighttpd and Apache (mod_proxy_fcgi) -------------------
# front NAME URL: two streams, one on a.txt and one on b.txt; a.txt changes
front() {
	local name=$1
	U=$2
	listen "$name" "$AA" 8 '{"resourceSubscriptions":["file:///data/a.txt"]}' \
		'{"resourceSubscriptions":["file:///data/b.txt"]}'
	is "$(cat "$T_DIR/ready-$name")" 2 "$name: both streams are acknowledged"
	sleep 0.3
	printf 'one, through %s\n' "$name" >"$T_DIR/data/a.txt"
	wait "$LP"
	is "$(jq -s -c 'map(.updated)' "$T_DIR/$name.json")" '[["file:///data/a.txt"],[]]' \
		"$name: resources/updated reaches the stream subscribed to the file, and not the other"
}
phantom_listen "$T_DIR/phantom.yaml" || { echo "not ok - phantom restarts"; exit 1; }
if lighttpd_start "$PH_ADDR"; then front lighttpd "$LIGHTTPD_URL"; else echo "not ok - lighttpd starts"; fi
if apache_start "$top_srcdir/conf/apache.conf" "" \
	-e "s#unix:/run/phantom/phantom.sock|fcgi://phantom/#fcgi://$PH_ADDR/#"; then
	front apache "$APACHE_URL"
else
	echo "not ok - apache starts"
fi

# ---- files behind symbolic links ------------------------------------------------------
# a template's link (files://link.txt -> t2.txt) and a Kubernetes ConfigMap
# volume (doc.txt -> ..data/doc.txt, ..data -> ..v1, swapped by rename)
mkdir -p "$T_DIR/sl" "$T_DIR/vol/..v1"
echo t2 >"$T_DIR/sl/t2.txt"; ln -s t2.txt "$T_DIR/sl/link.txt"
echo v1 >"$T_DIR/vol/..v1/doc.txt"; ln -s ..v1 "$T_DIR/vol/..data"; ln -s ..data/doc.txt "$T_DIR/vol/doc.txt"
chmod -R a+rwX "$T_DIR/sl" "$T_DIR/vol"
cat >"$T_DIR/links.yaml" <<YAML
server: { name: watch-links, version: "1.0" }
workers: 2
subscriptions: { max_ms: 600000, keepalive_ms: 1000, control_socket: $T_DIR/hub.sock }
resources:
  - { uri: "cm://doc", name: doc, file: vol/doc.txt }
resource_templates:
  - { uri_template: "files://{name}", name: files, dir: sl }
YAML
phantom_listen "$T_DIR/links.yaml" || { echo "not ok - phantom (links) starts"; exit 1; }
nginx_start "$PH_ADDR" || { echo "not ok - nginx restarts"; exit 1; }
U=$NGINX_URL
listen links1 "" 4 '{"resourceSubscriptions":["files://link.txt"]}' '{"resourceSubscriptions":["cm://doc"]}'
sleep 0.3
echo more >>"$T_DIR/sl/t2.txt"
sleep 0.7
# the kubelet's update: a new directory, a new ..data link renamed over the old
mkdir "$T_DIR/vol/..v2"; echo v2 >"$T_DIR/vol/..v2/doc.txt"
ln -s ..v2 "$T_DIR/vol/..data_tmp"; mv -T "$T_DIR/vol/..data_tmp" "$T_DIR/vol/..data"
sleep 0.7
rm -r "$T_DIR/vol/..v1"
wait "$LP"
is "$(jq -s -c 'map(.updated | unique)' "$T_DIR/links1.json")" '[["files://link.txt"],["cm://doc"]]' \
	"a change behind files://link.txt and a swapped ..data are announced to their streams"
mpost "$U" 8 resources/read '{"uri":"cm://doc"}'
is "$(jqr '.result.contents[0].text')" v2 "resources/read serves the new version"
listen links2 "" 3 '{"resourceSubscriptions":["files://link.txt"]}' '{"resourceSubscriptions":["cm://doc"]}'
sleep 0.3
echo v2, again >>"$T_DIR/vol/..v2/doc.txt"
wait "$LP"
is "$(jq -s -c 'map(.updated)' "$T_DIR/links2.json")" '[[],["cm://doc"]]' \
	"after the swap the hub watches the new file: its change is announced once"
mpost "$U" 9 resources/list '{}'
is "$STATUS" 200 "the next request is served"
done_testing
