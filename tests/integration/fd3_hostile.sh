#!/bin/bash
# Hostile fd 3, over stdio: a flood of lines that are not notifications is
# logged up to limits.exec_log_max per call and counted (per-call and
# persistent handlers), a huge line, binary, invalid UTF-8 inside a
# notification, no final newline, fd 3 closed early, written after exit or
# held by a setsid process, and thousands of notifications. Nothing of it
# reaches stdout as anything but valid JSON in UTF-8, and each case is
# followed by a normal call that must succeed.
. "${top_srcdir:-.}/tests/lib.sh"

B=$T_DIR/bin
mkdir -p "$B"
script() { printf '#!/bin/sh\n%s\n' "$2" >"$B/$1"; chmod +x "$B/$1"; }
ok_json='{"content":[{"type":"text","text":"ok"}]}'
pad=$(printf '%90s' '' | tr ' ' 'y')
script good.sh "cat >/dev/null; echo '$ok_json'"
script flood.sh "cat >/dev/null; yes 'not json $pad' | head -n 100000 >&3; echo '$ok_json'"
script hugeline.sh "cat >/dev/null; head -c 2000000 /dev/zero | tr '\\0' z >&3; echo '$ok_json'"
script binary.sh "cat >/dev/null; head -c 65536 /dev/urandom >&3; echo >&3; echo '$ok_json'"
script badutf8.sh "cat >/dev/null; printf '{\"progress\":1,\"message\":\"a\\300\\256b\"}\\n{\"progress\":2,\"message\":\"fine\"}\\n' >&3; echo '$ok_json'"
script nonl.sh "cat >/dev/null; printf '{\"progress\":1,\"message\":\"last\"}' >&3; echo '$ok_json'"
script closed.sh "cat >/dev/null; exec 3>&-; echo '$ok_json'"
script late.sh "cat >/dev/null; (sleep 0.3; echo '{\"progress\":9}' >&3) & echo '$ok_json'"
script held.sh "cat >/dev/null; setsid sleep 30 >/dev/null & echo '$ok_json'"
script many.sh "cat >/dev/null; i=1; while [ \$i -le 3000 ]; do echo \"{\\\"progress\\\":\$i}\"; i=\$((i+1)); done >&3; echo '$ok_json'"
# persistent: every call floods fd 3 before answering with the call's id
script pflood.sh "while IFS= read -r line; do
  yes 'persistent junk $pad' | head -n 20000 >&3
  id=\$(printf '%s' \"\$line\" | sed 's/.*\"id\":\([0-9]*\)}\$/\\1/')
  echo '{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}],\"id\":'\$id'}'
done"

cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: fd3-hostile, version: "1.0" }
limits: { exec_timeout_ms: 10000, exec_grace_ms: 200 }
tools:
  - { name: good, exec: [$B/good.sh] }
  - { name: flood, exec: [$B/flood.sh] }
  - { name: hugeline, exec: [$B/hugeline.sh] }
  - { name: binary, exec: [$B/binary.sh] }
  - { name: badutf8, exec: [$B/badutf8.sh] }
  - { name: nonl, exec: [$B/nonl.sh] }
  - { name: closed, exec: [$B/closed.sh] }
  - { name: late, exec: [$B/late.sh] }
  - { name: held, exec: [$B/held.sh] }
  - { name: many, exec: [$B/many.sh] }
  - { name: pflood, exec: [$B/pflood.sh], persistent: true }
YAML

stdio_start "$T_DIR/err" "$T_DIR/phantom.yaml"
PID=$STDIO_PID

# call ID NAME: one tools/call with a progressToken; NOTES are the
# notification lines before the answer (one per line), REPLY the answer, MS
# the time it took
call() {
	local t0 line
	t0=$(date +%s%N)
	stdio_send "$(jq -nc --argjson id "$1" --arg n "$2" --argjson meta "$(meta)" \
		'{jsonrpc:"2.0",id:$id,method:"tools/call",
		  params:{name:$n,arguments:{},_meta:($meta + {progressToken:"p"})}}')"
	NOTES= REPLY=
	while stdio_read line 30; do
		if [[ $line != '{"jsonrpc":"2.0","method":"notifications/'* ]]; then
			REPLY=$line
			break
		fi
		NOTES+=$line$'\n'
	done
	MS=$(( ($(date +%s%N) - t0) / 1000000 ))
}
rj() { printf '%s' "$REPLY" | jq -r "$1" 2>/dev/null; }
utf8() { printf '%s' "$1" | iconv -f UTF-8 -t UTF-8 >/dev/null 2>&1; }
logsize() { wc -c <"$T_DIR/err"; }
# served NAME WHAT: the call answers ok, with valid JSON in UTF-8 on the wire,
# and the call after it is served; N1 and MS1 are the notifications and time
# of the first call
served() {
	call 10 "$1"
	N1=$NOTES MS1=$MS
	is "$(rj '.result.content[0].text')/$(rj ".result.isError // false")" "ok/false" "$2: the call answers"
	[ -n "$REPLY" ] && utf8 "$NOTES$REPLY" && printf '%s%s' "$NOTES" "$REPLY" | jq -e . >/dev/null
	ok "$2: only valid JSON in UTF-8 reaches the client"
	call 11 good
	is "$(rj '.result.content[0].text')" ok "the call after $2 is served"
}

before=$(logsize)
served flood "100000 lines that are not JSON (10 MB)"
grown=$(( $(logsize) - before ))
[ "$grown" -lt 200000 ]; ok "the flood grew the log by ${grown} bytes, not megabytes"
grep -q "flood: fd 3: [0-9]* more bytes not logged" "$T_DIR/err"; ok "the log says how much of fd 3 was dropped"
n=$(grep -c "flood: fd 3: not a JSON object" "$T_DIR/err")
[ "$n" -ge 100 ] && [ "$n" -le 700 ]; ok "the first 64 KiB of lines are logged ($n lines)"

before=$(logsize)
served pflood "a persistent handler flooding fd 3"
served pflood "the same persistent handler again"
grown=$(( $(logsize) - before ))
[ "$grown" -lt 400000 ]; ok "two persistent floods grew the log by ${grown} bytes"
grep -q "pflood: fd 3: [0-9]* more bytes not logged" "$T_DIR/err"; ok "the persistent flood is counted too"

served hugeline "a 2 MB line without a newline"
served binary "64 KiB of binary"
served badutf8 "an overlong form inside a progress message"
is "$(printf '%s' "$N1" | jq -r .params.message | tr '\n' ,)" "fine," "only the valid progress line becomes a notification"
grep -q "badutf8: fd 3: not valid UTF-8" "$T_DIR/err"; ok "the log says the line was not UTF-8"
served nonl "a last line without a newline"
served closed "fd 3 closed early"
served late "fd 3 written after exit"
served held "fd 3 held by a setsid process"
[ "$MS1" -lt 3000 ]; ok "... promptly (${MS1} ms)"
served many "3000 progress notifications"
is "$(printf '%s' "$N1" | grep -c notifications/progress)" 3000 "all 3000 reach the client in order"
is "$(printf '%s' "$N1" | tail -1 | jq -r .params.progress)" 3000 "the last is progress 3000"
# (below the call processes too; the persistent handler stays, as it should)
left=$(for p in $(handlers_below "$PID"); do ps -o args= -p "$p"; done | grep -c 'sleep 30')
is "$left" 0 "nothing a call started is left running"

stdio_stop 5; ok "the server exits at EOF"
done_testing
