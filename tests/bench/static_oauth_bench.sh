#!/bin/bash
# tests/bench/static_oauth_bench.sh: an OAuth-protected tools/call from the
# static build against the dynamic one (make bench runs it after bench.sh;
# not part of make check).
#
#   cd build && make static && bash ../tests/bench/static_oauth_bench.sh
#
# Both builds up at once, each a Phantom of SOAUTH_WORKERS (default 2)
# workers behind an nginx of its own, with the same configuration:
# auth.mode oauth for an oidc-provider authorization server
# (tests/oauth/as.mjs), the keys fetched by each build's own client
# (libcurl, or OpenSSL's with c-ares), and the tool echo as the persistent
# Python program of bench.sh (the static build loads no module). One valid
# RS256 token (verified once per worker, then remembered). SOAUTH_PAIRS
# (default 12) groups of dynamic, static, static, dynamic slices of
# SOAUTH_PAIR_SECONDS (default 2) with wrk -t2 -cCONNS (default 16): the
# throughput ratio static/dynamic (target >= 0.95) and the CPU a request.
if [ -z "${top_builddir:-}" ]; then top_builddir=$PWD; fi
. "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/tests/lib.sh"
. "$top_srcdir/tests/oauth-lib.sh"
. "$top_srcdir/tests/bench/bench_lib.sh"
set +u
PHANTOM=${PHANTOM:-$top_builddir/phantom-fcgi}
STATIC=${STATIC_PHANTOM:-$top_builddir/static/phantom-fcgi}
CONNS=${SOAUTH_CONNS:-16}
LUA=$top_srcdir/tests/bench/mcp.lua
skip() { echo "static oauth bench: skipped, $*"; exit 0; }
for t in wrk nginx spawn-fcgi curl jq; do command -v "$t" >/dev/null || skip "$t is needed"; done
[ -x "$STATIC" ] || skip "no static build at $STATIC (make static)"
"$STATIC" -V | grep -q 'OAuth: yes' || skip "the static build has no OAuth (libssl-dev, libc-ares-dev)"
why=$(oauth_supported) || skip "no auth.mode oauth in the dynamic build: $why"
node_setup || skip "the npm packages are needed (scripts/test.sh installs them)"

RES=https://mcp.example.com/mcp # the aud both check; each is reached at its own nginx
AS_TTL=3600 as_start RS256 "$RES" || { echo "static oauth bench: the authorization server did not start" >&2; exit 2; }
TOK=$(as_token mcp:read "$RES")
[ -n "$TOK" ] || { echo "static oauth bench: no token" >&2; exit 2; }
for side in dynamic static; do
	mkdir -p "$T_DIR/$side"
	cat >"$T_DIR/$side.yaml" <<YAML
server: { name: static-oauth-bench, version: "1.0" }
workers: ${SOAUTH_WORKERS:-2}
max_requests: 0
tools:
  - { name: echo, input: {text: string}, exec: [$top_srcdir/tests/bench/echo.py], persistent: true }
auth:
  mode: oauth
  metadata: { document: { resource: "$RES" } }
  oauth: { issuer: "$AS_URL", required_scopes: ["mcp:read"], cache_dir: $T_DIR/$side/cache }
YAML
done
phantom_nginx "$PHANTOM" "$T_DIR/dynamic.yaml" tcp || exit 2
D_PIDS="$PN_PID $PN_NGINX" D_URL=$PN_URL
phantom_nginx "$STATIC" "$T_DIR/static.yaml" tcp || exit 2
S_PIDS="$PN_PID $PN_NGINX" S_URL=$PN_URL
# warm: each worker fetches nothing more, has its Python and the token remembered
for u in "$D_URL" "$S_URL"; do
	PAIR_SECS=1 SLICE_H="Authorization: Bearer $TOK" slice "$u" >/dev/null
	mpost "$u" 1 tools/call '{"name":"echo","arguments":{"text":"hi"}}' -H "Authorization: Bearer $TOK"
	[ "$STATUS" = 200 ] || { echo "static oauth bench: $u answered $STATUS: $BODY" >&2; exit 2; }
done
GROUPS_N=${SOAUTH_PAIRS:-12} PAIR_SECS=${SOAUTH_PAIR_SECONDS:-2} SLICE_CPU=cpu_ns
echo "static oauth bench: ${SOAUTH_WORKERS:-2} workers each, wrk -t2 -c$CONNS, $GROUPS_N groups of" \
	"dynamic static static dynamic, ${PAIR_SECS}s a slice, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
GROUP_A=dynamic GROUP_B=static GROUP_A_H="Authorization: Bearer $TOK" GROUP_B_H="Authorization: Bearer $TOK" \
	groups oauth "$D_URL" "$D_PIDS" "$S_URL" "$S_PIDS" >"$T_DIR/groups.txt"
cat "$T_DIR/groups.txt"
echo "static / dynamic build, OAuth-protected tools/call (persistent Python), paired:" \
	"$(sed -n 's/^oauth: throughput static\/dynamic //p' "$T_DIR/groups.txt")   (target >= 0.95)"
