#!/bin/bash
# sessions.on_end (issue 30), behind the real nginx with a master: the hub
# calls the handler once when a legacy session is ended with DELETE and
# once when one expires (sessions.max_age), with the principal, its assigns
# and the session's age, never on the request path (a hook that takes
# seconds does not hold the DELETE), and not again for a session already
# ended. Then a module as the hook (tests/modules/testmod.c's session_ended),
# which fails a kind it does not know, as phantom.h says: it must see
# PHANTOM_KIND_SESSION_END.
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/reglib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"

head -c 48 /dev/urandom | base64 >"$T_DIR/secret"
export ENDED_FILE=$T_DIR/ended_module # where session_ended writes
cat >"$T_DIR/authenticator" <<'SH'
#!/bin/sh
case "$(jq -r '.headers.authorization // ""')" in
"Bearer alice") echo '{"decision":"allow","principal":"alice","assigns":{"team":"red"}}';;
*) echo '{"decision":"unauthorized"}';;
esac
SH
cat >"$T_DIR/hook" <<SH
#!/bin/sh
# a slow hook: the DELETE must not wait for it
in=\$(cat)
sleep 1
printf '%s\n' "\$in" | jq -c '{kind, principal, assigns, arguments}' >>"$T_DIR/ended"
echo '{}'
SH
chmod 0755 "$T_DIR/authenticator" "$T_DIR/hook"
cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: session-end, version: "1.0" }
workers: 2
request_state: { secret_file: secret }
sessions:
  max_age: 3
  on_end: { exec: [./hook], timeout_ms: 5000 }
auth: { mode: exec, command: [./authenticator] }
tools:
  - { name: t, description: a tool, exec: [/bin/true] }
YAML
"$PHANTOM" -t -c "$T_DIR/phantom.yaml" >"$T_DIR/t.out" 2>&1; ok "the configuration is valid"
printf 'server: {name: x, version: "1"}\nsessions:\n  on_end: {}\n' >"$T_DIR/bad.yaml"
"$PHANTOM" -t -c "$T_DIR/bad.yaml" >"$T_DIR/bad.out" 2>&1
like "$(cat "$T_DIR/bad.out")" 'bad.yaml:3: .*sessions.on_end needs a handler: exec or module' "-t: a hook without a handler is refused, naming file:line:key"
phantom_up "$T_DIR/phantom.yaml" || { echo "not ok - phantom starts"; exit 1; }
nginx_start "$PH_ADDR" || { echo "not ok - nginx starts"; exit 1; }
U=$NGINX_URL
A=(-H "Authorization: Bearer alice")
V=(-H "MCP-Protocol-Version: 2025-11-25")
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
count() { [ -f "$T_DIR/ended" ] && jq -s --arg r "$1" 'map(select(.arguments.reason == $r)) | length' "$T_DIR/ended" || echo 0; }
told() { [ "$(count "$1")" = "$2" ]; } # told REASON N

# ---- DELETE
post "$U" "$INIT" "${A[@]}"
SID=$(header Mcp-Session-Id)
t0=$(date +%s%N)
st=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "${A[@]}" "${V[@]}" -H "Mcp-Session-Id: $SID" "$U")
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
like "$st" '^20[04]$' "DELETE ends the session ($st)"
[ "$ms" -lt 900 ]; ok "  without waiting for the hook, which takes 1 s ($ms ms)"
wait_for 10 told deleted 1; ok "the hook is called for the DELETE"
is "$(jq -sc 'map(select(.arguments.reason == "deleted"))[0] | [.kind, .principal, .assigns.team, (.arguments.age_s >= 0 and .arguments.age_s < 3)]' "$T_DIR/ended")" \
	'["session_end","alice","red",true]' "  with kind session_end, the principal, its assigns and the session's age"
st=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "${A[@]}" "${V[@]}" -H "Mcp-Session-Id: $SID" "$U")
sleep 1.5
is "$(count deleted)" 1 "a second DELETE ($st) does not call it again"

# ---- expiry (sessions.max_age 3)
post "$U" "$INIT" "${A[@]}"
wait_for 15 told expired 1; ok "the hook is called when a session expires"
is "$(jq -sc 'map(select(.arguments.reason == "expired"))[0] | [.principal, .assigns.team, .arguments.age_s]' "$T_DIR/ended")" \
	'["alice","red",3]' "  with the principal, its assigns and its age (sessions.max_age)"
sleep 2
is "$(count expired)/$(count deleted)" 1/1 "each ended session was told of exactly once"
post "$U" "$INIT" "${A[@]}"
is "$STATUS" 200 "the server still serves"

# ---- a module as the hook, after a reload
sed -i 's|^  on_end: .*|  on_end: { module: testmod.so, symbol: session_ended }|' "$T_DIR/phantom.yaml"
kill -HUP "$PH_PID"
reloaded() { grep -q 'hub: configuration reloaded' "$PH_LOG"; }
wait_for 10 reloaded; ok "the hub reloads to a module hook"
post "$U" "$INIT" "${A[@]}"
SID=$(header Mcp-Session-Id)
curl -s -o /dev/null -X DELETE "${A[@]}" "${V[@]}" -H "Mcp-Session-Id: $SID" "$U"
module_told() { grep -q deleted "$ENDED_FILE" 2>/dev/null; }
wait_for 10 module_told
# (the session of the check above may expire meanwhile: a line of its own)
is "$(grep deleted "$ENDED_FILE" 2>/dev/null)" "session_end/10 alice deleted" \
	"a module hook sees kind session_end (PHANTOM_KIND_SESSION_END), the principal and the reason"
done_testing
