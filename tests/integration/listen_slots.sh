#!/bin/bash
# Listen-stream slots survive workers killed while holding streams, and a
# reload (issue 18, item 1): see listen_slots.py.
. "${top_srcdir:-.}/tests/lib.sh"
command -v python3 >/dev/null || skip_all "python3 not installed"

# announce: an exec tool whose answer announces a change of a resource with
# a 180 kB URI, which its worker tells the hub without waiting: a message
# that fills the hub's channel quickly while the hub is stopped
cat >"$T_DIR/announce.sh" <<'SH'
#!/bin/sh
cat >/dev/null
printf '{"content":[{"type":"text","text":"told"}],"resourcesUpdated":["note://%s"]}\n' \
	"$(head -c 180000 /dev/zero | tr '\0' x)"
SH
chmod 0755 "$T_DIR/announce.sh"
TEST_HTTP='metrics: { path: /metrics }' test_conf "$T_DIR/phantom.yaml" slots 'workers: 4' \
	'subscriptions: { max_streams: 2 }' \
	"tools: [ { name: announce, description: tells the hub, exec: [$T_DIR/announce.sh] } ]"
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
