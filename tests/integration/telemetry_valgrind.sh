#!/bin/bash
# The telemetry code that calls into libraries ASan cannot see (libcurl,
# zlib), under valgrind. First test_otel (the protobuf encoding, gzip of a
# batch); then Phantom itself, its master, hub, workers and the phantom-otel
# exporter under valgrind behind nginx: the workers make the spans of module
# tool calls (a SERVER span and its handler's child), of an unknown tool and
# of prompts/get; the exporter batches them, gzips them and posts them
# through libcurl to the test collector (otel_collector.cjs, which decodes
# them with the OpenTelemetry project's own definitions), which answers the
# first export 503 and the next 200: the exporter retries. Every process must
# end with no memory error.
. "${top_srcdir:-.}/tests/lib.sh"
vg_supported
command -v nginx >/dev/null || skip_all "nginx not installed"
command -v jq >/dev/null || skip_all "jq not installed"
otel_collector_supported
"$PHANTOM" -V 2>&1 | grep -q 'libcurl' || diag "this build's HTTP client is not libcurl (lib/ph_http.h: OpenSSL's engine)"
export PHANTOM_MODULE_PATH=${PHANTOM_MODULE_PATH:-$top_builddir/tests/modules/.libs}

# ---- the unit test of the encoding and the batch's gzip
vg_unit test_otel

# ---- the collector: the first export is answered 503 (Retry-After: 1)
mkdir -p "$T_DIR/coll"
C_OUT=$T_DIR/coll/out
: >"$C_OUT"
OUT=$C_OUT PORT_FILE=$T_DIR/coll/port FAIL_FIRST=1 PHANTOM_NPM_DIR=$NPM \
	"$NODE" "$top_srcdir/tests/integration/otel_collector.cjs" 2>"$T_DIR/coll/err" &
T_PIDS+=("$!")
wait_for 30 test -s "$T_DIR/coll/port" || { echo "not ok - the collector starts"; cat "$T_DIR/coll/err"; exit 1; }
C_URL=http://127.0.0.1:$(cat "$T_DIR/coll/port")
spans() { jq -c "select(.kind == \"span\") | select($1)" "$C_OUT"; }
has_span() { [ -n "$(spans "$1")" ]; }

cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: otel-valgrind, version: "1.0" }
workers: 2
http: { metrics: { path: /metrics } }
telemetry:
  otlp: { endpoint: "$C_URL", compression: gzip, timeout_ms: 20000 }
  service_name: otel-valgrind
tools:
  - { name: mod, module: testmod.so, symbol: all_content }
prompts:
  - { name: greet, messages: [ { role: user, text: hello } ] }
YAML
VGW=$(vg_wrapper phantom)
# valgrind starts slowly: up to 60 s for the port
OTEL_BSP_SCHEDULE_DELAY=300 OTEL_METRIC_EXPORT_INTERVAL=1000 PHANTOM=$VGW T_START_S=60 \
	phantom_listen "$T_DIR/phantom.yaml" || { echo "not ok - phantom starts under valgrind"; exit 1; }
nginx_start "$PH_ADDR" || { echo "not ok - nginx starts"; exit 1; }
U=$NGINX_URL
wait_for 60 pgrep -P "$PH_PID" -x phantom-otel >/dev/null
ok "the master runs the exporter (phantom-otel) under valgrind"

served() { mpost "$U" 1 tools/call '{"name":"mod","arguments":{}}'; [ "$STATUS" = 200 ]; }
wait_for 60 served
ok "a module tool is served (status $STATUS)"
TP=00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01
for i in 2 3 4 5; do
	mpost "$U" "$i" tools/call '{"name":"mod","arguments":{}}' -H "traceparent: $TP"
done
is "$STATUS" 200 "module tool calls with a trace context"
mpost "$U" 6 tools/call '{"name":"nope","arguments":{}}'
mpost "$U" 7 prompts/get '{"name":"greet"}'
is "$STATUS" 200 "prompts/get"

# under valgrind the retry after Retry-After: 1 may take a while
wait_for 120 has_span '.attributes["jsonrpc.request.id"] == "7"'
ok "the spans arrive though the collector answered the first export 503"
is "$(spans '.name == "tools/call mod" and .traceId == "0af7651916cd43dd8448eb211c80319c"' | wc -l)" 4 \
	"the four spans with a trace context: nothing lost to the 503"
s=$(spans '.attributes["jsonrpc.request.id"] == "5"' | tail -1)
has_span ".parentSpanId == \"$(printf '%s' "$s" | jq -r .spanId)\" and .attributes[\"phantom.handler.kind\"] == \"module\""
ok "the module's run is a child span"
is "$(spans '.name == "tools/call nope"' | jq -r '.attributes["rpc.response.status_code"]' | tail -1)" -32602 \
	"the unknown tool's span"
grep -q '"encoding":"gzip"' "$C_OUT.requests"; ok "the exports were gzipped"
test ! -s "$C_OUT.errors"; ok "the collector decoded every export"
retried() { curl -s "${U%/mcp}/metrics" | grep -Eq 'phantom_otel_records_total\{event="export_retry"\} [1-9]'; }
wait_for 60 retried
ok "/metrics counts the retried export"
wait_for 60 grep -q '"name":"mcp.server.operation.duration"' "$C_OUT"
ok "the histogram points are exported too"

kill -TERM "$PH_PID"
wait_gone "$PH_PID" 90
ok "phantom stops on SIGTERM"
vg_clean "$VGW" 5 "the master, the hub, the workers and the exporter"
done_testing
