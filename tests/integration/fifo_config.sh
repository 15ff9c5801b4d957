#!/bin/bash
# A FIFO (or a socket) where the configuration names a file: -t says so at
# once instead of hanging in open(2), for every file a configuration names
# (the configuration itself, an app's page, a resource, a prompt's image,
# the skills manifest, the bearer tokens, the request_state secret, a
# module, the OAuth key file). A SIGHUP to a running master with such a
# file keeps the old configuration serving, and a worker that dies after
# it is replaced (before, the master hung in open(2) and left it a zombie).
. "${top_srcdir:-.}/tests/lib.sh"
D=$T_DIR
mkfifo "$D/fifo"
printf '<html><body>hi</body></html>\n' >"$D/page.html"
base() { printf 'server: { name: fifo-test, version: "1.0" }\nworkers: 2\n'; }
# check NAME YAML-LINES... : -t of base + lines answers within 10 s with
# status 1 and a problem saying "not a regular file"
check() {
	local name=$1 out rc; shift
	{ base; printf '%s\n' "$@"; } >"$D/$name.yaml"
	out=$(timeout 10 "$PHANTOM" -t -c "$D/$name.yaml" 2>&1); rc=$?
	is "$rc" 1 "$name: -t refuses a FIFO (status $rc; 124 is a hang)"
	like "$out" "not a regular file \(a FIFO, socket or device\)" "$name: the problem says why"
}
check app 'apps:' '  v: { file: fifo }'
check resource 'resources:' '  - { uri: "docs://f", file: fifo }'
check prompt 'prompts:' '  - { name: p, messages: [ { role: user, image: fifo } ] }'
check manifest 'skills: { manifest: fifo }'
check tokens 'auth:' '  mode: bearer' '  tokens_file: fifo'
check secret 'request_state: { secret_file: fifo }'
check module 'tools:' '  - { name: m, module: ./fifo, symbol: echo }'
out=$(timeout 10 "$PHANTOM" -t -c "$D/fifo" 2>&1); rc=$?
is "$rc" 1 "-c naming a FIFO: refused at once (status $rc)"
like "$out" "cannot read configuration: not a regular file" "... saying why"
. "$top_srcdir/tests/oauth-lib.sh"
if oauth_supported >/dev/null; then
	check jwks 'auth:' '  mode: oauth' '  oauth: { issuer: "https://as.example.com/", jwks_file: fifo }'
fi

# ---- SIGHUP with a FIFO in the new configuration
{ base; printf 'apps:\n  v: { file: page.html }\n'; } >"$D/live.yaml"
behind_nginx phantom_listen "$D/live.yaml"
mpost "$U" 1 server/discover '{}'
is "$STATUS" 200 "the master serves"
{ base; printf 'apps:\n  v: { file: fifo }\n'; } >"$D/live.yaml"
kill -HUP "$PH_PID"
wait_for 10 grep -q "not a regular file" "$PH_LOG"
ok "the reload logs the FIFO as a problem"
grep -q "reload failed: the running configuration keeps serving" "$PH_LOG"
ok "... and keeps the old configuration"
mpost "$U" 2 server/discover '{}'
is "$STATUS" 200 "requests are still served"
w=$(workers_of "$PH_PID" | head -1)
kill -9 "$w"
replaced() { ! workers_of "$PH_PID" | grep -qx "$w" && [ "$(nworkers "$PH_PID")" -eq 2 ]; }
wait_for 10 replaced
ok "a worker killed after that reload is replaced"
is "$(ps -o stat= --ppid "$PH_PID" | grep -c Z)" 0 "no zombie under the master"
done_testing
