#!/bin/bash
# list_changed exactly per viewer (issue 30), behind the real nginx with a
# master and its hub: three principals, alice (an allow-list configured in
# auth.allow), bob (an allow-list his authenticator answers) and carol
# (none), each on a subscriptions/listen stream and on a legacy session's
# GET stream. Each reload tells exactly those whose own tools/list
# changed: a tool nobody is allowed (carol), alice's configured list alone
# (alice), a tool bob's authenticator allows (bob, carol), nothing (nobody).
# Over stdio the same rule is checked by stdio_session.sh (the stdio
# principal's configured allow-list) and here for an anonymous stdio client.
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/reglib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"

head -c 48 /dev/urandom | base64 >"$T_DIR/secret"
cat >"$T_DIR/authenticator" <<'SH'
#!/bin/sh
case "$(jq -r '.headers.authorization // ""')" in
"Bearer alice") echo '{"decision":"allow","principal":"alice"}';;
"Bearer bob") echo '{"decision":"allow","principal":"bob","allow":{"tools":["shared","bob_tool","later_b"]},"assigns":{"team":"b"}}';;
"Bearer carol") echo '{"decision":"allow","principal":"carol"}';;
*) echo '{"decision":"unauthorized"}';;
esac
SH
chmod 0755 "$T_DIR/authenticator"
# conf ALICE-TOOLS [MORE TOOL LINES]
conf() {
	cat <<YAML
server: { name: views, version: "1.0" }
workers: 2
request_state: { secret_file: secret }
subscriptions: { keepalive_ms: 1000 }
auth:
  mode: exec
  command: [./authenticator]
  allow:
    alice: { tools: [$1] }
tools:
  - { name: shared, description: everyone, exec: [/bin/true] }
  - { name: alice_tool, description: alice, exec: [/bin/true] }
  - { name: bob_tool, description: bob, exec: [/bin/true] }
${2-}
YAML
}
x='  - { name: x, description: nobody listed, exec: [/bin/true] }'
b='  - { name: later_b, description: bob by his authenticator, exec: [/bin/true] }'
conf "shared, alice_tool" >"$T_DIR/phantom.yaml"
"$PHANTOM" -t -c "$T_DIR/phantom.yaml" >"$T_DIR/t.out" 2>&1; ok "the configuration is valid"
phantom_up "$T_DIR/phantom.yaml" || { echo "not ok - phantom starts"; exit 1; }
nginx_start "$PH_ADDR" || { echo "not ok - nginx starts"; exit 1; }
U=$NGINX_URL
V=(-H "MCP-Protocol-Version: 2025-11-25")
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
LISTEN=$(req '"L"' subscriptions/listen '{"notifications":{"toolsListChanged":true}}')

# listen WHO: a listen stream of WHO in the background, into $T_DIR/listen-WHO
listen() {
	local f=$T_DIR/listen-$1
	timeout 120 curl -sN -o "$f" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
		-H "MCP-Protocol-Version: $MODERN" -H 'Mcp-Method: subscriptions/listen' -H "Authorization: Bearer $1" \
		--data-binary "$LISTEN" "$U" &
	T_PIDS+=("$!")
	wait_for 50 grep -qs acknowledged "$f"
}
# session WHO: a legacy session of WHO and its GET stream, into $T_DIR/get-WHO
session() {
	local f=$T_DIR/get-$1 sid
	post "$U" "$INIT" -H "Authorization: Bearer $1"
	sid=$(header Mcp-Session-Id)
	timeout 120 curl -sN -D "$f.h" -o "$f" -H 'Accept: text/event-stream' "${V[@]}" -H "Mcp-Session-Id: $sid" \
		-H "Authorization: Bearer $1" "$U" &
	T_PIDS+=("$!")
	wait_for 50 grep -qsi '^content-type: text/event-stream' "$f.h"
}
for who in alice bob carol; do
	listen "$who"; ok "$who: a listen stream is acknowledged"
	session "$who"; ok "$who: a legacy session's GET stream is open"
done
sleep 0.5 # the workers hand the streams to the hub

# reloaded N: the hub has logged N reloads
reloaded() { [ "$(grep -c 'hub: configuration reloaded' "$PH_LOG")" -ge "$1" ]; }

reloads=0
# stage WHAT ALICE-TOOLS MORE EXPECT: reload with that configuration; EXPECT
# is the list_changed count, for alice bob carol, on listen and on GET
stage() {
	local what=$1 want=$4 got="" n
	conf "$2" "$3" >"$T_DIR/phantom.yaml"
	reloads=$((reloads + 1))
	kill -HUP "$PH_PID"
	wait_for 20 reloaded "$reloads"
	sleep 0.7
	for who in alice bob carol; do
		for kind in listen get; do
			n=$(grep -c 'notifications/tools/list_changed' "$T_DIR/$kind-$who")
			got="$got $((n - ${seen[$kind-$who]:-0}))"
			seen[$kind-$who]=$n
		done
	done
	is "${got# }" "$want" "$what: tools/list_changed to alice, bob, carol (listen, GET each)"
}
declare -A seen
stage "a tool nobody is allowed" "shared, alice_tool" "$x" "0 0 0 0 1 1"
stage "alice's configured allow-list alone" "shared, alice_tool, x" "$x" "1 1 0 0 0 0"
stage "a tool bob's authenticator allows" "shared, alice_tool, x" "$x
$b" "0 0 1 1 1 1"
stage "nothing changed" "shared, alice_tool, x" "$x
$b" "0 0 0 0 0 0"
grep 'hub: configuration reloaded' "$PH_LOG" | tail -1 | grep -q 'lists changed: none'
ok "  and the hub logs that no list changed"
post "$U" "$INIT" -H "Authorization: Bearer bob"
is "$STATUS" 200 "the server still serves after the reloads"

# ---- stdio: an anonymous client is told of every tool added
cat >"$T_DIR/stdio.yaml" <<YAML
server: { name: views-stdio, version: "1.0" }
auth: { mode: none, allow: { sam: { tools: [shared] } } }
tools:
  - { name: shared, description: everyone, exec: [/bin/true] }
YAML
stdio_start "$T_DIR/stdio.err" "$T_DIR/stdio.yaml"
stdio_send "$INIT"
stdio_read l
printf '  - { name: two, description: anyone, exec: [/bin/true] }\n' >>"$T_DIR/stdio.yaml"
kill -HUP "$STDIO_PID"
wait_for 50 grep -q "configuration reloaded" "$T_DIR/stdio.err"
stdio_send '{"jsonrpc":"2.0","id":2,"method":"ping"}'
: >"$T_DIR/stdio.out"
stdio_upto 2 "$T_DIR/stdio.out"
is "$(grep -c 'notifications/tools/list_changed' "$T_DIR/stdio.out")" 1 "stdio, anonymous: a tool added is one tools/list_changed"
stdio_close
done_testing
