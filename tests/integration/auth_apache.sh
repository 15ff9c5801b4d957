#!/bin/bash
# Authentication through Apache: the shipped conf/apache.conf (mod_proxy_fcgi,
# CGIPassAuth On) and the shared-hosting pair conf/apache-fcgid.conf +
# conf/htaccess pass the bearer token on, and the 401 challenge and body come
# back unchanged; tests/apache-auth.conf shows that without CGIPassAuth the
# token never arrives, that SetEnvIf works instead, and that Apache Basic auth
# gives auth.mode remote_user its REMOTE_USER.
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/auth-lib.sh"
command -v apache2 >/dev/null || skip_all "apache2 not installed"
[ -e /usr/lib/apache2/modules/mod_proxy_fcgi.so ] || skip_all "mod_proxy_fcgi missing"
command -v openssl >/dev/null || skip_all "openssl not installed"
[ -n "$T_ROOT" ] || skip_all "Apache is started as root (it switches to www-data)"

bearer_token TOKEN HASH
test_conf "$T_DIR/bearer.yaml" apache-auth 'workers: 2' \
	"auth: { mode: bearer, realm: apache-test, tokens: [ { principal: alice, sha256: $HASH } ] }"
test_conf "$T_DIR/remote.yaml" apache-remote-user 'workers: 1' 'auth: { mode: remote_user }'
printf 'carol:%s\n' "$(openssl passwd -apr1 'carol-pass')" >"$T_DIR/htpasswd"
chmod 0644 "$T_DIR/htpasswd"
CHALLENGE='Bearer realm="apache-test"'

# bearer_checks URL NAME LOG: the token passes, its absence gives 401 exactly
bearer_checks() {
	local U=$1 n=$2 log=$3
	mpost "$U" 1 server/discover '{}' -H "Authorization: Bearer $TOKEN"
	is "$STATUS" 200 "$n: the token reaches Phantom"
	PH_LOG=$log in_log 'status=200 .*principal=alice'; ok "$n: principal alice in the log"
	mpost "$U" 2 server/discover '{}'
	is "$STATUS" 401 "$n: no token, 401"
	is "$(header WWW-Authenticate)" "$CHALLENGE" "$n: WWW-Authenticate passed on unchanged"
	is "$BODY" '{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"Unauthorized"}}' \
		"$n: the JSON-RPC body passed on unchanged"
	mpost "$U" 3 server/discover '{}' -H "Authorization: Bearer ${TOKEN}x"
	is "$(header WWW-Authenticate)" 'Bearer realm="apache-test", error="invalid_token"' \
		"$n: wrong token, invalid_token"
	mpost "$U" 4 server/discover '{}' -H "Authorization: Bearer $TOKEN"
	is "$STATUS" 200 "$n: next request after a 401 still served"
}

# ---- the shipped conf/apache.conf
phantom_unix "$T_DIR/bearer.yaml" || { echo "not ok 1 - phantom starts"; exit 1; }
BEARER_LOG=$PH_LOG
apache_start "$top_srcdir/conf/apache.conf" "" -e "s#unix:/run/phantom/phantom.sock|#unix:$PH_SOCK|#" ||
	{ echo "not ok 1 - apache (proxy_fcgi) starts"; exit 1; }
bearer_checks "$APACHE_URL" "conf/apache.conf (CGIPassAuth On)" "$BEARER_LOG"
kill "$APACHE_PID"; wait_gone "$APACHE_PID"

# ---- variants: no CGIPassAuth, SetEnvIf, Basic auth with remote_user
phantom_listen "$T_DIR/remote.yaml" || { echo "not ok - phantom (remote_user) starts"; exit 1; }
REMOTE_LOG=$PH_LOG REMOTE=$PH_ADDR
phantom_listen "$T_DIR/bearer.yaml" || { echo "not ok - phantom (bearer, TCP) starts"; exit 1; }
apache_start_auth "BEARER=$PH_ADDR" "REMOTE=$REMOTE" "HTPASSWD=$T_DIR/htpasswd" ||
	{ echo "not ok - apache (tests/apache-auth.conf) starts"; exit 1; }
B=$APACHE_BASE
mpost "$B/plain/mcp" 5 server/discover '{}' -H "Authorization: Bearer $TOKEN"
is "$STATUS" 401 "without CGIPassAuth Apache drops Authorization: 401"
is "$(header WWW-Authenticate)" "$CHALLENGE" "without CGIPassAuth: treated as no credentials"
mpost "$B/setenvif/mcp" 6 server/discover '{}' -H "Authorization: Bearer $TOKEN"
is "$STATUS" 200 "SetEnvIf Authorization: the token reaches Phantom"
mpost "$B/basic/mcp" 7 server/discover '{}'
is "$STATUS" 401 "Apache Basic: no credentials, Apache answers 401"
like "$(header WWW-Authenticate)" '^Basic realm="phantom-test"' "Apache Basic: Apache's own challenge"
mpost "$B/basic/mcp" 8 server/discover '{}' -u carol:wrong
is "$STATUS" 401 "Apache Basic: wrong password, 401"
mpost "$B/basic/mcp" 9 server/discover '{}' -u carol:carol-pass
is "$STATUS" 200 "Apache Basic: good credentials reach Phantom"
PH_LOG=$REMOTE_LOG in_log 'status=200 .*principal=carol'
ok "remote_user: Apache's REMOTE_USER (carol) is the principal"
kill "$APACHE_PID"; wait_gone "$APACHE_PID"

# ---- shared hosting: mod_fcgid starts Phantom, the shipped .htaccess
if [ -e /usr/lib/apache2/modules/mod_fcgid.so ]; then
	PH_CONF=$T_DIR/bearer.yaml
	dir=$(run_dir apache-fcgid)
	htaccess_site "$dir"
	apache_start "$top_srcdir/conf/apache-fcgid.conf" "$dir" ||
		{ echo "not ok - apache (mod_fcgid) starts"; exit 1; }
	bearer_checks "$APACHE_URL" "conf/htaccess (mod_fcgid)" "$APACHE_DIR/apache-error.log"
else
	diag "mod_fcgid not installed: shared-hosting checks skipped"
fi
done_testing
