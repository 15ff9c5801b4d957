#!/bin/bash
# tests/bench/auth_bench.sh: what wrong bearer tokens cost a valid user (not
# part of make check).
#
#   cd build && bash ../tests/bench/auth_bench.sh      # or: make bench-auth
#
# Phantom (AUTH_WORKERS workers, default 4) behind nginx in auth.mode bearer
# with one argon2 token (the valid user, verified once per worker before the
# measurement, as a returning client is) and one sha256 token. The valid
# user sends server/discover over one wrk connection for AUTH_SECONDS
# (default 5), alone and then beside AUTH_ATTACKERS (default 16) wrk
# connections sending a wrong token. Two configurations, each measured in
# the same run:
#   guarded    the defaults: auth.max_concurrent_verify 2, auth.fail_limit 10
#              per 60 s
#   unguarded  auth.max_concurrent_verify 64, auth.fail_limit 0: every wrong
#              token costs an argon2 check (the behaviour before the limits)
# Prints the valid user's median and p99 with and without attackers, the
# ratio loaded/idle for each configuration, and what the attackers got.
# Then, unless AUTH_OAUTH=0, tests/bench/oauth_bench.sh: auth.mode oauth
# against no auth and against a python3-jwt exec authenticator, a
# first-time verification per algorithm, and a flood of unknown kids.
if [ -z "${top_builddir:-}" ]; then top_builddir=$PWD; fi
. "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/tests/lib.sh"
set +u
SECS=${AUTH_SECONDS:-5}
ATT=${AUTH_ATTACKERS:-16}
W=${AUTH_WORKERS:-4}
PHANTOM=${PHANTOM:-$top_builddir/phantom-fcgi}
LUA=$top_srcdir/tests/bench/mcp.lua
for t in wrk nginx curl jq; do
	command -v "$t" >/dev/null || { echo "bench: $t is needed" >&2; exit 2; }
done

TOK=$(newtok)
A_TOK=$(token_argon2 "$TOK")
H_OTHER=$(token_sha256 "$(newtok)")

# wrk_run CONNS TOKEN: one wrk over CONNS connections; prints its RESULT line
# "rps p50_ms p99_ms non2xx errors"
wrk_run() {
	MCP_METHOD=server/discover MCP_NAME=x wrk -t1 -c"$1" -d"${SECS}s" --timeout 10s -s "$LUA" \
		-H "Authorization: Bearer $2" "$U" 2>&1 | sed -n 's/^RESULT //p'
}

# measure LABEL EXTRA-AUTH-YAML: starts Phantom and nginx with the extra
# auth keys, warms the valid user up, measures; stores results in R_*
measure() {
	local label=$1 extra=$2 conf=$T_DIR/$1.yaml att
	cat >"$conf" <<YAML
server: { name: auth-bench, version: "1.0" }
workers: $W
auth:
  mode: bearer
  tokens:
    - { principal: user, argon2: "$A_TOK" }
    - { principal: other, sha256: $H_OTHER }
$extra
YAML
	phantom_listen "$conf" || { echo "bench: phantom did not start" >&2; exit 1; }
	nginx_start "$PH_ADDR" || { echo "bench: nginx did not start" >&2; exit 1; }
	U=$NGINX_URL
	# every worker verifies the user once: concurrent requests reach them
	# all (those past max_concurrent_verify get 429 and come again)
	wrk_run 2 "$TOK" >/dev/null
	wrk_run "$ATT" "$TOK" >/dev/null
	R_IDLE=$(wrk_run 1 "$TOK")
	wrk_run "$ATT" "wrong-$(newtok)" >"$T_DIR/att.$label" &
	att=$!
	sleep 1
	R_LOAD=$(wrk_run 1 "$TOK")
	wait "$att"
	R_ATT=$(cat "$T_DIR/att.$label")
	eval "IDLE_$label=(\$R_IDLE) LOAD_$label=(\$R_LOAD) ATT_$label=(\$R_ATT)"
	kill "$PH_PID"; wait "$PH_PID" 2>/dev/null
	nginx -c "$NGINX_DIR/nginx.conf" -e "$NGINX_DIR/error.log" -s stop; sleep 0.3
}

measure guarded ""
measure unguarded "  max_concurrent_verify: 64
  fail_limit: 0"

report() {
	local l=$1 idle load att
	eval "idle=(\"\${IDLE_$l[@]}\") load=(\"\${LOAD_$l[@]}\") att=(\"\${ATT_$l[@]}\")"
	printf '%-10s valid user p50 %7s ms (p99 %7s) alone, %8s ms (p99 %8s, non-2xx %s) beside %s wrong-token clients: ratio %s\n' \
		"$l" "${idle[1]}" "${idle[2]}" "${load[1]}" "${load[2]}" "${load[3]}" "$ATT" \
		"$(awk -v a="${load[1]}" -v b="${idle[1]}" 'BEGIN { printf "%.1f", (b > 0 ? a / b : 0) }')"
	printf '%-10s   the wrong-token clients: %s req/s, p50 %s ms, non-2xx %s\n' "$l" "${att[0]}" "${att[1]}" "${att[3]}"
}
echo "auth bench: $W workers, $SECS s per measurement, $ATT attackers, $(nproc) CPUs"
report guarded
report unguarded
echo "unguarded/guarded valid-user p50 under attack: $(awk -v a="${LOAD_unguarded[1]}" -v b="${LOAD_guarded[1]}" 'BEGIN { printf "%.1f", (b > 0 ? a / b : 0) }')"
if [ "${AUTH_OAUTH:-1}" != 0 ]; then
	top_srcdir=$top_srcdir top_builddir=$top_builddir PHANTOM=$PHANTOM bash "$top_srcdir/tests/bench/oauth_bench.sh"
fi
