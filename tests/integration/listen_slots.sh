#!/bin/bash
# Listen-stream slots survive workers killed while holding streams, and a
# reload (issue 18, item 1): see listen_slots.py.
. "${top_srcdir:-.}/tests/lib.sh"
command -v python3 >/dev/null || skip_all "python3 not installed"

TEST_HTTP='metrics: { path: /metrics }' test_conf "$T_DIR/phantom.yaml" slots 'workers: 4' \
	'subscriptions: { max_streams: 2 }'
sed -i 's/max_body: 2048/max_body: 20000000/' "$T_DIR/phantom.yaml"
phantom_unix "$T_DIR/phantom.yaml"
ok "phantom-fcgi started (4 workers and a hub)"
wait_for 3 test "$(nworkers "$PH_PID")" = 4
while IFS=$'\t' read -r desc got want; do
	is "$got" "$want" "$desc"
done < <(python3 "$top_srcdir/tests/integration/listen_slots.py" "$PH_SOCK" "$PH_LOG" "$PH_PID" \
	2>"$T_DIR/py.err")
is "$(cat "$T_DIR/py.err")" "" "the listening clients ran to their end"
like "$(cat "$PH_LOG")" 'held 1 listen stream; slot given back' "the master logs the slots it gave back"
done_testing
