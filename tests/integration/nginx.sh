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

# an answer larger than one FastCGI record (65535 bytes) arrives whole
mkdir -p "$T_DIR/big"
head -c 300000 /dev/urandom | base64 -w 0 >"$T_DIR/big/big.txt"
test_conf "$T_DIR/big.yaml" nginx-big 'workers: 1' 'limits: { resource_bytes: 1000000 }' \
	'resources:' "  - { uri: \"info://big\", name: big, file: $T_DIR/big/big.txt }"
phantom_unix "$T_DIR/big.yaml" || { echo "not ok - phantom with a large resource starts"; exit 1; }
nginx_start "$PH_BACKEND" || { echo "not ok - nginx starts"; exit 1; }
for i in 1 2 3; do
	mpost "$NGINX_URL" "$i" resources/read '{"uri":"info://big"}'
	is "$STATUS/$(jqr '.result.contents[0].text' | tr -d '\n' | sha256sum | cut -c1-64)" \
		"200/$(sha256sum <"$T_DIR/big/big.txt" | cut -c1-64)" "a 400 KB answer, in several records, arrives whole ($i)"
done
still_serving "$NGINX_URL" "large answers"
done_testing
