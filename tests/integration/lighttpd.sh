#!/bin/bash
# Phantom behind the real lighttpd: the shipped conf/lighttpd.conf with
# Phantom on a unix socket (the same HTTP-rule checks as nginx.sh), then
# conf/lighttpd-binpath.conf where lighttpd starts Phantom itself.
. "${top_srcdir:-.}/tests/lib.sh"
command -v lighttpd >/dev/null || skip_all "lighttpd not installed"

TEST_HTTP='health: /healthz' test_conf "$T_DIR/phantom.yaml" lighttpd-test 'workers: 2'
phantom_unix "$T_DIR/phantom.yaml" || { echo "not ok 1 - phantom starts"; exit 1; }
lighttpd_start "$PH_BACKEND" || { echo "not ok 1 - lighttpd starts"; exit 1; }

http_rule_checks "$LIGHTTPD_URL" lighttpd-test
body=$(curl -s -w ' %{http_code}' "${LIGHTTPD_URL%/mcp}/healthz")
is "$(jq -r .status <<<"${body% *}") ${body##* }" "ok 200" "the shipped configuration routes /healthz to Phantom"

STATUS=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
	--data-binary '{}' "${LIGHTTPD_URL}x")
is "$STATUS" 404 "only exactly /mcp reaches Phantom"
mpost "$LIGHTTPD_URL?x=1" 21 server/discover '{}'
is "$STATUS" 200 "/mcp with a query string reaches Phantom"

# ---- bin-path: lighttpd starts phantom-fcgi with the socket on fd 0 ----------
test_conf "$T_DIR/binpath.yaml" binpath-test
PH_CONF=$T_DIR/binpath.yaml
lighttpd_start "" "$top_srcdir/conf/lighttpd-binpath.conf" ||
	{ echo "not ok $((T_N + 1)) - lighttpd (bin-path) starts"; done_testing; exit 1; }
BP_URL=$LIGHTTPD_URL
mpost "$BP_URL" 1 server/discover '{}'
is "$STATUS" 200 "bin-path: discover through the Phantom lighttpd started"
is "$(jqr '.result._meta["io.modelcontextprotocol/serverInfo"].name')" binpath-test \
	"bin-path: Phantom runs the configuration named in bin-path"
master=$(pgrep -P "$LIGHTTPD_PID" -f phantom-fcgi | head -1)
like "$master" '^[0-9]+$' "bin-path: lighttpd's child is the Phantom master"
workers_are "$master" 2 "bin-path: the master runs --workers 2"
post "$BP_URL" '[1]' -H 'MCP-Protocol-Version: 2025-11-25'
is "$STATUS/$(jqr .error.code)" 400/-32600 "bin-path: errors answered as JSON-RPC"
still_serving "$BP_URL" "an error (bin-path)"
kill "$LIGHTTPD_PID"
wait_gone "$LIGHTTPD_PID" && wait_for 5 sh -c "! kill -0 $master 2>/dev/null"
ok "bin-path: stopping lighttpd stops Phantom"
done_testing
