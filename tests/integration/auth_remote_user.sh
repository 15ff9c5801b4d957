#!/bin/bash
# auth.mode remote_user with nginx auth_basic in front (the shipped
# conf/nginx.conf plus two auth_basic lines, as docs/auth.md shows): nginx
# checks the password, Phantom takes REMOTE_USER as the principal and
# applies its allow-list; without a REMOTE_USER Phantom answers 401 itself.
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/auth-lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
command -v openssl >/dev/null || skip_all "openssl not installed"
chmod 755 "$T_DIR" # nginx workers read the htpasswd file at request time

{
	printf 'alice:%s\n' "$(openssl passwd -apr1 'alice-pass')"
	printf 'bob:%s\n' "$(openssl passwd -apr1 'bob-pass')"
	printf 'eve:%s\n' "$(openssl passwd -apr1 'eve-pass')"
} >"$T_DIR/htpasswd"
chmod 644 "$T_DIR/htpasswd"
cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: remote-user-test, version: "1.0", scope: public }
workers: 2
auth:
  mode: remote_user
  realm: phantom-ru
  default_access: none
  allow:
    alice: { tools: [search] }
    bob:
YAML
phantom_listen "$T_DIR/phantom.yaml" || { echo "not ok 1 - phantom starts"; exit 1; }
nginx_start_auth "$PH_ADDR" \
	"auth_basic \"phantom-ru\"; auth_basic_user_file $T_DIR/htpasswd;" \
	"location = /open { include /etc/nginx/fastcgi_params; fastcgi_param HTTP_PROXY \"\"; fastcgi_pass phantom; }" ||
	{ echo "not ok 1 - nginx starts"; exit 1; }
U=$NGINX_URL

mpost "$U" 1 server/discover '{}'
is "$STATUS" 401 "no credentials: nginx answers 401"
like "$(header WWW-Authenticate)" '^Basic realm="phantom-ru"' "no credentials: nginx's Basic challenge"
mpost "$U" 2 server/discover '{}' -u alice:wrong
is "$STATUS" 401 "wrong password: 401 from nginx"

mpost "$U" 3 server/discover '{}' -u alice:alice-pass
is "$STATUS" 200 "alice: 200"
is "$(jqr .result.cacheScope)" private "alice has an allow-list: cacheScope private"
in_log 'status=200 .*principal=alice'; ok "alice: REMOTE_USER is the principal in the log"
mpost "$U" 4 server/discover '{}' -u bob:bob-pass
is "$STATUS" 200 "bob (empty entry): 200"
in_log 'status=200 .*principal=bob'; ok "bob: principal in the log"

mpost "$U" 5 server/discover '{}' -u eve:eve-pass
is "$STATUS" 403 "eve (authenticated, no allow entry, default_access none): 403"
is "$BODY" '{"jsonrpc":"2.0","id":5,"error":{"code":-32000,"message":"Forbidden: no access for this principal"}}' \
	"eve: the 403 body exactly"
mpost "$U" 6 server/discover '{}' -u alice:alice-pass
is "$STATUS" 200 "next request after a 403 still served"

# A location without auth_basic: no REMOTE_USER, Phantom itself refuses.
O=$NGINX_BASE/open
mpost "$O" 7 server/discover '{}'
is "$STATUS" 401 "no web server authentication: Phantom answers 401"
is "$(header WWW-Authenticate)" 'Bearer realm="phantom-ru"' "Phantom's challenge carries auth.realm"
is "$BODY" '{"jsonrpc":"2.0","id":7,"error":{"code":-32000,"message":"Unauthorized"}}' "Phantom's 401 body"
mpost "$O" 8 server/discover '{}' -H 'Remote-User: bob'
is "$STATUS" 401 "a Remote-User request header is not REMOTE_USER"
# Why docs/auth.md says remote_user only behind auth_basic/auth_request:
# nginx fills $remote_user from any Basic header, checked or not.
mpost "$O" 9 server/discover '{}' -u bob:anything
is "$STATUS" 200 "nginx without auth_basic passes an unchecked Basic user name on (documented pitfall)"

# A client-chosen user name or method cannot add a field to the text log:
# spaces (and quotes) in values are escaped.
mpost "$O" 10 server/discover '{}' -u 'mallory principal=root:x'
is "$STATUS" 403 "REMOTE_USER 'mallory principal=root': 403"
mpost "$O" 11 'tools/list principal=root' '{}' -u 'bob:x'
is "$STATUS/$(jqr .error.code)" 404/-32601 "method 'tools/list principal=root': unknown"
sleep 0.2
forged=$(grep -cE ' principal=root( |$)' "$PH_LOG")
is "$forged" 0 "no log line has a second field principal=root"
in_log 'status=403 .* principal=mallory\\x20principal=root$'
ok "the user name is one escaped field"
in_log 'method=tools/list\\x20principal=root target=- status=404 .* principal=bob$'
ok "the method is one escaped field"
mpost "$O" 12 server/discover '{}' -u bob:anything
is "$STATUS" 200 "the next request is served"
done_testing
