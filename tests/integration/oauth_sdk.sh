#!/bin/bash
# auth.mode oauth with a real authorization server (oidc-provider, started by
# tests/oauth-lib.sh) and the official SDK clients running their whole OAuth
# flow headlessly through the shipped nginx: 401 -> Phantom's RFC 9728
# metadata -> the AS metadata -> registration -> PKCE -> token with aud =
# Phantom's URL -> tools/list and tools/call; then step-up (a tool with
# auth_scopes mcp:admin: 403 insufficient_scope, a second authorization, the
# call succeeds). SDK v2 (2026-07-28) and v1 (a 2025-11-25 session), with
# access tokens signed RS256, ES256 and EdDSA (the AS restarted with each:
# Phantom learns the new key from the unknown kid).
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/oauth-lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
node_setup || skip_all "npm packages not installed (run scripts/test.sh)"
why=$(oauth_supported) || skip_all "no auth.mode oauth in this build: $why"

oauth_front || { echo "not ok 1 - nginx starts"; exit 1; }
as_start RS256 "$OAUTH_RESOURCE" || { echo "not ok 1 - the authorization server starts"; exit 1; }
oauth_yaml "$T_DIR/phantom.yaml" "min_refresh_s: 1"
oauth_phantom "$T_DIR/phantom.yaml" || { echo "not ok 1 - phantom starts"; exit 1; }

for alg in RS256 ES256 EdDSA; do
	if [ "$alg" != RS256 ]; then
		as_stop
		as_start "$alg" "$OAUTH_RESOURCE" || { echo "not ok - the authorization server restarts ($alg)"; exit 1; }
	fi
	for sdk in v2:2026-07-28 "v1:2025-11-25 session"; do
		node_client "sdk-oauth-${sdk%%:*}.mjs" --url "$OAUTH_RESOURCE" --alg "$alg" --era "${sdk#*:}" \
			--tool echo --args '{"text":"hello '"$alg"'"}' --expect "hello $alg" \
			--step-up admin_echo --step-up-scope mcp:admin --step-up-args '{"text":"admin"}' \
			--step-up-expect admin --token-out "$T_DIR/token-${sdk%%:*}-$alg"
	done
done

grep -q 'method=tools/call target=echo status=200 .*principal=alice' "$PH_LOG"
ok "the log names the principal (the token's sub)"
grep -q 'method=tools/call target=[^ ]* status=403 .*principal=alice' "$PH_LOG"; ok "the log shows the 403 before step-up"
leaked=
for f in "$T_DIR"/token-*; do
	t=$(cat "$f")
	[ -n "$t" ] || continue
	grep -rqF -- "$t" "$PH_LOG" "$NGINX_DIR" && leaked="$leaked $f"
	grep -rqF -- "$(cut -d. -f3 <<<"$t")" "$PH_LOG" && leaked="$leaked $f(signature)"
done
is "$leaked" "" "no access token in Phantom's or nginx's logs"
done_testing
