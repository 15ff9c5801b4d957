#!/bin/bash
# Phantom behind the real nginx with the shipped conf/nginx.conf, on a unix
# socket: the HTTP rules and the minimal MCP exchange, each error followed by
# a request that must still succeed.
. "${top_srcdir:-.}/tests/lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"

test_conf "$T_DIR/phantom.yaml" nginx-test 'workers: 2'
phantom_unix "$T_DIR/phantom.yaml" || { echo "not ok 1 - phantom starts"; exit 1; }
nginx_start "$PH_BACKEND" || { echo "not ok 1 - nginx starts"; exit 1; }

http_rule_checks "$NGINX_URL" nginx-test

# nginx itself answers above client_max_body_size (4m in the shipped file)
# with its own 413 page; Phantom is not involved and keeps serving.
head -c 5000000 /dev/zero | tr '\0' ' ' >"$T_DIR/huge"
STATUS=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
	--data-binary @"$T_DIR/huge" "$NGINX_URL")
is "$STATUS" 413 "nginx's own limit (client_max_body_size) answers 413"
still_serving "$NGINX_URL" "nginx's 413"

STATUS=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
	--data-binary '{}' "${NGINX_URL}x")
is "$STATUS" 404 "only exactly /mcp reaches Phantom"

grep -q 'status=200' "$PH_LOG"; ok "Phantom logged the requests on stderr"
done_testing
