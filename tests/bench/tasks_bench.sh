#!/bin/bash
# tasks_bench.sh: how tasks/get latency and the task store's size grow with
# the number of stored tasks (10, 1,000 and 100,000), through nginx with
# wrk; not part of make check.
#   top_srcdir=... top_builddir=... bash tests/bench/tasks_bench.sh [SECONDS]
# Ten tasks are made by real calls (an exec tool that answers at once, run
# by the hub); the store is then filled to each size with copies of one of
# their finished records under fresh ids (what 100,000 real calls would
# leave, without spawning 100,000 processes first). wrk cycles tasks/get
# over 100 ids spread over the whole store. The baseline, measured in the
# same run on the same server, is server/discover (no store read): the
# ratio says what a tasks/get costs, and its change with the size how the
# store scales.
. "${top_srcdir:-.}/tests/lib.sh"
command -v wrk >/dev/null || skip_all "wrk not installed"
command -v nginx >/dev/null || skip_all "nginx not installed"
D=${1:-5}
STORE=$T_DIR/tasks
EXT='{"extensions":{"io.modelcontextprotocol/tasks":{}}}'
cat >"$T_DIR/quick.sh" <<'SH'
#!/bin/sh
cat >/dev/null
echo '{"content":[{"type":"text","text":"done"}]}'
SH
chmod 0755 "$T_DIR/quick.sh"
cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: bench, version: "1.0" }
workers: 2
subscriptions: { control_socket: '' }
tasks: { dir: $STORE, max_records: 1000000 }
tools:
  - { name: quick, description: answers at once, task: required, exec: [$T_DIR/quick.sh] }
YAML
phantom_listen "$T_DIR/phantom.yaml" || exit 1
nginx_start "$PH_ADDR" || exit 1

# body ID: a tasks/get request line for the wrk script
body() {
	printf '%s\t%s\n' "$1" "$(jq -nc --arg id "$1" --arg v "$MODERN" --argjson caps "$EXT" '{jsonrpc:"2.0",id:1,
		method:"tasks/get",params:{taskId:$id,_meta:{"io.modelcontextprotocol/protocolVersion":$v,
		"io.modelcontextprotocol/clientCapabilities":$caps}}}')"
}
# measure NAME BODIES: wrk for D seconds; sets RPS, P50, P99
measure() {
	BODIES=$2 wrk -t2 -c8 -d1s -s "$top_srcdir/tests/bench/tasks.lua" "$NGINX_URL" >/dev/null
	BODIES=$2 wrk -t2 -c8 -d"${D}s" --latency -s "$top_srcdir/tests/bench/tasks.lua" "$NGINX_URL" >"$T_DIR/w.out"
	RPS=$(awk '/Requests\/sec/{print $2}' "$T_DIR/w.out")
	P50=$(awk '/ 50%/{print $2}' "$T_DIR/w.out"); P99=$(awk '/ 99%/{print $2}' "$T_DIR/w.out")
	is "$(awk '/bad responses/{print $3}' "$T_DIR/w.out")" 0 "$1: every answer is right"
}

printf -- '-\t%s\n' "$(req 1 server/discover)" >"$T_DIR/base.bodies"
measure "baseline server/discover" "$T_DIR/base.bodies"
BASE=$RPS
diag "baseline server/discover: $BASE req/s  p50 $P50  p99 $P99"

for i in $(seq 1 10); do
	post "$NGINX_URL" "$(jq -nc --arg v "$MODERN" --argjson caps "$EXT" '{jsonrpc:"2.0",id:1,method:"tools/call",
		params:{name:"quick",arguments:{},_meta:{"io.modelcontextprotocol/protocolVersion":$v,
		"io.modelcontextprotocol/clientCapabilities":$caps}}}')" \
		-H "MCP-Protocol-Version: $MODERN" -H "Mcp-Method: tools/call" -H "Mcp-Name: quick"
	[ "$(jqr .result.resultType)" = task ] || { diag "no task: $BODY"; exit 1; }
done
sleep 1
seed=$(ls "$STORE" | grep '\.json$' | head -1)
jq -e '.status == "completed"' "$STORE/$seed" >/dev/null; ok "the seed record is a finished task"

for size in 10 1000 100000; do
	python3 - "$STORE" "$seed" "$size" <<'PY'
import json, os, secrets, sys
store, seed, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
rec = json.load(open(os.path.join(store, seed)))
have = sum(1 for f in os.listdir(store) if f.endswith(".json"))
for _ in range(size - have):
    tid = secrets.token_hex(16)
    rec["taskId"] = tid
    with open(os.path.join(store, tid + ".json"), "w") as f:
        json.dump(rec, f, separators=(",", ":"))
PY
	ids=$(ls "$STORE" | grep '\.json$' | sed 's/\.json$//')
	n=$(wc -l <<<"$ids")
	step=$(( n / 100 )); [ "$step" -lt 1 ] && step=1
	awk -v s="$step" 'NR % s == 0' <<<"$ids" | head -100 | while read -r id; do body "$id"; done >"$T_DIR/$size.bodies"
	measure "tasks/get with $n stored" "$T_DIR/$size.bodies"
	bytes=$(du -sb "$STORE" | cut -f1)
	diag "$(printf 'tasks/get, %6d tasks stored: %8s req/s (%.2f of baseline)  p50 %s  p99 %s  store %d bytes (%d per task)' \
		"$n" "$RPS" "$(echo "$RPS / $BASE" | bc -l)" "$P50" "$P99" "$bytes" $((bytes / n)))"
done
done_testing
