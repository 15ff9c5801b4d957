#!/bin/bash
# auth.mode bearer behind the real nginx with the shipped conf/nginx.conf:
# the 401 and 403 bodies and headers exactly, sha256 and argon2 tokens,
# tokens_file, revocation by SIGHUP, authentication before the routing
# headers, legacy requests and notifications, the log line, and -t.
. "${top_srcdir:-.}/tests/lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"

bearer_token T_ALICE H_ALICE; bearer_token T_DAVE H_DAVE
T_BOB=$(newtok); A_BOB=$(token_argon2 "$T_BOB")
is "$H_ALICE" "$(printf '%s' "$T_ALICE" | sha256sum | cut -d' ' -f1)" "--hash-token=sha256 is the hex SHA-256"
like "$A_BOB" '^\$argon2id\$v=19\$m=65536,t=2,p=1\$' "--hash-token prints an argon2id string"

write_tokens() { # the tokens file: bob (argon2) unless revoked, dave (sha256)
	{
		[ "${1:-}" = revoke-bob ] || printf -- '- principal: bob\n  argon2: "%s"\n' "$A_BOB"
		printf -- '- { principal: dave, sha256: %s }\n' "$H_DAVE"
	} >"$T_DIR/tokens.yaml"
}
write_tokens
RM=https://mcp.example.com/.well-known/oauth-protected-resource/mcp
cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: auth-test, version: "1.0", scope: public }
workers: 2
auth:
  mode: bearer
  realm: phantom-test
  resource_metadata: $RM
  scope: "mcp:read mcp:write"
  tokens:
    - { principal: alice, sha256: $H_ALICE }
  tokens_file: tokens.yaml
  default_access: none
  allow:
    alice: { tools: [search] }
    bob:
YAML
"$PHANTOM" -c "$T_DIR/phantom.yaml" -t 2>"$T_DIR/t.out"
ok "-t accepts the configuration"
phantom_listen "$T_DIR/phantom.yaml" || { echo "not ok - phantom starts"; exit 1; }
nginx_start "$PH_ADDR" || { echo "not ok - nginx starts"; exit 1; }
U=$NGINX_URL
AUTH_A=(-H "Authorization: Bearer $T_ALICE")
CHALLENGE="Bearer realm=\"phantom-test\", resource_metadata=\"$RM\", scope=\"mcp:read mcp:write\""
CHALLENGE_INVALID="Bearer realm=\"phantom-test\", error=\"invalid_token\", resource_metadata=\"$RM\", scope=\"mcp:read mcp:write\""

still_serving() {
	mpost "$U" 99 server/discover '{}' "${AUTH_A[@]}"
	is "$STATUS" 200 "next request after $1 still served"
}

# ---- 401: missing, wrong, malformed credentials
mpost "$U" 1 server/discover '{}'
is "$STATUS" 401 "no token: 401"
is "$(header WWW-Authenticate)" "$CHALLENGE" "no token: WWW-Authenticate exactly"
is "$BODY" '{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"Unauthorized"}}' "no token: body exactly"
is "$(header Content-Type)" application/json "no token: JSON body"
still_serving "401 without a token"

mpost "$U" 2 server/discover '{}' -H "Authorization: Bearer ${T_ALICE}x"
is "$STATUS" 401 "wrong token: 401"
is "$(header WWW-Authenticate)" "$CHALLENGE_INVALID" "wrong token: error=\"invalid_token\""
is "$BODY" '{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"Unauthorized: invalid token"}}' \
	"wrong token: body exactly"
still_serving "401 for a wrong token"

mpost "$U" 3 server/discover '{}' -u "alice:$T_ALICE"
is "$STATUS" 401 "Basic credentials: 401"
is "$(header WWW-Authenticate)" "$CHALLENGE" "Basic credentials: challenge without error"
is "$(jqr .error.message)" "Unauthorized: a Bearer token is required" "Basic credentials: message"

mpost "$U" 4 server/discover '{}' -H "Authorization: Bearer a\"b"
is "$STATUS" 401 "malformed token: 401"
is "$(header WWW-Authenticate)" "$CHALLENGE_INVALID" "malformed token: invalid_token"
still_serving "401 for a malformed token"

# ---- success: sha256 and argon2
mpost "$U" 5 server/discover '{}' "${AUTH_A[@]}"
is "$STATUS" 200 "sha256 token: 200"
is "$(jqr .result.resultType)" complete "sha256 token: a result"
is "$(jqr .result.cacheScope)" private "allow-lists configured: cacheScope private although server.scope is public"
is "$(header WWW-Authenticate)" "" "success: no challenge"

mpost "$U" 6 server/discover '{}' -H "Authorization: Bearer $T_BOB"
is "$STATUS" 200 "argon2 token from tokens_file: 200"
mpost "$U" 7 server/discover '{}' -H "Authorization: bearer $T_BOB"
is "$STATUS" 200 "argon2 token again, scheme in lower case: 200"

# ---- 403: a known principal without access
mpost "$U" 8 server/discover '{}' -H "Authorization: Bearer $T_DAVE"
is "$STATUS" 403 "principal without an allow entry (default_access none): 403"
is "$BODY" '{"jsonrpc":"2.0","id":8,"error":{"code":-32000,"message":"Forbidden: no access for this principal"}}' \
	"403: body exactly"
is "$(header WWW-Authenticate)" "" "403: no challenge"
still_serving "403"

# ---- order: authentication comes before the routing-header checks
post "$U" "$(req 9 server/discover)" -H "MCP-Protocol-Version: $MODERN" -H "Mcp-Method: tools/list"
is "$STATUS" 401 "no token and a wrong Mcp-Method header: 401, not 400"
post "$U" "$(req 10 server/discover)" -H "MCP-Protocol-Version: $MODERN" -H "Mcp-Method: tools/list" "${AUTH_A[@]}"
is "$STATUS" 400 "with a token, the wrong Mcp-Method header: 400"
is "$(jqr .error.code)" -32020 "with a token, the wrong Mcp-Method header: -32020"

# ---- legacy and notifications
INIT='{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
post "$U" "$INIT"
is "$STATUS" 401 "legacy initialize without a token: 401"
is "$BODY" '{"jsonrpc":"2.0","id":"i","error":{"code":-32000,"message":"Unauthorized"}}' "legacy 401: id echoed"
post "$U" "$INIT" "${AUTH_A[@]}"
is "$(jqr .result.protocolVersion)" 2025-11-25 "legacy initialize with a token"
post "$U" '{"jsonrpc":"2.0","method":"notifications/initialized"}'
is "$STATUS" 401 "notification without a token: 401"
post "$U" '{"jsonrpc":"2.0","method":"notifications/initialized"}' "${AUTH_A[@]}"
is "$STATUS" 202 "notification with a token: 202"

# ---- revocation: bob removed from tokens_file, then SIGHUP
write_tokens revoke-bob
kill -HUP "$PH_PID"
for _ in $(seq 1 100); do grep -q 'configuration reloaded' "$PH_LOG" && break; sleep 0.05; done
like "$(cat "$PH_LOG")" 'configuration reloaded' "SIGHUP reloads"
for _ in $(seq 1 50); do # old workers finish draining
	mpost "$U" 11 server/discover '{}' -H "Authorization: Bearer $T_BOB"
	[ "$STATUS" = 401 ] && break; sleep 0.1
done
is "$STATUS" 401 "revoked token: 401"
is "$(header WWW-Authenticate)" "$CHALLENGE_INVALID" "revoked token: invalid_token"
mpost "$U" 12 server/discover '{}' "${AUTH_A[@]}"
is "$STATUS" 200 "after the reload alice still gets in"
mpost "$U" 13 server/discover '{}' -H "Authorization: Bearer $T_DAVE"
is "$STATUS" 403 "after the reload dave is still known (403)"

# ---- the log line: principal, never the token
sleep 0.2
like "$(grep 'method=server/discover' "$PH_LOG" | grep 'status=200')" 'principal=alice' "log: principal=alice"
like "$(grep 'status=200' "$PH_LOG")" 'principal=bob' "log: principal=bob"
like "$(grep 'status=403' "$PH_LOG")" 'principal=dave' "log: the refused principal is logged"
grep -qF -e "$T_ALICE" -e "$T_BOB" -e "$T_DAVE" "$PH_LOG"
[ $? -eq 1 ]; ok "log: no token appears in the log"

# ---- -t names the tokens file and line
printf -- '- { principal: x, sha256: 1234 }\n' >"$T_DIR/tokens.yaml"
"$PHANTOM" -c "$T_DIR/phantom.yaml" -t 2>"$T_DIR/t.out"
is "$?" 1 "-t: a bad tokens file fails the check"
like "$(cat "$T_DIR/t.out")" "tokens.yaml:1: auth.tokens_file\[0\].sha256: expected 64 hex digits" \
	"-t: FILE:LINE of the tokens file"
kill -HUP "$PH_PID"
sleep 0.5
like "$(cat "$PH_LOG")" 'reload failed' "SIGHUP with a bad tokens file keeps the running configuration"
mpost "$U" 14 server/discover '{}' "${AUTH_A[@]}"
is "$STATUS" 200 "still serving after a failed reload"
done_testing
