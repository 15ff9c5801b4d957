#!/bin/bash
# Notifications reach the client as they are sent: a tool emits progress
# every 300 ms and the test timestamps each SSE event on arrival, through the
# shipped nginx and lighttpd configurations. Also: a client that closes the
# stream cancels the request (the exec handler's process group is killed),
# and on stdio notifications/cancelled does the same.
. "${top_srcdir:-.}/tests/lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
command -v lighttpd >/dev/null || skip_all "lighttpd not installed"

mkdir -p "$T_DIR/bin"
cat >"$T_DIR/bin/ticker.sh" <<'SH'
#!/bin/sh
# five progress lines 300 ms apart on fd 3, each with the time it was sent
# (ms since the epoch), then the result
read -r req
i=1
while [ "$i" -le 5 ]; do
	sleep 0.3
	printf '{"progress":%d,"total":5,"message":"%s"}\n' "$i" "$(date +%s%3N)" >&3
	i=$((i + 1))
done
printf '{"content":[{"type":"text","text":"ticked"}]}\n'
SH
cat >"$T_DIR/bin/sleeper.sh" <<SH
#!/bin/sh
# writes its pid, then progresses slowly for a long time
read -r req
echo \$\$ >"$T_DIR/sleeper.pid"
i=1
while [ "\$i" -le 100 ]; do
	printf '{"progress":%d}\n' "\$i" >&3
	sleep 0.2
	i=\$((i + 1))
done
printf '{"content":[{"type":"text","text":"slept"}]}\n'
SH
chmod +x "$T_DIR/bin/"*.sh
test_conf "$T_DIR/phantom.yaml" stream-test 'workers: 3' 'tools:' \
	"  - { name: ticker, description: five ticks, exec: [\"$T_DIR/bin/ticker.sh\"] }" \
	"  - { name: sleeper, description: a long call, exec: [\"$T_DIR/bin/sleeper.sh\"], timeout_ms: 60000 }"
phantom_unix "$T_DIR/phantom.yaml" || { echo "not ok 1 - phantom starts"; exit 1; }
nginx_start "$PH_BACKEND" || { echo "not ok 1 - nginx starts"; exit 1; }
lighttpd_start "$PH_BACKEND" || { echo "not ok 1 - lighttpd starts"; exit 1; }

call_body() { # ID TOOL
	printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"%s","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":"tok-%s"}}}' "$1" "$2" "$1"
}
# timed URL ID TOOL: prints "MS JSON" for each SSE data line as it arrives
# (MS since the request was sent), into $T_DIR/abs the epoch ms of each
timed() {
	local t0; t0=$(date +%s%N); : >"$T_DIR/abs"
	curl -sN "$1" -H 'Content-Type: application/json' -H "MCP-Protocol-Version: $MODERN" \
		-H 'Mcp-Method: tools/call' -H "Mcp-Name: $3" --data-binary "$(call_body "$2" "$3")" |
	while IFS= read -r line; do
		case "$line" in data:*)
			now=$(date +%s%N)
			echo "$((now / 1000000))" >>"$T_DIR/abs"
			echo "$(( (now - t0) / 1000000 )) ${line#data: }" ;;
		esac
	done
}

for front in nginx lighttpd; do
	if [ $front = nginx ]; then url=$NGINX_URL; else url=$LIGHTTPD_URL; fi
	timed "$url" 1 ticker >"$T_DIR/$front.times"
	diag "$front arrivals (ms): $(awk '{printf "%s ", $1}' "$T_DIR/$front.times")"
	n=$(grep -c 'notifications/progress' "$T_DIR/$front.times")
	is "$n" 5 "$front: five progress notifications arrive"
	grep -q '"result"' "$T_DIR/$front.times"; ok "$front: the result arrives last on the stream"
	# each progress event reaches the client before the handler sends the
	# next one (300 ms later): nothing is held back and sent in a bunch.
	# Measured from the time the handler wrote it, so a slow machine that
	# delays the handler's own ticks does not count against the front.
	lat=$(paste -d' ' "$T_DIR/abs" "$T_DIR/$front.times" | grep 'notifications/progress' |
		sed 's/.*"message":"\([0-9]*\)".*/& \1/' | awk '{print $1 - $NF}')
	bad=$(echo "$lat" | awk '$1 < 0 || $1 >= 300' | wc -l)
	is "$bad" 0 "$front: each progress event arrives before the next is sent (latencies ms: $(echo $lat))"
	first=$(grep 'notifications/progress' "$T_DIR/$front.times" | head -1 | cut -d' ' -f1)
	last=$(tail -1 "$T_DIR/$front.times" | cut -d' ' -f1)
	[ $((last - first)) -ge 1000 ]; ok "$front: the first event is not held back until the end ($first ms vs $last ms)"
done

# a client that goes away cancels the request: the handler is killed
rm -f "$T_DIR/sleeper.pid"
timeout 1.5 curl -sN "$NGINX_URL" -H 'Content-Type: application/json' -H "MCP-Protocol-Version: $MODERN" \
	-H 'Mcp-Method: tools/call' -H 'Mcp-Name: sleeper' --data-binary "$(call_body 7 sleeper)" >/dev/null
wait_file "$T_DIR/sleeper.pid"; pid=$(cat "$T_DIR/sleeper.pid")
gone=1
for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || { gone=0; break; }; sleep 0.1; done
is "$gone" 0 "closing the SSE stream kills the exec handler (pid $pid)"
still_serving "$NGINX_URL" "a cancelled request"

# stdio: notifications/cancelled for the running request stops it
rm -f "$T_DIR/sleeper.pid"
start=$(date +%s%N)
out=$( (printf '%s\n' "$(call_body 9 sleeper)"; sleep 1
	printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"test"}}'
	printf '%s\n' "$(req 10 server/discover)"; sleep 0.5) |
	timeout 20 "$PHANTOM" -c "$T_DIR/phantom.yaml" --stdio 2>"$T_DIR/stdio.log")
took=$(( ($(date +%s%N) - start) / 1000000 ))
pid=$(cat "$T_DIR/sleeper.pid" 2>/dev/null)
kill -0 "$pid" 2>/dev/null && r=1 || r=0
is "$r" 0 "stdio: notifications/cancelled kills the handler"
printf '%s\n' "$out" | jq -e 'select(.id == 9)' >/dev/null && r=1 || r=0
is "$r" 0 "stdio: nothing more is sent for the cancelled request"
is "$(printf '%s\n' "$out" | jq -r 'select(.id == 10) | .result.resultType')" complete "stdio: the next request is answered"
[ "$took" -lt 10000 ]; ok "stdio: the cancel took effect at once ($took ms, the call would take 20 s)"
done_testing
