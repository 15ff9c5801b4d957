#!/bin/bash
# The hub's control socket (phantom-fcgi --notify), behind nginx: clients
# that send their command line slowly do not hold up the hub (keep-alives
# and another --notify go on meanwhile, and a client that never finishes
# its line is told so); --notify resources/updated takes 10,000 URIs (sent
# in command lines within the socket's 4 KiB) and reaches the stream
# subscribed to one of them.
. "${top_srcdir:-.}/tests/lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
command -v python3 >/dev/null || skip_all "python3 not installed"
CLIENTS=$top_srcdir/tests/integration/listen_clients.py
SOCK=$T_DIR/hub.sock

printf '#!/bin/sh\ncat >/dev/null\nprintf '"'"'{"contents":[{"uri":"app://counter","text":"7"}]}\\n'"'"'\n' >"$T_DIR/counter.sh"
chmod 0755 "$T_DIR/counter.sh"
cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: control-test, version: "1.0" }
workers: 2
shutdown_timeout: 5
subscriptions: { max_ms: 600000, keepalive_ms: 200, control_socket: $SOCK }
tools:
  - { name: count, description: counts, exec: [./counter.sh] }
resources:
  - { uri: "app://counter", name: counter, exec: [./counter.sh] }
YAML
behind_nginx phantom_listen "$T_DIR/phantom.yaml"
notify() { "$PHANTOM" -c "$T_DIR/phantom.yaml" --notify "$@"; }

# a listen stream subscribed to app://counter and to tools/list_changed
LISTEN_DUMP=$T_DIR python3 "$CLIENTS" "$U" 1 12 "$T_DIR/ready" \
	'{"toolsListChanged":true,"resourceSubscriptions":["app://counter"]}' >"$T_DIR/stream.json" & LP=$!
wait_for 30 test -e "$T_DIR/ready"
is "$(cat "$T_DIR/ready")" 1 "a listen stream is acknowledged"

# ---- slow control clients -----------------------------------------------------------------
# five clients that send a byte of their command line every 0.3 s, for 3 s
slow=()
for i in 1 2 3 4 5; do
	python3 - "$SOCK" "$T_DIR/slow-$i" <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
open(sys.argv[2], "w").close()
for c in "tools/list_c":
    try:
        s.send(c.encode())
    except OSError:
        break
    time.sleep(0.3)
PY
	slow+=($!)
done
wait_for 10 test -e "$T_DIR/slow-1" -a -e "$T_DIR/slow-2" -a -e "$T_DIR/slow-3" -a -e "$T_DIR/slow-4" -a -e "$T_DIR/slow-5"
t0=$(date +%s%N)
is "$(notify tools/list_changed)" "ok 1" "--notify is served while five control clients trickle their lines"
ms=$((($(date +%s%N) - t0) / 1000000))
diag "--notify took $ms ms"
[ "$ms" -lt 1000 ]; ok "without waiting for them (took $ms ms, under 1000)"
wait "${slow[@]}"
# a client that stops half-way is told so after a second
python3 - "$SOCK" >"$T_DIR/slow.out" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.send(b"tools/list_")
s.settimeout(5)
print(s.recv(200).decode().strip())
PY
is "$(cat "$T_DIR/slow.out")" "error no command line within 1000 ms" "a control client that never ends its line is told so"

# ---- --notify with 10,000 URIs --------------------------------------------------------------
seq 1 9999 | sed 's#^#app://other/#' >"$T_DIR/uris"
echo app://counter >>"$T_DIR/uris"
mapfile -t uris <"$T_DIR/uris"
out=$(notify resources/updated "${uris[@]}" 2>"$T_DIR/notify.err"); rc=$?
is "$rc/$out" "0/ok 1" "--notify resources/updated with 10,000 URIs reaches the one stream subscribed to one of them"
[ -s "$T_DIR/notify.err" ] && diag "$(head -c 200 "$T_DIR/notify.err")"
notify resources/updated "app://$(head -c 5000 /dev/zero | tr '\0' x)" 2>"$T_DIR/long.err"
is "$?" 2 "a single URI longer than a command line is refused"
like "$(cat "$T_DIR/long.err")" "not a URI of at most 4076 bytes" "saying how long one may be"
wait "$LP"
is "$(jq -c '.updated' "$T_DIR/stream.json")" '["app://counter"]' "the stream got resources/updated for its URI once"
is "$(jq -c '.tools' "$T_DIR/stream.json")" 1 "and the tools/list_changed sent during the slow clients"
like "$(grep -c ': keepalive' "$T_DIR/0.txt")" '^[1-9][0-9]+$' "keep-alives went on throughout"
mpost "$U" 2 resources/read '{"uri":"app://counter"}'
is "$(jqr '.result.contents[0].text')" 7 "and the server serves as before"
done_testing
