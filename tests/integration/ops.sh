#!/bin/bash
# Operating Phantom behind the real nginx: the health check (200, then 503
# while draining after SIGTERM), Prometheus metrics (counts move by exactly
# the requests sent; promtool accepts the exposition), JSON logs with the
# OpenTelemetry names and the trace carried into an exec handler, rate
# limits (429 with Retry-After, another principal unaffected, refill, a
# per-principal override), and a process whose configuration does not load
# answering 500 instead of nothing.
. "${top_srcdir:-.}/tests/lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"

B=$T_DIR/bin
mkdir -p "$B"
printf '#!/bin/sh\ncat >/dev/null; printf "{\\"content\\":[{\\"type\\":\\"text\\",\\"text\\":\\"%%s|%%s\\"}]}" "$TRACEPARENT" "$TRACESTATE"\n' >"$B/trace.sh"
chmod +x "$B/trace.sh"
# two principals alike in their first 100 bytes (rate buckets were keyed
# by the first 63)
LONG=$(printf 'org-%.0s' $(seq 1 25))
cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: ops-test, version: "1.0" }
workers: 2
http:
  health: /healthz
  metrics: { path: /metrics }
  drain_ms: 1500
limits:
  rate: { requests: 3, per_seconds: 12, burst: 3 }
log: { format: json }
auth:
  mode: bearer
  tokens:
    - { principal: alice, sha256: $(token_sha256 alice-token) }
    - { principal: bob, sha256: $(token_sha256 bob-token) }
    - { principal: carol, sha256: $(token_sha256 carol-token) }
    - { principal: dave, sha256: $(token_sha256 dave-token) }
    - { principal: $LONG-erin, sha256: $(token_sha256 erin-token) }
    - { principal: $LONG-fred, sha256: $(token_sha256 fred-token) }
  allow:
    carol: { rate: { requests: 1, per_seconds: 60 } }
    dave: { rate: { requests: 0 } }
tools:
  - { name: trace, description: echoes its trace context, exec: [$B/trace.sh] }
YAML
phantom_unix "$T_DIR/phantom.yaml" || { echo "not ok 1 - phantom starts"; exit 1; }
nginx_start "$PH_BACKEND" || { echo "not ok 1 - nginx starts"; exit 1; }
U=$NGINX_URL
BASE=${U%/mcp}
as() { local who=$1; shift; mpost "$U" "$@" -H "Authorization: Bearer $who-token"; }

# ---- health ------------------------------------------------------------------------------
STATUS=$(curl -s -o "$T_DIR/h.json" -w '%{http_code}' "$BASE/healthz")
is "$STATUS" 200 "health: 200 without credentials"
is "$(jq -r '[.status, .generation, (.workers.busy + .workers.idle)]|join(" ")' "$T_DIR/h.json")" \
	"ok 0 2" "health: status ok, generation 0, two workers"

# ---- metrics -----------------------------------------------------------------------------
scrape() { curl -s "$BASE/metrics"; }
count() { # count METHOD STATUS: phantom_requests_total of that pair in a scrape (0 when absent)
	scrape | awk -v k="phantom_requests_total{method=\"$1\",status=\"$2\"}" '$1 == k { print $2; f = 1 } END { if (!f) print 0 }'
}
before=$(count tools/list 200)
for i in 1 2 3 4 5; do as dave "$i" tools/list '{}'; done
after=$(count tools/list 200)
is "$((after - before))" 5 "metrics: five tools/list move the 200 count by exactly five"
hbefore=$(scrape | awk '$1 == "mcp_server_operation_duration_seconds_count{mcp_method_name=\"tools/list\"}" { print $2 }')
is "$hbefore" "$after" "metrics: the duration histogram counts the same requests"
scrape >"$T_DIR/metrics.txt"
grep -q '^# TYPE phantom_requests_total counter' "$T_DIR/metrics.txt"; ok "metrics: TYPE lines"
like "$(curl -s -o /dev/null -w '%{content_type}' "$BASE/metrics")" '^text/plain; version=0.0.4' "metrics: the 0.0.4 content type"
if command -v promtool >/dev/null; then
	promtool check metrics <"$T_DIR/metrics.txt" >"$T_DIR/promtool.out" 2>&1; ok "promtool check metrics accepts the exposition"
	sed 's/^/#   /' "$T_DIR/promtool.out"
fi
curl -s "$BASE/healthz" >/dev/null
is "$(count tools/list 200)" "$after" "metrics: health checks and scrapes are not counted"

# ---- JSON logs and trace context ---------------------------------------------------------
TP=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
body=$(req 42 tools/call '{"name":"trace","arguments":{}}' |
	jq -c --arg tp "$TP" '.params._meta += {traceparent: $tp, tracestate: "vendor=x"}')
post "$U" "$body" -H "MCP-Protocol-Version: $MODERN" -H 'Mcp-Method: tools/call' -H 'Mcp-Name: trace' \
	-H 'Authorization: Bearer dave-token'
is "$STATUS" 200 "logs: a traced tools/call is served"
envtp=$(jqr '.result.content[0].text' | cut -d'|' -f1)
is "$(jqr '.result.content[0].text' | cut -d'|' -f2)" "vendor=x" "the exec handler gets TRACESTATE"
sleep 0.2
line=$(grep '^{' "$PH_LOG" | jq -c 'select(."jsonrpc.request.id" == "42")' | tail -1)
for f in time pid status duration_ms principal mcp.method.name gen_ai.tool.name jsonrpc.request.id \
	mcp.protocol.version network.transport trace_id span_id parent_span_id; do
	is "$(printf '%s' "$line" | jq -r --arg f "$f" 'has($f)')" true "logs: the line has $f"
done
# every line so far (a short value like 25.003 printed right before too)
durs=$(grep -o '"duration_ms":[^,]*' "$PH_LOG")
is "$(printf '%s\n' "$durs" | grep -cvE ':[0-9]+\.[0-9]{3}$')/$(printf '%s\n' "$durs" | wc -l | awk '$1 >= 8 { print "8+" }')" \
	0/8+ "logs: duration_ms with three decimals in every line (never 25.838999999999999)"
is "$(printf '%s' "$line" | jq -r '[."mcp.method.name", ."gen_ai.tool.name", .principal, .status, ."mcp.protocol.version", ."network.transport"]|join(" ")')" \
	"tools/call trace dave 200 $MODERN tcp" "logs: method, tool, principal, status, version, transport"
is "$(printf '%s' "$line" | jq -r '.trace_id + " " + .parent_span_id')" \
	"4bf92f3577b34da6a3ce929d0e0e4736 00f067aa0ba902b7" "logs: trace_id and parent_span_id from traceparent"
span=$(printf '%s' "$line" | jq -r .span_id)
is "$envtp" "00-4bf92f3577b34da6a3ce929d0e0e4736-$span-01" \
	"the exec handler's TRACEPARENT continues the trace from the request's span"
as dave 43 no/such '{}'
sleep 0.1
is "$(grep '^{' "$PH_LOG" | jq -r 'select(."jsonrpc.request.id" == "43") | ."error.type"')" -32601 \
	"logs: error.type of a failed request"

# ---- rate limits -------------------------------------------------------------------------
rl_before=$(scrape | awk '$1 == "phantom_rate_limited_total" { print $2 }')
codes=
for i in 1 2 3; do as alice "$i" server/discover '{}'; codes="$codes$STATUS "; done
is "$codes" "200 200 200 " "rate: the burst of three is served"
as alice 4 server/discover '{}'
is "$STATUS" 429 "rate: the fourth request gets 429"
ra=$(header Retry-After)
like "$ra" '^[1-4]$' "rate: Retry-After says when a token is back"
is "$(jqr .error.code)" -32000 "rate: a JSON-RPC error"
like "$(jqr .error.message)" 'limits\.rate' "rate: the message names the limit"
is "$(jqr .error.data.limit)" limits.rate "rate: data.limit names it too"
as bob 5 server/discover '{}'
is "$STATUS" 200 "rate: another principal is unaffected"
sleep "$ra"
as alice 6 server/discover '{}'
is "$STATUS" 200 "rate: after Retry-After the bucket has refilled"
for i in 1 2 3 4; do as erin "$i" server/discover '{}'; done
is "$STATUS" 429 "rate: a long principal past its burst gets 429"
as fred 5 server/discover '{}'
is "$STATUS/$(jqr .result.resultType)" 200/complete \
	"rate: a principal sharing its first 100 bytes has its own bucket"
as carol 7 server/discover '{}'
is "$STATUS" 200 "rate: carol's own limit allows one"
as carol 8 server/discover '{}'
is "$STATUS/$(jqr .error.data.limit)" 429/auth.allow.carol.rate "rate: carol's second is over auth.allow.carol.rate"
for i in 1 2 3 4 5 6; do as dave "$i" server/discover '{}'; done
is "$STATUS" 200 "rate: dave's rate {requests: 0} has no limit"
rl_after=$(scrape | awk '$1 == "phantom_rate_limited_total" { print $2 }')
is "$((rl_after - rl_before))" 3 "metrics: the three 429s are counted"
echo '{"jsonrpc":"2.0","id":1,"method":"ping"}
{"jsonrpc":"2.0","id":2,"method":"ping"}
{"jsonrpc":"2.0","id":3,"method":"ping"}
{"jsonrpc":"2.0","id":4,"method":"ping"}
{"jsonrpc":"2.0","id":5,"method":"ping"}' | "$PHANTOM" -c "$T_DIR/phantom.yaml" --stdio 2>/dev/null >"$T_DIR/stdio.out"
is "$(jq -r 'has("result")' "$T_DIR/stdio.out" | sort | uniq -c | tr -s ' ')" " 5 true" "rate: stdio is exempt"

# ---- stopping: health 503 while draining -------------------------------------------------
kill -TERM "$PH_PID"
sleep 0.3
STATUS=$(curl -s -o "$T_DIR/h.json" -w '%{http_code}' "$BASE/healthz")
is "$STATUS/$(jq -r .status "$T_DIR/h.json")" 503/stopping "health: 503 stopping after SIGTERM"
as dave 50 server/discover '{}'
is "$STATUS" 200 "while draining, MCP requests are still served"
wait_gone "$PH_PID" 8; ok "the server stops after http.drain_ms"

# ---- a configuration that does not load --------------------------------------------------
printf 'server: { name: [broken\n' >"$T_DIR/bad.yaml"
command -v spawn-fcgi >/dev/null && {
	spawn_fcgi_unix "$T_DIR/bad.yaml" || echo "# spawn-fcgi did not start"
	nginx_start "$PH_BACKEND"
	for i in 1 2; do
		mpost "$NGINX_URL" "$i" server/discover '{}'
		is "$STATUS/$(jqr .error.code)" 500/-32603 "bad configuration (FastCGI): request $i gets 500 -32603"
	done
	like "$(jqr .error.message)" 'see the server log' "the error points at the log"
	grep -q 'did not find expected\|flow' "$PH_LOG"; ok "the log names the configuration problem"
}
cgi_post "$(req 1 server/discover)" $(mhdr server/discover) PHANTOM_CONFIG="$T_DIR/bad.yaml"
is "$STATUS/$(jqr .error.code)" 500/-32603 "bad configuration (CGI): 500 -32603"
done_testing
