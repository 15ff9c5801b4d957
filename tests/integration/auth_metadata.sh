#!/bin/bash
# OAuth protected-resource metadata (RFC 9728) served by Phantom at
# auth.metadata.path, routed by the shipped nginx, lighttpd, Apache
# (mod_proxy_fcgi) and shared-hosting (.htaccess) configurations with exactly
# the lines docs/auth.md tells users to add. The document needs no
# credentials; the endpoint still does, and its 401 points to the document.
# HEAD gets the document's head without it; any other method sent to its
# path (an MCP POST, a session's GET or DELETE) gets 405 with Allow: GET,
# HEAD, never MCP. A probe answered 405 is logged with its path (not its
# query) as target.
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/auth-lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"

bearer_token TOKEN HASH
WK=/.well-known/oauth-protected-resource/mcp
cat >"$T_DIR/prm.json" <<'JSON'
{
  "resource": "https://mcp.example.com/mcp",
  "authorization_servers": ["https://auth.example.com"],
  "scopes_supported": ["mcp:read"],
  "bearer_methods_supported": ["header"]
}
JSON
chmod 0644 "$T_DIR/prm.json"
test_conf "$T_DIR/phantom.yaml" metadata-test 'workers: 1' 'auth:' '  mode: bearer' \
	"  tokens: [ { principal: alice, sha256: $HASH } ]" \
	"  resource_metadata: https://mcp.example.com$WK" \
	"  metadata: { path: $WK, file: prm.json }"
phantom_unix "$T_DIR/phantom.yaml" || { echo "not ok 1 - phantom starts"; exit 1; }
DOC=$(jq -c . "$T_DIR/prm.json")

# checks BASE NAME: the metadata route and the endpoint behind one server
checks() {
	local B=$1 n=$2
	get "$B$WK"
	is "$STATUS" 200 "$n: metadata 200 without credentials"
	is "$BODY" "$DOC" "$n: the configured document"
	is "$(header Content-Type)" application/json "$n: application/json"
	is "$(header Access-Control-Allow-Origin)" "*" "$n: readable by browser clients"
	get "$B$WK?x=1"
	is "$STATUS" 200 "$n: a query string does not matter"
	get -I "$B$WK"
	is "$STATUS" 200 "$n: HEAD of the metadata: 200"
	is "$(header Content-Type)" application/json "$n: HEAD: application/json, as GET"
	mpost "$B$WK" 3 server/discover '{}' -H "Authorization: Bearer $TOKEN"
	is "$STATUS/$(jqr .error.code)" 405/-32000 "$n: an MCP POST to the metadata path is not served: 405"
	is "$(header Allow)" "GET, HEAD" "$n: ... with Allow: GET, HEAD"
	like "$(jqr .error.message)" "auth.metadata.path.*GET and HEAD" "$n: ... saying what the path serves"
	get "$B/.well-known/oauth-protected-resource/other"
	like "$STATUS" '^40[345]$' "$n: other well-known paths get no document ($STATUS)"
	get "$B/mcp"
	is "$STATUS" 405 "$n: GET /mcp stays 405"
	mpost "$B/mcp" 1 server/discover '{}'
	is "$STATUS" 401 "$n: the endpoint still wants a token"
	is "$(header WWW-Authenticate)" "Bearer realm=\"phantom\", resource_metadata=\"https://mcp.example.com$WK\"" \
		"$n: the 401 names the metadata URL"
	mpost "$B/mcp" 2 server/discover '{}' -H "Authorization: Bearer $TOKEN"
	is "$STATUS" 200 "$n: Authorization reaches Phantom"
}

# ---- nginx: next to location = /mcp
nginx_start_auth "$PH_BACKEND" "" 'location = /.well-known/oauth-protected-resource/mcp {
    include /etc/nginx/fastcgi_params;
    fastcgi_param HTTP_PROXY "";
    fastcgi_pass phantom;
}' || { echo "not ok - nginx starts"; exit 1; }
checks "$NGINX_BASE" nginx

# ---- HEAD from Phantom itself (FastCGI, then CGI): the GET's head, its
# Content-Length the document's, and no body (RFC 3875 §4.3.2)
fcgi_post "$PH_SOCK" "" REQUEST_METHOD=HEAD REQUEST_URI=$WK
is "$STATUS|$(header Content-Type)|$(header Content-Length)|$BODY" "200|application/json|${#DOC}|" \
	"FastCGI: HEAD of the metadata: the GET's head, no body"
CGI_ARGS="-c $T_DIR/phantom.yaml" cgi_post "" REQUEST_METHOD=HEAD REQUEST_URI=$WK
is "$STATUS|$(header Content-Type)|$(header Content-Length)|$BODY" "200|application/json|${#DOC}|" \
	"CGI: HEAD of the metadata: the GET's head, no body"
fcgi_post "$PH_SOCK" "$(req 4 server/discover)" REQUEST_URI=$WK $(mhdr server/discover)
is "$STATUS|$(header Allow)" "405|GET, HEAD" "FastCGI: an MCP POST to the metadata path: 405, Allow: GET, HEAD"
fcgi_post "$PH_SOCK" "" REQUEST_METHOD=GET REQUEST_URI=$WK HTTP_MCP_SESSION_ID=x \
	HTTP_ACCEPT=text/event-stream HTTP_MCP_PROTOCOL_VERSION=2025-11-25
is "$STATUS|$BODY" "200|$DOC" "a GET there with a session id and Accept: text/event-stream: still the document"
fcgi_post "$PH_SOCK" "" REQUEST_METHOD=DELETE REQUEST_URI=$WK HTTP_MCP_SESSION_ID=x
is "$STATUS|$(header Allow)" "405|GET, HEAD" "a DELETE there with a session id: 405, no session's end"

# ---- a probe answered 405 is logged with its path as the target, never
# with its query (RFC 6750 lets a client put a token there)
get -X PUT "$NGINX_BASE$WK?access_token=s3cret-probe"
is "$STATUS" 405 "PUT on the metadata path: 405"
like "$(grep 'status=405' "$PH_LOG" | tail -1)" "method=- target=$WK status=405 " \
	"... logged with the path as its target"
! grep -q 's3cret-probe' "$PH_LOG"; ok "... and without its query"
CGI_ARGS="-c $T_DIR/phantom.yaml" cgi_post "" REQUEST_METHOD=GET \
	REQUEST_URI=/.well-known/oauth-authorization-server
is "$STATUS" 405 "GET of a path Phantom does not serve (a client's probe): 405"
like "$(cat "$T_DIR"/cgi.*.err)" "method=- target=/.well-known/oauth-authorization-server status=405 " \
	"... logged with that path as its target"

# ---- lighttpd: its own url conditional
if command -v lighttpd >/dev/null; then
	conf=$(with_snippet "$top_srcdir/conf/lighttpd.conf" '$HTTP["url"] == "/.well-known/oauth-protected-resource/mcp" {
    fastcgi.server = (
        "/.well-known/oauth-protected-resource/mcp" => ((
            "socket" => "/run/phantom/phantom.sock",
            "check-local" => "disable",
        ))
    )
}')
	lighttpd_start "$PH_BACKEND" "$conf" || { echo "not ok - lighttpd starts"; exit 1; }
	checks "${LIGHTTPD_URL%/mcp}" lighttpd
else
	diag "lighttpd not installed: its route is not tested"
fi

# ---- Apache mod_proxy_fcgi: one more ProxyPassMatch
if command -v apache2 >/dev/null && [ -e /usr/lib/apache2/modules/mod_proxy_fcgi.so ]; then
	conf=$(with_snippet "$top_srcdir/conf/apache.conf" 'ProxyPassMatch "^/\.well-known/oauth-protected-resource/mcp$" "unix:/run/phantom/phantom.sock|fcgi://phantom-metadata/"
<Location "/.well-known/oauth-protected-resource/mcp">
    Require all granted
</Location>')
	apache_start "$conf" "" -e "s#unix:/run/phantom/phantom.sock|#unix:$PH_SOCK|#" ||
		{ echo "not ok - apache starts"; exit 1; }
	checks "${APACHE_URL%/mcp}" apache
	kill "$APACHE_PID"; wait_gone "$APACHE_PID"
else
	diag "Apache mod_proxy_fcgi not installed: its route is not tested"
fi

# ---- shared hosting: the shipped .htaccess routes the document as it is
if command -v apache2 >/dev/null && [ -e /usr/lib/apache2/modules/mod_fcgid.so ]; then
	dir=$(run_dir apache-fcgid)
	htaccess_site "$dir"
	apache_start "$top_srcdir/conf/apache-fcgid.conf" "$dir" ||
		{ echo "not ok - apache (mod_fcgid) starts"; exit 1; }
	checks "${APACHE_URL%/mcp}" htaccess
	# Phantom in a directory of the site: auth.metadata.path under it
	sed -e "s#  resource_metadata: .*#  resource_metadata: https://mcp.example.com/app$WK#" \
		-e "s#  metadata: { path: $WK,#  metadata: { path: /app$WK,#" "$T_DIR/phantom.yaml" >"$T_DIR/app.yaml"
	mkdir -p "$dir/www/app"
	cp "$dir/www/.htaccess" "$dir/www/app/.htaccess"
	sed "s#$T_DIR/phantom.yaml#$T_DIR/app.yaml#" "$dir/www/mcp.fcgi" >"$dir/www/app/mcp.fcgi"
	chmod 0755 "$dir/www/app/mcp.fcgi"
	chmod 0644 "$T_DIR/app.yaml"
	get "${APACHE_URL%/mcp}/app$WK"
	is "$STATUS:$BODY" "200:$DOC" "htaccess in a directory: the document at auth.metadata.path below it"
	mpost "${APACHE_URL%/mcp}/app/mcp" 1 server/discover '{}'
	is "$STATUS:$(header WWW-Authenticate)" \
		"401:Bearer realm=\"phantom\", resource_metadata=\"https://mcp.example.com/app$WK\"" \
		"... where the 401 sends clients"
else
	diag "mod_fcgid not installed: the .htaccess route is not tested"
fi
done_testing
