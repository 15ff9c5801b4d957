#!/bin/bash
# systemd socket activation without systemd running: systemd-socket-activate
# (Debian package systemd) binds the socket and execs Phantom with it on fd 3
# and LISTEN_FDS/LISTEN_PID set, as phantom.socket + phantom.service do.
# Phantom serves on that socket with its own master and workers (cgi-fcgi and
# the real nginx call a tool through it), ignores a configured listen:,
# hides the variables from exec handlers, reloads on SIGHUP (the unit's
# ExecReload), stops with status 0 on SIGTERM, and refuses two sockets, a
# descriptor that is not a listening socket, and variables meant for
# another process.
. "${top_srcdir:-.}/tests/lib.sh"
command -v systemd-socket-activate >/dev/null || skip_all "systemd-socket-activate (systemd) not installed"
command -v cgi-fcgi >/dev/null || skip_all "cgi-fcgi (libfcgi-bin) not installed"
command -v nginx >/dev/null || skip_all "nginx not installed"

B=$T_DIR/bin
mkdir -p "$B"
# what an exec handler sees of the activation variables
cat >"$B/probe.sh" <<'SH'
#!/bin/sh
cat >/dev/null
printf '{"content":[{"type":"text","text":"pid=%s fds=%s names=%s"}]}\n' \
	"${LISTEN_PID-unset}" "${LISTEN_FDS-unset}" "${LISTEN_FDNAMES-unset}"
SH
chmod 0755 "$B/probe.sh"
nap_tool "$B"
chmod 0755 "$B"
unused=$(free_port)
conf() { # conf NAME: a configuration with a listen: that must not be used
	cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: $1, version: "1.0" }
workers: 3
listen: 127.0.0.1:$unused
tools:
  - name: probe
    description: Shows the socket activation variables it was given
    exec: [$B/probe.sh]
    env: [LISTEN_PID, LISTEN_FDS, LISTEN_FDNAMES]
  - name: nap
    description: Answers after 0.4 s
    exec: [$B/nap.sh]
YAML
}
conf sa-test
call='{"name":"probe","arguments":{}}'

port=$(free_port)
PH_LOG=$T_DIR/activate.log
systemd-socket-activate -l "127.0.0.1:$port" --fdname=fastcgi -- \
	"$PHANTOM" -c "$T_DIR/phantom.yaml" 2>"$PH_LOG" &
PH_PID=$!
t_started systemd-socket-activate "$PH_PID" "$PH_LOG" port_open "$port" ||
	{ echo "not ok 1 - systemd-socket-activate starts"; exit 1; }
PH_BACKEND=127.0.0.1:$port
# systemd-socket-activate execs Phantom at the first connection
fcgi_post "$PH_BACKEND" "$(req 1 tools/call "$call")" $(mhdr tools/call) HTTP_MCP_NAME=probe
is "$STATUS" 200 "cgi-fcgi: tools/call over the passed socket answers 200"
is "$(jqr '.result.content[0].text')" "pid=unset fds=unset names=unset" \
	"an exec handler sees no LISTEN_PID, LISTEN_FDS or LISTEN_FDNAMES"
wait_for 3 test "$(ps -o comm= -p "$PH_PID")" = phantom-master
ok "Phantom's master runs in place of systemd-socket-activate (the pid LISTEN_PID named)"
workers_are "$PH_PID" 3 "the master runs the configured 3 workers on the passed socket"
grep -q 'serving FastCGI on the socket passed by systemd (fd 3)' "$PH_LOG"
ok "the log says it serves on the socket passed by systemd"
grep -q "listen: 127.0.0.1:$unused is not used" "$PH_LOG"
ok "the log says the configured listen: is not used"
! port_open "$unused"; ok "nothing listens on the configured listen: address"

nginx_start "$PH_BACKEND" || { echo "not ok $((T_N + 1)) - nginx starts"; exit 1; }
U=$NGINX_URL
mpost "$U" 2 tools/call "$call"
is "$STATUS/$(jqr '.result.content[0].text')" "200/pid=unset fds=unset names=unset" \
	"nginx: tools/call through the passed socket"
for i in 1 2 3 4 5 6; do
	mpost "$U" "$((10 + i))" server/discover '{}'
	[ "$STATUS" = 200 ] || break
done
is "$STATUS" 200 "nginx: six more requests served"
naps_at_once "$U" "$PH_LOG" nginx

# ExecReload=kill -HUP $MAINPID
conf sa-reloaded
kill -HUP "$PH_PID"
reloaded() {
	mpost "$U" 30 server/discover '{}'
	[ "$(jqr '.result._meta["io.modelcontextprotocol/serverInfo"].name')" = sa-reloaded ]
}
wait_for 5 reloaded; ok "SIGHUP reloads the configuration on the passed socket"
kill "$PH_PID"
wait "$PH_PID"; is "$?" 0 "SIGTERM ends the activated Phantom with status 0"
! port_open "$port"; ok "the socket is closed once Phantom has stopped"

# two sockets: refused with a clear message, exit status 1
p1=$(free_port) p2=$(free_port)
log2=$T_DIR/two.log
systemd-socket-activate -l "127.0.0.1:$p1" -l "127.0.0.1:$p2" -- \
	"$PHANTOM" -c "$T_DIR/phantom.yaml" 2>"$log2" &
pid2=$!
T_PIDS+=("$pid2")
wait_port "$p1"
(exec 3<>"/dev/tcp/127.0.0.1/$p1") 2>/dev/null
wait_gone "$pid2" 5; ok "two passed sockets: Phantom exits"
wait "$pid2"; is "$?" 1 "two passed sockets: exit status 1"
grep -q 'socket activation: 2 sockets passed (LISTEN_FDS=2), Phantom serves on exactly one' "$log2"
ok "two passed sockets: the message says Phantom serves on exactly one"

# fd 3 not a listening socket
out=$(bash -c 'exec 3</dev/null; export LISTEN_PID=$$ LISTEN_FDS=1; exec "$0" -c "$1"' \
	"$PHANTOM" "$T_DIR/phantom.yaml" 2>&1); rc=$?
is "$rc" 1 "LISTEN_FDS=1 with fd 3 a file: exit status 1"
like "$out" 'fd 3 is not a listening stream socket' "LISTEN_FDS=1 with fd 3 a file: the message says so"

# variables meant for another process are ignored (and still hidden)
port3=$(free_port)
LISTEN_PID=1 LISTEN_FDS=1 LISTEN_FDNAMES=x "$PHANTOM" -c "$T_DIR/phantom.yaml" \
	--listen "127.0.0.1:$port3" 2>"$T_DIR/other.log" &
pid3=$!
t_started phantom "$pid3" "$T_DIR/other.log" port_open "$port3" ||
	{ echo "not ok $((T_N + 1)) - phantom --listen starts"; exit 1; }
fcgi_post "127.0.0.1:$port3" "$(req 3 tools/call "$call")" $(mhdr tools/call) HTTP_MCP_NAME=probe
is "$(jqr '.result.content[0].text')" "pid=unset fds=unset names=unset" \
	"LISTEN_PID of another process: ignored, and hidden from exec handlers"
! grep -q 'passed by systemd' "$T_DIR/other.log"; ok "LISTEN_PID of another process: no socket taken"
done_testing
