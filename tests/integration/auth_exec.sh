#!/bin/bash
# auth.mode exec behind nginx: an authenticator script gets the request
# headers as JSON and answers allow / unauthorized / forbidden; a slow,
# crashing or babbling authenticator gives 500 and the next request is
# served; on stdio the authenticator does not run (auth.stdio_principal); a
# command given by a bare name is found in PATH, as a handler's exec is.
. "${top_srcdir:-.}/tests/lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"

cat >"$T_DIR/authenticator" <<SH
#!/bin/bash
in=\$(cat)
printf '%s' "\$in" >"$T_DIR/last-input.json"
case "\$(printf '%s' "\$in" | jq -r '.headers.authorization // ""')" in
"Bearer good-alice") echo '{"decision":"allow","principal":"alice","allow":{"tools":["search"]}}';;
"Bearer good-bob") echo '{"decision":"allow","principal":"bob"}';;
"Bearer expired") echo '{"decision":"unauthorized","error":"invalid_token","message":"Unauthorized: token expired"}';;
"Bearer readonly") echo '{"decision":"forbidden","message":"Forbidden: read-only token","scope":"mcp:write"}';;
"Bearer slow") sleep 9.87; echo '{"decision":"allow","principal":"late"}';;
"Bearer crash") exit 1;;
"Bearer chatty") echo 'I echo the Bearer chatty token';;
"Bearer nul-alice") echo '{"decision":"allow","principal":"alice\\u0000-bob"}';;
"Bearer nul-allow") echo '{"decision":"allow\\u0000no","principal":"bob"}';;
"") echo '{"decision":"unauthorized"}';;
*) echo '{"decision":"unauthorized","error":"invalid_token"}';;
esac
SH
chmod 755 "$T_DIR/authenticator"
cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: exec-test, version: "1.0", scope: public }
workers: 2
auth:
  mode: exec
  command: [./authenticator]
  timeout_ms: 1000
  realm: exec-realm
  scope: "mcp:read"
  stdio_principal: ops
YAML
behind_nginx phantom_listen "$T_DIR/phantom.yaml"
still_serving() {
	mpost "$U" 99 server/discover '{}' -H 'Authorization: Bearer good-bob'
	is "$STATUS" 200 "next request after $1 still served"
}

mpost "$U" 1 server/discover '{}' -H 'Authorization: Bearer good-alice' -H 'X-Secret: no'
is "$STATUS" 200 "allow: 200"
is "$(jqr .result.cacheScope)" private "exec mode: cacheScope private"
IN=$(cat "$T_DIR/last-input.json")
is "$(printf '%s' "$IN" | jq -r .headers.authorization)" "Bearer good-alice" "the authenticator gets headers.authorization"
is "$(printf '%s' "$IN" | jq -r '.headers["mcp-method"]')" server/discover "... and the MCP routing headers"
is "$(printf '%s' "$IN" | jq -r '.headers.host')" 127.0.0.1 "... and Host"
is "$(printf '%s' "$IN" | jq -r '.headers["x-secret"]')" null "... but no header outside auth.headers"
is "$(printf '%s' "$IN" | jq -r '.remote_addr + " " + .request_uri + " " + .method')" \
	"127.0.0.1 /mcp server/discover" "... and remote_addr, request_uri, method"
grep -q 'status=200 .*principal=alice' "$PH_LOG"; ok "allow: principal alice in the log"

mpost "$U" 2 server/discover '{}'
is "$STATUS" 401 "unauthorized without details: 401"
is "$(header WWW-Authenticate)" 'Bearer realm="exec-realm", scope="mcp:read"' "... with the configured challenge"
is "$BODY" '{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"Unauthorized"}}' "... and body"

mpost "$U" 3 server/discover '{}' -H 'Authorization: Bearer expired'
is "$STATUS" 401 "unauthorized with error and message: 401"
is "$(header WWW-Authenticate)" 'Bearer realm="exec-realm", error="invalid_token", scope="mcp:read"' \
	"... the authenticator's error in the challenge"
is "$BODY" '{"jsonrpc":"2.0","id":3,"error":{"code":-32000,"message":"Unauthorized: token expired"}}' \
	"... the authenticator's message in the body"

mpost "$U" 4 server/discover '{}' -H 'Authorization: Bearer readonly'
is "$STATUS" 403 "forbidden: 403"
is "$(header WWW-Authenticate)" 'Bearer realm="exec-realm", error="insufficient_scope", scope="mcp:write"' \
	"forbidden with a scope: insufficient_scope challenge"
is "$BODY" '{"jsonrpc":"2.0","id":4,"error":{"code":-32000,"message":"Forbidden: read-only token"}}' \
	"forbidden: body"
still_serving "403"

T0=$(date +%s%N)
mpost "$U" 5 server/discover '{}' -H 'Authorization: Bearer slow'
MS=$(( ($(date +%s%N) - T0) / 1000000 ))
is "$STATUS" 500 "an authenticator over timeout_ms: 500"
is "$BODY" '{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"Internal error: authentication failed"}}' \
	"... a JSON-RPC internal error"
[ "$MS" -lt 3000 ]; ok "... answered after the timeout, not after the script ($MS ms)"
pgrep -f 'sleep 9.87' >/dev/null
[ $? -ne 0 ]; ok "... and its children are killed"
grep -q 'authenticator .*: no answer within 1000 ms' "$PH_LOG"; ok "... and the reason is logged"
still_serving "a timeout"

mpost "$U" 6 server/discover '{}' -H 'Authorization: Bearer crash'
is "$STATUS" 500 "an authenticator exiting 1: 500"
mpost "$U" 7 server/discover '{}' -H 'Authorization: Bearer chatty'
is "$STATUS" 500 "an authenticator answering no JSON: 500"
grep -q 'the answer is not a JSON object' "$PH_LOG"; ok "... logged"
grep -q 'chatty' "$PH_LOG"
[ $? -ne 0 ]; ok "... without its output (which may echo the credentials)"
still_serving "a broken authenticator"
# a principal cut at a NUL would be alice, with her allow-list
mpost "$U" 8 server/discover '{}' -H 'Authorization: Bearer nul-alice'
is "$STATUS" 500 "a principal holding U+0000 is not taken for the name before it: 500"
grep -q 'allow without a usable "principal"' "$PH_LOG"; ok "... logged as an unusable principal"
mpost "$U" 9 server/discover '{}' -H 'Authorization: Bearer nul-allow'
is "$STATUS" 500 "a decision of allow, U+0000 and more is not allow: 500"
still_serving "an answer cut by a NUL"

# a bare name is looked up in the PATH the authenticator gets, as a
# handler's exec is (sh, in /usr/bin or /bin)
cat >"$T_DIR/path.yaml" <<'YAML'
server: { name: exec-path, version: "1.0" }
auth:
  mode: exec
  command: [sh, -c, "cat >/dev/null; echo '{\"decision\":\"allow\",\"principal\":\"from-path\"}'"]
YAML
"$PHANTOM" -c "$T_DIR/path.yaml" -t >"$T_DIR/path-t.out" 2>&1
ok "-t accepts an authenticator given by a bare name found in PATH"
sed 's|command: \[.*|command: [authenticator]|' "$T_DIR/phantom.yaml" >"$T_DIR/bare.yaml"
"$PHANTOM" -c "$T_DIR/bare.yaml" -t >"$T_DIR/bare-t.out" 2>&1
like "$(cat "$T_DIR/bare-t.out")" "auth.command: cannot run 'authenticator': not found in PATH \(/usr/local/bin:/usr/bin:/bin\); for the one beside this file write ./authenticator" \
	"a bare name that is not in PATH but beside the file: -t says to write ./NAME"
CGI_ARGS="-c $T_DIR/path.yaml" cgi_post "$(req 1 server/discover)" $(mhdr server/discover)
is "$STATUS" 200 "... which runs: 200"
like "$(cat "$T_DIR"/cgi.*.err)" "principal=from-path" "... and names the principal"

# stdio: no headers, no authenticator; the principal is auth.stdio_principal
rm -f "$T_DIR/last-input.json"
printf '%s\n' "$(req 1 server/discover)" | "$PHANTOM" -c "$T_DIR/phantom.yaml" --stdio \
	>"$T_DIR/stdio.out" 2>"$T_DIR/stdio.err"
is "$(jq -r .result.resultType <"$T_DIR/stdio.out")" complete "stdio: served without the authenticator"
like "$(cat "$T_DIR/stdio.err")" 'principal=ops' "stdio: principal from auth.stdio_principal"
[ ! -e "$T_DIR/last-input.json" ]; ok "stdio: the authenticator did not run"
done_testing
