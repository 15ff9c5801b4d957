#!/bin/bash
# The client's answer to a request the server pushed mid-call (a legacy
# 2025-11-25 session, behind the real nginx) is either carried to the call
# or refused, never acknowledged and lost:
#  - the answer that completes a round gets its 202 before the call it
#    resumes runs on: a handler that runs long after it holds no POST open,
#    and a client that waits for that 202 before reading the call's stream
#    gets the whole result (before, the result of 1 MiB stalled behind the
#    202 and was cut when the write on the stream gave up);
#  - an answer or a call nested as deep as limits.json_depth lets a body
#    be is carried through the hub (before, the hub's messages, which nest
#    it one level deeper, could not be read: the answer got 500 and the
#    call was dropped, the parked call was dropped at once);
#  - an answer the hub is slow to take (busy for 3 s) is waited for
#    (before, the worker gave up after 500 ms and answered 500 while the
#    hub went on to take it; the call then ended with an error); past
#    sessions.answer_wait_ms the POST gets 500 and the answer counts as
#    not given, so sending it again completes the call.
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/reglib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
command -v python3 >/dev/null || skip_all "python3 not installed"

# the tools ask once for a blob (elicitation/create), then, resumed with it:
# gate waits for the file go (at most 60 s) and says whether it came and
# how long the blob was; echoer answers with the blob; sizer with its length
for t in gate echoer sizer; do
	cat >"$T_DIR/$t.sh" <<SH
#!/bin/sh
IFS= read -r req
case \$req in
*'"inputResponses":'*) . $T_DIR/$t.resumed ;;
*) printf '%s\\n' '{"inputRequired":{"inputRequests":{"big":{"method":"elicitation/create","params":{"mode":"form","message":"Paste","requestedSchema":{"type":"object","properties":{"blob":{"type":"string"}}}}}},"state":{"n":1}}}' ;;
esac
SH
	chmod +x "$T_DIR/$t.sh"
done
cat >"$T_DIR/gate.resumed" <<SH
for i in \$(seq 600); do [ -e $T_DIR/go ] && break; sleep 0.1; done
seen=\$([ -e $T_DIR/go ] && echo go || echo stuck)
printf '%s' "\$req" | jq -c --arg s "\$seen" '{content: [{type: "text", text: "\\(\$s) \\(.inputResponses.big.content.blob | length)"}]}'
SH
cat >"$T_DIR/echoer.resumed" <<'SH'
printf '%s' "$req" | jq -c '{content: [{type: "text", text: .inputResponses.big.content.blob}]}'
SH
cat >"$T_DIR/sizer.resumed" <<'SH'
printf '%s' "$req" | jq -c '{content: [{type: "text", text: "got \(.inputResponses.big.content.blob | length)"}]}'
SH
# pair: asks for two blobs at once (messages A and B), then says both lengths
cat >"$T_DIR/pair.sh" <<'SH'
#!/bin/sh
IFS= read -r req
case $req in
*'"inputResponses":'*)
	printf '%s' "$req" | jq -c '{content: [{type: "text", text: "got \(.inputResponses.a.content.blob | length) \(.inputResponses.b.content.blob | length)"}]}' ;;
*)
	q='"method":"elicitation/create","params":{"mode":"form","requestedSchema":{"type":"object","properties":{"blob":{"type":"string"}}},"message"'
	printf '{"inputRequired":{"inputRequests":{"a":{%s:"A"}},"b":{%s:"B"}}},"state":{"n":1}}}\n' "$q" "$q" ;;
esac
SH
chmod +x "$T_DIR/pair.sh"
cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: push-answer, version: "1.0" }
workers: 3
sessions: { park_timeout_ms: 60000 }
tools:
  - name: gate
    exec: [$T_DIR/gate.sh]
  - name: echoer
    exec: [$T_DIR/echoer.sh]
  - name: pair
    exec: [$T_DIR/pair.sh]
  - name: sizer
    input: { x: {type: array} }
    exec: [$T_DIR/sizer.sh]
YAML
# a unix socket: its small buffer is all that stands between the worker and
# a client that is not reading yet
phantom_unix "$T_DIR/phantom.yaml" || { echo "not ok 1 - phantom starts"; exit 1; }
nginx_start "$PH_BACKEND" || { echo "not ok 1 - nginx starts"; exit 1; }
U=$NGINX_URL
V=(-H "MCP-Protocol-Version: 2025-11-25")
post "$U" '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"sh","version":"1"}}}'
SID=$(header Mcp-Session-Id)
like "$SID" '^.{20,}$' "a legacy session"

N=0
start() { # TOOL [ARGUMENTS]: the call in the background, its stream in $CALL
	N=$((N + 1)); CALL=$T_DIR/call.$N
	curl -sN -X POST -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
		"${V[@]}" -H "Mcp-Session-Id: $SID" \
		--data-binary "{\"jsonrpc\":\"2.0\",\"id\":$((100 + N)),\"method\":\"tools/call\",\"params\":{\"name\":\"$1\",\"arguments\":${2:-{\}}}}" \
		"$U" >"$CALL" 2>/dev/null &
	PID=$!
	wait_for 10 grep -q '"method":"elicitation/create"' "$CALL"
}
pushed_id() { grep '^data: ' "$CALL" | sed 's/^data: //' | jq -c 'select(.method != null) | .id' | head -1; }
final() { grep '^data: ' "$CALL" | sed 's/^data: //' | jq -c 'select(.method == null)' | tail -1; }
finished() { wait_for 60 sh -c "! kill -0 $PID 2>/dev/null"; }
big_answer() { # ID BYTES: POSTs an answer whose content.blob is BYTES long (at most 30 s)
	{ printf '{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"blob":"' "$1"
	  head -c "$2" /dev/zero | tr '\0' a; printf '"}}}'; } >"$T_DIR/big.json"
	STATUS=$(curl -s -m 30 -o "$T_DIR/big.out" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' "${V[@]}" -H "Mcp-Session-Id: $SID" \
		--data-binary @"$T_DIR/big.json" "$U")
}

# ---- the 202 comes before the resumed call runs on: for a small answer
# (which Phantom's own FastCGI reader takes) and one of 1 MiB (libfcgi's)
for n in 100 1048576; do
	rm -f "$T_DIR/go"
	start gate
	big_answer "$(pushed_id)" "$n"
	is "$STATUS" 202 "an answer of $n bytes: 202 while the call it completed still runs"
	touch "$T_DIR/go"
	finished
	is "$(final | jq -r '.result.content[0].text')" "go $n" "and the call gets all of it, then goes on"
done

# a client that reads the call's stream only once its answer is taken,
# straight on the socket: the result of 1 MiB comes whole
out=$(timeout 120 python3 "$top_srcdir/tests/integration/push_answer.py" "$PH_SOCK" "$SID" echoer 1048576 2>&1)
like "$out" '^answer 202' "a client that waits for its answer's 202: it comes"
like "$out" 'result 1048576 ended$' "then the call's result, all 1 MiB of it, and the end of the request"

# ---- depth: what a body may nest (limits.json_depth, 64) is carried
nest() { printf "%${1}s" | sed 's/ /[/g'; printf 1; printf "%${1}s" | sed 's/ /]/g'; }
start sizer
post "$U" "{\"jsonrpc\":\"2.0\",\"id\":$(pushed_id),\"result\":{\"action\":\"accept\",\"content\":{\"blob\":$(nest 61)}}}" \
	"${V[@]}" -H "Mcp-Session-Id: $SID"
is "$STATUS/$(jqr .error.code)" 400/-32700 "an answer nested deeper than limits.json_depth: refused as any body is"
post "$U" "{\"jsonrpc\":\"2.0\",\"id\":$(pushed_id),\"result\":{\"action\":\"accept\",\"content\":{\"blob\":$(nest 60)}}}" \
	"${V[@]}" -H "Mcp-Session-Id: $SID"
is "$STATUS" 202 "an answer nested as deep as a body may be: 202"
finished
is "$(final | jq -r '.result.content[0].text')" "got 1" "and the call gets it"
start sizer "{\"x\":$(nest 60)}"
grep -q '"method":"elicitation/create"' "$CALL"
ok "a call whose arguments nest as deep as a body may: parked, its request pushed"
post "$U" "{\"jsonrpc\":\"2.0\",\"id\":$(pushed_id),\"result\":{\"action\":\"accept\",\"content\":{\"blob\":\"b\"}}}" \
	"${V[@]}" -H "Mcp-Session-Id: $SID"
is "$STATUS" 202 "its answer: 202"
finished
is "$(final | jq -r '.result.content[0].text')" "got 1" "and the call completes"
# ---- a hub slow to take an answer (stopped for 3 s, as one busy
# with other streams may be): the worker waits for it, and the call resumes
HUB=$(hub_of "$PH_PID")
like "$HUB" '^[0-9]+$' "the hub runs"
T_CLEANUP+=("kill -CONT $HUB")
for n in 100 1048576; do
	start sizer
	ID=$(pushed_id)
	kill -STOP "$HUB"
	(sleep 3; kill -CONT "$HUB") &
	big_answer "$ID" "$n"
	wait $!
	is "$STATUS" 202 "an answer of $n bytes while the hub stalls for 3 s: 202"
	finished
	is "$(final | jq -r '.result.content[0].text')" "got $n" "and the call gets it"
done
still_serving "$U" "the answers"

# ---- a worker that gives up waiting for the hub (sessions.answer_wait_ms):
# 500 naming the key, and the answer counts as not given: the call waits
# on, and the same answer sent again completes it
sed 's/park_timeout_ms: 60000 }/park_timeout_ms: 60000, answer_wait_ms: 300 }/' "$T_DIR/phantom.yaml" >"$T_DIR/short.yaml"
phantom_unix "$T_DIR/short.yaml" || { echo "not ok $((T_N + 1)) - phantom starts"; done_testing; exit 1; }
nginx_start "$PH_BACKEND" || { echo "not ok $((T_N + 1)) - nginx starts"; done_testing; exit 1; }
U=$NGINX_URL
post "$U" '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"sh","version":"1"}}}'
SID=$(header Mcp-Session-Id)
HUB=$(hub_of "$PH_PID")
T_CLEANUP+=("kill -CONT $HUB")
start sizer
ID=$(pushed_id)
kill -STOP "$HUB"
big_answer "$ID" 1048576
kill -CONT "$HUB"
is "$STATUS/$(jq -r .error.code "$T_DIR/big.out")" 500/-32603 "an answer the hub does not take in time: 500 -32603"
like "$(jq -r .error.message "$T_DIR/big.out")" "sessions.answer_wait_ms \(300 ms\).*send it again" \
	"naming the key and saying the call still waits for it"
wait_for 10 grep -q "gave up waiting" "$PH_LOG"
ok "the hub, going on, finds that worker gone and keeps the call waiting"
kill -0 "$PID" 2>/dev/null
ok "the call's stream is still open"
big_answer "$ID" 1048576
is "$STATUS" 202 "the same answer again: 202"
finished
is "$(final | jq -r '.result.content[0].text')" "got 1048576" "and the call gets it"
# the same with one answer of two: it is not counted either
start pair
wait_for 10 sh -c "grep -c '\"method\":\"elicitation/create\"' '$CALL' | grep -qx 2"
ID_A=$(grep '^data: ' "$CALL" | sed 's/^data: //' | jq -c 'select(.params.message == "A") | .id')
ID_B=$(grep '^data: ' "$CALL" | sed 's/^data: //' | jq -c 'select(.params.message == "B") | .id')
kill -STOP "$HUB"
big_answer "$ID_A" 1000
kill -CONT "$HUB"
is "$STATUS" 500 "the first of two answers, not taken in time: 500"
big_answer "$ID_B" 2000
is "$STATUS" 202 "the second: 202"
kill -0 "$PID" 2>/dev/null
ok "the call still waits for the first"
big_answer "$ID_A" 1000
is "$STATUS" 202 "the first again: 202"
finished
is "$(final | jq -r '.result.content[0].text')" "got 1000 2000" "and the call gets both"
done_testing
