#!/bin/bash
# Server-to-client requests in the middle of a legacy 2025-11-25 call over
# stdio: for a client whose initialize declared the capability, a handler's
# inputRequired becomes elicitation/create or sampling/createMessage on
# stdout, the answer comes back on stdin and the handler is called again
# with state and inputResponses. The SDK v1 client completes the bundled
# delete_file and a sampling tool; a shell driver then checks a client
# without the capability (nothing pushed), other requests served while a
# call waits, an unknown and a repeated answer (-32600), an error answer,
# sessions.park_timeout_ms, a cancel and the end of input while a call
# waits, and stdio.concurrency 1.
. "${top_srcdir:-.}/tests/lib.sh"
command -v perl >/dev/null || skip_all "perl not installed"

SB=$T_DIR/sandbox
mkdir -p "$SB"
conf() { # FILE [MORE YAML LINES...]
	local f=$1; shift
	cat >"$f" <<YAML
server: { name: stdio-push, version: "1.0" }
sessions: { park_timeout_ms: 1500 }
tools:
$(delete_file_yaml "$SB")
  - name: test_sampling
    input: { prompt: {type: string, required: true} }
    exec: [$top_srcdir/tests/conformance/fixtures.pl]
  - name: link_account
    exec: [$top_srcdir/examples/scripts/link_account.sh]
YAML
	for l in "$@"; do printf '%s\n' "$l" >>"$f"; done
}
conf "$T_DIR/phantom.yaml"

# ---- the SDK v1 client
if node_setup; then
	echo y >"$SB/v1-yes.txt"; echo n >"$SB/v1-no.txt"
	node_client sdk-v1-stdio-push.mjs --stdio "$PHANTOM" --arg -c --arg "$T_DIR/phantom.yaml" --arg --stdio
	test ! -e "$SB/v1-yes.txt" && test -e "$SB/v1-no.txt"
	ok "SDK v1 over stdio: the confirmed file is deleted, the other kept"
else
	diag "SDK v1 client checks skipped: the npm packages are not installed"
fi

# ---- by hand: a coprocess per case
init() { # CAPS
	send "$(printf '{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":%s,"clientInfo":{"name":"sh","version":"1"}}}' "$1")"
	get
}
N_START=0
start() { # CONF CAPS: the server (pid PID), each with a log of its own
	stdio_start "$T_DIR/err.$((N_START += 1))" "$1"
	PID=$STDIO_PID
	init "$2"
}
send() { stdio_send "$1"; }
get() { stdio_read L "${1:-5}" || true; } # L: one line (within 5 s), or ""
j() { jq -r "$1" <<<"$L"; }
del() { printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"delete_file","arguments":{"path":"%s"}}}' "$1" "$2"; }
confirm() { printf '{"jsonrpc":"2.0","id":"%s","result":{"action":"accept","content":{"confirm":"%s"}}}' "$1" "$2"; }
stop() { stdio_stop 5; }

# a client without the capability: nothing is pushed, the tool's fallback
echo y >"$SB/a.txt"
start "$T_DIR/phantom.yaml" '{}'
send "$(del 1 a.txt)"
get
is "$(jq -r '.id' <<<"$L")" 1 "without elicitation declared: the call is answered, nothing pushed"
like "$(jq -r '.result.content[0].text' <<<"$L")" "must ask for confirmation" "  with the tool's fallback"
send '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"link_account","arguments":{}}}'
get
is "$(j .error.code)" -32042 "  a URL elicitation is error -32042"
stop; ok "  EOF ends it"
test -e "$SB/a.txt"; ok "  nothing was deleted"

# the round trip by hand, other requests served while the call waits
start "$T_DIR/phantom.yaml" '{"elicitation":{}}'
send "$(del 1 a.txt)"
get; q=$L
is "$(jq -r .method <<<"$q")/$(jq -r .params.message <<<"$q")" "elicitation/create/Really delete a.txt?" \
	"elicitation/create is written on stdout mid-call"
like "$(jq -r .id <<<"$q")" '^ph-[0-9a-f]{12}-0$' "  under an id of the server's making"
qid=$(jq -r .id <<<"$q")
send '{"jsonrpc":"2.0","id":2,"method":"ping"}'
send '{"jsonrpc":"2.0","id":3,"method":"tools/list"}'
get; a=$(j .id); get
is "$a/$(j .id)" 2/3 "ping and tools/list are answered while the call waits"
send '{"jsonrpc":"2.0","id":"ph-000000000000-0","result":{"action":"accept","content":{"confirm":"yes"}}}'
get
is "$(jq -r .id <<<"$L")/$(jq -r .error.code <<<"$L")" ph-000000000000-0/-32600 "an answer to no request: -32600 with its id"
test -e "$SB/a.txt"; ok "  and it does not reach the call"
send "$(confirm "$qid" yes)"
get
is "$(jq -r .id <<<"$L")/$(jq -r '.result.content[0].text' <<<"$L")" "1/Deleted a.txt." \
	"the answer resumes the call: the handler is called again with it"
test ! -e "$SB/a.txt"; ok "  the file is deleted"
send "$(confirm "$qid" yes)"
get
is "$(j .error.code)" -32600 "the same answer twice: -32600"

# an error answer, then a call nobody answers
echo y >"$SB/b.txt"
send "$(del 4 b.txt)"
get; qid=$(j .id)
send "{\"jsonrpc\":\"2.0\",\"id\":\"$qid\",\"error\":{\"code\":-1,\"message\":\"user closed the dialog\"}}"
get
is "$(jq -r .id <<<"$L")/$(jq -r .result.isError <<<"$L")" 4/true "an error answer ends the call with an error result"
like "$(jq -r '.result.content[0].text' <<<"$L")" "answered the request the server sent with an error: user closed the dialog" \
	"  saying so"
t0=$(date +%s%N)
send "$(del 5 b.txt)"
get
get 5
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
is "$(jq -r .id <<<"$L")/$(jq -r .result.isError <<<"$L")" 5/true "no answer within sessions.park_timeout_ms: an error result"
like "$(jq -r '.result.content[0].text' <<<"$L")" "within sessions.park_timeout_ms \\(1500 ms\\)" "  naming the limit"
[ "$ms" -ge 1400 ] && [ "$ms" -lt 4000 ]; ok "  after the limit ($ms ms)"
test -e "$SB/b.txt"; ok "  nothing was deleted"

# a cancel while the call waits: no answer, the next request is served
send "$(del 6 b.txt)"
get
send '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":6}}'
send '{"jsonrpc":"2.0","id":7,"method":"ping"}'
get
is "$(j .id)" 7 "a call cancelled while it waits: no answer, the next request served"
get 2
is "$L" "" "  nothing more comes for it"
below=0
for k in $(pgrep -P "$PID"); do below=$((below + $(pgrep -P "$k" | wc -l))); done
is "$below" 0 "  its handler's process is gone"

# the end of input while a call waits: it ends with an error, then the process
send "$(del 8 b.txt)"
get
stdio_close
get
is "$(jq -r .id <<<"$L")/$(jq -r .result.isError <<<"$L")" 8/true "EOF while a call waits: it ends with an error result"
like "$(j '.result.content[0].text')" "input ended before it answered" "  saying the input ended (not the timeout)"
wait_gone "$PID" 3; ok "  then the process exits"
test -e "$SB/b.txt"; ok "  nothing was deleted"

# stdio.concurrency 1: the same round trip in the one process
conf "$T_DIR/one.yaml" "stdio: { concurrency: 1 }"
start "$T_DIR/one.yaml" '{"elicitation":{},"sampling":{}}'
send "$(del 1 b.txt)"
get; qid=$(j .id)
send "$(confirm "$qid" no)"
get
is "$(j '.result.content[0].text')" "Not deleted: b.txt stays." "stdio.concurrency 1: the round trip works"
send '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_sampling","arguments":{"prompt":"Hi?"}}}'
get; q=$L
is "$(jq -r .method <<<"$q")" sampling/createMessage "  sampling/createMessage is written"
send "{\"jsonrpc\":\"2.0\",\"id\":\"$(jq -r .id <<<"$q")\",\"result\":{\"role\":\"assistant\",\"model\":\"m\",\"content\":{\"type\":\"text\",\"text\":\"Hello\"}}}"
get
is "$(j '.result.content[0].text')" "LLM response: Hello" "  and its answer resumes the call"
stop; ok "  EOF ends it"
done_testing
