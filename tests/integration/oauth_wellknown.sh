#!/bin/bash
# The OAuth discovery probes clients make at start (the SDKs, mcp-remote)
# through the shipped conf/nginx.conf as it is: Phantom's RFC 9728 document
# when auth.metadata is configured; otherwise, and for the authorization
# server paths (Phantom is none), a 404 that leaves no line in nginx's error
# log; the endpoint itself unchanged.
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/auth-lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"

WK=/.well-known/oauth-protected-resource
AS_PROBES="/.well-known/oauth-authorization-server /.well-known/oauth-authorization-server/mcp
/.well-known/openid-configuration /.well-known/openid-configuration/mcp /mcp/.well-known/openid-configuration"

# probes NAME META: every probe through NGINX_BASE; META is the expected
# status of the resource's own document path
probes() {
	local n=$1 meta=$2 p before auth=()
	[ -n "${TOKEN:-}" ] && auth=(-H "Authorization: Bearer $TOKEN")
	before=$(wc -l <"$NGINX_DIR/error.log")
	get "$NGINX_BASE$WK/mcp"
	is "$STATUS" "$meta" "$n: $WK/mcp is $meta"
	get "$NGINX_BASE$WK"
	is "$STATUS" 404 "$n: $WK (no path) is 404"
	get "$NGINX_BASE$WK/other"
	is "$STATUS" 404 "$n: $WK/other is 404"
	for p in $AS_PROBES; do
		get "$NGINX_BASE$p"
		is "$STATUS" 404 "$n: $p is 404"
	done
	mpost "$NGINX_BASE$WK/mcp" 1 server/discover '{}' "${auth[@]}"
	is "$STATUS" 404 "$n: an MCP POST to the metadata path is not served"
	mpost "$NGINX_URL" 1 server/discover '{}' "${auth[@]}"
	is "$STATUS" 200 "$n: the endpoint still serves"
	is "$(tail -n +$((before + 1)) "$NGINX_DIR/error.log" | grep -c 'open()\|failed\|error')" 0 \
		"$n: the probes left no line in nginx's error log"
}

# ---- Phantom without metadata
test_conf "$T_DIR/plain.yaml" wellknown-plain 'workers: 1'
phantom_listen "$T_DIR/plain.yaml" || { echo "not ok 1 - phantom starts"; exit 1; }
nginx_start "$PH_ADDR" || { echo "not ok 1 - nginx starts"; exit 1; }
NGINX_BASE=${NGINX_URL%/mcp}
probes "no metadata" 404

# ---- Phantom with the document configured
TOKEN=$(head -c 24 /dev/urandom | base64 | tr '+/' '-_')
cat >"$T_DIR/prm.json" <<JSON
{"resource": "$NGINX_BASE/mcp", "authorization_servers": ["https://auth.example.com"]}
JSON
test_conf "$T_DIR/meta.yaml" wellknown-meta 'workers: 1' 'auth:' '  mode: bearer' \
	"  tokens: [ { principal: alice, sha256: $(printf '%s' "$TOKEN" | "$PHANTOM" --hash-token=sha256) } ]" \
	"  resource_metadata: $NGINX_BASE$WK/mcp" "  metadata: { path: $WK/mcp, file: prm.json }"
cp "$T_DIR/meta.yaml" "$T_DIR/plain.yaml"
kill -HUP "$PH_PID"
wait_for 5 sh -c "curl -s -o /dev/null -w '%{http_code}' '$NGINX_BASE$WK/mcp' | grep -q 200"
probes "metadata" 200
get "$NGINX_BASE$WK/mcp"
is "$(printf '%s' "$BODY" | jq -r .resource)" "$NGINX_BASE/mcp" "metadata: the configured document"
is "$(header Content-Type)" application/json "metadata: application/json"
mpost "$NGINX_URL" 2 server/discover '{}'
is "$STATUS" 401 "metadata: the endpoint wants a token"
like "$(header WWW-Authenticate)" "resource_metadata=\"$NGINX_BASE$WK/mcp\"" "metadata: its 401 points to the document"
done_testing
