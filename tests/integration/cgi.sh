#!/bin/bash
# CGI mode: GATEWAY_INTERFACE set and stdin not a listening socket. One
# request is served (Status header, Content-Length, body) and the process
# exits. Then the same through Apache's CGI module with the shipped
# conf/htaccess, whose fallback runs mcp.fcgi as CGI where mod_fcgid is missing.
. "${top_srcdir:-.}/tests/lib.sh"

test_conf "$T_DIR/phantom.yaml" cgi-test
CGI_ARGS="-c $T_DIR/phantom.yaml"

cgi_post "$(req 1 server/discover)" $(mhdr server/discover)
is "$CGI_RC" 0 "CGI: exits 0 after the request"
is "$STATUS" 200 "CGI: Status 200"
like "$HEADERS" '(^|[[:space:]])Status: 200 OK' "CGI: a Status header"
like "$HEADERS" 'Content-Type: application/json' "CGI: Content-Type"
is "$(header Content-Length)" "${#BODY}" "CGI: Content-Length matches the body"
is "$(jqr '.result._meta["io.modelcontextprotocol/serverInfo"].name')" cgi-test "CGI: the configuration is used"

cgi_post '{"jsonrpc":"2.0","id":2,"method":"ping"}'
is "$STATUS/$(jqr .id)" 200/2 "CGI: a legacy ping"

cgi_post "$(req 3 server/discover)" REQUEST_METHOD=GET
is "$STATUS/$(header Allow)" 405/POST "CGI: GET gets 405 with Allow: POST"
is "$(jqr .error.code)" -32000 "CGI: the 405 body is a JSON-RPC error"
cgi_post '{"jsonrpc":"2.0","id":4,'
is "$STATUS/$(jqr .error.code)" 400/-32700 "CGI: invalid JSON gets 400 -32700"
cgi_post '{"jsonrpc":"2.0","method":"notifications/initialized"}'
is "$STATUS/$BODY" 202/ "CGI: a notification gets 202 and no body"

# The body limit is checked on CONTENT_LENGTH before reading: with the body
# still being written (and far from complete) the answer comes at once.
t0=$(date +%s%N)
(printf '{"jsonrpc":'; sleep 3) | env -i GATEWAY_INTERFACE=CGI/1.1 REQUEST_METHOD=POST \
	CONTENT_TYPE=application/json CONTENT_LENGTH=1000000 "$PHANTOM" $CGI_ARGS >"$T_DIR/big" 2>/dev/null &
bg=$!
wait_for 2 grep -q '^Status: 413' "$T_DIR/big"
ok "CGI: an oversized CONTENT_LENGTH gets 413 without waiting for the body"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$ms" -lt 1500 ]; ok "CGI: the 413 came in ${ms} ms, before the body was complete"
wait "$bg" 2>/dev/null
cgi_parse "$T_DIR/big"
is "$(jqr .error.code)" -32000 "CGI: the 413 body is a JSON-RPC error"

# A parent that ignores SIGCHLD (inherited across exec): a tool that exits 3
# after printing a result is still a failed run (before, the kernel reaped
# it, its status was lost, and the half-done result was served)
if command -v perl >/dev/null; then
	printf '%s\n' '#!/bin/sh' 'cat >/dev/null' \
		'echo "{\"content\":[{\"type\":\"text\",\"text\":\"half done\"}]}"' 'exit 3' >"$T_DIR/fail.sh"
	chmod +x "$T_DIR/fail.sh"
	printf '%s\n' 'server: { name: cgi-sigchld, version: "1" }' 'tools:' \
		"  - { name: fail, exec: [\"$T_DIR/fail.sh\"] }" >"$T_DIR/sigchld.yaml"
	body=$(req 5 tools/call '{"name":"fail","arguments":{}}')
	printf '%s' "$body" | env -i GATEWAY_INTERFACE=CGI/1.1 REQUEST_METHOD=POST CONTENT_TYPE=application/json \
		CONTENT_LENGTH=${#body} "HTTP_ACCEPT=application/json, text/event-stream" \
		HTTP_MCP_PROTOCOL_VERSION=$MODERN HTTP_MCP_METHOD=tools/call HTTP_MCP_NAME=fail \
		perl -e '$SIG{CHLD} = "IGNORE"; exec @ARGV' "$PHANTOM" -c "$T_DIR/sigchld.yaml" >"$T_DIR/sigchld.out" 2>/dev/null
	cgi_parse "$T_DIR/sigchld.out"
	is "$(jqr '[.result.isError, .result.content[0].text] | join(" ")')" "true Tool execution failed" \
		"CGI started with SIGCHLD ignored: a tool that exits 3 is still a failed run"
fi

# ---- through Apache: conf/htaccess falls back to cgi-script ---------------------
if ! command -v apache2 >/dev/null || [ ! -e /usr/lib/apache2/modules/mod_cgid.so ]; then
	diag "apache2 with mod_cgid not installed: web-server CGI checks skipped"
	done_testing; exit
fi
PH_CONF=$T_DIR/phantom.yaml
dir=$(run_dir apache-cgi)
htaccess_site "$dir"
# the hoster's configuration without mod_fcgid, with mod_cgid instead
apache_start "$top_srcdir/conf/apache-fcgid.conf" "$dir" \
	-e "s#^LoadModule fcgid_module .*#LoadModule cgid_module /usr/lib/apache2/modules/mod_cgid.so\\nScriptSock /run/phantom/cgid.sock#" \
	-e '/^Fcgid/d' || { echo "not ok $((T_N + 1)) - apache (CGI) starts"; done_testing; exit 1; }
http_rule_checks "$APACHE_URL" cgi-test
n=$(grep -c 'phantom\[[0-9]*\] method=' "$APACHE_DIR/apache-error.log")
p=$(grep -o 'phantom\[[0-9]*\] method=' "$APACHE_DIR/apache-error.log" | sort -u | wc -l)
is "$p" "$n" "Apache CGI: every request ran in its own process ($n requests)"
done_testing
