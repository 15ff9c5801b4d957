#!/bin/bash
# OAuth protected-resource metadata (RFC 9728) served by Phantom at
# auth.metadata.path, routed by nginx and lighttpd exactly as docs/auth.md
# shows (Apache: tests/integration/auth_apache.sh). The document needs no
# credentials; the 401 points to it.
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/auth-lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"

TOKEN=$(head -c 24 /dev/urandom | base64 | tr '+/' '-_')
cat >"$T_DIR/prm.json" <<'JSON'
{
  "resource": "https://mcp.example.com/mcp",
  "authorization_servers": ["https://auth.example.com"],
  "scopes_supported": ["mcp:read"],
  "bearer_methods_supported": ["header"]
}
JSON
cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: metadata-test, version: "1.0" }
workers: 1
http: { hosts: "*" }
auth:
  mode: bearer
  tokens: [ { principal: alice, sha256: $(printf '%s' "$TOKEN" | "$PHANTOM" --hash-token=sha256) } ]
  resource_metadata: https://mcp.example.com/.well-known/oauth-protected-resource/mcp
  metadata: { path: /.well-known/oauth-protected-resource/mcp, file: prm.json }
YAML
phantom_listen "$T_DIR/phantom.yaml" || { echo "not ok 1 - phantom starts"; exit 1; }
DOC=$(jq -c . "$T_DIR/prm.json")

nginx_start_auth "$PH_ADDR" "" "location = /.well-known/oauth-protected-resource/mcp {
        include /etc/nginx/fastcgi_params;
        fastcgi_param HTTP_PROXY \"\";
        fastcgi_pass phantom;
    }" || { echo "not ok 1 - nginx starts"; exit 1; }
N=$NGINX_BASE

get "$N/.well-known/oauth-protected-resource/mcp"
is "$STATUS" 200 "nginx: metadata 200 without credentials"
is "$BODY" "$DOC" "nginx: the configured document"
is "$(header Content-Type)" application/json "nginx: application/json"
is "$(header Access-Control-Allow-Origin)" "*" "nginx: readable by browser clients"
get "$N/.well-known/oauth-protected-resource/mcp?x=1"
is "$STATUS" 200 "nginx: a query string does not matter"
get "$N/.well-known/oauth-protected-resource/other"
is "$STATUS" 404 "nginx: other well-known paths are not routed"
get "$N/mcp"
is "$STATUS" 405 "nginx: GET /mcp stays 405"
mpost "$N/mcp" 1 server/discover '{}'
is "$STATUS" 401 "nginx: the endpoint still wants a token"
like "$(header WWW-Authenticate)" 'resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"' \
	"nginx: the 401 names the metadata URL"
mpost "$N/mcp" 2 server/discover '{}' -H "Authorization: Bearer $TOKEN"
is "$STATUS" 200 "nginx: and serves it"

if command -v lighttpd >/dev/null; then
	lighttpd_start_auth "${PH_ADDR%:*}" "${PH_ADDR##*:}" || { echo "not ok - lighttpd starts"; exit 1; }
	L=$LIGHTTPD_BASE
	get "$L/.well-known/oauth-protected-resource/mcp"
	is "$STATUS" 200 "lighttpd: metadata 200"
	is "$BODY" "$DOC" "lighttpd: the configured document"
	get "$L/mcp"
	is "$STATUS" 405 "lighttpd: GET /mcp stays 405"
	mpost "$L/mcp" 3 server/discover '{}' -H "Authorization: Bearer $TOKEN"
	is "$STATUS" 200 "lighttpd: Authorization reaches Phantom"
else
	diag "lighttpd not installed: its route is not tested"
fi
done_testing
