#!/bin/bash
# catalog_bench.sh: resources/list of a catalogue served by a resource list
# handler (resource_lists:), page by page, through nginx with wrk; not part
# of make check.
#   top_srcdir=... top_builddir=... bash tests/bench/catalog_bench.sh [SECONDS]
# The handler is the in-process module tests/modules/testmod.c:catalog (this
# tree has no persistent exec handler; a module is the persistent path) over
# CATALOG_SIZE = 1,000, 10,000 and 100,000 studies, 100 per page. For each
# size wrk cycles through 100 page requests spread evenly over the whole
# catalogue (Phantom's sealed cursors, collected by walking every page
# first). The baseline, measured in the same run, is a page of 100
# configured resources (no handler, no cursor to open): the ratio says what
# the handler path costs, and its change with the size how cost grows.
. "${top_srcdir:-.}/tests/lib.sh"
command -v wrk >/dev/null || skip_all "wrk not installed"
command -v nginx >/dev/null || skip_all "nginx not installed"
D=${1:-5}
export PHANTOM_MODULE_PATH=${PHANTOM_MODULE_PATH:-$top_builddir/tests/modules/.libs}
CATALOG_SECRET=$(head -c 48 /dev/urandom | base64 | tr -d '\n')
export CATALOG_SECRET

# measure NAME BODIES: wrk for D seconds; sets RPS
measure() {
	BODIES=$2 wrk -t2 -c8 -d1s -s "$top_srcdir/tests/bench/catalog.lua" "$NGINX_URL" >/dev/null
	BODIES=$2 wrk -t2 -c8 -d"${D}s" --latency -s "$top_srcdir/tests/bench/catalog.lua" "$NGINX_URL" >"$T_DIR/$1.wrk"
	RPS=$(awk '/Requests\/sec/{print $2}' "$T_DIR/$1.wrk")
	diag "$1: $RPS req/s  p50 $(awk '/ 50%/{print $2}' "$T_DIR/$1.wrk")  p99 $(awk '/ 99%/{print $2}' "$T_DIR/$1.wrk")  $(grep 'bad responses' "$T_DIR/$1.wrk")"
	is "$(awk '/bad responses/{print $3}' "$T_DIR/$1.wrk")" 0 "$1: every answer is a page"
}

# baseline: 100 configured resources on one page
{
	printf 'server: { name: bench, version: "1.0" }\nworkers: 2\nresources:\n'
	for i in $(seq 0 99); do printf '  - { uri: "study://%d", name: study-%d, text: "x" }\n' "$i" "$i"; done
} >"$T_DIR/static.yaml"
phantom_listen "$T_DIR/static.yaml" || exit 1
nginx_start "$PH_ADDR" || exit 1
req 1 resources/list >"$T_DIR/static.bodies"; echo >>"$T_DIR/static.bodies"
measure "baseline: 100 configured resources" "$T_DIR/static.bodies"
BASE=$RPS
kill "$PH_PID"; wait "$PH_PID" 2>/dev/null

printf 'server: { name: bench, version: "1.0" }\nworkers: 2\nrequest_state: { secret_env: CATALOG_SECRET }\nresource_lists: [ { name: studies, module: testmod.so, symbol: catalog } ]\n' \
	>"$T_DIR/catalog.yaml"
for size in 1000 10000 100000; do
	CATALOG_SIZE=$size phantom_listen "$T_DIR/catalog.yaml" || exit 1
	nginx_start "$PH_ADDR" || exit 1
	# walk every page once (the client's view), keeping 100 of the bodies
	pages=$((size / 100)) step=$(( size / 100 / 100 )); [ "$step" -lt 1 ] && step=1
	: >"$T_DIR/$size.bodies"
	params='{}' n=0 t0=$(date +%s%N)
	for p in $(seq 1 "$pages"); do
		body=$(req 1 resources/list "$params")
		[ $(( (p - 1) % step )) -eq 0 ] && printf '%s\n' "$body" >>"$T_DIR/$size.bodies"
		post "$NGINX_URL" "$body" -H "MCP-Protocol-Version: $MODERN" -H "Mcp-Method: resources/list"
		n=$((n + $(jqr '.result.resources | length')))
		c=$(jqr '.result.nextCursor // empty')
		[ -z "$c" ] && break
		params=$(jq -nc --arg c "$c" '{cursor: $c}')
	done
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	is "$n" "$size" "$size: one walk lists every study ($pages pages in $ms ms, curl and jq included)"
	measure "$size studies, 100 pages across the catalogue" "$T_DIR/$size.bodies"
	diag "$size: ratio to the baseline $(awk -v a="$RPS" -v b="$BASE" 'BEGIN{printf "%.2f", a/b}')"
	kill "$PH_PID"; wait "$PH_PID" 2>/dev/null
done
done_testing
