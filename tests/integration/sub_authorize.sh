#!/bin/bash
# subscriptions.authorize (issue 30), over stdio: a handler that allows the
# even ids of item://{id} (with the template's parameters), except those
# listed in its "revoked" file. Four resources/subscribe, two accepted (the
# others -32002, as a resource the principal may not read); a listen's
# resourceSubscriptions acknowledged with the same two; a write gives one
# resources/updated to each; revoked in the handler's data, a write gives
# none for it; a handler that hangs: nothing allowed, a log line, the
# process still serves.
. "${top_srcdir:-.}/tests/lib.sh"
mkdir -p "$T_DIR/items"
for i in 1 2 3 4; do echo "item $i" >"$T_DIR/items/$i"; done
: >"$T_DIR/revoked"
cat >"$T_DIR/authz.sh" <<SH
#!/bin/sh
[ -n "\$HANG" ] && sleep 5
jq -c --rawfile rev "$T_DIR/revoked" '{allowed: [.arguments.uris[] | select((.params.id | tonumber) % 2 == 0)
	| select(.params.id as \$i | (\$rev | split("\\n") | index(\$i)) == null) | .uri]}'
SH
chmod 0755 "$T_DIR/authz.sh"
conf() { # FILE [ENV LINE]
	cat >"$1" <<YAML
server: { name: sub-authorize, version: "1.0" }
stdio: { concurrency: 1 }
subscriptions:
  authorize: { exec: [./authz.sh], timeout_ms: 700${2-} }
resource_templates:
  - { uri_template: "item://{id}", name: item, dir: items, mime_type: text/plain }
YAML
}
conf "$T_DIR/phantom.yaml"
"$PHANTOM" -t -c "$T_DIR/phantom.yaml" >"$T_DIR/t.out" 2>&1; ok "the configuration is valid"

# start CONF: a stdio server, its stderr in $T_DIR/err
start() {
	stdio_start "$T_DIR/err" "$1"
	SPID=$STDIO_PID
}
out=$T_DIR/out
: >"$out"
rpc() { stdio_send "{\"jsonrpc\":\"2.0\",\"id\":\"$1\",\"method\":\"$2\",\"params\":$3}"; stdio_upto "\"$1\"" "$out"; }
resp() { jq -c --arg id "$1" 'select(.id == $id) | if .error then .error.code else .result end' "$out"; }
updates() { # URI: legacy and listen resources/updated for URI so far
	jq -s -c --arg u "$1" '[map(select(.method == "notifications/resources/updated" and .params.uri == $u)) |
		(map(select(.params._meta == null)) | length), (map(select(.params._meta != null)) | length)]' "$out"
}
settle() { sleep 0.6; rpc "p$RANDOM" ping '{}'; }

start "$T_DIR/phantom.yaml"
rpc i initialize '{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}'
for i in 1 2 3 4; do rpc "s$i" resources/subscribe "{\"uri\":\"item://$i\"}"; done
is "$(resp s1) $(resp s2) $(resp s3) $(resp s4)" "-32002 {} -32002 {}" \
	"four resources/subscribe: the two even ids accepted, the others -32002"
rpc L subscriptions/listen "{\"notifications\":{\"resourceSubscriptions\":[\"item://1\",\"item://2\",\"item://3\",\"item://4\"]},\"_meta\":$(meta)}" || true
is "$(jq -c 'select(.method == "notifications/subscriptions/acknowledged") | .params.notifications.resourceSubscriptions' "$out")" \
	'["item://2","item://4"]' "a listen's resourceSubscriptions: the same two acknowledged (one call for the four)"
echo changed >>"$T_DIR/items/2"
settle
is "$(updates item://2)" "[1,1]" "a write to item 2: one resources/updated to the session and one to the listen"
echo 4 >"$T_DIR/revoked"
echo changed >>"$T_DIR/items/4"
settle
is "$(updates item://4)" "[0,0]" "item 4 revoked in the handler's data, then written: no notification for it"
echo again >>"$T_DIR/items/2"
settle
is "$(updates item://2)" "[2,2]" "  while item 2 still is told of"
stdio_stop; ok "EOF ends it"

# a handler that hangs past its timeout_ms: nothing allowed, a log line
conf "$T_DIR/hang.yaml" ', env: [HANG=1]'
: >"$out"
start "$T_DIR/hang.yaml"
rpc i initialize '{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}'
rpc h resources/subscribe '{"uri":"item://2"}'
is "$(resp h)" "-32002" "a handler that hangs: the subscription is refused"
grep -q 'subscriptions.authorize failed (see above) for (anonymous): nothing is allowed' "$T_DIR/err"
ok "  and the log says why"
rpc q ping '{}'
is "$(resp q)" "{}" "  and the process still serves"
stdio_close
done_testing
