#!/bin/bash
# cgi-fcgi (Debian libfcgi-bin) as the FastCGI client, no web server: Phantom
# on --listen TCP and on a unix socket, error paths each followed by a
# request that is still served, bodies in many records and slow bodies.
. "${top_srcdir:-.}/tests/lib.sh"
command -v cgi-fcgi >/dev/null || skip_all "cgi-fcgi (libfcgi-bin) not installed"

test_conf "$T_DIR/phantom.yaml" fcgi-test 'workers: 2'
test_conf "$T_DIR/big.yaml" fcgi-big 'workers: 2'
sed -i 's/max_body: 2048/max_body: 1048576/' "$T_DIR/big.yaml"

# checks TARGET WHAT: one round of requests against a FastCGI address
checks() {
	local t=$1 w=$2
	fcgi_post "$t" "$(req 1 server/discover)" $(mhdr server/discover)
	is "$STATUS" 200 "$w: discover 200"
	is "$(jqr '.result._meta["io.modelcontextprotocol/serverInfo"].name')" fcgi-test "$w: serverInfo"
	like "$HEADERS" '(^|[[:space:]])Status: 200 OK' "$w: a Status header"
	is "$(header Content-Length)" "${#BODY}" "$w: Content-Length matches the body"
	fcgi_post "$t" '{"jsonrpc":"2.0","id":2,"method":"ping"}'
	is "$STATUS/$(jqr '.result|tojson')" '200/{}' "$w: legacy ping"

	fcgi_post "$t" "$(req 3 server/discover)" REQUEST_METHOD=GET
	is "$STATUS/$(header Allow)" 405/POST "$w: GET gets 405 with Allow: POST"
	fcgi_post "$t" "$(req 4 server/discover)" HTTP_HOST=evil.example.com:80
	is "$STATUS/$(jqr .error.code)" 403/-32000 "$w: a foreign Host gets 403"
	fcgi_post "$t" "$(req 5 server/discover)" HTTP_ORIGIN=https://evil.example.com
	is "$STATUS" 403 "$w: a foreign Origin gets 403"
	fcgi_post "$t" "$(req 6 server/discover)" CONTENT_TYPE=text/json
	is "$STATUS" 415 "$w: Content-Type text/json gets 415"
	fcgi_post "$t" '{"jsonrpc":"2.0","id":7,"method":"ping"'
	is "$STATUS/$(jqr .error.code)" 400/-32700 "$w: truncated JSON gets 400 -32700"
	fcgi_post "$t" '{"jsonrpc":"2.0","id":8,"method":"ping"} {}'
	is "$STATUS/$(jqr .error.code)" 400/-32700 "$w: trailing bytes after the JSON get -32700"
	fcgi_post "$t" "$(req 9 server/discover)$(printf '%3000s' '')"
	is "$STATUS/$(jqr .error.code)" 413/-32000 "$w: a body over http.max_body gets 413"
	fcgi_post "$t" "$(req 10 server/discover)" $(mhdr server/discover)
	is "$STATUS" 200 "$w: the next request is still served"
}

phantom_listen "$T_DIR/phantom.yaml" || { echo "not ok 1 - phantom --listen TCP starts"; exit 1; }
checks "$PH_ADDR" "TCP"
TCP=$PH_ADDR TCP_LOG=$PH_LOG
phantom_unix "$T_DIR/phantom.yaml" || { echo "not ok $((T_N + 1)) - phantom --listen unix starts"; exit 1; }
checks "$PH_SOCK" "unix"
UNIX_SOCK=$PH_SOCK

# The body limit is decided on CONTENT_LENGTH before reading: the answer
# comes while the client is still sending.
t0=$(date +%s%N)
(printf '{"jsonrpc":'; sleep 2) | env -i REQUEST_METHOD=POST CONTENT_TYPE=application/json \
	CONTENT_LENGTH=5000000 REQUEST_URI=/mcp cgi-fcgi -bind -connect "$UNIX_SOCK" >"$T_DIR/early" 2>&1 &
wait_for 2 grep -q '^Status: 413' "$T_DIR/early"
ok "413 is answered before the body has arrived"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$ms" -lt 1500 ]; ok "413 came in ${ms} ms"
fcgi_post "$UNIX_SOCK" "$(req 11 server/discover)" $(mhdr server/discover)
is "$STATUS" 200 "a request next to the unfinished upload is served"

# A body sent in pieces with pauses arrives whole (no truncation).
body=$(req 12 server/discover)
( printf '%s' "${body:0:40}"; sleep 0.4; printf '%s' "${body:40:40}"; sleep 0.4; printf '%s' "${body:80}" ) |
	env -i REQUEST_METHOD=POST CONTENT_TYPE=application/json "CONTENT_LENGTH=${#body}" \
	REQUEST_URI=/mcp $(mhdr server/discover) cgi-fcgi -bind -connect "$TCP" >"$T_DIR/slow" 2>&1
cgi_parse "$T_DIR/slow"
is "$STATUS/$(jqr .id)" 200/12 "a slowly sent body is read whole"

# A large body spans many FastCGI records.
phantom_listen "$T_DIR/big.yaml" || { echo "not ok $((T_N + 1)) - phantom (1 MiB) starts"; exit 1; }
pad=$(head -c 700000 /dev/zero | tr '\0' ' ')
fcgi_post "$PH_ADDR" "$(req 13 server/discover)$pad" $(mhdr server/discover)
is "$STATUS/$(jqr .id)" 200/13 "a 700 kB body in many records is read whole"

grep -q "method=server/discover target=- status=200" "$TCP_LOG"; ok "requests are logged"
done_testing
