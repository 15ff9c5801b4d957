#!/bin/bash
# Assigns from a module authenticator (auth.mode module, tests/modules/
# testmod.c:authenticate) behind nginx: an exec handler gets them on stdin
# and a module handler through phantom_call_assign, {{assigns.NAME}} fills a
# prompt, a requestState retry needs the same principal and assigns; a
# legacy 2025-11-25 session issued with assigns is refused (404) to the same
# principal with other assigns and to another principal. Assigns that are
# too large, too deep or not an object, a NULL answer and a bad module are
# errors; a module's 401/403 answers reach the client; the server serves on.
. "${top_srcdir:-.}/tests/lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
command -v jq >/dev/null || skip_all "jq not installed"
export PHANTOM_MODULE_PATH=$top_builddir/tests/modules/.libs

cp "$top_srcdir/tests/handlers/assigns_tool.sh" "$T_DIR/tool.sh"
chmod 755 "$T_DIR/tool.sh"
cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: assigns-module-test, version: "1.0" }
workers: 2
request_state: { secret_env: ASSIGNS_SECRET }
sessions: { max_age: 3600 }
auth: { mode: module, module: testmod.so, symbol: authenticate }
tools:
  - { name: whoami, description: The assigns, exec: [./tool.sh] }
  - { name: twice, description: Two rounds, exec: [./tool.sh] }
resource_lists: [ { name: studies, module: testmod.so, symbol: catalog } ]
prompts:
  - name: plan
    messages: [ { role: user, text: "Plan {{assigns.plan}}, team {{ assigns.team }}, {{assigns.missing}}." } ]
YAML
ASSIGNS_SECRET=$(head -c 48 /dev/urandom | base64 | tr -d '\n')
export ASSIGNS_SECRET

# a configuration naming a module without the symbol, or a missing symbol
test_conf "$T_DIR/bad1.yaml" bad 'auth: { mode: module, module: testmod.so }'
"$PHANTOM" -c "$T_DIR/bad1.yaml" -t >"$T_DIR/bad1.out" 2>&1
is "$?/$(grep -c 'auth.module and auth.symbol go together' "$T_DIR/bad1.out")" 1/1 \
	"auth.module without auth.symbol: -t names the problem"
test_conf "$T_DIR/bad2.yaml" bad 'auth: { mode: module, module: testmod.so, symbol: no_such_fn }'
"$PHANTOM" -c "$T_DIR/bad2.yaml" -t >"$T_DIR/bad2.out" 2>&1
is "$?/$(grep -c "auth.module: module .* has no symbol 'no_such_fn'" "$T_DIR/bad2.out")" 1/1 \
	"a symbol the module lacks: -t names it"
test_conf "$T_DIR/bad3.yaml" bad 'auth: { mode: module }'
"$PHANTOM" -c "$T_DIR/bad3.yaml" -t >"$T_DIR/bad3.out" 2>&1
is "$?/$(grep -c 'auth.mode module: auth.module and auth.symbol are required' "$T_DIR/bad3.out")" 1/1 \
	"mode module without a module: -t says what is required"
"$PHANTOM" -c "$T_DIR/phantom.yaml" -t >/dev/null 2>&1; ok "the test configuration checks (-t)"

phantom_listen "$T_DIR/phantom.yaml" || { echo "not ok - phantom starts"; exit 1; }
nginx_start "$PH_ADDR" || { echo "not ok - nginx starts"; exit 1; }
U=$NGINX_URL
as() { local tok=$1; shift; mpost "$U" "$@" -H "Authorization: Bearer $tok"; }

as alice-pro 1 tools/call '{"name":"whoami","arguments":{}}'
is "$(jqr '.result.content[0].text')" '{"plan":"pro","team":"red","seats":5}' \
	"an exec handler gets the module authenticator's assigns on stdin"
as plain 2 tools/call '{"name":"whoami","arguments":{}}'
is "$(jqr '.result.content[0].text')" '{}' "an allow without assigns: the handler gets {}"
as alice-free 3 resources/list '{}'
is "$(jqr '.result.resources[0].description')" "for alice on free" \
	"a module handler reads them (phantom_call_assign)"
as alice-pro 4 prompts/get '{"name":"plan"}'
is "$(jqr '.result.messages[0].content.text')" "Plan pro, team red, ." "{{assigns.NAME}} in a prompt"

as alice-pro 5 tools/call '{"name":"twice","arguments":{}}'
rs=$(jqr .result.requestState)
is "$(jqr .result.resultType)" input_required "round 1: input_required"
as alice-pro 6 tools/call "$(jq -nc --arg s "$rs" '{name:"twice",arguments:{},requestState:$s}')"
is "$(jqr '.result.content[0].text')" "retried for alice on pro" "the retry with the same assigns is served"
as alice-free 7 tools/call "$(jq -nc --arg s "$rs" '{name:"twice",arguments:{},requestState:$s}')"
is "$(jqr .error.code)" -32602 "the same principal with other assigns: refused"
as bob 8 tools/call "$(jq -nc --arg s "$rs" '{name:"twice",arguments:{},requestState:$s}')"
is "$(jqr .error.code)" -32602 "another principal with the same assigns: refused"

# legacy sessions are bound to the principal and its assigns
V=(-H "MCP-Protocol-Version: 2025-11-25")
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
CALL='{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"whoami","arguments":{}}}'
post "$U" "$INIT" -H "Authorization: Bearer alice-pro"
SID=$(header Mcp-Session-Id)
like "$STATUS/$SID" '^200/[!-~]{40,}$' "legacy initialize as alice on pro: a session id"
post "$U" "$CALL" -H "Authorization: Bearer alice-pro" "${V[@]}" -H "Mcp-Session-Id: $SID"
is "$STATUS/$(jqr '.result.content[0].text')" '200/{"plan":"pro","team":"red","seats":5}' \
	"a call on the session with the same assigns is served"
post "$U" "$CALL" -H "Authorization: Bearer alice-free" "${V[@]}" -H "Mcp-Session-Id: $SID"
is "$STATUS/$(jqr .error.code)" 404/-32001 "the session used by alice on another plan: 404"
like "$(jqr .error.message)" "other assigns" "... the message says the assigns differ"
post "$U" "$CALL" -H "Authorization: Bearer bob" "${V[@]}" -H "Mcp-Session-Id: $SID"
is "$STATUS/$(jqr .error.code)" 404/-32001 "the session used by bob (the same assigns): 404"
post "$U" "$INIT" -H "Authorization: Bearer plain"
SID2=$(header Mcp-Session-Id)
post "$U" "$CALL" -H "Authorization: Bearer plain" "${V[@]}" -H "Mcp-Session-Id: $SID2"
is "$STATUS/$(jqr '.result.content[0].text')" '200/{}' "a session issued without assigns opens for its principal"
post "$U" "$CALL" -H "Authorization: Bearer alice-pro" "${V[@]}" -H "Mcp-Session-Id: $SID"
is "$STATUS" 200 "the session still opens for its own principal and assigns"

# refusals and failures
as nobody 9 tools/call '{"name":"whoami","arguments":{}}'
is "$STATUS" 401 "a module answer unauthorized: 401"
[ -n "$(header WWW-Authenticate)" ]; ok "... with WWW-Authenticate"
as forbid 10 tools/call '{"name":"whoami","arguments":{}}'
is "$STATUS/$(jqr .error.message)" "403/not on a weekday" "a module answer forbidden: 403 with its message"
as null 11 tools/call '{"name":"whoami","arguments":{}}'
is "$STATUS/$(jqr .error.code)" 500/-32603 "a module authenticator returning NULL: 500"
for t in deep big list; do
	as $t 12 tools/call '{"name":"whoami","arguments":{}}'
	is "$STATUS/$(jqr .error.code)" 500/-32603 "module assigns that are too $t: the request fails (500)"
done
grep -q 'authenticator testmod.so:authenticate: "assigns" is nested deeper than auth.assigns_depth' "$PH_LOG"
ok "too deep is logged, naming the module"
grep -q 'assigns" is larger than auth.max_assigns' "$PH_LOG"; ok "too large is logged"
grep -q 'assigns" is not an object' "$PH_LOG"; ok "not an object is logged"
as alice-pro 13 tools/call '{"name":"whoami","arguments":{}}'
is "$STATUS" 200 "the next request is served"
done_testing
