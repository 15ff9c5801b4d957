#!/bin/bash
# Wrong bearer tokens behind the real nginx: a client address past
# auth.fail_limit gets 429 with Retry-After and no argon2 check, while valid
# tokens (sha256, argon2 from another address, argon2 already verified) are
# still served; auth.max_concurrent_verify refuses a verification beyond
# the limit at once with 429 and Retry-After: 1. The second and third
# addresses are other loopback sources (curl --interface 127.0.0.2).
. "${top_srcdir:-.}/tests/lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
curl -s -o /dev/null --interface 127.0.0.2 http://127.0.0.1:1/ 2>/dev/null
[ $? -eq 45 ] && skip_all "cannot send from 127.0.0.2"

bearer_token T_ALICE H_ALICE
T_BOB=$(newtok); A_BOB=$(token_argon2 "$T_BOB")
# eight more argon2 entries: a wrong token then takes eight checks, long
# enough for a second one to arrive while it runs
{
	printf -- '- { principal: bob, argon2: "%s" }\n' "$A_BOB"
	for i in 1 2 3 4 5 6 7 8; do
		printf -- '- { principal: p%s, argon2: "%s" }\n' "$i" "$(token_argon2 "$(newtok)")"
	done
} >"$T_DIR/tokens.yaml"
cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: auth-limits, version: "1.0" }
workers: 4
auth:
  mode: bearer
  tokens:
    - { principal: alice, sha256: $H_ALICE }
  tokens_file: tokens.yaml
  fail_limit: 3
  fail_window_s: 60
  max_concurrent_verify: 1
YAML
"$PHANTOM" -c "$T_DIR/phantom.yaml" -t 2>"$T_DIR/t.out"
ok "-t accepts fail_limit, fail_window_s and max_concurrent_verify"
phantom_listen "$T_DIR/phantom.yaml" || { echo "not ok - phantom starts"; exit 1; }
nginx_start "$PH_ADDR" || { echo "not ok - nginx starts"; exit 1; }
U=$NGINX_URL
FROM2=(--interface 127.0.0.2)
FROM3=(--interface 127.0.0.3)

# ---- auth.fail_limit
for i in 1 2 3; do
	mpost "$U" "$i" server/discover '{}' -H "Authorization: Bearer wrong$i"
	is "$STATUS" 401 "wrong token $i of fail_limit 3: 401"
done
mpost "$U" 4 server/discover '{}' -H "Authorization: Bearer wrong4"
is "$STATUS" 429 "a fourth wrong token from the address: 429"
like "$(header Retry-After)" '^[0-9]+$' "429 has Retry-After in seconds"
[ "$(header Retry-After)" -ge 1 ] && [ "$(header Retry-After)" -le 60 ]
ok "Retry-After is within fail_window_s"
is "$(jqr .error.code)" -32000 "429: JSON-RPC error -32000"
like "$(jqr .error.message)" 'auth\.fail_limit \(3 invalid tokens per 60 s' "429 names auth.fail_limit"
mpost "$U" 5 server/discover '{}' -H "Authorization: Bearer $T_BOB"
is "$STATUS" 429 "an argon2 token not yet verified from that address: 429 too (not hashed)"
mpost "$U" 6 server/discover '{}' -H "Authorization: Bearer $T_ALICE"
is "$STATUS/$(jqr .result.resultType)" 200/complete "a sha256 token from that address is still served"
mpost "$U" 7 server/discover '{}' -H "Authorization: Bearer $T_BOB" "${FROM2[@]}"
is "$STATUS/$(jqr .result.resultType)" 200/complete "the argon2 user from another address authenticates"
mpost "$U" 8 server/discover '{}' -H "Authorization: Bearer wrong8" "${FROM2[@]}"
is "$STATUS" 401 "another address has its own allowance: 401, not 429"
mpost "$U" 9 server/discover '{}'
is "$STATUS" 401 "no token at all is a 401, never counted"
! grep -q "wrong[0-9]" "$PH_LOG"
ok "no token reaches the log"

# ---- auth.max_concurrent_verify: one verification at a time
( mpost "$U" 10 server/discover '{}' -H "Authorization: Bearer slow" "${FROM3[@]}"
  echo "$STATUS" >"$T_DIR/slow.status" ) &
slow=$!
sleep 0.3
mpost "$U" 11 server/discover '{}' -H "Authorization: Bearer other" "${FROM2[@]}"
is "$STATUS" 429 "a second verification while one runs: 429 at once"
is "$(header Retry-After)" 1 "... with Retry-After: 1"
like "$(jqr .error.message)" 'auth\.max_concurrent_verify' "... naming auth.max_concurrent_verify"
wait "$slow"
is "$(cat "$T_DIR/slow.status")" 401 "the verification that ran answers 401"
mpost "$U" 12 server/discover '{}' -H "Authorization: Bearer $T_BOB" "${FROM3[@]}"
is "$STATUS/$(jqr .result.resultType)" 200/complete "after it, a valid argon2 token authenticates"
done_testing
