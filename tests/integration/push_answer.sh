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
#    call was dropped, the parked call was dropped at once).
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
cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: push-answer, version: "1.0" }
workers: 3
sessions: { park_timeout_ms: 60000 }
tools:
  - name: gate
    exec: [$T_DIR/gate.sh]
  - name: echoer
    exec: [$T_DIR/echoer.sh]
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
still_serving "$U" "the answers"
done_testing
