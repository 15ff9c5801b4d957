#!/bin/bash
# Leak checking reaches workers: in a sanitizer build (--enable-sanitizers)
# a worker under a master runs LeakSanitizer as it leaves, so a handler that
# leaks is reported in the server log, which done_testing (tests/lib.sh)
# reads for every test after stopping the servers. Here a module tool leaks
# on purpose (tests/modules/testmod.c: leak) in a two-worker server; the
# report must name it, and a server that never ran it must have none.
. "${top_srcdir:-.}/tests/lib.sh"
nm -D "$PHANTOM" 2>/dev/null | grep -q __lsan_do_recoverable_leak_check ||
	nm "$PHANTOM" 2>/dev/null | grep -q __lsan_do_recoverable_leak_check ||
	skip_all "not a sanitizer build (configure --enable-sanitizers)"

cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: leaks, version: "1.0" }
workers: 2
tools:
  - { name: leak, description: loses memory, module: testmod.so, symbol: leak }
  - { name: fine, description: does not, module: testmod.so, symbol: good_output }
YAML
# serve_then_stop TOOL: a server, one call of TOOL through FastCGI (no web
# server), then SIGTERM; its log is kept as $T_DIR/TOOL.report (the leak's
# is removed once checked: done_testing fails on any report it finds)
serve_then_stop() {
	phantom_listen "$T_DIR/phantom.yaml" || { echo "not ok - phantom starts"; exit 1; }
	# shellcheck disable=SC2046
	fcgi_post "$PH_ADDR" "$(req 1 tools/call "{\"name\":\"$1\",\"arguments\":{}}")" \
		$(mhdr tools/call) "HTTP_MCP_NAME=$1" "HTTP_ACCEPT=application/json, text/event-stream"
	is "$STATUS/$(jqr .result.isError)" 200/false "tools/call $1 answers"
	kill "$PH_PID"
	for _ in $(seq 1 200); do kill -0 "$PH_PID" 2>/dev/null || break; sleep 0.05; done
	mv "$PH_LOG" "$T_DIR/$1.report"
}

serve_then_stop leak
grep -q "ERROR: LeakSanitizer: detected memory leaks" "$T_DIR/leak.report"
ok "the worker that ran the leaking tool reports a leak as it stops"
grep -q "4242 byte(s) leaked" "$T_DIR/leak.report" && grep -q "in leak " "$T_DIR/leak.report"
ok "the report names the 4242 bytes and the handler that lost them"
grep -q "exited with status 23" "$T_DIR/leak.report"
ok "the master logs the worker's leak exit status (23)"
rm -f "$T_DIR/leak.report" "$T_DIR"/fcgi.*

serve_then_stop fine
! grep -qE "ERROR: (Leak|Address)Sanitizer" "$T_DIR/fine.report"
ok "a server whose workers leak nothing reports nothing"
done_testing
