#!/bin/bash
# Hostile exec output, over stdio: what a handler writes on stdout cannot
# break the wire or the server. Garbage JSON, a huge line, no newline,
# invalid UTF-8 (overlong, surrogate, past U+10FFFF: the handler error,
# never invalid JSON), binary, stdout closed early, writing after exit, an
# answer twice, and a grandchild that calls setsid and keeps stdout open
# (the answer comes at once and nothing is left running). Module handlers
# giving strings that are not UTF-8 fail the same way. Each case is
# followed by a normal call that must succeed.
. "${top_srcdir:-.}/tests/lib.sh"

B=$T_DIR/bin
mkdir -p "$B"
script() { printf '#!/bin/sh\n%s\n' "$2" >"$B/$1"; chmod +x "$B/$1"; }
ok_json='{"content":[{"type":"text","text":"ok"}]}'
script good.sh "cat >/dev/null; echo '$ok_json'"
script garbage.sh 'cat >/dev/null; echo "{\"content\": [ nope"'
script huge.sh 'cat >/dev/null; head -c 3000000 /dev/zero | tr "\0" x'
script nonl.sh 'cat >/dev/null; printf "{\"content\":[{\"type\":\"text\",\"text\":\"no newline\"}]}"'
# $1: the bytes inside the text, as printf escapes
script badutf8.sh 'cat >/dev/null; printf "{\"content\":[{\"type\":\"text\",\"text\":\"a$1b\"}]}\n"'
script binary.sh 'cat >/dev/null; head -c 4096 /dev/urandom'
script closed.sh 'cat >/dev/null; exec >&-; sleep 0.2; exit 0'
script twice.sh "cat >/dev/null; echo '$ok_json'; echo '$ok_json'"
# a background process of its own group writes after the handler exits:
# it is killed with the group, the answer stands
script late.sh "cat >/dev/null; (sleep 0.3; echo garbage) & echo '$ok_json'"
# a grandchild leaves the group with setsid and holds stdout open
script escape.sh "cat >/dev/null; setsid sh -c 'echo \$\$ >\"$T_DIR/escaped.pid\"; exec sleep 30' & \
while [ ! -s \"$T_DIR/escaped.pid\" ]; do sleep 0.01; done; echo '$ok_json'"
# the same two levels down, and without answering: the call fails, promptly
script escape2.sh "cat >/dev/null; sh -c 'setsid sh -c \"sleep 30 & echo \\\$! >$T_DIR/escaped2.pid; wait\" &' ; \
while [ ! -s \"$T_DIR/escaped2.pid\" ]; do sleep 0.01; done; exit 0"

cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: exec-hostile, version: "1.0" }
limits: { exec_timeout_ms: 5000, exec_grace_ms: 200 }
tools:
  - { name: good, exec: [$B/good.sh] }
  - { name: garbage, exec: [$B/garbage.sh] }
  - { name: huge, exec: [$B/huge.sh], max_output: 1048576 }
  - { name: nonl, exec: [$B/nonl.sh] }
  - { name: overlong, exec: [$B/badutf8.sh, '\\300\\256'] }
  - { name: surrogate, exec: [$B/badutf8.sh, '\\355\\240\\200'] }
  - { name: toobig, exec: [$B/badutf8.sh, '\\364\\220\\200\\200'] }
  - { name: fivebyte, exec: [$B/badutf8.sh, '\\370\\210\\200\\200\\200'] }
  - { name: valid_utf8, exec: [$B/badutf8.sh, '\\303\\251\\360\\237\\230\\200'] }
  - { name: binary, exec: [$B/binary.sh] }
  - { name: closed, exec: [$B/closed.sh] }
  - { name: twice, exec: [$B/twice.sh] }
  - { name: late, exec: [$B/late.sh] }
  - { name: escape, exec: [$B/escape.sh] }
  - { name: escape2, exec: [$B/escape2.sh] }
  - { name: echo, module: phantom_example.so, symbol: echo, input: {text: string} }
  - { name: bad_utf8, module: testmod.so, symbol: bad_utf8, input: {how: string} }
YAML

stdio_start "$T_DIR/err" "$T_DIR/phantom.yaml"
PID=$STDIO_PID

# call ID NAME [ARGUMENTS]: one tools/call; REPLY is the answer line, MS the
# time it took
call() {
	local t0
	t0=$(date +%s%N)
	stdio_send "$(req "$1" tools/call "{\"name\":\"$2\",\"arguments\":${3:-{\}}}")"
	stdio_read REPLY 15
	MS=$(( ($(date +%s%N) - t0) / 1000000 ))
}
rj() { printf '%s' "$REPLY" | jq -r "$1" 2>/dev/null; }
# the answer is JSON in valid UTF-8 (jq would quietly repair bad bytes)
wire_ok() {
	[ -n "$REPLY" ] && printf '%s' "$REPLY" | iconv -f UTF-8 -t UTF-8 >/dev/null 2>&1 && printf '%s' "$REPLY" | jq -e . >/dev/null
}
# failed NAME WHAT: the call is the documented handler failure of a tool
failed() {
	call 10 "$1" "${3:-{\}}"
	is "$(rj .result.isError)/$(rj '.result.content[0].text')" "true/Tool execution failed" "$2: the handler error"
	wire_ok; ok "$2: the answer is valid JSON in UTF-8"
	call 11 good
	is "$(rj '.result.content[0].text')" ok "the call after $2 is served"
}

failed garbage "garbage JSON"
failed huge "a 3 MB line over max_output"
failed binary "binary output"
failed closed "stdout closed early"
failed twice "an answer twice"
failed overlong "an overlong form (C0 AE)"
failed surrogate "a surrogate (ED A0 80)"
failed toobig "a code point past U+10FFFF (F4 90 80 80)"
failed fivebyte "a five-byte form"
grep -q "wrote [0-9]* bytes on stdout that are not valid UTF-8" "$T_DIR/err"
ok "the log says the output was not UTF-8"

call 12 valid_utf8
is "$(rj '.result.content[0].text')" "aé😀b" "valid multi-byte UTF-8 passes"
call 13 nonl
is "$(rj '.result.content[0].text')" "no newline" "an answer without a newline is taken"
call 14 late
is "$(rj '.result.content[0].text')/$(rj ".result.isError // false")" "ok/false" "writing after exit: the answer stands"

call 15 escape
is "$(rj '.result.content[0].text')/$(rj ".result.isError // false")" "ok/false" "a setsid grandchild holding stdout: the answer is used"
[ "$MS" -lt 2500 ]; ok "... and comes promptly (${MS} ms, timeout_ms 5000)"
esc=$(cat "$T_DIR/escaped.pid" 2>/dev/null)
[ -n "$esc" ] && wait_gone "$esc" 2; ok "... and the setsid process is gone after the call"
call 16 escape2
is "$(rj .result.isError)" true "a handler that exits without answering, a setsid process two levels down: fails"
[ "$MS" -lt 2500 ]; ok "... promptly (${MS} ms)"
esc2=$(cat "$T_DIR/escaped2.pid" 2>/dev/null)
[ -n "$esc2" ] && wait_gone "$esc2" 2; ok "... and what it left two levels down is gone"
is "$(handlers_below "$PID" | wc -l)" 0 "no process of any call is left under the server (its call processes aside)"
for p in $(handlers_below "$PID"); do ps -o pid=,ppid=,stat=,args= -p "$p" | sed 's/^/#   left: /'; done
grep -q "killed [0-9]* process.* left behind" "$T_DIR/err"; ok "the log says what was left behind and killed"
call 17 good
is "$(rj '.result.content[0].text')" ok "the call after the setsid cases is served"

# module output
for how in text structured link; do
	call 20 bad_utf8 "{\"how\":\"$how\"}"
	is "$(rj .result.isError)/$(rj '.result.content[0].text')" "true/Tool execution failed" \
		"a module giving a $how that is not UTF-8: the handler error"
	wire_ok; ok "... and the answer is valid JSON in UTF-8"
done
grep -q "gave a string that is not valid UTF-8" "$T_DIR/err"; ok "the log names the module failure"
call 21 echo '{"text":"h\u00e9"}'
is "$(rj '.result.content[0].text')" "hé" "the module echo answers valid text"
# echo of an overlong form: refused as a request, or the handler error;
# never an empty text with isError false
stdio_send "$(req 22 tools/call '{"name":"echo","arguments":{"text":"x"}}' | sed 's/"x"/"\xc0\xae"/')"
stdio_read REPLY 15
wire_ok; ok "echo of an overlong form: the answer is valid JSON in UTF-8"
got="$(rj '.error.code // empty')/$(rj .result.isError)"
[ "${got%%/*}" != "" ] || [ "${got#*/}" = true ]
ok "echo of an overlong form: an error, not an empty success ($got)"
call 23 good
is "$(rj '.result.content[0].text')" ok "the call after the module cases is served"

stdio_stop 5; ok "the server exits at EOF"

# The same in a prefork worker under a master, over FastCGI
if command -v cgi-fcgi >/dev/null; then
	rm -f "$T_DIR/escaped.pid"
	phantom_listen "$T_DIR/phantom.yaml" --workers 2
	t0=$(date +%s%N)
	fcgi_post "$PH_BACKEND" "$(req 30 tools/call '{"name":"escape","arguments":{}}')" $(mhdr tools/call) \
		HTTP_MCP_NAME=escape
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	is "$STATUS/$(jqr '.result.content[0].text')" 200/ok "a worker: the setsid grandchild's call answers"
	[ "$ms" -lt 2500 ]; ok "... promptly (${ms} ms)"
	esc=$(cat "$T_DIR/escaped.pid" 2>/dev/null)
	[ -n "$esc" ] && wait_gone "$esc" 2; ok "... and the setsid process is gone"
	left=0
	for w in $(workers_of "$PH_PID"); do left=$((left + $(pgrep -P "$w" | wc -l))); done
	is "$left" 0 "no worker has a process of a call left"
	fcgi_post "$PH_BACKEND" "$(req 31 tools/call '{"name":"good","arguments":{}}')" $(mhdr tools/call) \
		HTTP_MCP_NAME=good
	is "$STATUS/$(jqr '.result.content[0].text')" 200/ok "the next FastCGI call is served"
fi
done_testing
