#!/bin/bash
# The OAuth discovery probes clients make at start (the SDKs, mcp-remote)
# through the shipped nginx, lighttpd and Apache (mod_proxy_fcgi)
# configurations as they are: Phantom's RFC 9728 document when auth.metadata
# is configured; the authorization server paths (Phantom is none) 404; a
# metadata path Phantom has no document for 404 from nginx (405, Phantom's
# answer, from the others); none of it leaves a line in the web server's
# error log; the endpoint itself unchanged. HEAD of the document gets its
# head; an MCP POST to its path is never served (404 from nginx, which
# refuses the method itself; Phantom's 405 with Allow: GET, HEAD from the
# others).
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/auth-lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"

WK=/.well-known/oauth-protected-resource
AS_PROBES="/.well-known/oauth-authorization-server /.well-known/oauth-authorization-server/mcp
/.well-known/openid-configuration /.well-known/openid-configuration/mcp /mcp/.well-known/openid-configuration"
TOKEN=$(newtok)
AUTH=(-H "Authorization: Bearer $TOKEN")

# probes NAME BASE ERRLOG META UNROUTED: every probe through the server at
# BASE; META is the expected status of the document's path, UNROUTED that
# of a metadata path Phantom has no document for
probes() {
	local n=$1 b=$2 log=$3 meta=$4 none=$5 p before
	before=$(cat "$log" 2>/dev/null | wc -l)
	get "$b$WK/mcp"
	is "$STATUS" "$meta" "$n: $WK/mcp is $meta"
	get "$b$WK"
	is "$STATUS" "$none" "$n: $WK (no path) is $none"
	get "$b$WK/other"
	is "$STATUS" "$none" "$n: $WK/other is $none"
	for p in $AS_PROBES; do
		get "$b$p"
		is "$STATUS" 404 "$n: $p is 404"
	done
	mpost "$b/mcp" 1 server/discover '{}' "${AUTH[@]}"
	is "$STATUS" 200 "$n: the endpoint still serves"
	is "$(tail -n +$((before + 1)) "$log" 2>/dev/null | grep -v ' \[notice\] ' | head -3)" "" \
		"$n: the probes left no line in the error log"
}

# ---- Phantom without metadata, then with it (reloaded)
test_conf "$T_DIR/phantom.yaml" wellknown 'workers: 1' 'auth:' '  mode: bearer' \
	"  tokens: [ { principal: alice, sha256: $(token_sha256 "$TOKEN") } ]"
phantom_unix "$T_DIR/phantom.yaml" || { echo "not ok 1 - phantom starts"; exit 1; }
nginx_start "$PH_BACKEND" || { echo "not ok 1 - nginx starts"; exit 1; }
FRONTS=("nginx ${NGINX_URL%/mcp} $NGINX_DIR/nginx-error.log 404")
if command -v lighttpd >/dev/null; then
	lighttpd_start "$PH_BACKEND" || { echo "not ok - lighttpd starts"; exit 1; }
	FRONTS+=("lighttpd ${LIGHTTPD_URL%/mcp} $LIGHTTPD_DIR/lighttpd-error.log 405")
else
	diag "lighttpd not installed: its routes are not tested"
fi
if command -v apache2 >/dev/null && [ -e /usr/lib/apache2/modules/mod_proxy_fcgi.so ]; then
	apache_start "$top_srcdir/conf/apache.conf" "" -e "s#unix:/run/phantom/phantom.sock|#unix:$PH_SOCK|#" ||
		{ echo "not ok - apache starts"; exit 1; }
	FRONTS+=("apache ${APACHE_URL%/mcp} $APACHE_DIR/apache-error.log 405")
else
	diag "Apache mod_proxy_fcgi not installed: its routes are not tested"
fi

for f in "${FRONTS[@]}"; do
	read -r n b log none <<<"$f"
	probes "$n, no metadata" "$b" "$log" "$none" "$none"
done

cat >"$T_DIR/prm.json" <<'JSON'
{"resource": "https://mcp.example.com/mcp", "authorization_servers": ["https://auth.example.com"]}
JSON
chmod 0644 "$T_DIR/prm.json"
printf '%s\n' "  resource_metadata: https://mcp.example.com$WK/mcp" "  metadata: { path: $WK/mcp, file: prm.json }" \
	>>"$T_DIR/phantom.yaml"
kill -HUP "$PH_PID"
wait_for 5 sh -c "curl -s -o /dev/null -w '%{http_code}' '${NGINX_URL%/mcp}$WK/mcp' | grep -q 200"
for f in "${FRONTS[@]}"; do
	read -r n b log none <<<"$f"
	probes "$n, metadata" "$b" "$log" 200 "$none"
	get "$b$WK/mcp"
	is "$(printf '%s' "$BODY" | jq -c .)" "$(jq -c . "$T_DIR/prm.json")" "$n: the configured document"
	is "$(header Content-Type)" application/json "$n: application/json"
	get -I "$b$WK/mcp"
	is "$STATUS|$(header Content-Type)" "200|application/json" "$n: HEAD of the document: its head"
	mpost "$b$WK/mcp" 3 server/discover '{}' "${AUTH[@]}"
	is "$STATUS" "$none" "$n: an MCP POST to the document's path is not served ($none)"
	mpost "$b/mcp" 2 server/discover '{}'
	is "$STATUS" 401 "$n: the endpoint wants a token"
	like "$(header WWW-Authenticate)" "resource_metadata=\"https://mcp.example.com$WK/mcp\"" \
		"$n: its 401 points to the document"
done
done_testing
