#!/bin/bash
# Hostile FastCGI records straight on Phantom's socket (tests/fcgi.py plays
# the web server): malformed headers, wrong versions, unknown and
# management types, absurd parameter lengths, cut streams, ABORT_REQUEST,
# multiplexing, and bodies that do not match CONTENT_LENGTH, each followed
# by an ordinary request that must be served. A single process, so a crash
# is not hidden by a master starting a new worker.
. "${top_srcdir:-.}/tests/lib.sh"
# libfcgi's own leak on FCGI_GET_VALUES (see the file) is not Phantom's
export LSAN_OPTIONS="suppressions=$top_srcdir/tests/integration/fcgi_hostile.lsan${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
command -v python3 >/dev/null || skip_all "python3 not installed"

test_conf "$T_DIR/phantom.yaml" fcgi-hostile 'workers: 1'
sed -i 's/max_body: 2048/max_body: 65536/' "$T_DIR/phantom.yaml"
phantom_unix "$T_DIR/phantom.yaml"
ok "phantom-fcgi started (one process)"

while IFS=$'\t' read -r desc got want; do
	is "$got" "$want" "$desc"
done < <(python3 "$top_srcdir/tests/integration/fcgi_hostile.py" "$PH_SOCK" 2>"$T_DIR/py.err")
is "$(cat "$T_DIR/py.err")" "" "the hostile client ran to its end"
kill -0 "$PH_PID" 2>/dev/null
ok "the server is still running"

# closing over TCP, where an answered connection is closed at once
phantom_listen "$T_DIR/phantom.yaml"
ok "phantom-fcgi started on TCP (one process)"
while IFS=$'\t' read -r desc got want; do
	is "$got" "$want" "$desc"
done < <(python3 "$top_srcdir/tests/integration/fcgi_hostile.py" "$PH_ADDR" closing 2>"$T_DIR/py.err")
is "$(cat "$T_DIR/py.err")" "" "the closing checks over TCP ran to their end"

# FCGI_KEEP_CONN: the web server sends the next request on the connection
# it kept; it is answered at once (before, the worker waited on the
# listener until some other connection came)
is "$(python3 - "$top_srcdir/tests" "$PH_ADDR" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import fcgi
s = fcgi.connect(sys.argv[2], timeout=5)
out = []
for rid in (1, 2, 3):
    s.sendall(fcgi.request_bytes(fcgi.discover_body(rid), rid=rid, keep=True))
    out.append(str(fcgi.response(fcgi.read_records(s))[0]))
print(" ".join(out))
PY
)" "200 200 200" "three requests on one kept connection (FCGI_KEEP_CONN) are each answered"

# libfcgi's FCGI_WEB_SERVER_ADDRS still applies now that Phantom accepts itself
FCGI_WEB_SERVER_ADDRS=10.9.9.9,127.0.0.2 phantom_listen "$T_DIR/phantom.yaml"
ok "phantom-fcgi started on TCP with FCGI_WEB_SERVER_ADDRS=10.9.9.9,127.0.0.2"
fcgi_post "$PH_ADDR" "$(req 1 server/discover)" $(mhdr server/discover)
is "$STATUS/$BODY" "200/" "a peer not in FCGI_WEB_SERVER_ADDRS gets no answer"
like "$(cat "$PH_LOG")" 'outside FCGI_WEB_SERVER_ADDRS; closed' "the refusal is logged"
FCGI_WEB_SERVER_ADDRS=10.9.9.9,127.0.0.1 phantom_listen "$T_DIR/phantom.yaml"
fcgi_post "$PH_ADDR" "$(req 1 server/discover)" $(mhdr server/discover)
is "$STATUS/$(jqr .result.resultType)" "200/complete" "a peer in FCGI_WEB_SERVER_ADDRS is served"
# over IPv6 the list is checked too (before, any peer that was not IPv4
# was let through): ::1 is refused unless listed, an IPv4 peer of a
# dual-stack socket is compared as IPv4
v6() { # v6 ADDRS LISTEN HOST: the status of a discover sent from HOST, or none
	local port pid; port=$(free_port)
	FCGI_WEB_SERVER_ADDRS=$1 "$PHANTOM" -c "$T_DIR/phantom.yaml" --listen "${2/PORT/$port}" 2>>"$T_DIR/v6.log" &
	pid=$!
	T_PIDS+=("$pid")
	wait_for 5 python3 -c "import socket; socket.create_connection(('$3', $port), 1)"
	python3 - "$top_srcdir/tests" "$3:$port" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import fcgi
try:
    print(fcgi.discover(sys.argv[2], timeout=3)[0] or "none")
except Exception:
    print("none")
PY
	kill "$pid" 2>/dev/null
}
if python3 -c "import socket; s=socket.socket(socket.AF_INET6); s.bind(('::1', 0))" 2>/dev/null; then
	is "$(v6 10.9.9.9,127.0.0.1 '[::1]:PORT' ::1)" none "an IPv6 peer (::1) not in FCGI_WEB_SERVER_ADDRS gets no answer"
	is "$(v6 10.9.9.9,::1 '[::1]:PORT' ::1)" 200 "::1 listed: served"
	is "$(v6 10.9.9.9 '[::]:PORT' 127.0.0.1)" none "an IPv4 peer of a dual-stack socket not listed: no answer"
	is "$(v6 10.9.9.9,127.0.0.1 '[::]:PORT' 127.0.0.1)" 200 "... listed as IPv4: served"
fi
done_testing
