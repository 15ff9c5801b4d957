#!/bin/bash
# The unix socket Phantom binds itself (listen: unix:PATH, --listen
# unix:PATH) with the mode, owner and group of listen_mode, listen_owner and
# listen_group, so that a web server running as another user (nginx as
# www-data) can connect: -t refuses a mode that is not octal 0 to 0777, a
# user or group that does not exist and the keys beside a TCP listen; the
# mode is the socket's from its creation; as root the group and owner are
# set and www-data connects while another user cannot; an unprivileged
# server asked for another owner does not start and says why; where the
# socket is not Phantom's own the keys are not used, with a warning.
. "${top_srcdir:-.}/tests/lib.sh"
command -v cgi-fcgi >/dev/null || skip_all "cgi-fcgi (libfcgi-bin) not installed"

out=$T_DIR/out err=$T_DIR/err

# ---- -t ------------------------------------------------------------------------------
# check_bad NAME LISTEN KEY EXPECTED-REGEX: -t on "listen: LISTEN" then KEY
# exits 1 and prints FILE:EXPECTED
check_bad() {
	local f=$T_DIR/$1.yaml
	printf 'listen: %s\n%s\n' "$2" "$3" >"$f"
	"$PHANTOM" -c "$f" -t >"$out" 2>"$err"
	is "$?" 1 "-t on $1 exits 1"
	grep -Eq -- "^$f:$4" "$err"; ok "-t on $1 prints $f:$4"
	grep -q 'configuration OK' "$err"; is "$?" 1 "-t on $1 does not say OK"
}
u=unix:$T_DIR/t.sock
check_bad mode-9 "$u" 'listen_mode: "0999"' "2: listen_mode: '0999' is not an octal mode from 0 to 0777"
check_bad mode-big "$u" 'listen_mode: "01777"' "2: listen_mode: '01777' is not an octal mode"
check_bad mode-word "$u" 'listen_mode: rw' "2: listen_mode: 'rw' is not an octal mode"
check_bad no-group "$u" 'listen_group: no-such-group-ph' "2: listen_group: no group 'no-such-group-ph' on this system"
check_bad no-user "$u" 'listen_owner: no-such-user-ph' "2: listen_owner: no user 'no-such-user-ph' on this system"
check_bad big-id "$u" 'listen_group: 4294967295' "2: listen_group: group id '4294967295' is too large"
check_bad tcp 127.0.0.1:9000 'listen_mode: "0660"' \
	"2: listen_mode: applies to a unix socket, and listen is 127\\.0\\.0\\.1:9000"
printf 'listen: %s\nlisten_mode: 660\nlisten_owner: "0"\nlisten_group: %s\n' "$u" "$(id -gn)" >"$T_DIR/good.yaml"
"$PHANTOM" -c "$T_DIR/good.yaml" -t >"$out" 2>"$err"
is "$?" 0 "-t takes an octal mode without its 0, an owner by number and a group by name"
printf 'listen_mode: "0600"\n' >"$T_DIR/bare.yaml"
"$PHANTOM" -c "$T_DIR/bare.yaml" -t >"$out" 2>"$err"
is "$?" 0 "-t takes the keys without listen: (a --listen unix:PATH may come)"

# ---- the mode, as any user ---------------------------------------------------------------
# up NAME YAML [ARGS...]: Phantom with the configuration YAML (and a single
# process), started under umask 0 so that the socket's mode is all it asks
up() {
	local name=$1 yaml=$2; shift 2
	PH_SOCK=$T_DIR/$name.sock PH_LOG=$T_DIR/$name.log
	printf 'server: { name: sock-test, version: "1.0" }\nworkers: 2\nlisten: unix:%s\n%s' \
		"$PH_SOCK" "$yaml" >"$T_DIR/$name.yaml"
	(umask 0; exec "$PHANTOM" -c "$T_DIR/$name.yaml" "$@" 2>"$PH_LOG") &
	PH_PID=$!
	t_started phantom "$PH_PID" "$PH_LOG" test -S "$PH_SOCK"
}
# served AS-USER: one request on $PH_SOCK as that user (root: as we are)
served() {
	local body; body=$(req 1 server/discover)
	local env=(); mapfile -t env < <(cgi_env "${#body}")
	if [ "$1" = root ]; then
		printf '%s' "$body" | env -i "${env[@]}" $(mhdr server/discover) \
			cgi-fcgi -bind -connect "$PH_SOCK" >"$out" 2>&1
	else
		printf '%s' "$body" | runuser -u "$1" -- env -i "${env[@]}" $(mhdr server/discover) \
			cgi-fcgi -bind -connect "$PH_SOCK" >"$out" 2>&1
	fi
	cgi_parse "$out"
	[ "$STATUS/$(jqr '.result._meta["io.modelcontextprotocol/serverInfo"].name')" = 200/sock-test ]
}

up plain '' || { echo "not ok $((T_N + 1)) - phantom starts"; exit 1; }
is "$(stat -c %a "$PH_SOCK")" 777 "without listen_mode the umask decides (umask 0: 777)"
kill "$PH_PID"; wait "$PH_PID"

up mode 'listen_mode: "0600"' || { echo "not ok $((T_N + 1)) - phantom starts"; exit 1; }
is "$(stat -c %a "$PH_SOCK")" 600 "listen_mode 0600: the socket's mode is 600 (umask 0)"
served root; ok "and the server's own user is served on it"
kill "$PH_PID"; wait "$PH_PID"

# --listen unix:PATH takes them too
PH_SOCK=$T_DIR/cli.sock
printf 'listen_mode: "0640"\n' >"$T_DIR/cli.yaml"
(umask 0; exec "$PHANTOM" -c "$T_DIR/cli.yaml" --listen "unix:$PH_SOCK" --workers 1 2>"$T_DIR/cli.log") &
PH_PID=$!
t_started phantom "$PH_PID" "$T_DIR/cli.log" test -S "$PH_SOCK" || { echo "not ok $((T_N + 1)) - phantom starts"; exit 1; }
is "$(stat -c %a "$PH_SOCK")" 640 "--listen unix:PATH: the socket has listen_mode (640)"
kill "$PH_PID"; wait "$PH_PID"

# where the socket is not Phantom's own, the keys are not used, and it says so
printf 'listen_mode: "0600"\nlisten_group: %s\n' "$(id -g)" >"$T_DIR/tcp.yaml"
phantom_listen "$T_DIR/tcp.yaml" --workers 1 || { echo "not ok $((T_N + 1)) - phantom starts"; exit 1; }
fcgi_post "$PH_ADDR" "$(req 2 server/discover)" $(mhdr server/discover)
is "$STATUS" 200 "--listen HOST:PORT with listen_mode set: served"
grep -q "warning: listen_mode, listen_owner and listen_group are not used on $PH_ADDR" "$PH_LOG"
ok "and the log says the keys are not used on a TCP port"
kill "$PH_PID"; wait "$PH_PID"
if command -v spawn-fcgi >/dev/null; then
	spawn_fcgi_unix "$T_DIR/tcp.yaml" || { echo "not ok $((T_N + 1)) - spawn-fcgi starts"; exit 1; }
	fcgi_post "$PH_SOCK" "$(req 3 server/discover)" $(mhdr server/discover)
	is "$STATUS" 200 "the socket inherited on fd 0 with listen_mode set: served"
	wait_for 2 grep -q "not used on the socket inherited on fd 0.*spawn-fcgi's -M, -U and -G" "$PH_LOG"
	ok "and the log says spawn-fcgi's options set those"
	is "$(stat -c %a "$PH_SOCK")" 666 "spawn-fcgi's -M 0666 stays"
	kill "$PH_PID"; wait "$PH_PID"
fi

# ---- owner and group: root ---------------------------------------------------------------
if [ -z "$T_ROOT" ] || ! id www-data >/dev/null 2>&1 || ! id nobody >/dev/null 2>&1 ||
   id -nG nobody | grep -qw www-data; then
	diag "not root, or no www-data and nobody: the owner and group checks are skipped"
	done_testing
	exit
fi
up group $'listen_mode: "0660"\nlisten_group: www-data' ||
	{ echo "not ok $((T_N + 1)) - phantom starts"; exit 1; }
is "$(stat -c '%a %U %G' "$PH_SOCK")" "660 root www-data" "listen_group www-data, listen_mode 0660: mode and group set"
served www-data; ok "www-data connects and is served (nginx's user)"
served nobody; is "$?" 1 "nobody, not in the group, cannot connect"
like "$(cat "$out")" "Could not connect" "  (its connect is refused)"
served root; ok "and the next request is served"
kill "$PH_PID"; wait "$PH_PID"

up owner $'listen_mode: "0600"\nlisten_owner: www-data\nlisten_group: "33"' ||
	{ echo "not ok $((T_N + 1)) - phantom starts"; exit 1; }
is "$(stat -c '%a %U %g' "$PH_SOCK")" "600 www-data 33" "listen_owner www-data, listen_group 33 (a number): set"
served www-data; ok "the owner connects"
served nobody; is "$?" 1 "another user cannot (0600)"
kill "$PH_PID"; wait "$PH_PID"

# unprivileged: another owner, or a group the user is not in, is refused at start
d=$(run_dir unpriv)
for k in 'listen_owner: root' 'listen_group: root'; do
	printf 'server: { name: sock-test }\nworkers: 2\nlisten: unix:%s/s.sock\n%s\n' "$d" "$k" >"$d/p.yaml"
	chmod 0644 "$d/p.yaml"
	timeout 10 runuser -u www-data -- "$(www_phantom)" -c "$d/p.yaml" >"$out" 2>"$err"
	is "$?" 1 "as www-data, $k: the start fails (exit 1)"
	test -e "$d/s.sock"; is "$?" 1 "  and leaves no socket behind"
done
like "$(cat "$err")" "cannot give $d/s.sock to group 0 \\(listen_group\\): Operation not permitted; without root the group must be one of the server's user's" \
	"  a group says why"
printf 'server: { name: sock-test }\nworkers: 2\nlisten: unix:%s/s.sock\nlisten_owner: root\n' "$d" >"$d/p.yaml"
timeout 10 runuser -u www-data -- "$(www_phantom)" -c "$d/p.yaml" >"$out" 2>"$err"
like "$(cat "$err")" "cannot give $d/s.sock to user 0 \\(listen_owner\\): Operation not permitted; changing the owner needs root" \
	"  an owner says it needs root"
printf 'server: { name: sock-test }\nworkers: 1\nlisten: unix:%s/s.sock\nlisten_owner: www-data\nlisten_group: www-data\n' "$d" >"$d/p.yaml"
runuser -u www-data -- "$(www_phantom)" -c "$d/p.yaml" 2>"$T_DIR/self.log" &
PH_PID=$! PH_SOCK=$d/s.sock
t_started phantom "$PH_PID" "$T_DIR/self.log" test -S "$PH_SOCK"; ok "as www-data, its own user and group: it starts"
served www-data; ok "  and serves"
done_testing
