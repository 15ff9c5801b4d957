#!/bin/bash
# catalog_bench.sh: resources/list of a catalogue served by a resource list
# handler (resource_lists:), page by page, through nginx with wrk; not part
# of make check (make bench-catalog).
#   top_srcdir=... top_builddir=... bash tests/bench/catalog_bench.sh [SECONDS]
# Two handlers over CATALOG sizes 1,000, 10,000 and 100,000 studies, 100 per
# page (server.page_size):
#   persistent  a persistent exec handler (tests/handlers/catalog.py, one
#               Python process per worker holding the whole catalogue,
#               started with the worker: persistent {start: true})
#   module      the in-process module tests/modules/testmod.c:catalog
# For each, wrk cycles through 100 page requests spread evenly over the
# whole catalogue (Phantom's sealed cursors, collected by walking every page
# first with tests/bench/catalog_walk.py, which also checks that the walk
# lists every study once), then the
# first page alone and the last page alone. The baseline, measured in the
# same run, is a page of 100 configured resources (no handler, no cursor to
# open): each ratio says what the handler path costs, and its change with
# the size how the cost grows with the catalogue.
. "${top_srcdir:-.}/tests/lib.sh"
command -v wrk >/dev/null || skip_all "wrk not installed"
command -v nginx >/dev/null || skip_all "nginx not installed"
command -v python3 >/dev/null || skip_all "python3 not installed"
D=${1:-5}
SIZES=${CATALOG_SIZES:-1000 10000 100000}
export PHANTOM_MODULE_PATH=${PHANTOM_MODULE_PATH:-$top_builddir/tests/modules/.libs}
CATALOG_SECRET=$(head -c 48 /dev/urandom | base64 | tr -d '\n')
export CATALOG_SECRET
SUMMARY=$T_DIR/summary

# measure NAME BODIES: wrk for D seconds after a 1 s warm-up; sets RPS
measure() {
	METHOD=resources/list BODIES=$2 wrk -t2 -c8 -d1s -s "$top_srcdir/tests/bench/list_pages.lua" \
		"$NGINX_URL" >/dev/null
	METHOD=resources/list BODIES=$2 wrk -t2 -c8 -d"${D}s" --latency -s "$top_srcdir/tests/bench/list_pages.lua" \
		"$NGINX_URL" >"$T_DIR/m.wrk"
	RPS=$(awk '/Requests\/sec/{print $2}' "$T_DIR/m.wrk")
	P50=$(awk '/ 50%/{print $2}' "$T_DIR/m.wrk")
	P99=$(awk '/ 99%/{print $2}' "$T_DIR/m.wrk")
	diag "$1: $RPS req/s  p50 $P50  p99 $P99  $(grep 'bad responses' "$T_DIR/m.wrk")"
	is "$(awk '/bad responses/{print $3}' "$T_DIR/m.wrk")" 0 "$1: every answer is a page"
}
ratio() { awk -v a="$1" -v b="$BASE" 'BEGIN{printf "%.3f", a/b}'; }

# baseline: 100 configured resources on one page
{
	printf 'server: { name: bench, version: "1.0" }\nworkers: 2\nresources:\n'
	for i in $(seq 0 99); do printf '  - { uri: "study://%d", name: study-%d, text: "x" }\n' "$i" "$i"; done
} >"$T_DIR/static.yaml"
phantom_listen "$T_DIR/static.yaml" || exit 1
nginx_start "$PH_ADDR" || exit 1
req 1 resources/list >"$T_DIR/static.bodies"; echo >>"$T_DIR/static.bodies"
measure "baseline: a page of 100 configured resources" "$T_DIR/static.bodies"
BASE=$RPS
printf '%-11s %7s  %-22s %9s %7s\n' handler studies pages req/s ratio >"$SUMMARY"
printf '%-11s %7s  %-22s %9s %7s\n' configured 100 "the one page" "$BASE" 1.000 >>"$SUMMARY"
kill "$PH_PID"; wait "$PH_PID" 2>/dev/null

# catalog HANDLER SIZE: one server whose only resources come from HANDLER
catalog() {
	local kind=$1 size=$2 conf=$T_DIR/$1-$2.yaml n pages distinct lasturi ms
	{
		printf 'server: { name: bench, version: "1.0" }\nworkers: 2\n'
		printf 'request_state: { secret_env: CATALOG_SECRET }\n'
		if [ "$kind" = persistent ]; then
			printf 'resource_lists:\n  - { name: studies, exec: [%s/tests/handlers/catalog.py, "%d"],\n' "$top_srcdir" "$size"
			printf '      persistent: { start: true }, timeout_ms: 10000 }\n'
		else
			printf 'resource_lists: [ { name: studies, module: testmod.so, symbol: catalog } ]\n'
		fi
	} >"$conf"
	CATALOG_SIZE=$size phantom_listen "$conf" || return 1
	nginx_start "$PH_ADDR" || return 1
	# walk every page once (the client's view), keeping 100 of the bodies
	read -r n pages distinct lasturi ms < <(python3 "$top_srcdir/tests/bench/catalog_walk.py" "$NGINX_URL" "$T_DIR" 100)
	is "$n/$distinct/$lasturi" "$size/$size/study://$((size - 1))" \
		"$kind, $size: one walk lists every study once, in order ($pages pages in $ms ms)"
	measure "$kind, $size studies, 100 pages across the catalogue" "$T_DIR/walk.bodies"
	printf '%-11s %7s  %-22s %9s %7s\n' "$kind" "$size" "100 spread over all" "$RPS" "$(ratio "$RPS")" >>"$SUMMARY"
	measure "$kind, $size studies, the first page" "$T_DIR/first.bodies"
	printf '%-11s %7s  %-22s %9s %7s\n' "$kind" "$size" "the first" "$RPS" "$(ratio "$RPS")" >>"$SUMMARY"
	measure "$kind, $size studies, the last page" "$T_DIR/last.bodies"
	printf '%-11s %7s  %-22s %9s %7s\n' "$kind" "$size" "the last" "$RPS" "$(ratio "$RPS")" >>"$SUMMARY"
	kill "$PH_PID"; wait "$PH_PID" 2>/dev/null
}
for kind in persistent module; do
	for size in $SIZES; do
		catalog "$kind" "$size" || { echo "not ok - $kind $size: phantom and nginx start"; exit 1; }
	done
done
diag "req/s of resources/list pages, ratio to the configured page measured first:"
while IFS= read -r line; do diag "  $line"; done <"$SUMMARY"
done_testing
