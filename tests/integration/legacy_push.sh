#!/bin/bash
# Server-to-client requests in the middle of a legacy 2025-11-25 call,
# behind the real nginx: a handler's inputRequired on a session becomes
# elicitation/create or sampling/createMessage pushed on the call's SSE
# stream, the call waits in the hub, the client's answer (a separate POST,
# any worker) resumes it. The SDK v1 client completes the bundled
# delete_file and a sampling tool; then the bad input: answers with no
# pending request, a wrong id, another host's, another session's, twice, an
# error answer, responses that are not answers (both result and error, a
# result that is not an object, a malformed error, no jsonrpc), a call
# nobody answers (sessions.park_timeout_ms), a client that goes away while
# parked, more parked calls than sessions.max_parked; and progress and log
# notifications on a parked call's stream before and after it resumes; a
# large answer (1 MB: a sampling result with images) is carried, one over
# sessions.max_answer gets 413 and ends its call at once.
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/reglib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
command -v perl >/dev/null || skip_all "perl not installed"

SB=$T_DIR/sandbox
mkdir -p "$SB"
head -c 48 /dev/urandom | base64 >"$T_DIR/secret"
cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: push-test, version: "1.0" }
workers: 3
request_state: { secret_file: secret }
sessions: { park_timeout_ms: 8000, max_parked: 3, max_answer: 2097152 }
tools:
$(delete_file_yaml "$SB")
  - name: test_sampling
    input: { prompt: {type: string, required: true} }
    exec: [$top_srcdir/tests/conformance/fixtures.pl]
  - name: link_account
    exec: [$top_srcdir/examples/scripts/link_account.sh]
  - name: chatty
    exec: [$T_DIR/chatty.sh]
  - name: sizer
    exec: [$T_DIR/sizer.sh]
YAML
# sizer: asks for a blob, answers with its length
cat >"$T_DIR/sizer.sh" <<'SH'
#!/bin/sh
IFS= read -r req
case $req in
*'"inputResponses":'*)
	printf '{"content":[{"type":"text","text":"got %s"}]}\n' "$(printf '%s' "$req" | jq -r '.inputResponses.big.content.blob | length')" ;;
*)
	printf '%s\n' '{"inputRequired":{"inputRequests":{"big":{"method":"elicitation/create","params":{"mode":"form","message":"Paste","requestedSchema":{"type":"object","properties":{"blob":{"type":"string"}}}}}},"state":{"n":1}}}' ;;
esac
SH
chmod +x "$T_DIR/sizer.sh"
# chatty: progress and a log message before it asks and after it resumes
cat >"$T_DIR/chatty.sh" <<'SH'
#!/bin/sh
IFS= read -r req
case $req in
*'"inputResponses":'*)
	echo '{"progress":3,"total":4,"message":"resumed"}' >&3
	echo '{"level":"warning","data":"after resuming"}' >&3
	echo '{"content":[{"type":"text","text":"chatty done"}]}' ;;
*)
	echo '{"progress":1,"total":4,"message":"started"}' >&3
	echo '{"level":"warning","data":"before asking"}' >&3
	printf '%s\n' '{"inputRequired":{"inputRequests":{"ok":{"method":"elicitation/create","params":{"mode":"form","message":"Go on?","requestedSchema":{"type":"object","properties":{"go":{"type":"boolean"}}}}}},"state":{"asked":1}}}' ;;
esac
SH
chmod +x "$T_DIR/chatty.sh"
behind_nginx phantom_up "$T_DIR/phantom.yaml"
V=(-H "MCP-Protocol-Version: 2025-11-25")

# ---- the SDK v1 client
if node_setup; then
	echo y >"$SB/v1-yes.txt"; echo n >"$SB/v1-no.txt"
	node_client sdk-v1-push.mjs --url "$U"
	test ! -e "$SB/v1-yes.txt" && test -e "$SB/v1-no.txt"
	ok "SDK v1: the confirmed file is deleted, the other kept"
else
	diag "SDK v1 client checks skipped: the npm packages are not installed"
fi

# ---- by hand
init() { # CAPS: a new session's id
	post "$U" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":$1,\"clientInfo\":{\"name\":\"sh\",\"version\":\"1\"}}}"
	header Mcp-Session-Id
}
SID=$(init '{"elicitation":{},"sampling":{}}')
SID2=$(init '{"elicitation":{}}')
answer() { # SID ID RESULT-OR-ERROR-MEMBER: POSTs a JSON-RPC response
	post "$U" "{\"jsonrpc\":\"2.0\",\"id\":$2,$3}" "${V[@]}" -H "Mcp-Session-Id: $1"
}
N=0
start() { # SID TOOL ARGS: the call in the background, its stream in $T_DIR/call.N; sets CALL, PID
	N=$((N + 1)); CALL=$T_DIR/call.$N
	curl -sN -X POST -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
		"${V[@]}" -H "Mcp-Session-Id: $1" \
		--data-binary "{\"jsonrpc\":\"2.0\",\"id\":$((100 + N)),\"method\":\"tools/call\",\"params\":{\"name\":\"$2\",\"arguments\":$3}}" \
		"$U" >"$CALL" 2>/dev/null &
	PID=$!
	wait_for 5 grep -q '"method":"' "$CALL"
}
pushed() { grep '^data: ' "$CALL" | sed 's/^data: //' | jq -c 'select(.method != null and .id != null)' | head -1; }
final() { grep '^data: ' "$CALL" | sed 's/^data: //' | jq -c 'select(.method == null)' | tail -1; }
finished() { wait_for 12 sh -c "! kill -0 $PID 2>/dev/null"; }

answer "$SID" '"ph-000000000000-0"' '"result":{"action":"accept"}'
is "$STATUS/$(jqr .error.code)" 400/-32600 "an answer with an id the server never makes: 400 -32600"
like "$(jqr .error.message)" "no request of this server has this id" "the message says so"
answer "$SID" 7 '"result":{}'
is "$STATUS/$(jqr .error.code)" 400/-32600 "an answer with a numeric id (the server's ids are strings): 400"
post "$U" '{"jsonrpc":"2.0","id":"x","result":{}}' "${V[@]}"
is "$STATUS/$(jqr .error.code)" 400/-32600 "an answer without a session: refused as before"
post "$U" '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' "${V[@]}" -H "Mcp-Session-Id: $SID"
is "$STATUS" 200 "the session is still served"

echo y >"$SB/sh.txt"
start "$SID" delete_file '{"path":"sh.txt"}'
P=$(pushed)
is "$(jq -r '.method + " " + .params.message' <<<"$P")" "elicitation/create Really delete sh.txt?" \
	"the call's stream carries the pushed elicitation/create"
ID=$(jq -c .id <<<"$P")
like "$ID" '^"ph-[0-9a-f]{8}-[0-9a-f]{12}-0"$' "with an id of the server's making (ph-HOST-CALL-N)"
HOSTTAG=$(jq -r . <<<"$ID" | cut -d- -f2)
answer "$SID" "\"ph-$HOSTTAG-000000000000-0\"" '"result":{"action":"accept"}'
is "$STATUS/$(jqr .error.code)" 400/-32600 "an answer no call of this host waits for: 400 -32600"
like "$(jqr .error.message)" "no call of this host waits for an answer with this id \\(it was answered already, or its call ended" \
	"the message says so and why that can be"
answer "$SID" "\"ph-${HOSTTAG//[0-9a-f]/0}-000000000000-0\"" '"result":{"action":"accept"}'
[ "$HOSTTAG" = 00000000 ] || like "$STATUS $(jqr .error.message)" "^400 .*sent by another host.*Mcp-Session-Id" \
	"an answer for a request another host sent: 400 saying to route by Mcp-Session-Id"
# responses that are not answers: refused, and the call keeps waiting
bad() { # MEMBERS DESCRIPTION
	post "$U" "{$1}" "${V[@]}" -H "Mcp-Session-Id: $SID"
	is "$STATUS/$(jqr .error.code)" 400/-32600 "$2: 400 -32600"
}
bad "\"jsonrpc\":\"2.0\",\"id\":$ID,\"result\":{\"action\":\"accept\"},\"error\":{\"code\":-1,\"message\":\"no\"}" \
	"a result where an error was expected (a response carrying both)"
like "$(jqr .error.message)" "a result or an error, not both" "the message says a response carries one of them"
bad "\"jsonrpc\":\"2.0\",\"id\":$ID,\"result\":\"yes\"" "a result that is not an object"
like "$(jqr .error.message)" "is an object" "the message says the result is an object"
bad "\"jsonrpc\":\"2.0\",\"id\":$ID,\"error\":\"no\"" "an error that is not a JSON-RPC error object"
like "$(jqr .error.message)" "integer code and a string message" "the message says what an error is"
bad "\"jsonrpc\":\"2.0\",\"id\":$ID,\"error\":{\"code\":\"x\",\"message\":\"no\"}" "an error whose code is not an integer"
bad "\"id\":$ID,\"result\":{\"action\":\"accept\"}" "an answer without jsonrpc 2.0"
post "$U" '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' "${V[@]}" -H "Mcp-Session-Id: $SID"
is "$STATUS" 200 "the server keeps serving the session meanwhile"
kill -0 "$PID" 2>/dev/null; ok "and the call still waits for a proper answer"
like "$(head -1 "$CALL")" '^event: message' "the stream is text/event-stream events"
answer "$SID2" "$ID" '"result":{"action":"accept","content":{"confirm":"yes"}}'
is "$STATUS/$(jqr .error.code)" 400/-32600 "the answer from another session: 400"
like "$(jqr .error.message)" "another session" "the message says it was sent to another session"
answer "$SID" "${ID%\"}x\"" '"result":{"action":"accept","content":{"confirm":"yes"}}'
is "$STATUS" 400 "an answer with a wrong id: 400"
test -e "$SB/sh.txt"; ok "nothing was deleted yet"
answer "$SID" "$ID" '"result":{"action":"accept","content":{"confirm":"yes"}}'
is "$STATUS" 202 "the right answer: 202"
finished; ok "the call's stream ends"
is "$(final | jq -r '.result.content[0].text')" "Deleted sh.txt." "the result comes on the parked stream"
test ! -e "$SB/sh.txt"; ok "the file is deleted"
answer "$SID" "$ID" '"result":{"action":"accept","content":{"confirm":"yes"}}'
is "$STATUS" 400 "the same answer twice: 400 (no call waits for it any more)"
like "$(jqr .error.message)" "answered already" "the message says it may have been answered already"

# progress and log notifications before the request is pushed and after the
# call resumes, all on the call's stream, in order
N=$((N + 1)); CALL=$T_DIR/call.$N
curl -sN -X POST -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
	"${V[@]}" -H "Mcp-Session-Id: $SID" \
	--data-binary '{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"chatty","arguments":{},"_meta":{"progressToken":"tok"}}}' \
	"$U" >"$CALL" 2>/dev/null &
PID=$!
wait_for 5 grep -q '"method":"elicitation/create"' "$CALL"
answer "$SID" "$(pushed | jq -c .id)" '"result":{"action":"accept","content":{"go":true}}'
is "$STATUS" 202 "chatty: the answer is taken"
finished
is "$(grep '^data: ' "$CALL" | sed 's/^data: //' | jq -r '
	if .method == "notifications/progress" then "progress \(.params.progressToken) \(.params.progress)/\(.params.total) \(.params.message)"
	elif .method == "notifications/message" then "log \(.params.level) \(.params.data)"
	elif .method != null then .method
	else "result \(.id) \(.result.content[0].text)" end' | paste -sd '|')" \
	"progress tok 1/4 started|log warning before asking|elicitation/create|progress tok 3/4 resumed|log warning after resuming|result c1 chatty done" \
	"progress and log before asking and after resuming reach the parked call's stream, in order"

start "$SID" test_sampling '{"prompt":"hi"}'
P=$(pushed)
is "$(jq -c '[.method, .params.maxTokens, .params.messages[0].content.text]' <<<"$P")" '["sampling/createMessage",100,"hi"]' \
	"sampling/createMessage is pushed with the handler's params"
answer "$SID" "$(jq -c .id <<<"$P")" '"error":{"code":-1,"message":"user rejected sampling"}'
is "$STATUS" 202 "an error answer: 202"
finished
is "$(final | jq -c '[.result.isError, (.result.content[0].text | test("user rejected sampling"))]')" '[true,true]' \
	"an error answer ends the call with an error result quoting it"

# large answers: carried up to sessions.max_answer (2 MiB here), refused
# over it with 413, and the call they answer ends at once
big_answer() { # ID BYTES: POSTs an answer whose content.blob is BYTES long
	{ printf '{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"blob":"' "$1"
	  head -c "$2" /dev/zero | tr '\0' a; printf '"}}}'; } >"$T_DIR/big.json"
	STATUS=$(curl -s -o "$T_DIR/big.out" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' "${V[@]}" -H "Mcp-Session-Id: $SID" \
		--data-binary @"$T_DIR/big.json" "$U")
	BODY=$(cat "$T_DIR/big.out")
}
start "$SID" sizer '{}'
big_answer "$(pushed | jq -c .id)" 1000000
is "$STATUS" 202 "an answer of 1 MB is taken: 202"
finished
is "$(final | jq -r '.result.content[0].text')" "got 1000000" "and the handler gets all of it"
start "$SID" sizer '{}'
t0=$(date +%s%N)
big_answer "$(pushed | jq -c .id)" 3000000
is "$STATUS/$(jqr .error.code)" 413/-32000 "an answer over sessions.max_answer: 413"
like "$(jqr .error.message)" "too large.*sessions.max_answer is 2097152" "saying so and naming the key"
finished
ms=$((($(date +%s%N) - t0) / 1000000))
like "$(final | jq -r '.result.content[0].text')" "too large.*sessions.max_answer" \
	"the call it answers ends with an error result saying so"
[ "$ms" -lt 6000 ]; ok "at once, not after sessions.park_timeout_ms ($ms ms)"
post "$U" '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' "${V[@]}" -H "Mcp-Session-Id: $SID"
is "$STATUS" 200 "the session is served as before"

echo y >"$SB/nobody.txt"
start "$SID" delete_file '{"path":"nobody.txt"}'
finished
is "$(final | jq -c '[.id, .result.isError, (.result.content[0].text | test("sessions.park_timeout_ms"))]')" "[$((100 + N)),true,true]" \
	"a call nobody answers ends after sessions.park_timeout_ms with an error result"

echo y >"$SB/gone.txt"
start "$SID" delete_file '{"path":"gone.txt"}'
kill "$PID"; wait "$PID" 2>/dev/null
wait_for 5 grep -q 'dropped: the client went away' "$PH_LOG"
ok "a client that goes away while its call is parked: the hub frees the call"
like "$(grep 'dropped: the client went away' "$PH_LOG" | tail -1)" 'dropped: the client went away \(0 parked now\)' \
	"the hub's log says so and that no call is parked any more"
GONE_ID=$(pushed | jq -c .id)
answer "$SID" "$GONE_ID" '"result":{"action":"accept","content":{"confirm":"yes"}}'
is "$STATUS/$(jqr .error.code)" 400/-32600 "a late answer for the dropped call: 400 (its state is gone)"
test -e "$SB/gone.txt"; ok "and the handler was not called again"

pids=()
echo y >"$SB/limit.txt"
for i in 1 2 3 4; do start "$SID" delete_file '{"path":"limit.txt"}'; pids+=("$PID"); done
LAST=$CALL
wait_for 5 grep -q 'sessions.max_parked' "$LAST"
ok "the fourth parked call (sessions.max_parked 3) ends at once with an error result naming the limit"
post "$U" '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' "${V[@]}" -H "Mcp-Session-Id: $SID"
is "$STATUS" 200 "the workers keep serving while calls are parked"
kill "${pids[@]}" 2>/dev/null; wait "${pids[@]}" 2>/dev/null

# the capabilities decide: URL mode needs elicitation.url, else -32042 as before
post "$U" '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"link_account","arguments":{}}}' \
	"${V[@]}" -H "Mcp-Session-Id: $SID"
is "$(jqr .error.code)" -32042 "a URL elicitation to a session without elicitation.url: -32042"
post "$U" '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"delete_file","arguments":{"path":"x"}}}' "${V[@]}"
like "$(jqr '.result.content[0].text')" "cannot give" "without a session: delete_file takes its fallback as before"
B26=$(jq -nc --arg v "$MODERN" '{jsonrpc:"2.0",id:4,method:"tools/call",params:{name:"delete_file",
	arguments:{path:"v1-no.txt"},_meta:{"io.modelcontextprotocol/protocolVersion":$v,
	"io.modelcontextprotocol/clientCapabilities":{elicitation:{}}}}}')
post "$U" "$B26" -H "MCP-Protocol-Version: $MODERN" -H "Mcp-Method: tools/call" -H "Mcp-Name: delete_file" \
	-H "Mcp-Session-Id: $SID"
is "$(jqr .result.resultType)" input_required "2026-07-28: input_required as before, the session header ignored"
done_testing
