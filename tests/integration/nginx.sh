#!/bin/bash
# Phantom behind the real nginx with the shipped conf/nginx.conf: the HTTP
# rules and the minimal MCP exchange, each error followed by a request that
# must still succeed.
. "${top_srcdir:-.}/tests/lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"

cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: nginx-test, version: "1.0" }
workers: 2
YAML
phantom_listen "$T_DIR/phantom.yaml" || { echo "not ok 1 - phantom starts"; exit 1; }
nginx_start "$PH_ADDR" || { echo "not ok 1 - nginx starts"; exit 1; }
U=$NGINX_URL

still_serving() {
	mpost "$U" 99 server/discover '{}'
	is "$STATUS" 200 "next request after $1 still served"
}

mpost "$U" 1 server/discover '{}'
is "$STATUS" 200 "discover: 200"
is "$(jqr .result.resultType)" complete "discover: resultType complete"
is "$(jqr '.result._meta["io.modelcontextprotocol/serverInfo"].name')" nginx-test "discover: serverInfo in _meta"
is "$(jqr '.result.supportedVersions|index("2026-07-28") != null')" true "discover: lists 2026-07-28"

STATUS=$(curl -s -o /dev/null -D "$T_DIR/h" -w '%{http_code}' "$U")
is "$STATUS" 405 "GET gets 405"
like "$(tr -d '\r' <"$T_DIR/h")" '(^|\n)Allow: POST' "405 carries Allow: POST"
still_serving "405"

post "$U" "$(req 2 server/discover)" -H 'Origin: http://evil.example.com'
is "$STATUS" 403 "foreign Origin gets 403"
is "$(jqr .error.code)" -32000 "403 body is a JSON-RPC error"
still_serving "403"

CT=text/plain post "$U" "$(req 3 server/discover)"
is "$STATUS" 415 "wrong Content-Type gets 415"
still_serving "415"

post "$U" '{"jsonrpc":"2.0","id":4,' -H "MCP-Protocol-Version: $MODERN"
is "$STATUS" 400 "invalid JSON gets 400"
is "$(jqr .error.code)" -32700 "invalid JSON is -32700"
still_serving "-32700"

post "$U" '[{"jsonrpc":"2.0","id":5,"method":"ping"}]'
is "$STATUS" 400 "a batch gets 400"
is "$(jqr .error.code)" -32600 "a batch is -32600"

post "$U" '{"jsonrpc":"2.0","method":"notifications/initialized"}'
is "$STATUS" 202 "a notification gets 202"
is "$BODY" "" "202 has no body"

post "$U" '{"jsonrpc":"2.0","id":"p","method":"ping"}'
is "$(jqr .result)" "{}" "legacy ping answers {}"
done_testing
