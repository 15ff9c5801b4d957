#!/bin/bash
# A small C program embedding libphantom (tests/embed/embed_demo.c) builds
# its registry through phantom.h and serves it on stdio and, behind nginx,
# over FastCGI; items from a configuration file are served next to it.
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/reglib.sh"
DEMO=$top_builddir/tests/embed/embed_demo
[ -x "$DEMO" ] || skip_all "embed_demo not built"

M='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
OUT=$(printf '%s\n' \
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{$M}}" \
	"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"add\",\"arguments\":{\"a\":2,\"b\":40},$M}}" \
	"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"add\",\"arguments\":{\"a\":5},$M}}" \
	"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"calls\",$M}}" \
	"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"prompts/get\",\"params\":{\"name\":\"haiku\",\"arguments\":{\"subject\":\"rain\"},$M}}" \
	"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"resources/read\",\"params\":{\"uri\":\"embed://about\",$M}}" \
	"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"resources/read\",\"params\":{\"uri\":\"embed://square/12\",$M}}" \
	"{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"completion/complete\",\"params\":{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"haiku\"},\"argument\":{\"name\":\"subject\",\"value\":\"au\"},$M}}" \
	"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"add\",\"arguments\":{\"a\":\"x\"},$M}}" \
	| "$DEMO" --stdio 2>"$T_DIR/stderr")
r() { printf '%s\n' "$OUT" | jq -r "select(.id==$1)|$2"; }
is "$(r 1 '[.result.tools[].name]|join(",")')" "add,calls" "stdio: the program's tools are listed"
is "$(r 1 '.result.tools[0].annotations.readOnlyHint')" true "annotations set from C"
is "$(r 2 '.result.content[0].text')/$(r 2 .result.structuredContent.sum)" "42/42" "a C tool handler runs"
is "$(r 3 .result.structuredContent.sum)" 5 "the schema's default reaches the handler"
is "$(r 4 '.result.content[0].text')" "add was called 2 times in this process" "handler user data persists in the process"
is "$(r 5 '.result.messages[0].content.text')" "Write a haiku about rain." "a C prompt handler"
is "$(r 6 '.result.contents[0].text')" "Served by a program embedding libphantom." "a text resource added from C"
is "$(r 7 '.result.contents[0].text')" 144 "a C template handler gets the variables"
is "$(r 8 '.result.completion.values|join(",")')" "autumn,autotools" "a C completion handler"
like "$(r 9 '.result.content[0].text')" "Field a: expected integer" "arguments are validated for C tools too"
grep -q "libphantom .*ABI 1" "$T_DIR/stderr"; ok "the program sees the library version and ABI"

command -v nginx >/dev/null || { done_testing; exit $?; }
cat >"$T_DIR/extra.yaml" <<'YAML'
server: { name: embedded, version: "2.0" }
resources:
  - {uri: "conf://extra", text: "from the configuration file"}
YAML
PORT=$(free_port)
"$DEMO" --listen "127.0.0.1:$PORT" -c "$T_DIR/extra.yaml" 2>"$T_DIR/fcgi.log" &
T_PIDS+=("$!")
wait_port "$PORT" || { echo "not ok - embed_demo listens"; exit 1; }
nginx_start "127.0.0.1:$PORT" || { echo "not ok - nginx starts"; exit 1; }
mcall "$NGINX_URL" 20 tools/call '{"name":"add","arguments":{"a":1,"b":1}}'
is "$STATUS/$(jqr '.result.content[0].text')" "200/2" "FastCGI through nginx: the C tool answers"
is "$(jqr '.result._meta["io.modelcontextprotocol/serverInfo"].name')" embedded "the configuration file names the server"
mcall "$NGINX_URL" 21 resources/list '{}'
is "$(jqr '[.result.resources[].uri]|join(",")')" "conf://extra,embed://about" "configured items first, then the program's"
printf 'resources: [{uri: "embed://about", text: dup}]\n' >"$T_DIR/dup.yaml"
"$DEMO" --stdio -c "$T_DIR/dup.yaml" </dev/null 2>"$T_DIR/dup.err"
is "$?" 1 "a registry that duplicates a configured uri is refused"
like "$(cat "$T_DIR/dup.err")" "embed://about' is defined twice" "... saying which"
PHANTOM_FAST_PATHS=of "$DEMO" --stdio </dev/null 2>"$T_DIR/fast.err"
is "$?" 1 "PHANTOM_FAST_PATHS neither on nor off: phantom_server_new refuses"
like "$(cat "$T_DIR/fast.err")" "PHANTOM_FAST_PATHS is 'of': it is on or off" "... saying why"
printf '%s\n' "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"add\",\"arguments\":{\"a\":2,\"b\":3},$M}}" |
	PHANTOM_FAST_PATHS=off "$DEMO" --stdio >"$T_DIR/fast.out" 2>"$T_DIR/fast.err"
is "$(jq -r '.result.content[0].text' <"$T_DIR/fast.out")" 5 "PHANTOM_FAST_PATHS=off: the C tool answers"
done_testing
