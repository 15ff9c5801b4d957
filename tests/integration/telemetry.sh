#!/bin/bash
# OpenTelemetry over OTLP/HTTP (issue 40): a collector stand-in
# (otel_collector.cjs) decodes what Phantom sends with the OpenTelemetry
# project's own protobuf definitions (@opentelemetry/otlp-transformer's
# generated root, from opentelemetry-proto). Over stdio and behind nginx
# with a master: the SERVER span of each kind of call (module, exec,
# persistent tool, prompts/get, resources/read), its attributes, parent and
# links, the child span of each handler run, the exec handler's own span
# joining the trace through TRACEPARENT, a persistent handler reading each
# call's own handler span in meta.traceparent (the client's _meta untouched
# with telemetry off), the status rule (-32602 is not an
# error, -32603 and a tool's isError are), a legacy session's call parked
# for an elicitation, a task's run linked to its request, an OAuth token
# check that was not remembered; the histograms of
# mcp.server.operation.duration; the variables winning over telemetry:, the
# headers reaching the collector and never the log; a collector answering
# 503 then 200 loses nothing; a collector that is down costs no request and
# the dropped records are counted in /metrics.
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/reglib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
command -v jq >/dev/null || skip_all "jq not installed"
command -v python3 >/dev/null || skip_all "python3 not installed"
otel_collector_supported
"$PHANTOM" -V 2>&1 | grep -q oauth || true
export PHANTOM_MODULE_PATH=${PHANTOM_MODULE_PATH:-$top_builddir/tests/modules/.libs}

# coll_start NAME [FAIL_FIRST]: a collector; sets C_URL and C_OUT (its JSON lines)
coll_start() {
	local dir=$T_DIR/$1
	mkdir -p "$dir"
	: >"$dir/out"
	OUT=$dir/out PORT_FILE=$dir/port FAIL_FIRST=${2:-0} PHANTOM_NPM_DIR=$NPM \
		"$NODE" "$top_srcdir/tests/integration/otel_collector.cjs" 2>"$dir/err" &
	T_PIDS+=("$!")
	wait_file "$dir/port" || { echo "not ok - the collector starts"; cat "$dir/err"; exit 1; }
	wait_for 5 test -s "$dir/port"
	C_URL=http://127.0.0.1:$(cat "$dir/port")
	C_OUT=$dir/out
}
# spans FILTER: the spans received, through a jq select filter
spans() { jq -c "select(.kind == \"span\") | select($1)" "$C_OUT"; }
# wait_span FILTER: waits (up to 15 s) for a span matching FILTER
wait_span() { wait_for 15 sh -c "[ -n \"\$(jq -c 'select(.kind == \"span\") | select($1)' '$C_OUT')\" ]"; }
# span FILTER: the last span matching FILTER, once there is one (batches
# come when they come)
span() { wait_span "$1"; spans "$1" | tail -1; }
sj() { printf '%s' "$1" | jq -r "$2"; }

# ---- handlers -------------------------------------------------------------------
# child.py: an exec tool instrumented on its own: it reads TRACEPARENT and
# posts its own span (OTLP JSON) to the collector
cat >"$T_DIR/child.py" <<'PY'
#!/usr/bin/env python3
import json, os, sys, time, secrets, urllib.request
req = json.load(sys.stdin)
tp = os.environ.get("TRACEPARENT", "")
ep = os.environ.get("COLLECTOR", "")
if tp and ep:
    _, trace, parent, flags = tp.split("-")
    now = time.time_ns()
    span = {"traceId": trace, "spanId": secrets.token_hex(8), "parentSpanId": parent,
            "name": "child work", "kind": 1, "startTimeUnixNano": str(now), "endTimeUnixNano": str(now + 1000),
            "attributes": [{"key": "child.flags", "value": {"stringValue": flags}}]}
    body = {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {"name": "child.py"}, "spans": [span]}]}]}
    r = urllib.request.Request(ep + "/v1/traces", data=json.dumps(body).encode(),
                               headers={"Content-Type": "application/json"})
    urllib.request.urlopen(r, timeout=5).read()
print(json.dumps({"content": [{"type": "text", "text": "child " + tp}]}))
PY
# warm.py: a persistent tool, one JSON line in and out per call; it answers
# with the trace context its call line carried in meta, and the
# TRACEPARENT of its environment
cat >"$T_DIR/warm.py" <<'PY'
#!/usr/bin/env python3
import sys, json, os
for line in sys.stdin:
    call = json.loads(line)
    meta = call.get("meta") or {}
    text = "warm %s %s env=%s" % (meta.get("traceparent", "-"), meta.get("tracestate", "-"),
                                  os.environ.get("TRACEPARENT", "-"))
    answer = {"content": [{"type": "text", "text": text}]}
    if "id" in call:
        answer["id"] = call["id"]
    print(json.dumps(answer), flush=True)
PY
chmod 0755 "$T_DIR/child.py" "$T_DIR/warm.py"
mkdir -p "$T_DIR/sb"
head -c 48 /dev/urandom | base64 >"$T_DIR/secret"

# conf FILE ENDPOINT [MORE-YAML]: tools, prompts and resources of every kind
conf() {
	cat >"$1" <<YAML
server: { name: otel-test, version: "1.0" }
workers: 2
request_state: { secret_file: secret }
http: { metrics: { path: /metrics } }
telemetry: { otlp: { endpoint: "$2"${COMP:+, compression: $COMP} }, service_name: from-yaml${TEL_EXTRA:+, $TEL_EXTRA} }
tools:
  - { name: mod, module: testmod.so, symbol: all_content }
  - { name: terr, module: testmod.so, symbol: tool_error }
  - { name: ex, exec: [$T_DIR/child.py], env: ["COLLECTOR=$C_URL"] }
  - { name: warm, exec: [$T_DIR/warm.py], persistent: true }
  - { name: bg, exec: [$T_DIR/warm.py], task: required }
$(delete_file_yaml "$T_DIR/sb")
prompts:
  - { name: greet, messages: [ { role: user, text: hello } ] }
  - { name: broken, module: testmod.so, symbol: fail_null }
resources:
  - { uri: "docs://readme", name: readme, text: "read me" }
${3:-}
YAML
	chmod 0644 "$1"
}

# ======== stdio ===========================================================================
coll_start stdio
COMP=gzip conf "$T_DIR/stdio.yaml" "$C_URL"
"$PHANTOM" -c "$T_DIR/stdio.yaml" -t >"$T_DIR/t.out" 2>&1
ok "-t accepts a telemetry: section"
TP_META=00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01
M='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
MTP='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"traceparent":"'$TP_META'"}'
stdio_start "$T_DIR/stdio.log" "$T_DIR/stdio.yaml"
stdio_send '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mod","arguments":{},'"$M"'}}'
stdio_send '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ex","arguments":{},'"$MTP"'}}'
stdio_send '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"warm","arguments":{},'"$M"'}}'
stdio_send '{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"greet",'"$M"'}}'
stdio_send '{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"docs://readme",'"$M"'}}'
stdio_send '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"nope","arguments":{},'"$M"'}}'
stdio_send '{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"broken",'"$M"'}}'
stdio_send '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"terr","arguments":{},'"$M"'}}'
# the persistent tool again, from two other traces (the first with a tracestate)
TP_A=00-a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1-a2a2a2a2a2a2a2a2-01
TP_B=00-b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1-b2b2b2b2b2b2b2b2-01
MTP_A='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"traceparent":"'$TP_A'","tracestate":"vendor=a"}'
MTP_B='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"traceparent":"'$TP_B'"}'
stdio_send '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"warm","arguments":{},'"$MTP_A"'}}'
stdio_send '{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"warm","arguments":{},'"$MTP_B"'}}'
for i in $(seq 1 10); do stdio_upto "$i" "$T_DIR/stdio.out" || break; done
grep -c '"jsonrpc"' "$T_DIR/stdio.out" | grep -qx 10
ok "stdio: the ten requests are answered"
C7=$(grep '"id":7' "$T_DIR/stdio.out" | jq -r .error.code)
stdio_stop 10
# the exporter outlives the stdio process: it sends what is left once every sender is gone
wait_span '.name == "prompts/get broken"'
ok "stdio: the last spans arrive after the server exited"

s=$(span '.name == "tools/call mod"')
is "$(sj "$s" '[.spanKind, .attributes["mcp.method.name"], .attributes["gen_ai.tool.name"], .attributes["gen_ai.operation.name"], .attributes["network.transport"], .attributes["mcp.protocol.version"], .attributes["jsonrpc.request.id"], .status.code] | join(" ")')" \
	"2 tools/call mod execute_tool pipe 2026-07-28 1 0" "a module tool: a SERVER span named {method} {tool} with the conventions' attributes"
is "$(sj "$s" '.resource["service.name"] + " " + .resource["telemetry.sdk.name"] + " " + .scope')" \
	"from-yaml phantom phantom" "the resource names the service (telemetry.service_name) and the SDK"
is "$(sj "$s" '.parentSpanId')" "" "without a trace context the span is a root"
h=$(span ".parentSpanId == \"$(sj "$s" .spanId)\"")
is "$(sj "$h" '.traceId == "'"$(sj "$s" .traceId)"'" and .attributes["phantom.handler.kind"] == "module"')" true \
	"the module's run is a child span in the same trace"

s=$(span '.name == "tools/call ex"')
is "$(sj "$s" '.traceId + " " + .parentSpanId')" "0af7651916cd43dd8448eb211c80319c b7ad6b7169203331" \
	"_meta's traceparent is the parent of the SERVER span"
h=$(span ".parentSpanId == \"$(sj "$s" .spanId)\" and .attributes[\"phantom.handler.kind\"] == \"exec\"")
[ -n "$h" ]; ok "the exec handler's run is a child span"
c=$(span '.name == "child work"')
is "$(sj "$c" '.traceId + " " + .parentSpanId + " " + .attributes["child.flags"]')" \
	"0af7651916cd43dd8448eb211c80319c $(sj "$h" .spanId) 01" \
	"the exec handler's own span joins the trace under its run's span (TRACEPARENT)"
s=$(span '.name == "tools/call warm"')
h=$(span ".parentSpanId == \"$(sj "$s" .spanId)\"")
is "$(sj "$h" '.attributes["phantom.handler.kind"]')" persistent "a persistent tool: SERVER span and the run's child span"
# warm_ctx ID: the trace context the persistent process read in the meta of
# call ID, and the one of that call's handler span (with its tracestate)
warm_ctx() {
	local s h
	s=$(span ".name == \"tools/call warm\" and .attributes[\"jsonrpc.request.id\"] == \"$1\"")
	h=$(span ".parentSpanId == \"$(sj "$s" .spanId)\" and .name == \"handler tool warm\"")
	W_GOT=$(jq -r "select(.id == $1) | .result.content[0].text" "$T_DIR/stdio.out" | cut -d' ' -f2,3)
	W_WANT="00-$(sj "$s" .traceId)-$(sj "$h" .spanId)-01 $2"
	W_PARENT=$(sj "$s" '.traceId + "-" + .parentSpanId')
}
warm_ctx 3 -
is "$W_GOT" "$W_WANT" "a persistent call without a trace context gets its handler span's in meta.traceparent"
warm_ctx 9 vendor=a
is "$W_GOT" "$W_WANT" "a later call to the same process: meta carries that call's handler span and tracestate"
is "$W_PARENT" a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1-a2a2a2a2a2a2a2a2 "the client's context stays the parent of the request's span"
warm_ctx 10 -
is "$W_GOT" "$W_WANT" "and the next call, from another trace, its own"
diag "the persistent process's environment: $(jq -r 'select(.id == 10) | .result.content[0].text' "$T_DIR/stdio.out" | cut -d' ' -f4)"
s=$(span '.name == "prompts/get greet"')
is "$(sj "$s" '.attributes["gen_ai.prompt.name"] + " " + (.status.code|tostring)')" "greet 0" "prompts/get: named by the prompt, gen_ai.prompt.name"
s=$(span '.attributes["mcp.method.name"] == "resources/read"')
is "$(sj "$s" '.name + " " + .attributes["mcp.resource.uri"]')" "resources/read docs://readme" \
	"resources/read: the method alone names it (no URI by default), mcp.resource.uri carries it"
s=$(span '.name == "tools/call nope"')
is "$(sj "$s" '.attributes["rpc.response.status_code"] + " " + .attributes["error.type"] + " " + (.status.code|tostring)')" \
	"-32602 -32602 0" "-32602 (invalid params) is recorded but is not a span error"
is "$C7" -32603 "a prompt handler that fails answers -32603"
s=$(span '.name == "prompts/get broken"')
is "$(sj "$s" '.attributes["rpc.response.status_code"] + " " + (.status.code|tostring)')" "-32603 2" "-32603 is a span error"
like "$(sj "$s" .status.message)" . "with the error's message as the status description"
s=$(span '.name == "tools/call terr"')
is "$(sj "$s" '.attributes["error.type"] + " " + (.status.code|tostring)')" "tool_error 2" "a tool's isError result: error.type tool_error, a span error"
wait_for 10 grep -q '"kind":"point"' "$C_OUT"
p=$(jq -c 'select(.kind == "point" and .name == "mcp.server.operation.duration")' "$C_OUT" | head -1)
is "$(sj "$p" '[.unit, .temporality, (.bounds | map(tostring) | join(","))] | join(" ")')" \
	"s 2 0.01,0.02,0.05,0.1,0.2,0.5,1,2,5,10,30,60,120,300" \
	"mcp.server.operation.duration: a cumulative histogram in seconds with the conventions' buckets"
n=$(jq -s '[.[] | select(.kind == "point" and .name == "mcp.server.operation.duration") | .count] | add' "$C_OUT")
is "$n" 10 "every request is counted once in the histogram"
grep -q '"encoding":"gzip"' "$C_OUT.requests"; ok "exports are gzipped (telemetry.otlp.compression gzip)"
test ! -s "$C_OUT.errors"; ok "the collector decoded every export"

# ======== behind nginx: a master, the variables, headers, 503 then 200 ====================
coll_start web 1
conf "$T_DIR/web.yaml" "http://127.0.0.1:9" "sessions: { park_timeout_ms: 8000 }
tasks: { dir: $T_DIR/tasks, poll_interval_ms: 200 }"
mkdir -p "$T_DIR/tasks"
export OTEL_EXPORTER_OTLP_ENDPOINT=$C_URL OTEL_SERVICE_NAME=from-env OTEL_BSP_SCHEDULE_DELAY=300 \
	OTEL_METRIC_EXPORT_INTERVAL=500 OTEL_EXPORTER_OTLP_HEADERS="x-test-token=s3cr%3Det"
behind_nginx phantom_up "$T_DIR/web.yaml"
unset OTEL_EXPORTER_OTLP_ENDPOINT OTEL_SERVICE_NAME OTEL_BSP_SCHEDULE_DELAY OTEL_METRIC_EXPORT_INTERVAL OTEL_EXPORTER_OTLP_HEADERS
pgrep -P "$PH_PID" -x phantom-otel >/dev/null; ok "the master runs an exporter process (phantom-otel)"
TP_HDR=00-11111111111111111111111111111111-2222222222222222-01
for i in $(seq 1 5); do
	mpost "$U" "$i" tools/call '{"name":"mod","arguments":{}}' -H "traceparent: $TP_HDR"
done
is "$STATUS" 200 "tools/call behind nginx"
post "$U" '{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"mod","arguments":{},'"$MTP"'}}' \
	-H "MCP-Protocol-Version: $MODERN" -H "Mcp-Method: tools/call" -H "Mcp-Name: mod" -H "traceparent: $TP_HDR"
wait_span '.attributes["jsonrpc.request.id"] == "20"'
ok "the spans arrive though the collector answered the first export 503 (retried after Retry-After)"
is "$(spans '.name == "tools/call mod" and .traceId == "11111111111111111111111111111111" and .parentSpanId == "2222222222222222"' | wc -l)" 5 \
	"all five spans of the first batch: nothing lost to the 503"
is "$(head -1 "$C_OUT.requests" | jq -r .auth)" "s3cr=et" "OTEL_EXPORTER_OTLP_HEADERS reach the collector (percent-decoded)"
is "$(jq -r .encoding "$C_OUT.requests" | sort -u | tr '\n' .)" "." \
	"by default (none, the specification's) the bodies go as they are, without Content-Encoding"
grep -q 's3cr' "$PH_LOG"; [ $? -ne 0 ]; ok "and never the log"
if "$PHANTOM" -V 2>&1 | grep -q libcurl; then
	# the 503 and its retry a second later, the exports since: one connection
	# (the collector keeps one open 5 s; the OpenSSL engine asks HTTP/1.0)
	n_req=$(wc -l <"$C_OUT.requests") n_conn=$(jq -r .port "$C_OUT.requests" | sort -u | wc -l)
	[ "$n_conn" -lt "$n_req" ]
	ok "the exporter keeps its connection to the collector ($n_req exports over $n_conn connections)"
fi
s=$(span '.attributes["jsonrpc.request.id"] == "20"')
is "$(sj "$s" '.traceId + " " + .parentSpanId + " " + (.links | map(.traceId + "/" + .spanId) | join(","))')" \
	"0af7651916cd43dd8448eb211c80319c b7ad6b7169203331 11111111111111111111111111111111/2222222222222222" \
	"_meta's trace context is the parent, the traceparent header a link"
is "$(sj "$s" '.resource["service.name"] + " " + .attributes["network.transport"] + " " + .attributes["client.address"]')" \
	"from-env tcp 127.0.0.1" "OTEL_SERVICE_NAME and OTEL_EXPORTER_OTLP_ENDPOINT win over telemetry:"

# the SDK v2 client with a trace context in _meta: one trace from it to the handler's own span
if node_setup; then
	TP_SDK=00-5dcdb1c2a3b4c5d6e7f8091a2b3c4d5e-00f067aa0ba902b7-01
	node_client sdk-v2-trace.mjs --url "$U" --call ex --traceparent "$TP_SDK"
	wait_span '.traceId == "5dcdb1c2a3b4c5d6e7f8091a2b3c4d5e" and .name == "child work"'
	wait_span '.traceId == "5dcdb1c2a3b4c5d6e7f8091a2b3c4d5e" and .name == "tools/call ex"'
	s=$(span '.traceId == "5dcdb1c2a3b4c5d6e7f8091a2b3c4d5e" and .name == "tools/call ex"')
	h=$(span ".parentSpanId == \"$(sj "$s" .spanId)\"")
	c=$(span '.traceId == "5dcdb1c2a3b4c5d6e7f8091a2b3c4d5e" and .name == "child work"')
	is "$(sj "$s" .parentSpanId)/$(sj "$c" .parentSpanId)" "00f067aa0ba902b7/$(sj "$h" .spanId)" \
		"SDK v2 client: its span, Phantom's SERVER span, the handler's run and the handler's own span are one trace"
else
	diag "SDK v2 client check skipped: the npm packages are not installed"
fi

# a legacy session's call that asks the client (elicitation) and is parked in the hub
V=(-H "MCP-Protocol-Version: 2025-11-25")
# parked_call FILE ID OUT: a new legacy session (SID) whose tools/call ID of
# delete_file FILE (made in the sandbox) asks the client; its stream goes to
# OUT in the background (CPID)
parked_call() {
	post "$U" '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"sh","version":"1"}}}'
	SID=$(header Mcp-Session-Id)
	echo y >"$T_DIR/sb/$1"
	curl -sN -X POST -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' "${V[@]}" \
		-H "Mcp-Session-Id: $SID" --data-binary '{"jsonrpc":"2.0","id":'"$2"',"method":"tools/call","params":{"name":"delete_file","arguments":{"path":"'"$1"'"}}}' \
		"$U" >"$3" 2>/dev/null &
	CPID=$!
}
parked_call x.txt 41 "$T_DIR/call"
wait_for 5 grep -q '"method":"elicitation/create"' "$T_DIR/call"
ID=$(grep '^data: ' "$T_DIR/call" | sed 's/^data: //' | jq -c 'select(.method != null and .id != null) | .id' | head -1)
post "$U" "{\"jsonrpc\":\"2.0\",\"id\":$ID,\"result\":{\"action\":\"accept\",\"content\":{\"confirm\":\"yes\"}}}" "${V[@]}" -H "Mcp-Session-Id: $SID"
wait_for 10 sh -c "! kill -0 $CPID 2>/dev/null"
test ! -e "$T_DIR/sb/x.txt"; ok "the legacy call completes after its elicitation"
wait_span '.name == "parked: waiting for the client" and .status.code == 0'
wait_for 15 sh -c "[ \$(jq -c 'select(.name == \"tools/call delete_file\")' '$C_OUT' | wc -l) -ge 2 ]"
first=$(spans '.name == "tools/call delete_file"' | head -1)
w=$(span '.name == "parked: waiting for the client" and .status.code == 0')
second=$(spans '.name == "tools/call delete_file"' | tail -1)
is "$(sj "$first" '.attributes["mcp.session.id"]')" "$SID" "a legacy session's span carries mcp.session.id"
is "$(sj "$w" '.traceId + " " + .parentSpanId')" "$(sj "$first" '.traceId + " " + .spanId')" \
	"the time the call waited parked is a span under the call's"
is "$(sj "$second" '.traceId + " " + .parentSpanId')" "$(sj "$first" '.traceId + " " + .spanId')" \
	"the resumed run joins the same trace"
post "$U" '{"jsonrpc":"2.0","id":2,"method":"ping"}' "${V[@]}" -H "Mcp-Session-Id: $SID"
curl -s -X DELETE "${V[@]}" -H "Mcp-Session-Id: $SID" "$U" >/dev/null
wait_for 10 sh -c "grep -q 'mcp.server.session.duration' '$C_OUT'"
ok "a session ended by DELETE records mcp.server.session.duration"

# a legacy call whose elicitation nobody answers: the hub gives it up after
# sessions.park_timeout_ms (8 s); its wait is checked after the task's
parked_call y.txt 42 "$T_DIR/call2"
SID2=$SID CPID2=$CPID
T_PIDS+=("$CPID2")

# a task: its run is a span of its own, linked to the request that created it
EXT='{"extensions":{"io.modelcontextprotocol/tasks":{}}}'
body=$(jq -nc --arg v "$MODERN" --argjson caps "$EXT" '{jsonrpc:"2.0",id:50,method:"tools/call",params:{name:"bg",arguments:{},_meta:{"io.modelcontextprotocol/protocolVersion":$v,"io.modelcontextprotocol/clientCapabilities":$caps}}}')
post "$U" "$body" -H "MCP-Protocol-Version: $MODERN" -H "Mcp-Method: tools/call" -H "Mcp-Name: bg"
TASK=$(jqr '.result.task.taskId // .result.taskId // empty')
[ -n "$TASK" ]; ok "a task is created"
wait_span '.name == "task run"'
t=$(span '.name == "task run"')
c=$(span '.attributes["jsonrpc.request.id"] == "50"')
is "$(sj "$t" '(.links[0].traceId + "/" + .links[0].spanId) + " " + .attributes["phantom.task.id"] + " " + .attributes["gen_ai.tool.name"]')" \
	"$(sj "$c" '.traceId + "/" + .spanId') $TASK bg" "the task's run is a span linked to the request that created it"
[ "$(sj "$t" .traceId)" != "$(sj "$c" .traceId)" ]; ok "in a trace of its own"
wait_for 60 sh -c "! kill -0 $CPID2 2>/dev/null"
like "$(cat "$T_DIR/call2")" 'sessions.park_timeout_ms' "a call whose elicitation is never answered is given up by the hub"
test -e "$T_DIR/sb/y.txt"; ok "and its handler did not run again"
first=$(span ".name == \"tools/call delete_file\" and .attributes[\"mcp.session.id\"] == \"$SID2\"")
w=$(span ".name == \"parked: waiting for the client\" and .parentSpanId == \"$(sj "$first" .spanId)\"")
is "$(sj "$w" '.traceId + " " + (.status.code|tostring)')" "$(sj "$first" .traceId) 2" \
	"the wait of a call the hub timed out is a span under the call's, ended with an error status"
like "$(sj "$w" .status.message)" 'did not answer .*sessions.park_timeout_ms \(8000 ms\)' "whose description names the timeout"
[ "$(sj "$w" .end)" -gt "$(sj "$w" .start)" ]; ok "and which lasts until the hub gave the call up"
scrape=$(curl -s "http://$PH_ADDR/metrics" -H 'Host: localhost' || true)
[ -z "$scrape" ] && scrape=$(curl -s "${U%/mcp}/metrics")
like "$scrape" 'phantom_otel_records_total\{event="exported"\} [1-9]' "/metrics counts the records exported"
like "$scrape" 'phantom_otel_records_total\{event="export_retry"\} [1-9]' "and the retried export"
t_stop

# ======== OAuth: a token check that is not remembered is a span ===========================
. "$top_srcdir/tests/oauth-lib.sh"
if why=$(oauth_supported); then
	coll_start oauth
	K=$T_DIR/keys
	oauth_keygen "$K" rsa:rsa
	oauth_jwks "$K" rsa:r1 >"$T_DIR/jwks.json"
	ISS=https://as.example.com/ RES=https://mcp.example.com/mcp
	conf "$T_DIR/oauth.yaml" "$C_URL" "auth:
  mode: oauth
  metadata: { document: { resource: \"$RES\" } }
  oauth: { issuer: \"$ISS\", jwks_file: jwks.json }"
	export OTEL_BSP_SCHEDULE_DELAY=300
	behind_nginx phantom_up "$T_DIR/oauth.yaml"
	unset OTEL_BSP_SCHEDULE_DELAY
	NOW=$(date +%s)
	TOK=$(python3 "$top_srcdir/tests/jwt_tool.py" sign "$K/rsa.pem" RS256 '{"kid":"r1"}' \
		"{\"iss\":\"$ISS\",\"aud\":\"$RES\",\"sub\":\"alice\",\"exp\":$((NOW + 600)),\"iat\":$((NOW - 5))}")
	# one worker may serve both: the second check is then remembered
	mpost "$U" 61 tools/call '{"name":"mod","arguments":{}}' -H "Authorization: Bearer $TOK"
	is "$STATUS" 200 "an OAuth-protected call"
	wait_span '.attributes["jsonrpc.request.id"] == "61"'
	s=$(span '.attributes["jsonrpc.request.id"] == "61"')
	a=$(span ".name == \"auth token check\" and .parentSpanId == \"$(sj "$s" .spanId)\"")
	is "$(sj "$a" '.attributes["phantom.auth.mode"] + " " + .attributes["phantom.auth.outcome"]')" "oauth OK" \
		"the token check is a child span of the call"
	is "$(sj "$s" '.attributes["phantom.principal"]')" alice "the principal is on the span"
	grep -q "$TOK" "$C_OUT" "$PH_LOG"; [ $? -ne 0 ]; ok "the token is neither exported nor logged"
	t_stop
else
	diag "OAuth checks skipped: $why"
fi

# calls N: N tools/call of mod behind nginx (ids 1 to N); prints how many got 200
calls() {
	local i served=0
	for i in $(seq 1 "$1"); do
		mpost "$U" "$i" tools/call '{"name":"mod","arguments":{}}'
		[ "$STATUS" = 200 ] && served=$((served + 1))
	done
	echo "$served"
}

# ======== the collector down: requests served, drops counted ===========================
PORT_DOWN=$(free_port)
conf "$T_DIR/down.yaml" "http://127.0.0.1:$PORT_DOWN"
export OTEL_BSP_MAX_QUEUE_SIZE=4 OTEL_BSP_MAX_EXPORT_BATCH_SIZE=2 OTEL_BSP_SCHEDULE_DELAY=100
behind_nginx phantom_up "$T_DIR/down.yaml"
unset OTEL_BSP_MAX_QUEUE_SIZE OTEL_BSP_MAX_EXPORT_BATCH_SIZE OTEL_BSP_SCHEDULE_DELAY
is "$(calls 60)" 60 "with the collector down every request is served"
wait_for 10 sh -c "curl -s '${U%/mcp}/metrics' | grep -Eq 'phantom_otel_records_total\\{event=\"dropped_queue\"\\} [1-9]'"
scrape=$(curl -s "${U%/mcp}/metrics")
like "$scrape" 'phantom_otel_records_total\{event="dropped_queue"\} [1-9]' "the spans the exporter cannot hold are dropped and counted"
like "$scrape" 'phantom_otel_records_total\{event="export_failed"\} [1-9]' "the failed exports are counted"
like "$(cat "$PH_LOG")" "telemetry: http://127.0.0.1:$PORT_DOWN/v1/traces: " "the log says the collector cannot be reached"
t_stop

# ======== the exporter stopped: a worker's ring fills, what does not fit is counted ========
# Each worker's ring is 16 KiB (telemetry.worker_buffer_kb) and a tools/call's
# records some 600 bytes: 120 calls over 2 workers overfill them.
coll_start stall
TEL_EXTRA="worker_buffer_kb: 16" conf "$T_DIR/stall.yaml" "$C_URL"
export OTEL_BSP_SCHEDULE_DELAY=100
behind_nginx phantom_up "$T_DIR/stall.yaml"
unset OTEL_BSP_SCHEDULE_DELAY
EXP=$(pgrep -P "$PH_PID" -x phantom-otel)
kill -STOP "$EXP"
is "$(calls 120)" 120 "with the exporter stopped every request is served: no worker waits for it"
scrape=$(curl -s "${U%/mcp}/metrics")
if [ "${PHANTOM_FAST_PATHS:-}" != off ]; then # the plain path sends on the channel (1 MiB)
	like "$scrape" 'phantom_otel_records_total\{event="dropped_channel"\} [1-9]' \
		"a worker whose ring is full drops the records and counts them"
fi
like "$scrape" 'phantom_otel_records_total\{event="handed"\} [1-9]' "what fitted was handed over"
kill -CONT "$EXP"
wait_span '.attributes["jsonrpc.request.id"] == "1"'
ok "once the exporter goes on, it sends what waited in the rings"
mpost "$U" 500 tools/call '{"name":"mod","arguments":{}}'
wait_span '.attributes["jsonrpc.request.id"] == "500"'
ok "and what comes after (a worker wakes it)"
t_stop

# ======== CGI: the exporter it leaves behind sends the request's span ====================
coll_start cgi
conf "$T_DIR/cgi.yaml" "$C_URL"
CGI_ARGS="-c $T_DIR/cgi.yaml" cgi_post "$(req 71 tools/call '{"name":"mod","arguments":{}}')" \
	$(mhdr tools/call) HTTP_MCP_NAME=mod "PHANTOM_MODULE_PATH=$PHANTOM_MODULE_PATH"
is "$STATUS/$CGI_RC" 200/0 "CGI: the request is answered and the process exits"
wait_span '.attributes["jsonrpc.request.id"] == "71"'
ok "CGI: its span is sent by the exporter it started, after it exited"

# ======== -t says why telemetry cannot export ==========================================
conf "$T_DIR/bad.yaml" "ftp://127.0.0.1:1"
"$PHANTOM" -c "$T_DIR/bad.yaml" -t >"$T_DIR/bad.out" 2>&1
is "$?" 1 "-t refuses an endpoint it cannot post to"
like "$(cat "$T_DIR/bad.out")" "telemetry: cannot export: the OTLP endpoint is not an http:// or https:// URL" "and says why"
OTEL_TRACES_SAMPLER=sometimes "$PHANTOM" -c "$T_DIR/stdio.yaml" -t >"$T_DIR/bad2.out" 2>&1
like "$(cat "$T_DIR/bad2.out")" "OTEL_TRACES_SAMPLER: sometimes is not one of" "-t names a variable it cannot use"
OTEL_SDK_DISABLED=true "$PHANTOM" -c "$T_DIR/bad.yaml" -t >/dev/null 2>&1
ok "OTEL_SDK_DISABLED=true turns telemetry off (the bad endpoint no longer matters)"

# telemetry off: a persistent call's line carries the client's _meta as it came
OTEL_SDK_DISABLED=true stdio_start "$T_DIR/off.log" "$T_DIR/stdio.yaml"
stdio_send '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"warm","arguments":{},'"$MTP_A"'}}'
stdio_upto 1 "$T_DIR/off.out"
stdio_stop 10
is "$(jq -r 'select(.id == 1) | .result.content[0].text' "$T_DIR/off.out" | cut -d' ' -f2,3)" "$TP_A vendor=a" \
	"telemetry off: the persistent process reads the client's traceparent and tracestate"
done_testing
