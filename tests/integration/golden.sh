#!/bin/bash
# Golden request/response files (tests/golden/*.json) for every step of the
# validation ladder and every protocol error: each is sent through nginx and,
# where it does not depend on HTTP headers, through --stdio, and the response
# is compared with the expected one as JSON. tests/unit/test_golden.c runs
# the same cases through ph_serve() without a web server.
#
# A golden file: {description, headers, body | raw, http_method?, content_type?,
#                 pad?, status, stdio, response | null, hub_response?,
#                 stdio_response?}
# hub_response, when present, is the answer through nginx, where a master
# runs its hub, and stdio_response the answer over stdio (resources.subscribe
# is advertised only where a hub or the stdio process watches the files);
# response is then the answer without either (test_golden.c).
. "${top_srcdir:-.}/tests/lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
command -v jq >/dev/null || skip_all "jq not installed"

# the configuration the cases are written against, shared with test_golden.c
cp "$top_srcdir/tests/golden/phantom.yaml" "$T_DIR/phantom.yaml"
behind_nginx phantom_listen "$T_DIR/phantom.yaml"

# body_of FILE: the request bytes of a golden file
body_of() {
	local f=$1
	if jq -e 'has("raw")' "$f" >/dev/null; then
		jq -j .raw "$f"
	elif jq -e 'has("pad")' "$f" >/dev/null; then
		jq -c '.body + {pad: ("x" * .pad)}' "$f"
	else
		jq -c .body "$f"
	fi
}

for f in "$top_srcdir"/tests/golden/*.json; do
	name=$(basename "$f" .json)
	want_status=$(jq -r .status "$f")
	want=$(jq -S -c 'if has("stdio_response") then .stdio_response else .response end' "$f")
	want_http=$(jq -S -c 'if has("hub_response") then .hub_response else .response end' "$f")
	args=()
	while IFS= read -r h; do [ -n "$h" ] && args+=(-H "$h"); done \
		< <(jq -r '.headers | to_entries[] | "\(.key): \(.value)"' "$f")
	body=$(body_of "$f")
	if [ "$(jq -r '.http_method // "POST"' "$f")" = GET ]; then
		STATUS=$(curl -s -o "$T_DIR/out" -w '%{http_code}' "${args[@]}" "$NGINX_URL")
		BODY=$(cat "$T_DIR/out")
	else
		CT=$(jq -r '.content_type // "application/json"' "$f") post "$NGINX_URL" "$body" "${args[@]}"
	fi
	is "$STATUS" "$want_status" "$name (nginx): HTTP status"
	if [ "$want_http" = null ]; then
		is "$BODY" "" "$name (nginx): no body"
	else
		is "$(printf '%s' "$BODY" | jq -S -c . 2>/dev/null)" "$want_http" "$name (nginx): response"
	fi
	if [ "$(jq -r 'if .body.method == "initialize" and (.response.result != null) then 1 else 0 end' "$f")" = 1 ]; then
		like "$(header Mcp-Session-Id)" '^[!-~]+$' "$name (nginx): a legacy initialize opens a session (Mcp-Session-Id)"
	else
		is "$(header Mcp-Session-Id)" "" "$name (nginx): no Mcp-Session-Id"
	fi

	if [ "$(jq -r .stdio "$f")" = true ]; then
		got=$(printf '%s\n' "$body" | "$PHANTOM" -c "$T_DIR/phantom.yaml" --stdio 2>/dev/null)
		if [ "$want" = null ]; then
			is "$got" "" "$name (stdio): no output"
		else
			is "$(printf '%s' "$got" | jq -S -c . 2>/dev/null)" "$want" "$name (stdio): response"
		fi
	fi
done
mpost "$NGINX_URL" 99 server/discover '{}'
is "$STATUS" 200 "the server still serves after every golden case"
done_testing
