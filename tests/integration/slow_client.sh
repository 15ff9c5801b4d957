#!/bin/bash
# Slow clients straight over FastCGI (no web server buffering the body):
# two clients trickling a body one byte a second must not stop a 2-worker
# server; they get 408 after http.body_timeout_ms, trickled parameters
# after http.params_timeout_ms (issue 18, item 3).
. "${top_srcdir:-.}/tests/lib.sh"
command -v python3 >/dev/null || skip_all "python3 not installed"

TEST_HTTP='params_timeout_ms: 1500, body_timeout_ms: 1500' \
	test_conf "$T_DIR/phantom.yaml" fcgi-slow 'workers: 2'
# rounds TARGET WHAT: the slow clients against one address
rounds() {
	while IFS=$'\t' read -r desc got want; do
		is "$got" "$want" "$2: $desc"
	done < <(python3 "$top_srcdir/tests/integration/slow_client.py" "$1" 2>"$T_DIR/py.err")
	is "$(cat "$T_DIR/py.err")" "" "$2: the slow clients ran to their end"
	like "$(cat "$PH_LOG")" 'parameters took over 1500 ms' "$2: the params timeout is logged"
	is "$(grep -c 'killed by signal' "$PH_LOG")" 0 "$2: no worker died"
}
phantom_unix "$T_DIR/phantom.yaml"
ok "phantom-fcgi started (2 workers, unix socket)"
wait_for 3 test "$(nworkers "$PH_PID")" = 2
rounds "$PH_SOCK" unix
phantom_listen "$T_DIR/phantom.yaml"
ok "phantom-fcgi started (2 workers, TCP)"
wait_for 3 test "$(nworkers "$PH_PID")" = 2
rounds "$PH_ADDR" tcp
done_testing
