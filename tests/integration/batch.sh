#!/bin/bash
# Legacy JSON-RPC batches behind the real nginx and on stdio: a client on
# 2025-03-26 (no MCP-Protocol-Version header, or that version in it) or
# 2024-11-05 gets one array of responses, in order, nothing for its
# notifications; 2025-06-18, 2025-11-25 and 2026-07-28 keep getting -32600.
. "${top_srcdir:-.}/tests/lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"

mkdir -p "$T_DIR/www"
echo "hello from a file" >"$T_DIR/www/hello.txt"
test_conf "$T_DIR/phantom.yaml" batch-test 'workers: 2' 'limits: { batch_max: 8 }' \
	'resources: [ { uri: "file:///hello.txt", name: hello, file: www/hello.txt, mime_type: text/plain } ]' \
	'tools: [ { name: echo, description: Echo, input: { text: { type: string, required: true } }, exec: [ "/bin/cat" ] } ]'
phantom_unix "$T_DIR/phantom.yaml" || { echo "not ok 1 - phantom starts"; exit 1; }
nginx_start "$PH_BACKEND" || { echo "not ok 1 - nginx starts"; exit 1; }
U=$NGINX_URL

mixed='[{"jsonrpc":"2.0","id":1,"method":"ping"},
 {"jsonrpc":"2.0","method":"notifications/initialized"},
 {"jsonrpc":"2.0","id":"r","method":"resources/read","params":{"uri":"file:///hello.txt"}},
 {"jsonrpc":"2.0","id":3,"method":"tools/list"},
 {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}},
 {"jsonrpc":"2.0","id":4,"method":"no/such/method"},
 {"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"file:///nope"}},
 42]'
post "$U" "$mixed" -H "MCP-Protocol-Version: 2025-03-26"
is "$STATUS" 200 "2025-03-26 batch of requests and notifications: 200"
like "$(header Content-Type)" '^application/json' "answered as one JSON document"
is "$(jqr 'type')/$(jqr length)" "array/6" "one response per request, none for the two notifications"
is "$(jqr '[.[].id]|tojson')" '[1,"r",3,4,5,null]' "responses in the order of the requests"
is "$(jqr '.[0].result|tojson')" '{}' "ping answered"
is "$(jqr '.[1].result.contents[0].text')" "hello from a file" "resources/read answered"
is "$(jqr '.[2].result.tools[0].name')" echo "tools/list answered"
is "$(jqr '.[1].result.resultType // "none"')" none "entries are legacy results (no resultType)"
is "$(jqr '.[3].error.code')" -32601 "an unknown method is an error entry in its place"
is "$(jqr '.[4].error.code')" -32002 "a legacy not-found is -32002 in its place"
is "$(jqr '.[5].error.code')" -32600 "a non-object entry is -32600 with id null"

post "$U" '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]'
is "$STATUS/$(jqr '[.[].id]|tojson')" '200/[1,2]' "no MCP-Protocol-Version header: 2025-03-26, a batch"
post "$U" '[{"jsonrpc":"2.0","id":1,"method":"ping"}]' -H "MCP-Protocol-Version: 2024-11-05"
is "$STATUS/$(jqr '.[0].id')" 200/1 "2024-11-05: a batch"
post "$U" '[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}]' \
	-H "MCP-Protocol-Version: 2025-03-26"
is "$STATUS/$(jqr '.[0].id')" 200/1 "a tools/call in a batch is answered"
post "$U" '[{"jsonrpc":"2.0","method":"notifications/initialized"}]' -H "MCP-Protocol-Version: 2025-03-26"
is "$STATUS/$BODY" 202/ "a batch of notifications only: 202, no body"

for v in 2025-06-18 2025-11-25 "$MODERN"; do
	post "$U" '[{"jsonrpc":"2.0","id":1,"method":"ping"}]' -H "MCP-Protocol-Version: $v"
	is "$STATUS/$(jqr .error.code)/$(jqr .id)" 400/-32600/null "a batch from a $v client: 400 -32600"
done
post "$U" "[$(req 1 server/discover)]"
is "$STATUS/$(jqr .error.code)" 400/-32600 "a batch holding a 2026-07-28 request: -32600"
post "$U" '[]' -H "MCP-Protocol-Version: 2025-03-26"
is "$STATUS/$(jqr .error.code)" 400/-32600 "an empty batch: -32600"
post "$U" "$(jq -nc '[range(0;9)|{jsonrpc:"2.0",id:.,method:"ping"}]')"
is "$STATUS/$(jqr .error.code)" 400/-32600 "a batch over limits.batch_max (8 here): -32600"
post "$U" "$(jq -nc '[range(0;8)|{jsonrpc:"2.0",id:.,method:"ping"}]')"
is "$STATUS/$(jqr length)" 200/8 "a batch of exactly limits.batch_max is served"
still_serving "$U" "the batch errors"
grep -q 'method=batch ' "$PH_LOG"; ok "a batch has its own log line"
grep -q 'method=resources/read target=file:///hello.txt' "$PH_LOG"; ok "each entry is logged too"

# stdio: no headers, so a batch is 2025-03-26 unless it carries a 2026-07-28 request
out=$T_DIR/stdio.out
{
	printf '%s\n' "$(printf '%s' "$mixed" | tr -d '\n')"
	echo "[$(req 2 server/discover)]"
	echo '{"jsonrpc":"2.0","id":9,"method":"ping"}'
} | "$PHANTOM" -c "$T_DIR/phantom.yaml" --stdio >"$out" 2>"$T_DIR/stdio.err"
is "$(wc -l <"$out")" 3 "stdio: one line for the batch, one for each other message"
is "$(sed -n 1p "$out" | jq -c '[.[].id]')" '[1,"r",3,4,5,null]' "stdio: the batch answered as one array line"
is "$(sed -n 2p "$out" | jq -r .error.code)" -32600 "stdio: a batch holding a 2026-07-28 request: -32600"
is "$(sed -n 3p "$out" | jq -r .id)" 9 "stdio: the next message is served"
done_testing
