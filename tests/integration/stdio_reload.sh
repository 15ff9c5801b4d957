#!/bin/bash
# --stdio and SIGHUP: the configuration is loaded again and the listens the
# client holds open get list_changed for the lists that changed, only for the
# kinds each asked about; a reload that changes nothing sends nothing; a
# listen ended with notifications/cancelled hears nothing more; a
# configuration that no longer loads is refused and the old one keeps serving.
. "${top_srcdir:-.}/tests/lib.sh"
cat >"$T_DIR/phantom.yaml" <<'YAML'
server: { name: stdio-reload, version: "1.0" }
tools:
  - { name: one, description: a tool, exec: [/bin/true] }
prompts:
  - { name: p, description: a prompt, messages: [ { role: user, text: hi } ] }
YAML
stdio_start "$T_DIR/err" "$T_DIR/phantom.yaml"
pid=$STDIO_PID
out=$T_DIR/out
: >"$out"
listen() { # ID FILTER
	stdio_send '{"jsonrpc":"2.0","id":"'"$1"'","method":"subscriptions/listen","params":{"notifications":'"$2"',"_meta":'"$(meta)"'}}'
}
ping() { stdio_send '{"jsonrpc":"2.0","id":"'"$1"'","method":"ping"}'; stdio_upto "\"$1\"" "$out"; }
changes() { # SUBSCRIPTION-ID METHOD: how many such notifications were read
	jq -s --arg id "$1" --arg m "$2" \
		'map(select(.method == $m and .params._meta["io.modelcontextprotocol/subscriptionId"] == $id)) | length' "$out"
}
listen L1 '{"toolsListChanged":true}'
listen L2 '{"promptsListChanged":true}'
listen L3 '{"toolsListChanged":true}'
ping p0; ok "three listens are open and requests are still answered"
is "$(jq -s 'map(select(.method == "notifications/subscriptions/acknowledged")) | length' "$out")" 3 \
	"each listen is acknowledged"
stdio_send '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"L3"}}'
ping p1
kill -HUP "$pid"
wait_for 10 grep -q "configuration reloaded; 2 listens open" "$T_DIR/err"; ok "a reload that changes nothing"
ping p2
is "$(changes L1 notifications/tools/list_changed)" 0 "sends nothing"
sed -i 's|^prompts:|  - { name: two, description: another tool, exec: [/bin/true] }\nprompts:|' "$T_DIR/phantom.yaml"
kill -HUP "$pid"
wait_for 10 test "$(grep -c "configuration reloaded" "$T_DIR/err")" = 2
ping p3; ok "the process serves after the reload"
is "$(changes L1 notifications/tools/list_changed)" 1 "a tool added: the listen that asked about tools is told"
is "$(changes L2 notifications/prompts/list_changed)" 0 "the listen that asked only about prompts is not"
is "$(changes L3 notifications/tools/list_changed)" 0 "nor the listen cancelled before"
stdio_send '{"jsonrpc":"2.0","id":"t","method":"tools/list","params":{"_meta":'"$(meta)"'}}'
stdio_upto '"t"' "$out"
is "$(tail -1 "$out" | jq -r '[.result.tools[].name] | join(",")')" one,two "tools/list serves the new configuration"
printf 'tools: [\n' >>"$T_DIR/phantom.yaml"
kill -HUP "$pid"
wait_for 10 grep -q "reload failed" "$T_DIR/err"; ok "a broken configuration is refused"
ping p4; ok "and the old one keeps serving"
is "$(changes L1 notifications/tools/list_changed)" 1 "without telling anyone"
stdio_stop 5; ok "EOF still ends the process"
wait "$pid"; is "$?" 0 "with status 0"
done_testing
