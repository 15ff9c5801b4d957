#!/bin/bash
# tests/bench/oauth_bench.sh: what auth.mode oauth costs (not part of make
# check; auth_bench.sh, or make bench-auth, runs it after its own figures).
#
#   cd build && bash ../tests/bench/oauth_bench.sh      # or: make bench-auth
#
# Phantom (OAUTH_BENCH_WORKERS workers, default 4) behind the shipped nginx,
# the example module's echo called over OAUTH_CONNS (default 16) wrk
# connections for OAUTH_SECONDS (default 5) each, an oidc-provider
# authorization server (tests/oauth/as.mjs) issuing the tokens. In one run:
#   none     no auth at all
#   oauth    auth.mode oauth, one valid RS256 JWT (verified once per worker,
#            then remembered)                       oauth/none: target >= 0.9
#            paired: both up at once, each behind an nginx of its own,
#            OAUTH_PAIRS (default 12) groups of none, oauth, oauth, none
#            slices of OAUTH_PAIR_SECONDS (default 2) with wrk -t2: the
#            throughput ratio and the CPU a request (Phantom and nginx)
#   exec     the same token checked by tests/oauth/jwt_auth.py (python3-jwt)
#            as an auth.mode exec authenticator     oauth/exec
#   verify   per algorithm (RS256, ES256, EdDSA): a token of the
#            authorization server decoded and checked against its key set
#            OAUTH_VERIFY_N (default 2000) times by tests/jwt_verify (the
#            worker's code, without the HTTP request): the cost of a
#            first-time verification, in microseconds
#   flood    OAUTH_FLOOD (default 1000) tokens naming random kids, round
#            and round for OAUTH_SECONDS, with auth.oauth.min_refresh_s
#            OAUTH_MIN_REFRESH (default 2): the key-set fetches the
#            authorization server saw, against the bound (one per interval;
#            the flood's tokens get 401, or 503 while a fetch runs). An
#            earlier run counted 4 against a bound of 3: the last attempt
#            was stamped in whole seconds, so with min_refresh_s 2 two
#            fetches could be 1.1 s apart; the stamp is in ms now.
if [ -z "${top_builddir:-}" ]; then top_builddir=$PWD; fi
. "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/tests/lib.sh"
. "$top_srcdir/tests/oauth-lib.sh"
. "$top_srcdir/tests/bench/bench_lib.sh"
set +u
SECS=${OAUTH_SECONDS:-5}
CONNS=${OAUTH_CONNS:-16}
FLOOD=${OAUTH_FLOOD:-1000}
MIN_REFRESH=${OAUTH_MIN_REFRESH:-2}
VERIFY_N=${OAUTH_VERIFY_N:-2000}
JWT_VERIFY=$top_builddir/tests/jwt_verify
export OAUTH_WORKERS=${OAUTH_BENCH_WORKERS:-4}
PHANTOM=${PHANTOM:-$top_builddir/phantom-fcgi}
LUA=$top_srcdir/tests/bench/mcp.lua
die() { echo "bench: $*" >&2; exit 2; }
for t in wrk nginx curl jq; do command -v "$t" >/dev/null || die "$t is needed"; done
why=$(oauth_supported) || { echo "oauth bench: skipped, no auth.mode oauth in this build: $why"; exit 0; }
[ -x "$JWT_VERIFY" ] || die "$JWT_VERIFY is needed (make tests/jwt_verify)"
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import jwt' 2>/dev/null || die "python3-jwt is needed"
node_setup || die "the npm packages are needed (scripts/test.sh installs them)"

# tool CONNS [TOKEN]: wrk calling echo over CONNS connections for SECS (with
# MCP_TOKENS in the environment: a token file instead); prints "rps p50 p99
# non2xx errors requests"
tool() {
	local h=()
	[ -n "${2:-}" ] && h=(-H "Authorization: Bearer $2")
	MCP_METHOD=tools/call MCP_NAME=echo MCP_ARGS='{"text":"hi"}' wrk -t1 -c"$1" -d"${SECS}s" --timeout 10s \
		-s "$LUA" "${h[@]}" "$OAUTH_RESOURCE" 2>&1 | sed -n 's/^RESULT //p'
}
# restart CONF: Phantom with CONF on the port nginx sends to
restart() {
	if [ -n "$PH_PID" ]; then kill "$PH_PID"; wait "$PH_PID" 2>/dev/null; fi
	oauth_phantom "$1" || die "phantom did not start with $1"
}
# ratio A B: A/B with two decimals
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
# conf NAME AUTH-YAML...: the oauth configuration with its auth section
# replaced, and without the tool that needs a scope (auth_scopes go with
# auth.mode oauth only)
conf() {
	local f=$T_DIR/$1.yaml; shift
	sed -e '/^auth:/,$d' -e '/auth_scopes:/d' "$T_DIR/oauth.yaml" >"$f"
	printf '%s\n' "$@" >>"$f"
	echo "$f"
}

oauth_front || die "nginx did not start"
AS_TTL=3600 as_start RS256 "$OAUTH_RESOURCE" || die "the authorization server did not start"
PH_PID=
oauth_yaml "$T_DIR/oauth.yaml" "min_refresh_s: $MIN_REFRESH"
TOK=$(as_token mcp:read)
[ -n "$TOK" ] || die "no token from the authorization server"
curl -s "$AS_URL/jwks" >"$T_DIR/jwks.json"

# oauth/none, paired: both sides up at once, each a Phantom of
# OAUTH_BENCH_WORKERS workers (max_requests 0: the CPU counted is that of
# live processes) behind an nginx of its own, none on the configuration
# without its auth section, oauth on the token; OAUTH_PAIRS groups of
# slices of none, oauth, oauth, none of OAUTH_PAIR_SECONDS each, so that a
# drift of the machine over a group cancels to first order (one slice of
# each, unpaired and after a restart, spread from 0.44 to 1.10 on this
# hypervisor's steal). CPU a request: Phantom's and nginx's, from
# schedstat (bench_lib.sh), the figure the machine's load moves least.
GROUPS_N=${OAUTH_PAIRS:-12} PAIR_SECS=${OAUTH_PAIR_SECONDS:-2} SLICE_CPU=cpu_ns
sed -i 's/^workers: .*/&\nmax_requests: 0/' "$T_DIR/oauth.yaml"
NONE_CONF=$(conf none)
restart "$T_DIR/oauth.yaml"
JWT_PIDS="$PH_PID $(cat "$NGINX_DIR/nginx.pid")" JWT_URL=$OAUTH_RESOURCE
NONE_PORT=$(free_port) || die "no free port"
"$PHANTOM" -c "$NONE_CONF" --listen "127.0.0.1:$NONE_PORT" 2>>"$T_DIR/phantom-none.log" &
NONE_PID=$!
t_started phantom "$NONE_PID" "$T_DIR/phantom-none.log" port_open "$NONE_PORT"
nginx_start "127.0.0.1:$NONE_PORT" || die "the second nginx did not start"
NONE_PIDS="$NONE_PID $(cat "$NGINX_DIR/nginx.pid")" NONE_URL=$NGINX_URL
SECS=1 tool "$CONNS" "$TOK" >/dev/null
GROUP_A=none GROUP_B=oauth GROUP_B_H="Authorization: Bearer $TOK" groups oauth/none "$NONE_URL" "$NONE_PIDS" "$JWT_URL" "$JWT_PIDS" \
	>"$T_DIR/paired.txt"
kill "$NONE_PID"
wait "$NONE_PID" 2>/dev/null
restart "$(conf exec auth: '  mode: exec' "  command: [$top_srcdir/tests/oauth/jwt_auth.py, --jwks, $T_DIR/jwks.json, --issuer, \"$AS_URL\", --audience, \"$OAUTH_RESOURCE\"]")"
R_EXEC=($(tool "$CONNS" "$TOK"))

# ---- a first-time verification, per algorithm (tests/bench/jwt_verify.c)
declare -A VERIFY
for alg in RS256 ES256 EdDSA; do
	if [ "$alg" != RS256 ]; then
		as_stop
		AS_TTL=3600 as_start "$alg" "$OAUTH_RESOURCE" || die "the authorization server did not restart"
	fi
	t=$(as_token mcp:read)
	printf '%s\n' "$t" >"$T_DIR/token.$alg"
	curl -s "$AS_URL/jwks" >"$T_DIR/jwks.$alg.json"
	VERIFY[$alg]=$("$JWT_VERIFY" "$T_DIR/jwks.$alg.json" "$T_DIR/token.$alg" "$VERIFY_N" 2>&1)
done

# ---- random kids
restart "$T_DIR/oauth.yaml"
tool 1 "$t" >/dev/null
jwts_with_kids "$t" flood "$FLOOD" >"$T_DIR/flood.tokens"
N0=$(grep -c 'GET /jwks ' "$AS_LOG")
R_FLOOD=($(MCP_TOKENS=$T_DIR/flood.tokens tool "$CONNS"))
FETCHES=$(( $(grep -c 'GET /jwks ' "$AS_LOG") - N0 ))

echo "oauth bench: $OAUTH_WORKERS workers, $CONNS connections, $SECS s per measurement, $(nproc) CPUs"
R_NONE=$(awk -v t="$GROUPS_TA" -v n="$GROUPS_N" 'BEGIN { printf "%.1f", t / (2 * n) }')
R_JWT=$(awk -v t="$GROUPS_TB" -v n="$GROUPS_N" 'BEGIN { printf "%.1f", t / (2 * n) }')
printf '  none   %8s req/s  (mean of the paired slices)\n' "$R_NONE"
printf '  oauth  %8s req/s  (mean of the paired slices)\n' "$R_JWT"
printf '  exec   %8s req/s  p50 %6s ms  p99 %6s ms  non-2xx %s\n' "${R_EXEC[0]}" "${R_EXEC[1]}" "${R_EXEC[2]}" "${R_EXEC[3]}"
echo "  oauth/none, paired: $GROUPS_N groups of none oauth oauth none, ${PAIR_SECS}s a slice (target >= 0.9):"
sed -n 's/^oauth\/none: /    /p' "$T_DIR/paired.txt"
sed -n 's/^  oauth\/none /      /p' "$T_DIR/paired.txt"
echo "  oauth/exec (python3-jwt): $(ratio "$R_JWT" "${R_EXEC[0]}")"
for alg in RS256 ES256 EdDSA; do
	read -r a us n <<<"${VERIFY[$alg]}"
	echo "  first-time verification $alg: $us us (decode and signature, mean of $n; $a)"
done
echo "  random kids: $FLOOD tokens, ${R_FLOOD[5]} requests in $SECS s (non-2xx ${R_FLOOD[3]}):" \
	"$FETCHES key-set fetches, bound $(( SECS / MIN_REFRESH + 1 )) (min_refresh_s $MIN_REFRESH)"
