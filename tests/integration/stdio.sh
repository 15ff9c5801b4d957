#!/bin/bash
# --stdio: newline-delimited JSON-RPC on stdin/stdout. Requests are answered
# one line each, errors too; notifications get no line; stdout carries
# nothing but JSON (the request log goes to stderr); EOF ends it at once.
. "${top_srcdir:-.}/tests/lib.sh"

test_conf "$T_DIR/phantom.yaml" stdio-test
in=$T_DIR/in out=$T_DIR/out err=$T_DIR/err
big=$(printf '%3000s' '' | tr ' ' 'x')
{
	req 1 server/discover; echo
	echo '{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
	echo '{"jsonrpc":"2.0","method":"notifications/initialized"}'
	echo '{"jsonrpc":"2.0","id":3,"method":"ping"}'
	echo '{"jsonrpc":"2.0","id":4,'
	echo '[{"jsonrpc":"2.0","id":5,"method":"ping","params":{"_meta":'"$(meta)"'}}]'
	echo '{"jsonrpc":"2.0","id":6,"result":{}}'
	echo '{"jsonrpc":"2.0","id":7,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}'
	req 8 no/such/method; echo
	echo '{"jsonrpc":"2.0","id":9,"method":"ping","params":{"pad":"'"$big"'"}}'
	echo
	echo '{"jsonrpc":"2.0","id":10,"method":"ping"}'
} >"$in"
"$PHANTOM" -c "$T_DIR/phantom.yaml" --stdio <"$in" >"$out" 2>"$err"
is "$?" 0 "--stdio exits 0 at the end of its input"
# one process: no request_state secret is nothing to warn a desktop user about
is "$(grep -c 'request_state has no secret' "$err")" 0 "stdio logs no notice about the missing request_state secret"

# line N of stdout, and jq on it
line() { sed -n "$1p" "$out"; }
lj() { line "$1" | jq -r "$2"; }
is "$(wc -l <"$out")" 10 "one line per request, none for the notification or the empty line"
jq -e . "$out" >/dev/null; ok "every line on stdout is JSON"
is "$(jq -c 'select(.jsonrpc != "2.0")' "$out")" "" "every line on stdout is a JSON-RPC message"
is "$(lj 1 .id)/$(lj 1 .result.resultType)" 1/complete "discover answered"
is "$(lj 1 '.result._meta["io.modelcontextprotocol/serverInfo"].name')" stdio-test "discover: serverInfo"
is "$(lj 2 .result.protocolVersion)/$(lj 2 .result.serverInfo.name)" 2025-11-25/stdio-test \
	"legacy initialize answered"
is "$(lj 3 .id)/$(lj 3 '.result|tojson')" '3/{}' "ping answered after the notification"
is "$(lj 4 .error.code)/$(lj 4 .id)" -32700/null "invalid JSON: -32700, id null"
is "$(lj 5 .error.code)" -32600 "a batch holding a 2026-07-28 request: -32600"
is "$(lj 6 .error.code)/$(lj 6 .id)" -32600/6 "a posted response: -32600 with its id"
is "$(lj 7 .error.code)/$(lj 7 .error.data.requested)" -32022/2099-01-01 "unsupported version: -32022"
is "$(lj 8 .error.code)/$(lj 8 .id)" -32601/8 "unknown method: -32601 with its id"
is "$(lj 9 .error.code)" -32000 "a line over http.max_body is refused"
is "$(lj 10 .id)/$(lj 10 '.result|tojson')" '10/{}' "the request after all the errors is served"
grep -q 'phantom\[[0-9]*\] method=ping ' "$err"; ok "the request log goes to stderr"
grep -vq '^[0-9T:.-]*Z phantom\[' "$err"; is "$?" 1 "stderr has only log lines"

# EOF while idle: the process ends at once
stdio_start "$T_DIR/err2" "$T_DIR/phantom.yaml"
pid=$STDIO_PID
stdio_send '{"jsonrpc":"2.0","id":"a","method":"ping"}'
stdio_read reply 5
is "$(printf '%s' "$reply" | jq -r .id)" a "a request is answered while stdin stays open"
t0=$(date +%s%N)
stdio_stop 2
ok "the process exits after EOF on stdin"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$ms" -lt 1000 ]; ok "it exits promptly on EOF (${ms} ms)"
wait "$pid"; is "$?" 0 "exit status 0 on EOF"

# a module's progress: every notification on the wire, in order, before
# the result (the SDK clients may drop some of them: sdk-v2-features.mjs)
test_conf "$T_DIR/progress.yaml" stdio-progress "tools:" \
	"  - { name: count_to, input: {n: integer, delay_ms: integer}, module: $top_builddir/examples/module/.libs/phantom_example.so, symbol: count_to }"
req 1 tools/call '{"name":"count_to","arguments":{"n":3,"delay_ms":10}}' |
	jq -c '.params._meta.progressToken = "p1"' >"$T_DIR/progress.in"
"$PHANTOM" -c "$T_DIR/progress.yaml" --stdio <"$T_DIR/progress.in" >"$T_DIR/progress.out" 2>"$T_DIR/progress.err"
is "$(jq -r 'if .method == "notifications/progress" then "\(.params.progressToken):\(.params.progress)"
	else "\(.id):\(.result.content[0].text)" end' "$T_DIR/progress.out" | tr '\n' ' ')" \
	"p1:1 p1:2 p1:3 1:counted to 3 " "a module's three progress notifications, in order, then its result"

# a closed stdout is not a crash
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"ping"}' '{"jsonrpc":"2.0","id":2,"method":"ping"}' |
	"$PHANTOM" -c "$T_DIR/phantom.yaml" --stdio 2>"$err" >&-
rc=$?
[ "$rc" -lt 128 ]; ok "a closed stdout ends the process without a signal (status $rc)"
done_testing
