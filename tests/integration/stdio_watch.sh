#!/bin/bash
# --stdio and resource subscriptions: the process watches the files behind
# the resources a listen subscribed to, as the hub does under a master, and
# sends notifications/resources/updated on that listen only; a file nobody
# subscribed to is quiet; a listen ended with notifications/cancelled hears
# nothing more; after SIGHUP the files are watched again; server/discover
# advertises resources.subscribe over stdio. A file behind a symbolic link
# and a Kubernetes volume whose ..data link is swapped are watched.
. "${top_srcdir:-.}/tests/lib.sh"
echo one >"$T_DIR/a.txt"
echo two >"$T_DIR/b.txt"
# behind symbolic links: link.txt -> t2.txt, and a Kubernetes ConfigMap
# volume (doc.txt -> ..data/doc.txt, ..data -> ..v1)
echo t2 >"$T_DIR/t2.txt"
ln -s t2.txt "$T_DIR/link.txt"
mkdir -p "$T_DIR/vol/..v1"
echo v1 >"$T_DIR/vol/..v1/doc.txt"
ln -s ..v1 "$T_DIR/vol/..data"
ln -s ..data/doc.txt "$T_DIR/vol/doc.txt"
cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: stdio-watch, version: "1.0" }
resources:
  - { uri: "doc://a", name: a, file: $T_DIR/a.txt, mime_type: text/plain }
  - { uri: "doc://b", name: b, file: $T_DIR/b.txt, mime_type: text/plain }
  - { uri: "doc://link", name: link, file: $T_DIR/link.txt, mime_type: text/plain }
  - { uri: "doc://cm", name: cm, file: $T_DIR/vol/doc.txt, mime_type: text/plain }
YAML
stdio_start "$T_DIR/err" "$T_DIR/phantom.yaml"
pid=$STDIO_PID
out=$T_DIR/out
: >"$out"
# drain SECONDS: reads what comes within that time
drain() {
	local l
	while stdio_read l "$1"; do printf '%s\n' "$l" >>"$out"; done
}
ping() { stdio_send '{"jsonrpc":"2.0","id":"'"$1"'","method":"ping"}'; stdio_upto "\"$1\"" "$out"; }
updates() { # SUBSCRIPTION-ID URI: resources/updated for URI on that listen
	jq -s --arg id "$1" --arg u "$2" 'map(select(.method == "notifications/resources/updated" and
		.params.uri == $u and .params._meta["io.modelcontextprotocol/subscriptionId"] == $id)) | length' "$out"
}

stdio_send '{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{"_meta":'"$(meta)"'}}'
stdio_upto '"d"' "$out"
is "$(tail -1 "$out" | jq -r .result.capabilities.resources.subscribe)" true "stdio advertises resources.subscribe"
stdio_send '{"jsonrpc":"2.0","id":"L1","method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["doc://a","doc://nope"]},"_meta":'"$(meta)"'}}'
stdio_send '{"jsonrpc":"2.0","id":"L2","method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["doc://b"]},"_meta":'"$(meta)"'}}'
ping p0
is "$(jq -c 'select(.method == "notifications/subscriptions/acknowledged" and .params._meta["io.modelcontextprotocol/subscriptionId"] == "L1") | .params.notifications.resourceSubscriptions' "$out")" \
	'["doc://a"]' "the ack lists the known URI only"
echo changed >>"$T_DIR/a.txt"
drain 1
is "$(updates L1 doc://a)" 1 "a change of a.txt: resources/updated on the listen subscribed to doc://a"
is "$(updates L2 doc://a)" 0 "not on the other listen"
stdio_send '{"jsonrpc":"2.0","id":"r","method":"resources/read","params":{"uri":"doc://a","_meta":'"$(meta)"'}}'
stdio_upto '"r"' "$out"
like "$(tail -1 "$out" | jq -r '.result.contents[0].text')" "changed" "resources/read serves the new text"
stdio_send '{"jsonrpc":"2.0","id":"L3","method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["doc://link","doc://cm"]},"_meta":'"$(meta)"'}}'
ping p9
echo more >>"$T_DIR/t2.txt"
drain 1
is "$(updates L3 doc://link)/$(updates L3 doc://cm)" 1/0 "a change of the file behind link.txt is announced for the link"
# the kubelet's swap: a new directory, a new ..data link renamed over the old
mkdir "$T_DIR/vol/..v2"; echo v2 >"$T_DIR/vol/..v2/doc.txt"
ln -s ..v2 "$T_DIR/vol/..data_tmp"; mv -T "$T_DIR/vol/..data_tmp" "$T_DIR/vol/..data"
drain 1
rm -r "$T_DIR/vol/..v1"
drain 0.5
n=$(updates L3 doc://cm)
[ "$n" -ge 1 ]; ok "..data swapped by rename (a ConfigMap update) is announced ($n)"
stdio_send '{"jsonrpc":"2.0","id":"r2","method":"resources/read","params":{"uri":"doc://cm","_meta":'"$(meta)"'}}'
stdio_upto '"r2"' "$out"
is "$(tail -1 "$out" | jq -r '.result.contents[0].text')" v2 "resources/read serves the new version"
echo v2, again >>"$T_DIR/vol/..v2/doc.txt"
drain 1
is "$(updates L3 doc://cm)" $((n + 1)) "after the swap the new file is watched: a change of it is announced"
stdio_send '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"L2"}}'
ping p1
echo changed >>"$T_DIR/b.txt"
drain 1
is "$(updates L2 doc://b)" 0 "a cancelled listen hears nothing more"
kill -HUP "$pid"
wait_for 10 grep -q "configuration reloaded" "$T_DIR/err"; ok "SIGHUP reloads"
ping p2
mv "$T_DIR/a.txt" "$T_DIR/a.old"; echo replaced >"$T_DIR/a.txt"
drain 1
n=$(updates L1 doc://a)
[ "$n" -ge 2 ]; ok "after the reload the file is still watched: a file replaced by rename is announced ($((n - 1)) more)"
ping p3; ok "requests are still answered"
stdio_stop 5; ok "EOF still ends the process"
done_testing
