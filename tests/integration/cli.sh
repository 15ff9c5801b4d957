#!/bin/bash
# The command line of phantom-fcgi: -V, -h, one-line errors with exit status
# 2 for bad arguments, -t printing every configuration problem as
# FILE:LINE: message, and --listen's care with unix sockets.
. "${top_srcdir:-.}/tests/lib.sh"

out=$T_DIR/out err=$T_DIR/err

"$PHANTOM" -V >"$out" 2>"$err"
is "$?" 0 "-V exits 0"
like "$(cat "$out")" '^phantom-fcgi [0-9]+\.[0-9]+' "-V prints the version"
"$PHANTOM" --version >"$out" 2>"$err"
is "$?/$(wc -l <"$out")" 0/1 "--version prints one line"
"$PHANTOM" -h >"$out" 2>"$err"
is "$?" 0 "-h exits 0"
like "$(head -1 "$out")" '^usage: phantom-fcgi' "-h prints the usage on stdout"
for o in --listen --workers --stdio -t -c; do
	grep -q -- "$o" "$out"; ok "-h documents $o"
done

# bad_args DESCRIPTION ARGS...: exit 2, nothing on stdout, one line on stderr
bad_args() {
	local d=$1; shift
	"$PHANTOM" "$@" </dev/null >"$out" 2>"$err"
	is "$?" 2 "$d: exit status 2"
	is "$(wc -l <"$err")/$(wc -c <"$out")" 1/0 "$d: one line on stderr, nothing on stdout"
	like "$(cat "$err")" '^phantom-fcgi: ' "$d: the line names the program"
}
bad_args "unknown long option" --bogus
like "$(cat "$err")" "'--bogus'" "unknown option is named"
bad_args "unknown short option" -x
bad_args "missing value of -c" -c
like "$(cat "$err")" 'missing value' "missing value is said"
bad_args "missing value of --listen" --listen
bad_args "missing value of --workers" --workers
bad_args "--workers 0" --workers 0
like "$(cat "$err")" 'workers' "--workers 0 names the option"
bad_args "--workers abc" --workers abc
bad_args "--workers 257" --workers 257
bad_args "--workers=-1" --workers=-1
bad_args "an extra argument" -c /dev/null extra
like "$(cat "$err")" "'extra'" "the extra argument is named"
bad_args "--stdio with --listen" --stdio --listen 127.0.0.1:1
bad_args "--pool with --workers" --pool --workers 2
like "$(cat "$err")" 'pool and --workers' "--pool with --workers names both"

# ---- -t -------------------------------------------------------------------------
good=$T_DIR/good.yaml
cat >"$good" <<'YAML'
server:
  name: cli-test
  page_size: 10
workers: 3
http:
  hosts: [localhost]
  max_body: 65536
YAML
"$PHANTOM" -c "$good" -t >"$out" 2>"$err"
is "$?" 0 "-t on a good configuration exits 0"
like "$(cat "$err")" 'configuration OK' "-t says the configuration is OK"
is "$(wc -c <"$out")" 0 "-t writes nothing on stdout"
"$PHANTOM" -t >"$out" 2>"$err"
is "$?" 0 "-t without -c checks the built-in defaults"

# check_bad NAME YAML EXPECTED-REGEX...: -t exits 1 and prints every expected line
check_bad() {
	local name=$1 yaml=$2 f=$T_DIR/$1.yaml re; shift 2
	printf '%s' "$yaml" >"$f"
	"$PHANTOM" -c "$f" -t >"$out" 2>"$err"
	is "$?" 1 "-t on $name exits 1"
	for re in "$@"; do
		grep -Eq -- "^$f:$re" "$err"; ok "-t on $name prints $f:$re"
	done
	is "$(grep -vc "^$f:[0-9]*: " "$err")" 0 "-t on $name prints only FILE:LINE: lines"
}
check_bad unknown-key $'server:\n  name: x\n  colour: blue\n' "3: unknown key 'server.colour'"
check_bad unknown-top $'# comment\nworker: 2\n' "2: unknown key 'worker'"
check_bad wrong-type $'server:\n  name: [a, b]\n' "2: server.name: expected a string"
check_bad wrong-type-int $'workers: "4"\n' "1: workers: expected an integer"
check_bad wrong-type-bool $'log:\n  json: maybe\n' "2: log.json: expected true or false"
check_bad out-of-range $'http:\n  max_body: 10\n' "2: http.max_body: '10' is too small \\(allowed 64\\.\\.[0-9]+\\)"
check_bad too-large $'workers: 100000\n' "1: workers: '100000' is too large"
check_bad yaml-syntax $'server:\n  name: x\n  title: [unclosed\n' "[34]: .+"
check_bad yaml-tab $'server:\n\tname: x\n' "2: .+"
check_bad several $'server:\n  nme: x\nworkers: lots\nhttp:\n  max_body: 1\n  hosts: 7\n' \
	"2: unknown key 'server.nme'" "3: workers: 'lots' is not an integer" \
	"5: http.max_body: '1' is too small" "6: http.hosts: expected a list"
is "$(wc -l <"$err")" 4 "-t prints all four problems, not only the first"

"$PHANTOM" -c "$T_DIR/missing.yaml" -t >"$out" 2>"$err"
is "$?" 1 "-t on a missing file exits 1"
like "$(cat "$err")" "^$T_DIR/missing.yaml:[0-9]+: cannot read configuration: No such file" \
	"-t names the missing file and the reason"
"$PHANTOM" -c "$T_DIR" -t >"$out" 2>"$err"
is "$?" 1 "-t on a directory exits 1"
like "$(cat "$err")" "^$T_DIR:[0-9]+: cannot read configuration" "-t names the unreadable path"

# a bad configuration stops the server from starting at all
"$PHANTOM" -c "$T_DIR/several.yaml" --listen "127.0.0.1:$(free_port)" >"$out" 2>"$err"
is "$?" 1 "starting with a bad configuration exits 1"
like "$(cat "$err")" 'unknown key' "and logs the problems"

# ---- --listen and fd 0 --------------------------------------------------------
sock=$T_DIR/cli.sock
"$PHANTOM" -c "$good" --listen "unix:$sock" --workers 1 2>"$T_DIR/a.log" &
a=$!
T_PIDS+=("$a")
wait_for 5 test -S "$sock"; ok "--listen unix: creates the socket"
fcgi_post "$sock" "$(req 1 server/discover)" $(mhdr server/discover)
is "$STATUS/$(jqr '.result._meta["io.modelcontextprotocol/serverInfo"].name')" 200/cli-test \
	"a request on the unix socket is served"
"$PHANTOM" -c "$good" --listen "unix:$sock" --workers 1 >"$out" 2>"$err"
is "$?" 1 "a second server on a live socket exits 1"
like "$(cat "$err")" 'in use by a running server' "and says the socket is in use"
fcgi_post "$sock" "$(req 2 server/discover)" $(mhdr server/discover)
is "$STATUS" 200 "the live socket was not clobbered: the first server still answers"
kill -9 "$a"; wait "$a" 2>/dev/null
test -S "$sock"; ok "a killed server leaves a stale socket behind"
"$PHANTOM" -c "$good" --listen "unix:$sock" --workers 1 2>"$T_DIR/b.log" &
b=$!
T_PIDS+=("$b")
sleep 0.3
fcgi_post "$sock" "$(req 3 server/discover)" $(mhdr server/discover)
is "$STATUS" 200 "a stale socket is removed and replaced"
kill "$b"

: >"$T_DIR/plain"
"$PHANTOM" -c "$good" --listen "unix:$T_DIR/plain" >"$out" 2>"$err"
is "$?" 1 "--listen on a regular file exits 1"
like "$(cat "$err")" 'not a socket' "and does not remove the file"
test -f "$T_DIR/plain"; ok "the regular file is still there"
"$PHANTOM" -c "$good" --listen nonsense >"$out" 2>"$err"
is "$?" 1 "--listen with a bad address exits 1"
like "$(cat "$err")" "bad listen address 'nonsense'" "and names the address"

env -u GATEWAY_INTERFACE "$PHANTOM" -c "$good" </dev/null >"$out" 2>"$err"
is "$?" 2 "no socket on fd 0 and no --listen: exit status 2"
like "$(cat "$err")" 'no listening socket on fd 0' "with a clear error"
is "$(grep -c 'no listening socket' "$err")" 1 "said once, in one line"
echo '{}' | env -u GATEWAY_INTERFACE "$PHANTOM" -c "$good" >"$out" 2>"$err"
is "$?" 2 "a pipe on fd 0 without GATEWAY_INTERFACE is not CGI"

# ---- environment switches: a bad value refused at start, a good one said in the log ---
# env_switch VAR BAD ERROR GOOD NOTICE: VAR=BAD exits 2 with ERROR and serves
# nothing; VAR=GOOD serves a request and the log says NOTICE once.
env_switch() {
	local var=$1 bad=$2 error=$3 value=$4 notice=$5 sock=$T_DIR/$1.sock log=$T_DIR/$1.log
	env "$var=$bad" "$PHANTOM" -c "$good" --listen "unix:$sock" >"$out" 2>"$err"
	is "$?" 2 "$var=$bad: exit status 2"
	like "$(cat "$err")" "$error" "the error names the value and the choices"
	test -e "$sock"; is "$?" 1 "and nothing is served"
	env "$var=$value" "$PHANTOM" -c "$good" --listen "unix:$sock" --workers 2 2>"$log" &
	T_PIDS+=("$!")
	wait_for 5 test -S "$sock"
	fcgi_post "$sock" "$(req 4 server/discover)" $(mhdr server/discover)
	is "$STATUS" 200 "$var=$value: a request is served"
	is "$(grep -c "$notice" "$log")" 1 "the log says it once: $notice"
}
# which code reads FastCGI requests
env_switch PHANTOM_FCGI_READER libfkgi "PHANTOM_FCGI_READER is 'libfkgi': it is libfcgi or split" \
	libfcgi 'PHANTOM_FCGI_READER=libfcgi: libfcgi reads every request'
# the fast paths of docs/internals.md on or off
env_switch PHANTOM_FAST_PATHS of "PHANTOM_FAST_PATHS is 'of': it is on or off" \
	off 'PHANTOM_FAST_PATHS=off: every fast path takes its plain path'
echo '{"jsonrpc":"2.0","id":1,"method":"ping"}' | PHANTOM_FAST_PATHS=off "$PHANTOM" -c "$good" --stdio >"$out" 2>"$err"
is "$(cat "$out")" '{"jsonrpc":"2.0","id":1,"result":{}}' "PHANTOM_FAST_PATHS=off: --stdio answers too"
done_testing
