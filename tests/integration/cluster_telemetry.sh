#!/bin/bash
# Telemetry with cluster: two Phantom hosts (each its own master, hub and
# nginx) sharing a real redis-server, both exporting to the collector
# stand-in of telemetry.sh (otel_collector.cjs, the OpenTelemetry project's
# own protobuf definitions). A legacy session is created on host A and used
# on host B with the same traceparent header: each host's spans carry its
# cluster.host as the resource's service.instance.id (host.name stays the
# system's), and the two are one trace under the client's span. A third
# host with OTEL_RESOURCE_ATTRIBUTES setting service.instance.id: the
# variable wins, and the key is sent once.
. "${top_srcdir:-.}/tests/lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
command -v jq >/dev/null || skip_all "jq not installed"
command -v redis-server >/dev/null || skip_all "redis-server not installed"
command -v redis-cli >/dev/null || skip_all "redis-cli not installed"
printf 'cluster: { redis: "unix:/nonexistent" }\n' >"$T_DIR/probe.yaml"
"$PHANTOM" -t -c "$T_DIR/probe.yaml" 2>&1 | grep -q 'built without hiredis' &&
	skip_all "phantom-fcgi built without hiredis"
otel_collector_supported
export PHANTOM_MODULE_PATH=${PHANTOM_MODULE_PATH:-$top_builddir/tests/modules/.libs}

# ---- Redis, on a unix socket in the test directory ---------------------------------
RSOCK=$T_DIR/redis.sock
mkdir -p "$T_DIR/redis"
redis-server --port 0 --unixsocket "$RSOCK" --unixsocketperm 700 --dir "$T_DIR/redis" --save '' \
	--appendonly no --daemonize no >>"$T_DIR/redis/log" 2>&1 &
T_PIDS+=("$!")
wait_for 10 sh -c "redis-cli -s '$RSOCK' ping 2>/dev/null | grep -q PONG"
ok "redis-server starts"

# ---- the collector stand-in --------------------------------------------------------
: >"$T_DIR/otel.out"
OUT=$T_DIR/otel.out PORT_FILE=$T_DIR/otel.port PHANTOM_NPM_DIR=$NPM \
	"$NODE" "$top_srcdir/tests/integration/otel_collector.cjs" 2>"$T_DIR/otel.err" &
T_PIDS+=("$!")
wait_for 10 test -s "$T_DIR/otel.port" || { echo "not ok - the collector starts"; cat "$T_DIR/otel.err"; exit 1; }
C_URL=http://127.0.0.1:$(cat "$T_DIR/otel.port")
C_OUT=$T_DIR/otel.out
# span FILTER: the last span matching the jq FILTER, waiting (up to 15 s) for one
span() {
	wait_for 15 sh -c "[ -n \"\$(jq -c 'select(.kind == \"span\") | select($1)' '$C_OUT')\" ]"
	jq -c "select(.kind == \"span\") | select($1)" "$C_OUT" | tail -1
}
sj() { printf '%s' "$1" | jq -r "$2"; }

# ---- the hosts ---------------------------------------------------------------------
head -c 48 /dev/urandom | base64 >"$T_DIR/secret"
# host_conf HOST: one host of the cluster; the same secret (sessions sealed
# on one open on the other), the same Redis and prefix
host_conf() {
	cat <<YAML
server: { name: otel-cluster, version: "1.0" }
workers: 2
request_state: { secret_file: $T_DIR/secret }
telemetry: { otlp: { endpoint: "$C_URL" } }
tools:
  - { name: mod, module: testmod.so, symbol: all_content }
cluster:
  redis: "unix:$RSOCK"
  host: host-$1
  prefix: "otel-cl:"
  timeout_ms: 500
YAML
}
export OTEL_BSP_SCHEDULE_DELAY=200
for h in a b; do
	host_conf "$h" >"$T_DIR/$h.yaml"
	out=$("$PHANTOM" -t -c "$T_DIR/$h.yaml" 2>&1)
	ok "host $h: its configuration loads (-t)" || printf '%s\n' "$out" | sed 's/^/#   /'
	behind_nginx phantom_listen "$T_DIR/$h.yaml"
	eval "URL_$h=\$U"
done
# URL_a and URL_b are set by the eval above
# shellcheck disable=SC2154
{ UA=$URL_a UB=$URL_b; }

# a legacy session made on host A, used on host B, one trace context
TP=00-c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1-c2c2c2c2c2c2c2c2-01
V=(-H "MCP-Protocol-Version: 2025-11-25" -H "traceparent: $TP")
post "$UA" '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}' "${V[@]}"
SID=$(header Mcp-Session-Id)
[ "$STATUS" = 200 ] && [ -n "$SID" ]; ok "host A: initialize issues a legacy session"
post "$UB" '{"jsonrpc":"2.0","method":"notifications/initialized"}' "${V[@]}" -H "Mcp-Session-Id: $SID"
post "$UB" '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mod","arguments":{}}}' "${V[@]}" \
	-H "Mcp-Session-Id: $SID"
is "$STATUS/$(jqr '.result.isError // false')" 200/false "host B: a tools/call in that session"

T=c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1
i=$(span ".traceId == \"$T\" and .attributes[\"mcp.method.name\"] == \"initialize\"")
c=$(span ".traceId == \"$T\" and .name == \"tools/call mod\"")
is "$(sj "$i" '.resource["service.instance.id"]')" host-a "host A's span: service.instance.id is its cluster.host"
is "$(sj "$c" '.resource["service.instance.id"] + " " + .attributes["mcp.session.id"]')" "host-b $SID" \
	"host B's span: its own cluster.host, in the session made on A"
is "$(sj "$i" .parentSpanId)/$(sj "$c" .parentSpanId)" c2c2c2c2c2c2c2c2/c2c2c2c2c2c2c2c2 \
	"both are in the client's trace, under its span"
is "$(sj "$c" '.resource["host.name"]')" "$(hostname)" "host.name stays the system's host name"
h=$(span ".parentSpanId == \"$(sj "$c" .spanId)\"")
is "$(sj "$h" '.resource["service.instance.id"] + " " + .attributes["phantom.handler.kind"]')" "host-b module" \
	"the handler's child span comes from host B too"

# a third host whose OTEL_RESOURCE_ATTRIBUTES sets service.instance.id: the
# variable wins
host_conf c >"$T_DIR/c.yaml"
export OTEL_RESOURCE_ATTRIBUTES="service.instance.id=pod-7,host.name=node-3"
behind_nginx phantom_listen "$T_DIR/c.yaml"
unset OTEL_RESOURCE_ATTRIBUTES
mpost "$U" 3 tools/call '{"name":"mod","arguments":{}}' -H "traceparent: 00-$T-c3c3c3c3c3c3c3c3-01"
is "$STATUS" 200 "host C: a tools/call"
s=$(span ".traceId == \"$T\" and .parentSpanId == \"c3c3c3c3c3c3c3c3\"")
is "$(sj "$s" '.resource["service.instance.id"] + " " + .resource["host.name"]')" "pod-7 node-3" \
	"OTEL_RESOURCE_ATTRIBUTES wins over cluster.host and the system's host name"
is "$(sj "$s" '[.resourceKeys[] | select(. == "service.instance.id" or . == "host.name")] | join(" ")')" \
	"service.instance.id host.name" "each key once in the resource, the variable's"
is "$(sj "$c" '[.resourceKeys[] | select(. == "service.instance.id" or . == "host.name")] | join(" ")')" \
	"host.name service.instance.id" "and once each without the variable"
test ! -s "$C_OUT.errors"; ok "the collector decoded every export"
done_testing
