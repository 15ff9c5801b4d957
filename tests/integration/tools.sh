#!/bin/bash
# Tools through the real nginx: tools/list (order, pages, cache hints),
# tools/call with argument validation, the exec contract, every handler
# failure mode (each followed by a request that must succeed, and no
# process left behind), progress over SSE, cancellation, module handlers,
# required client capabilities (-32021) and Mcp-Param-* headers (-32020).
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/reglib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"

B=$T_DIR/bin
mkdir -p "$B"
script() { printf '#!/bin/sh\n%s\n' "$2" >"$B/$1"; chmod +x "$B/$1"; }
# the request document comes back as structuredContent
script echo_input.sh 'printf "{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}],\"structuredContent\":"; cat; printf "}\n"'
script exit3.sh 'cat >/dev/null; echo "secret detail for the log only" >&2; exit 3'
script slow.sh 'echo $$ >"$1"; sleep 30'
script crash.sh 'kill -SEGV $$'
script badjson.sh 'echo "this is not json"'
script big.sh 'head -c 100000 /dev/zero | tr "\0" x'
script badresult.sh 'echo "{\"content\":\"not a list\"}"'
script progress.sh 'for i in 1 2 3; do sleep 0.3; echo "{\"progress\":$i,\"total\":3,\"message\":\"step $i\"}" >&3; done; echo "{\"level\":\"info\",\"data\":\"almost done\"}" >&3; echo "{\"content\":[{\"type\":\"text\",\"text\":\"done\"}]}"'
script cancel.sh 'echo $$ >"$1"; sleep 60 & echo $! >"$1.child"; echo "{\"progress\":1}" >&3; wait'
script structured.sh 'echo "{\"structuredContent\":{\"count\":3}}"'

cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: tools-test, version: "1.0", page_size: 3 }
workers: 2
limits: { exec_timeout_ms: 5000, exec_grace_ms: 200 }
tools:
  ttl_ms: 1234
  scope: public
  items:
    - name: check
      description: Validates its arguments and shows the exec input
      input:
        study_id: {type: integer, required: true, minimum: 1, maximum: 100}
        tags: {type: array, items: string}
        mode: {type: string, in: [fast, slow], default: fast}
        address: {type: object, fields: {city: {type: string, required: true}}}
      exec: [$B/echo_input.sh]
    - name: raw
      input_schema:
        type: object
        properties:
          limit: {type: integer, maximum: 100}
          kind: {oneOf: [{const: a}, {const: b}]}
        required: [limit]
        additionalProperties: false
      exec: [$B/echo_input.sh]
    - { name: exit3, exec: [$B/exit3.sh] }
    - { name: timeout, exec: [$B/slow.sh, $T_DIR/slow.pid], timeout_ms: 300 }
    - { name: crash, exec: [$B/crash.sh] }
    - { name: badjson, exec: [$B/badjson.sh] }
    - { name: big, exec: [$B/big.sh], max_output: 1024 }
    - { name: badresult, exec: [$B/badresult.sh] }
    - { name: progress, exec: [$B/progress.sh] }
    - { name: cancel, exec: [$B/cancel.sh, $T_DIR/cancel.pid] }
    - name: structured
      output_schema: {type: object, properties: {count: {type: integer}}, required: [count]}
      exec: [$B/structured.sh]
    - { name: all_content, module: testmod.so, symbol: all_content }
    - { name: fail_null, module: testmod.so, symbol: fail_null }
    - { name: tool_error, module: testmod.so, symbol: tool_error }
    - name: bad_output
      output_schema: {type: object, properties: {count: {type: integer}}, required: [count]}
      module: testmod.so
      symbol: bad_output
    - name: good_output
      input: { n: {type: integer, default: 1} }
      output_schema: {type: object, properties: {count: {type: integer, minimum: 1}}, required: [count]}
      module: testmod.so
      symbol: good_output
    - { name: slow_module, input: {marker: string}, module: testmod.so, symbol: slow }
    - name: needs_sampling
      requires: [sampling, elicitation]
      module: testmod.so
      symbol: whoami
    - name: headers
      input:
        region: {type: string, x-mcp-header: Region}
        priority: {type: integer, x-mcp-header: Priority}
        verbose: {type: boolean, x-mcp-header: Verbose}
        target: {type: object, fields: {zone: {type: string, x-mcp-header: Zone}}}
        query: {type: string}
      module: testmod.so
      symbol: args_echo
YAML
behind_nginx phantom_up "$T_DIR/phantom.yaml"

still() {
	mcall "$U" 99 tools/call '{"name":"check","arguments":{"study_id":1}}'
	is "$STATUS/$(fjq .result.isError)" "200/false" "the next call after $1 still succeeds"
}
call() { local id=$1 p=$2; shift 2; mcall "$U" "$id" tools/call "$p" "$@"; }

# ---- tools/list -------------------------------------------------------------
mcall "$U" 1 tools/list '{}'
is "$STATUS" 200 "tools/list: 200"
is "$(jqr '[.result.tools[].name]|join(",")')" "check,raw,exit3" "first page: configuration order, page_size 3"
is "$(jqr .result.ttlMs)/$(jqr .result.cacheScope)" "1234/public" "the tools list has its own cache hints"
is "$(jqr '.result.tools[0].inputSchema.required|join(",")')" "study_id" "DSL fields become inputSchema.required"
is "$(jqr '.result.tools[0].inputSchema.properties.mode.enum|join(",")')" "fast,slow" "'in' becomes enum"
is "$(jqr '.result.tools[1].inputSchema.additionalProperties')" "false" "a raw input_schema is passed as written"
CUR=$(jqr .result.nextCursor)
mcall "$U" 2 tools/list "{\"cursor\":\"$CUR\"}"
is "$(jqr '[.result.tools[].name]|join(",")')" "timeout,crash,badjson" "second page follows the cursor"
is "$(jqr .result.cacheScope)" public "every page has the same cacheScope"
N=0; CUR=""
while :; do
	if [ -z "$CUR" ]; then mcall "$U" 3 tools/list '{}'; else mcall "$U" 3 tools/list "{\"cursor\":\"$CUR\"}"; fi
	N=$((N + $(jqr '.result.tools|length')))
	CUR=$(jqr '.result.nextCursor // empty')
	[ -z "$CUR" ] && break
done
is "$N" 19 "walking every page lists every tool once"
mcall "$U" 4 tools/list '{"cursor":"bm90LWEtY3Vyc29y"}'
is "$(jqr .error.code)" -32602 "an invalid cursor is -32602"
still "an invalid cursor"

# ---- tools/call: arguments ----------------------------------------------------
call 10 '{"name":"nope"}'
is "$STATUS/$(jqr .error.code)" "200/-32602" "unknown tool: -32602 (in-band, HTTP 200)"
like "$(jqr .error.message)" "Unknown tool: nope" "the message names the tool"
call 11 '{"name":"check","arguments":[1]}'
is "$(jqr .error.code)" -32602 "arguments that are not an object: -32602"
call 12 '{"name":"check","arguments":{}}'
is "$(jqr .result.isError)" true "a validation failure is a tool result with isError"
is "$(jqr '.result.content[0].text')" "Invalid tool arguments: Missing required field: study_id" "missing field message"
call 13 '{"name":"check","arguments":{"study_id":500,"tags":["a",42],"address":{}}}'
like "$(jqr '.result.content[0].text')" "Field study_id: must be <= 100" "maximum message"
like "$(jqr '.result.content[0].text')" 'Field tags\[1\]: expected string, got 42' "array item path and type"
like "$(jqr '.result.content[0].text')" "Missing required field: address.city" "nested path"
call 14 '{"name":"raw","arguments":{"limit":1,"kind":"c","extra":true}}'
like "$(jqr '.result.content[0].text')" "Unknown field: extra" "a raw schema is validated too (additionalProperties)"
like "$(jqr '.result.content[0].text')" "oneOf" "oneOf in a raw schema"
call 15 '{"name":"check","arguments":{"study_id":7}}'
is "$(jqr .result.isError)" false "valid arguments: the handler runs"
is "$(jqr .result.structuredContent.arguments.mode)" fast "defaults are applied before the handler sees the arguments"
is "$(jqr .result.structuredContent.kind)/$(jqr .result.structuredContent.name)" "tool/check" "exec stdin: kind and name"
is "$(jqr .result.structuredContent.principal)" null "exec stdin: principal (none)"
is "$(jqr '.result.structuredContent.clientCapabilities|type')" object "exec stdin: clientCapabilities"
is "$(jqr '.result.structuredContent.meta["io.modelcontextprotocol/protocolVersion"]')" 2026-07-28 "exec stdin: the request _meta"
is "$(jqr '.result.content[0].text')" ok "content passes through"
is "$(jqr .result.resultType)" complete "resultType complete"
is "$(jqr '.result.ttlMs // "none"')" none "tools/call carries no cache hints"

# ---- handler failures: generic message, details only in the log --------------
call 20 '{"name":"exit3"}'
is "$(jqr .result.isError)/$(jqr '.result.content[0].text')" "true/Tool execution failed" "non-zero exit: isError, generic text"
if grep -q "secret detail" <<<"$BODY"; then false; else true; fi; ok "stderr never reaches the client"
grep -q "tool exit3: stderr: secret detail for the log only" "$PH_LOG"; ok "stderr goes to the server log"
grep -q "tool exit3: .*exit status 3" "$PH_LOG"; ok "the log says why (exit status 3)"
still "a non-zero exit"

T0=$(date +%s%N)
call 21 '{"name":"timeout"}'
T1=$(date +%s%N)
is "$(jqr .result.isError)/$(jqr '.result.content[0].text')" "true/Tool execution failed" "timeout: isError, generic text"
[ $(( (T1 - T0) / 1000000 )) -lt 2500 ]; ok "the timeout (300 ms) is kept"
grep -q "tool timeout: .*timed out" "$PH_LOG"; ok "the log says it timed out"
wait_gone "$(cat "$T_DIR/slow.pid")" 2; ok "the timed-out process is gone"
still "a timeout"

call 22 '{"name":"crash"}'
is "$(jqr .result.isError)" true "crash: isError"
grep -q "tool crash: .*killed by signal 11" "$PH_LOG"; ok "the log names the signal"
still "a crash"

call 23 '{"name":"badjson"}'
is "$(jqr .result.isError)/$(jqr '.result.content[0].text')" "true/Tool execution failed" "invalid JSON on stdout: isError"
grep -q "tool badjson: .*did not write one JSON object" "$PH_LOG"; ok "the log says the output was not JSON"
still "invalid JSON"

call 24 '{"name":"big"}'
is "$(jqr .result.isError)" true "output over max_output: isError"
grep -q "tool big: .*more output than allowed" "$PH_LOG"; ok "the log says the output was too large"
still "too much output"

call 25 '{"name":"badresult"}'
is "$(jqr .result.isError)" true "a result of the wrong shape: isError"
grep -q "tool badresult: content must be an array" "$PH_LOG"; ok "the log says what is wrong with it"

call 26 '{"name":"structured"}'
is "$(jqr .result.structuredContent.count)" 3 "structuredContent alone is accepted"
is "$(jqr '.result.content[0].text')" '{"count":3}' "... with a text copy for older clients"

sleep 0.3
is "$(zombies_below "$PH_PID")" 0 "no zombie process below the server"
is "$(count_below "$PH_PID" sleep)" 0 "no handler process left running"

# ---- progress over SSE, cancellation -------------------------------------------
PTOKEN=p1 mcall "$U" 30 tools/call '{"name":"progress"}'
like "$(header Content-Type)" "text/event-stream" "progress lines on fd 3 turn the response into SSE"
is "$(sse_data | jq -r 'select(.method=="notifications/progress")|.params.progress' | tr '\n' ,)" "1,2,3," "three progress notifications in order"
is "$(sse_data | jq -r 'select(.method=="notifications/progress")|.params.progressToken' | sort -u)" p1 "they carry the request's progressToken"
is "$(fjq .result.content[0].text)" done "the result ends the stream"
is "$(sse_data | jq -r 'select(.method=="notifications/message")|.method' | wc -l)" 0 "no log notification without logLevel"
mcall "$U" 31 tools/call '{"name":"progress"}'
like "$(header Content-Type)" "application/json" "without a progressToken the answer is plain JSON"
is "$(jqr '.result.content[0].text')" done "... with the result"

rm -f "$T_DIR/cancel.pid" "$T_DIR/cancel.pid.child"
curl -s -N --max-time 1 -o /dev/null -X POST -H 'Content-Type: application/json' \
	-H "MCP-Protocol-Version: $MODERN" -H 'Mcp-Method: tools/call' -H 'Mcp-Name: cancel' \
	--data-binary "$(PTOKEN=c1 mbody 32 tools/call '{"name":"cancel"}')" "$U"
wait_file "$T_DIR/cancel.pid.child"
wait_gone "$(cat "$T_DIR/cancel.pid")" 6; ok "a client closing the SSE stream kills the handler"
wait_gone "$(cat "$T_DIR/cancel.pid.child")" 6; ok "... and everything it started (the process group)"
still "a cancelled call"

rm -f "$T_DIR/marker"
curl -s -N --max-time 1 -o /dev/null -X POST -H 'Content-Type: application/json' \
	-H "MCP-Protocol-Version: $MODERN" -H 'Mcp-Method: tools/call' -H 'Mcp-Name: slow_module' \
	--data-binary "$(PTOKEN=c2 mbody 33 tools/call "{\"name\":\"slow_module\",\"arguments\":{\"marker\":\"$T_DIR/marker\"}}")" "$U"
wait_file "$T_DIR/marker"; ok "a module handler sees the cancelled flag"
still "a cancelled module call"

# ---- module handlers ---------------------------------------------------------------
call 40 '{"name":"all_content"}'
is "$(jqr '[.result.content[].type]|join(",")')" "text,image,audio,resource_link,resource,resource" "all content types"
is "$(jqr '.result.content[1].data')" "iVBORw0KGgo=" "image data is base64"
is "$(jqr '.result.content[4].resource.text')" "embedded text" "embedded text resource"
is "$(jqr '.result.content[5].resource.blob')" "AAEC" "embedded blob resource"
is "$(jqr '.result.content[3].uri')/$(jqr '.result.content[3].name')" "test://linked/linked" "resource link"
call 41 '{"name":"fail_null"}'
is "$(jqr .result.isError)/$(jqr '.result.content[0].text')" "true/Tool execution failed" "a module returning NULL: generic isError"
grep -q "tool fail_null: handler testmod.so:fail_null failed" "$PH_LOG"; ok "the log names the module and symbol"
call 42 '{"name":"tool_error"}'
is "$(jqr .result.isError)/$(jqr '.result.content[0].text')" "true/the date must be in the future" "a tool error the model can read"
call 43 '{"name":"bad_output"}'
is "$(jqr .result.isError)" true "structuredContent that violates output_schema: isError"
like "$(jqr '.result.content[0].text')" '^Invalid tool output: Field count: expected integer, got "many"' "the message says why"
grep -q 'tool bad_output: Invalid tool output' "$PH_LOG"; ok "output violations are logged"
call 44 '{"name":"good_output"}'
is "$(jqr .result.isError)/$(jqr .result.structuredContent.count)" "false/2" "valid structuredContent passes"
call 45 '{"name":"good_output","arguments":{"n":0}}'
like "$(jqr '.result.content[0].text')" "Invalid tool output: Field count: must be >= 1" "output schema keywords are checked"

# ---- step 9: required client capabilities -----------------------------------------
call 50 '{"name":"needs_sampling"}'
is "$STATUS/$(jqr .error.code)" "400/-32021" "a missing client capability: 400 -32021"
is "$(jqr '.error.data.requiredCapabilities|keys|join(",")')" "elicitation,sampling" "data.requiredCapabilities is an object of the missing ones"
is "$(jqr .id)" 50 "the id is echoed"
CAPS='{"sampling":{}}' mcall "$U" 51 tools/call '{"name":"needs_sampling"}'
is "$(jqr '.error.data.requiredCapabilities|keys|join(",")')" "elicitation" "only what is still missing is listed"
CAPS='{"sampling":{},"elicitation":{}}' mcall "$U" 52 tools/call '{"name":"needs_sampling"}'
is "$STATUS" 200 "with the capabilities declared the tool runs"
like "$(jqr '.result.content[0].text')" 'elicitation=1 caps=\{"sampling":\{\},"elicitation":\{\}\}' "the handler sees the capabilities"
like "$(jqr '.result.content[0].text')" 'kind=tool/1$' "the handler sees its kind as the word and as PHANTOM_KIND_TOOL"
lcall "$U" 53 tools/call '{"name":"needs_sampling"}'
is "$(jqr '.error.code // "none"')" none "legacy requests are not checked (capabilities were declared at initialize)"

# ---- step 10: Mcp-Param-* headers ----------------------------------------------------
H='{"name":"headers","arguments":{"region":"us-west1","priority":42,"verbose":true,"target":{"zone":"b"},"query":"x"}}'
call 60 "$H" -H 'Mcp-Param-Region: us-west1' -H 'Mcp-Param-Priority: 42' -H 'Mcp-Param-Verbose: true' -H 'Mcp-Param-Zone: b'
is "$STATUS/$(jqr .result.isError)" "200/false" "matching Mcp-Param headers: the call runs"
call 61 "$H" -H 'Mcp-Param-Priority: 42' -H 'Mcp-Param-Verbose: true' -H 'Mcp-Param-Zone: b'
is "$STATUS/$(jqr .error.code)" "400/-32020" "a missing Mcp-Param header: 400 -32020"
like "$(jqr .error.message)" "Mcp-Param-Region" "the message names the header"
call 62 "$H" -H 'Mcp-Param-Region: eu-1' -H 'Mcp-Param-Priority: 42' -H 'Mcp-Param-Verbose: true' -H 'Mcp-Param-Zone: b'
is "$STATUS/$(jqr .error.code)" "400/-32020" "a different value: 400 -32020"
like "$(jqr .error.message)" "Mcp-Param-Region header value 'eu-1' does not match body argument region" "... naming header and argument"
call 63 "$H" -H 'mcp-param-region:   us-west1  ' -H 'MCP-PARAM-PRIORITY: 42.0' -H 'Mcp-Param-Verbose: true' -H 'Mcp-Param-Zone: b'
is "$STATUS" 200 "names ignore case, values are trimmed, integers compare numerically (42.0)"
call 64 "$H" -H 'Mcp-Param-Region: US-WEST1' -H 'Mcp-Param-Priority: 42' -H 'Mcp-Param-Verbose: true' -H 'Mcp-Param-Zone: b'
is "$STATUS" 400 "values are case-sensitive"
call 65 "$H" -H 'Mcp-Param-Region: us-west1' -H 'Mcp-Param-Priority: 42' -H 'Mcp-Param-Verbose: True' -H 'Mcp-Param-Zone: b'
is "$STATUS" 400 "booleans are true/false exactly"
call 66 "$H" -H 'Mcp-Param-Region: us-west1' -H 'Mcp-Param-Priority: 42' -H 'Mcp-Param-Verbose: true' -H 'Mcp-Param-Zone: c'
like "$STATUS $(jqr .error.message)" "^400 .*Mcp-Param-Zone.*target.zone" "a nested argument is checked (path in the message)"
HB='{"name":"headers","arguments":{"region":"Hello"}}'
call 67 "$HB" -H 'Mcp-Param-Region: =?base64?SGVsbG8=?='
is "$STATUS" 200 "a base64 sentinel is decoded before comparing"
call 68 "$HB" -H 'Mcp-Param-Region: =?base64?SGVsbG8?='
is "$STATUS/$(jqr .error.code)" "400/-32020" "bad base64 padding: 400 -32020"
like "$(jqr .error.message)" "Mcp-Param-Region header has invalid base64" "... saying so"
call 69 "$HB" -H 'Mcp-Param-Region: =?base64?SGVs!!!bG8=?='
is "$STATUS" 400 "characters outside base64: 400"
call 70 '{"name":"headers","arguments":{"region":"SGVsbG8="}}' -H 'Mcp-Param-Region: SGVsbG8='
is "$STATUS" 200 "a value without the sentinel is literal"
call 71 '{"name":"headers","arguments":{"region":"=?base64?SGVsbG8="}}' -H 'Mcp-Param-Region: =?base64?SGVsbG8='
is "$STATUS" 200 "a sentinel without its suffix is literal"
call 72 '{"name":"headers","arguments":{"query":"only"}}'
is "$STATUS" 200 "absent annotated arguments need no header"
call 73 '{"name":"headers","arguments":{"region":null}}'
is "$STATUS" 200 "a null argument needs no header"
call 74 '{"name":"headers","arguments":{"query":"q"}}' -H 'Mcp-Param-Region: us'
is "$STATUS/$(jqr .error.code)" "400/-32020" "a header claiming an absent argument: 400"
call 75 '{"name":"headers","arguments":{"region":"caf\u00e9"}}' -H 'Mcp-Param-Region: =?base64?Y2Fmw6k=?='
is "$STATUS" 200 "non-ASCII values travel base64-encoded"
lcall "$U" 76 tools/call '{"name":"headers","arguments":{"region":"x"}}'
is "$(jqr .result.isError)" false "legacy requests carry no Mcp-Param headers"
still "header errors"

# ---- legacy era -------------------------------------------------------------------
lcall "$U" 80 tools/list '{}'
is "$(jqr '.result.tools|length')/$(jqr '.result.resultType // "none"')" "3/none" "legacy tools/list: no resultType"
is "$(jqr '.result.ttlMs // "none"')" none "legacy results carry no cache hints"
lcall "$U" 81 tools/call '{"name":"check","arguments":{}}'
is "$(jqr .result.isError)" true "legacy validation failures are tool results too"

# ---- configuration errors --------------------------------------------------------------
bad() {
	printf '%s\n' "$2" >"$T_DIR/bad.yaml"
	OUT=$("$PHANTOM" -c "$T_DIR/bad.yaml" -t 2>&1); RC=$?
	is "$RC" 1 "-t refuses $1"
	like "$OUT" "$3" "... and says: $3"
}
bad "an invalid x-mcp-header" "tools:
  - name: t
    input: {a: {type: number, x-mcp-header: A}}
    exec: [/bin/true]" 'bad.yaml:3: tools\[0\] \(t\): .*x-mcp-header'
bad "a duplicate x-mcp-header" 'tools:
  - name: t
    input_schema: {type: object, properties: {a: {type: string, x-mcp-header: X}, b: {type: string, x-mcp-header: x}}}
    exec: [/bin/true]' 'ignoring case'
bad "x-mcp-header under items" 'tools:
  - name: t
    input_schema: {type: object, properties: {a: {type: array, items: {type: string, x-mcp-header: X}}}}
    exec: [/bin/true]' 'through "properties"'
bad "a header name with a space" 'tools:
  - name: t
    input: {a: {type: string, x-mcp-header: "My Region"}}
    exec: [/bin/true]' 'letters, digits'
bad "a tool without handler" 'tools: [{name: t}]' 'needs a handler'
bad "a missing command" 'tools: [{name: t, exec: [./no-such-script]}]' "cannot run './no-such-script'"
bad "both exec and module" 'tools: [{name: t, exec: [/bin/true], module: x.so, symbol: y}]' 'exclude each other'
bad "an unknown key in a tool" 'tools: [{name: t, exec: [/bin/true], colour: red}]' "unknown key 'colour'"
bad "a duplicate tool" 'tools: [{name: t, exec: [/bin/true]}, {name: t, exec: [/bin/true]}]' 'defined twice'
bad "a bad tool name" 'tools: [{name: "a b", exec: [/bin/true]}]' 'tool name'
bad "a module built for another ABI" 'tools: [{name: t, module: badabi.so, symbol: handler}]' 'built for ABI'
bad "a module without PHANTOM_MODULE()" 'tools: [{name: t, module: noabi.so, symbol: handler}]' 'PHANTOM_MODULE'
bad "a missing symbol" 'tools: [{name: t, module: testmod.so, symbol: nope}]' "no symbol 'nope'"
bad "a raw schema whose root is not an object" 'tools: [{name: t, input_schema: {type: array}, exec: [/bin/true]}]' 'root'
bad "an invalid pattern" 'tools: [{name: t, input: {a: {pattern: "(?=x)"}}, exec: [/bin/true]}]' "field 'a'"
bad "a bad env entry" 'tools: [{name: t, exec: [/bin/true], env: ["1BAD"]}]' 'NAME or NAME=value'
bad "a timeout out of range" 'tools: [{name: t, exec: [/bin/true], timeout_ms: 0}]' 'timeout_ms'
done_testing
