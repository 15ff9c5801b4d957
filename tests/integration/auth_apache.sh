#!/bin/bash
# Authentication through Apache mod_proxy_fcgi (tests/apache-auth.conf):
# Authorization reaches Phantom only with CGIPassAuth On (or SetEnvIf),
# Apache Basic auth gives auth.mode remote_user its REMOTE_USER, the 401
# challenge and body pass through unchanged, and the RFC 9728 metadata
# route works.
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/auth-lib.sh"
command -v apache2 >/dev/null || skip_all "apache2 not installed"
command -v openssl >/dev/null || skip_all "openssl not installed"
[ "$(id -u)" = 0 ] || skip_all "Apache is started as root (it switches to www-data)"
chmod 755 "$T_DIR" # www-data reads the htpasswd file at request time

TOKEN=$(head -c 24 /dev/urandom | base64 | tr '+/' '-_')
HASH=$(printf '%s' "$TOKEN" | "$PHANTOM" --hash-token=sha256)
cat >"$T_DIR/bearer.yaml" <<YAML
server: { name: apache-auth, version: "1.0" }
workers: 2
http: { hosts: "*" }
auth:
  mode: bearer
  realm: apache-test
  tokens: [ { principal: alice, sha256: $HASH } ]
  metadata:
    path: /.well-known/oauth-protected-resource/mcp
    document: { resource: "http://127.0.0.1/mcp", authorization_servers: ["https://as.example.com"] }
YAML
cat >"$T_DIR/remote.yaml" <<YAML
server: { name: apache-remote-user, version: "1.0" }
workers: 1
http: { hosts: "*" }
auth: { mode: remote_user }
YAML
printf 'carol:%s\n' "$(openssl passwd -apr1 'carol-pass')" >"$T_DIR/htpasswd"
chmod 644 "$T_DIR/htpasswd"

phantom_listen "$T_DIR/remote.yaml" || { echo "not ok 1 - phantom (remote_user) starts"; exit 1; }
REMOTE_ADDR=$PH_ADDR REMOTE_LOG=$PH_LOG
phantom_listen "$T_DIR/bearer.yaml" || { echo "not ok 1 - phantom (bearer) starts"; exit 1; }
apache_start_auth "BEARER=$PH_ADDR" "REMOTE=$REMOTE_ADDR" "HTPASSWD=$T_DIR/htpasswd" ||
	{ echo "not ok 1 - apache starts"; exit 1; }
B=$APACHE_BASE

mpost "$B/mcp" 1 server/discover '{}' -H "Authorization: Bearer $TOKEN"
is "$STATUS" 200 "CGIPassAuth On: the token reaches Phantom"
in_log 'status=200 .*principal=alice'; ok "CGIPassAuth On: principal alice in the log"

mpost "$B/mcp" 2 server/discover '{}'
is "$STATUS" 401 "no token through Apache: 401"
is "$(header WWW-Authenticate)" 'Bearer realm="apache-test"' "Apache passes WWW-Authenticate on"
is "$BODY" '{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"Unauthorized"}}' \
	"Apache passes the JSON-RPC body on"

mpost "$B/plain/mcp" 3 server/discover '{}' -H "Authorization: Bearer $TOKEN"
is "$STATUS" 401 "without CGIPassAuth Apache drops Authorization: 401"
is "$(jqr .error.message)" Unauthorized "without CGIPassAuth: treated as missing"

mpost "$B/setenvif/mcp" 4 server/discover '{}' -H "Authorization: Bearer $TOKEN"
is "$STATUS" 200 "SetEnvIf Authorization: the token reaches Phantom"

mpost "$B/mcp" 5 server/discover '{}' -H "Authorization: Bearer ${TOKEN}x"
is "$(header WWW-Authenticate)" 'Bearer realm="apache-test", error="invalid_token"' \
	"wrong token through Apache: invalid_token"
mpost "$B/mcp" 6 server/discover '{}' -H "Authorization: Bearer $TOKEN"
is "$STATUS" 200 "next request after a 401 still served"

mpost "$B/basic/mcp" 7 server/discover '{}'
is "$STATUS" 401 "Apache Basic: no credentials, Apache answers 401"
like "$(header WWW-Authenticate)" '^Basic realm="phantom-test"' "Apache Basic: Apache's own challenge"
mpost "$B/basic/mcp" 8 server/discover '{}' -u carol:wrong
is "$STATUS" 401 "Apache Basic: wrong password, 401"
mpost "$B/basic/mcp" 9 server/discover '{}' -u carol:carol-pass
is "$STATUS" 200 "Apache Basic: good credentials reach Phantom"
PH_LOG=$REMOTE_LOG in_log 'status=200 .*principal=carol'
ok "remote_user: REMOTE_USER=carol is the principal"

get "$B/.well-known/oauth-protected-resource/mcp"
is "$STATUS" 200 "metadata route through Apache: 200"
is "$BODY" '{"resource":"http://127.0.0.1/mcp","authorization_servers":["https://as.example.com"]}' \
	"metadata route through Apache: the document"
is "$(header Content-Type)" application/json "metadata: application/json"
get "$B/mcp"
is "$STATUS" 405 "GET on the endpoint is still 405"
done_testing
