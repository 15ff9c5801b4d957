#!/bin/bash
# Multi-round requests (input_required, requestState, elicitation) through
# nginx, with two independent Phantom instances sharing one secret behind one
# round-robin upstream: a round answered by one instance is resumed by the
# other. Every kind of input request (form and URL elicitation, sampling,
# roots), several rounds, a requestState-only answer, prompts and resources,
# exec and module handlers; every way a requestState is refused (tampered,
# truncated, garbage, expired, other principal, method, target or
# arguments, another secret), malformed inputResponses, missing client
# capabilities, handlers that answer wrongly, legacy clients (-32042), key
# rotation, and no caching of any of it.
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/reglib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"

H=$top_srcdir/tests/handlers/mrtr_handler.sh
S=$top_srcdir/examples/scripts
bearer_token TA HA; bearer_token TB HB
for s in secret1 secret2 secret3; do head -c 48 /dev/urandom | base64 >"$T_DIR/$s"; done
SB=$T_DIR/sandbox
mkdir -p "$SB"
echo outside >"$T_DIR/outside.txt"

# conf NAME WORKERS REQUEST_STATE: one instance's configuration
conf() {
	cat >"$T_DIR/$1.yaml" <<YAML
server: { name: $1, version: "1.0" }
workers: $2
request_state: $3
auth:
  mode: bearer
  tokens:
    - { principal: alice, sha256: $HA }
    - { principal: bob, sha256: $HB }
  stdio_principal: alice
tools:
  - name: delete_file
    input_schema:
      type: object
      properties:
        path: {type: string, pattern: '^[A-Za-z0-9_][A-Za-z0-9._-]*\$', maxLength: 255}
      required: [path]
      additionalProperties: false
    exec: [$S/delete_file.sh]
    cwd: $SB
  - { name: link_account, exec: [$S/link_account.sh] }
  - name: info
    input: { ask: {type: boolean, default: false} }
    exec: [$H]
$(for t in sampling roots all3 two_round shed url url_with_id undeclared careful bad_method bad_requests \
	bad_entry empty empty_requests not_object bad_mode no_message no_schema bad_sampling big_state; do
	printf '  - { name: %s, exec: [%s] }\n' "$t" "$H"
done)
$(for t in module_confirm module_sample module_url module_shed; do
	printf '  - { name: %s, module: elicitmod.so, symbol: %s }\n' "$t" "$t"
done)
prompts:
  - name: ask_prompt
    arguments: [{name: topic, complete: {exec: [$H]}}]
    exec: [$H]
resources:
  - { uri: "mrtr://ask", name: ask, exec: [$H] }
  - { uri: "mrtr://static", name: static, text: "static text", ttl_ms: 60000, scope: public }
YAML
}
RSA="{ secret_file: secret1, salt: elicit-test, max_size: 8192 }"
conf phantom-a 2 "$RSA"
conf phantom-b 2 "$RSA"
conf phantom-c 1 "{ secret_file: secret2, salt: elicit-test, max_size: 8192 }"
conf phantom-r 1 "{ secret_file: secret3, salt: elicit-test, max_size: 8192, max_age: 1, previous_secret_files: [secret1] }"

OUT=$("$PHANTOM" -t -c "$T_DIR/phantom-a.yaml" 2>&1)
is "$?" 0 "the test configuration passes -t"
start() { # start NAME: sets <NAME>_ADDR and <NAME>_LOG
	phantom_up "$T_DIR/phantom-$1.yaml" || { echo "not ok - phantom-$1 starts"; exit 1; }
	printf -v "${1^^}_ADDR" %s "$PH_ADDR"
	printf -v "${1^^}_LOG" %s "$PH_LOG"
}
start a
start b
start c
start r
# one upstream, two independent instances with the same secret, round-robin
# (one nginx worker: each worker keeps its own round-robin position, and the
# checks below rely on consecutive requests alternating)
NGINX_WORKERS=1
nginx_start "$A_ADDR; server $B_ADDR" || { echo "not ok - nginx starts"; exit 1; }
U=$NGINX_URL
grep -q "server $A_ADDR; server $B_ADDR;" "$NGINX_DIR/nginx.conf"
ok "nginx: one upstream with two servers (the shipped conf/nginx.conf otherwise)"
# the same with different secrets
nginx_start "$A_ADDR; server $C_ADDR" || { echo "not ok - nginx 2 starts"; exit 1; }
U2=$NGINX_URL
# the rotating instance (current secret3, previous secret1, max_age 1)
nginx_start "$R_ADDR" || { echo "not ok - nginx 3 starts"; exit 1; }
U3=$NGINX_URL
# a and b again, routed by the legacy session id as conf/nginx.conf
# documents: a call parked in one host's hub gets its answers there
nginx_start "$A_ADDR; server $B_ADDR; hash \$http_mcp_session_id consistent" ||
	{ echo "not ok - nginx 4 starts"; exit 1; }
U4=$NGINX_URL

ALL='{"elicitation":{"form":{},"url":{}},"sampling":{},"roots":{}}'
CAPS=$ALL
# call URL ID METHOD PARAMS [TOKEN]: a 2026-07-28 request as alice (or TOKEN)
call() { mcall "$1" "$2" "$3" "$4" -H "Authorization: Bearer ${5:-$TA}"; }
# legacy URL ID METHOD PARAMS: a 2025-11-25 request as alice
legacy() {
	post "$1" "$(jq -c --argjson id "$2" --arg m "$3" '{jsonrpc:"2.0",id:$id,method:$m,params:.}' <<<"$4")" \
		-H "MCP-Protocol-Version: 2025-11-25" -H "Authorization: Bearer $TA"
}
# retry PARAMS REQUESTSTATE RESPONSES: PARAMS with the retry members ("" and
# null leave one out)
retry() {
	jq -c --arg rs "$2" --argjson ir "$3" '. + (if $rs == "" then {} else {requestState:$rs} end)
		+ (if $ir == null then {} else {inputResponses:$ir} end)' <<<"$1"
}
# accept KEY CONTENT: inputResponses with one accepted elicitation
accept() { jq -cn --arg k "$1" --argjson c "$2" '{($k):{action:"accept",content:$c}}'; }
served() { jqr '.result._meta["io.modelcontextprotocol/serverInfo"].name'; }
rstate() { jqr .result.requestState; }
txt() { jqr '.result.content[0].text'; }
nocache() { # nocache WHAT: no caching hints on the last result
	is "$(jqr '.result|has("ttlMs") or has("cacheScope")')" false "$1: no ttlMs/cacheScope"
}
still() { # still URL WHAT: the next request is served
	call "$1" 99 tools/call '{"name":"sampling"}'
	is "$STATUS/$(jqr .result.resultType)" 200/input_required "the next request after $2 is served"
}
# lines PATTERN LOG: how many lines of LOG match
lines() { grep -c -- "$1" "$2" || true; }
# count_is N PATTERN LOG...: N lines of the LOGs together match
count_is() { local n=$1 pat=$2; shift 2; [ "$(cat "$@" | grep -c -- "$pat")" = "$n" ]; }

# ---- two instances, one secret, round-robin ----------------------------------
call "$U" 1 server/discover '{}'
n1=$(served)
call "$U" 2 server/discover '{}'
n2=$(served)
is "$(printf '%s\n' "$n1" "$n2" | sort | tr '\n' ' ')" "phantom-a phantom-b " \
	"round-robin: consecutive requests are served by both instances"

echo doomed >"$SB/victim.txt"
P='{"name":"delete_file","arguments":{"path":"victim.txt"}}'
call "$U" 10 tools/call "$P"
first=$(served)
is "$STATUS/$(jqr .result.resultType)" 200/input_required "delete_file: round 1 is input_required"
is "$(jqr '.result.inputRequests.confirm.method')" elicitation/create "delete_file: asks with elicitation/create"
is "$(jqr '.result.inputRequests.confirm.params|"\(.mode)|\(.message)"')" "form|Really delete victim.txt?" \
	"delete_file: a form: Really delete victim.txt?"
is "$(jqr '.result.inputRequests.confirm.params.requestedSchema|"\(.properties.confirm.enum|join(","))|\(.required|join(","))"')" \
	"yes,no|confirm" "delete_file: the schema is an enum confirm yes/no, required"
RS=$(rstate)
like "$RS" '^[A-Za-z0-9_-]{100,}$' "requestState is a base64url string"
is "$(jqr '.result|keys|join(",")')" "_meta,inputRequests,requestState,resultType" \
	"input_required carries inputRequests, requestState, resultType and _meta only"
nocache "input_required"
call "$U" 11 tools/call "$(retry "$P" "$RS" "$(accept confirm '{"confirm":"yes"}')")"
second=$(served)
is "$STATUS/$(jqr .result.resultType)/$(txt)" "200/complete/Deleted victim.txt." "delete_file: yes deletes"
test ! -e "$SB/victim.txt"
ok "the file is gone"
nocache "the result of a retry"
[ -n "$first" ] && [ "$first" != "$second" ]
ok "round 1 was served by $first, the retry by the other instance ($second)"
wait_for 2 count_is 2 'target=delete_file' "$A_LOG" "$B_LOG"
is "$(lines 'target=delete_file status=200' "$A_LOG")/$(lines 'target=delete_file status=200' "$B_LOG")" "1/1" \
	"each instance's log has one of the two delete_file requests"
grep -q "delete_file: deleted victim.txt" "$A_LOG" "$B_LOG"
ok "the script's stderr is in the log of the instance that deleted"

echo keep >"$SB/keep.txt"
P='{"name":"delete_file","arguments":{"path":"keep.txt"}}'
call "$U" 12 tools/call "$P"
call "$U" 13 tools/call "$(retry "$P" "$(rstate)" "$(accept confirm '{"confirm":"no"}')")"
is "$(txt)" "Not deleted: keep.txt stays." "delete_file: no does not delete"
call "$U" 14 tools/call "$P"
call "$U" 15 tools/call "$(retry "$P" "$(rstate)" '{"confirm":{"action":"decline"}}')"
is "$(txt)" "Not deleted: keep.txt stays." "delete_file: decline does not delete"
call "$U" 16 tools/call "$(retry "$P" "" "$(accept confirm '{"confirm":"yes"}')")"
is "$(jqr .result.resultType)" input_required "delete_file: yes without Phantom's requestState is asked again"
test -e "$SB/keep.txt"
ok "keep.txt is still there"
call "$U" 17 tools/call '{"name":"delete_file","arguments":{"path":"../outside.txt"}}'
like "$(jqr .result.isError)/$(txt)" "^true/Invalid tool arguments" "delete_file: ../ is refused by the schema"
call "$U" 18 tools/call '{"name":"delete_file","arguments":{"path":".hidden"}}'
is "$(jqr .result.isError)" true "delete_file: a hidden name is refused"
call "$U" 19 tools/call '{"name":"delete_file","arguments":{"path":"absent.txt"}}'
is "$(jqr .result.isError)/$(txt)" "true/There is no file absent.txt in the sandbox directory" \
	"delete_file: a missing file is an error before any question"
test -e "$T_DIR/outside.txt"
ok "nothing outside the sandbox was touched"
CAPS='{}' call "$U" 20 tools/call '{"name":"delete_file","arguments":{"path":"keep.txt"}}'
like "$(jqr .result.isError)/$(txt)" "^true/delete_file must ask for confirmation" \
	"delete_file: a client without elicitation gets the script's fallback, not -32021"
legacy "$U" 21 tools/call '{"name":"delete_file","arguments":{"path":"keep.txt"}}'
like "$(jqr .result.isError)/$(txt)" "^true/delete_file must ask for confirmation" \
	"delete_file: a 2025-11-25 client gets the fallback"
test -e "$SB/keep.txt"
ok "keep.txt survived every refusal"

# ---- every kind of input request ---------------------------------------------
call "$U" 30 tools/call '{"name":"sampling"}'
is "$(jqr '.result.inputRequests.capital|"\(.method) \(.params.maxTokens) \(.params.messages[0].content.text)"')" \
	"sampling/createMessage 50 What is the capital of France?" "sampling: the request as the handler wrote it"
call "$U" 31 tools/call "$(retry '{"name":"sampling"}' "$(rstate)" \
	'{"capital":{"role":"assistant","content":{"type":"text","text":"Paris."},"model":"m","stopReason":"endTurn"}}')"
is "$(txt)" "Sampling: Paris." "sampling: round trip"
call "$U" 32 tools/call '{"name":"roots"}'
is "$(jqr '.result.inputRequests.roots|tojson')" '{"method":"roots/list"}' "roots: roots/list without params"
call "$U" 33 tools/call "$(retry '{"name":"roots"}' "$(rstate)" \
	'{"roots":{"roots":[{"uri":"file:///home/u/a","name":"A"},{"uri":"file:///home/u/b"}]}}')"
is "$(txt)" "Roots: file:///home/u/a,file:///home/u/b" "roots: round trip"
call "$U" 34 tools/call '{"name":"all3"}'
is "$(jqr '[.result.inputRequests[].method]|sort|join(",")')" \
	"elicitation/create,roots/list,sampling/createMessage" "three requests of three kinds in one round"
R='{"user_name":{"action":"accept","content":{"name":"Ada"}},"greeting":{"role":"assistant","content":{"type":"text","text":"Hello"},"model":"m"},"client_roots":{"roots":[{"uri":"file:///x"}]}}'
call "$U" 35 tools/call "$(retry '{"name":"all3"}' "$(rstate)" "$R")"
is "$(txt)" "Hello Ada - 1 root(s)" "all three answered in one retry"

call "$U" 36 tools/call '{"name":"two_round"}'
s1=$(served)
RS1=$(rstate)
is "$(jqr '.result.inputRequests|keys|join(",")')" step1 "two rounds: round 1 asks step1"
call "$U" 37 tools/call "$(retry '{"name":"two_round"}' "$RS1" "$(accept step1 '{"name":"Ada"}')")"
s2=$(served)
RS2=$(rstate)
is "$(jqr '.result.resultType')/$(jqr '.result.inputRequests|keys|join(",")')" input_required/step2 \
	"two rounds: round 2 asks step2"
isnt_same() { [ "$1" != "$2" ]; }
isnt_same "$RS1" "$RS2"
ok "each round has its own requestState"
call "$U" 38 tools/call "$(retry '{"name":"two_round"}' "$RS2" "$(accept step2 '{"color":"green"}')")"
s3=$(served)
is "$(jqr .result.resultType)/$(txt)" "complete/Ada likes green" "two rounds: round 3 completes with both answers"
is "$([ "$s1" != "$s2" ] && [ "$s2" != "$s3" ] && echo alternating)" alternating \
	"the three rounds alternate between the instances ($s1, $s2, $s3)"
call "$U" 39 tools/call "$(retry '{"name":"two_round"}' "$RS2" '{}')"
is "$(jqr .result.resultType)/$(jqr '.result.inputRequests|keys|join(",")')" input_required/step2 \
	"a missing response: the handler asks again"

call "$U" 40 tools/call '{"name":"shed"}'
is "$(jqr '.result|"\(.resultType) \(has("inputRequests")) \(.requestState|type)"')" "input_required false string" \
	"requestState-only answer: no inputRequests"
call "$U" 41 tools/call "$(retry '{"name":"shed"}' "$(rstate)" null)"
is "$(txt)" "served after a retry" "requestState-only: the retry carries only requestState"

call "$U" 42 tools/call '{"name":"url"}'
is "$(jqr '.result.inputRequests.login.params|"\(.mode) \(.url) \(has("elicitationId"))"')" \
	"url https://auth.example.com/login?r=u1 false" "URL mode: mode url and the url, no elicitationId"
call "$U" 43 tools/call "$(retry '{"name":"url"}' "$(rstate)" '{"login":{"action":"accept"}}')"
is "$(txt)" "url accepted" "URL mode: round trip, the state says which page"
call "$U" 44 tools/call '{"name":"link_account"}'
like "$(jqr '.result.inputRequests.link.params.url')" '^https://accounts\.example\.com/link\?request=[0-9a-f]{16}$' \
	"link_account: a URL elicitation with a request id"
id=$(jqr '.result.inputRequests.link.params.url' | sed 's/.*=//')
call "$U" 45 tools/call "$(retry '{"name":"link_account"}' "$(rstate)" '{"link":{"action":"accept"}}')"
is "$(txt)" "Link request $id: the page was opened." "link_account: the second round knows the request id"

call "$U" 46 prompts/get '{"name":"ask_prompt"}'
is "$(jqr .result.resultType)/$(jqr '.result.inputRequests.user_context.method')" input_required/elicitation/create \
	"prompts/get may answer input_required"
call "$U" 47 prompts/get "$(retry '{"name":"ask_prompt"}' "$(rstate)" "$(accept user_context '{"context":"tests"}')")"
is "$(jqr .result.resultType)/$(jqr '.result.messages[0].content.text')" "complete/Use the following context: tests" \
	"prompts/get: round trip"
call "$U" 48 resources/read '{"uri":"mrtr://ask"}'
is "$(jqr .result.resultType)/$(jqr '.result.inputRequests|keys|join(",")')" input_required/topic \
	"resources/read may answer input_required"
nocache "resources/read input_required"
call "$U" 49 resources/read "$(retry '{"uri":"mrtr://ask"}' "$(rstate)" "$(accept topic '{"topic":"caching"}')")"
is "$(jqr '.result.contents[0].text')" "topic: caching" "resources/read: round trip"
is "$(jqr .result.ttlMs)/$(jqr .result.cacheScope)" 0/private "resources/read retry: ttlMs 0, private (never reused)"
call "$U" 50 resources/read '{"uri":"mrtr://static"}'
is "$(jqr .result.ttlMs)/$(jqr .result.cacheScope)" 60000/public "a plain read keeps the resource's cache hints"
call "$U" 51 resources/read '{"uri":"mrtr://static","inputResponses":{}}'
is "$(jqr '.result.contents[0].text')" "static text" "a read carrying inputResponses is served"
is "$(jqr .result.ttlMs)/$(jqr .result.cacheScope)" 0/private "a read carrying inputResponses: ttlMs 0, private, not the resource's hints"

call "$U" 52 tools/call '{"name":"module_confirm"}'
is "$(jqr '.result.inputRequests.ok.params|"\(.mode) \(.message) \(.requestedSchema.properties.ok.type)"')" \
	"form Proceed? boolean" "module: phantom_result_elicit"
call "$U" 53 tools/call "$(retry '{"name":"module_confirm"}' "$(rstate)" "$(accept ok '{"ok":true}')")"
is "$(txt)" "module: ok=true for proceed (principal alice)" \
	"module: phantom_call_accepted, phantom_call_state and the principal"
call "$U" 54 tools/call '{"name":"module_sample"}'
is "$(jqr '.result.inputRequests|keys|join(",")')/$(jqr '.result.inputRequests.s.method')" "s/sampling/createMessage" \
	"module: phantom_result_input_request_json"
call "$U" 55 tools/call "$(retry '{"name":"module_sample"}' "$(rstate)" \
	'{"s":{"role":"assistant","content":{"type":"text","text":"hey"},"model":"m"}}')"
is "$(txt)" "module sampled: hey" "module: phantom_call_input_response"
call "$U" 56 tools/call '{"name":"module_url"}'
is "$(jqr '.result|"\(.resultType) \(.inputRequests.open.params.mode) \(has("content"))"')" "input_required url false" \
	"module: phantom_result_elicit_url; the result's content is not sent"
call "$U" 57 tools/call "$(retry '{"name":"module_url"}' "$(rstate)" '{"open":{"action":"cancel"}}')"
is "$(txt)" "module: not opened" "module: a cancelled URL elicitation"
call "$U" 58 tools/call '{"name":"module_shed"}'
is "$(jqr '.result|"\(.resultType) \(has("inputRequests"))"')" "input_required false" "module: a state-only answer"
call "$U" 59 tools/call "$(retry '{"name":"module_shed"}' "$(rstate)" null)"
is "$(txt)" "module: served after a retry" "module: resumed with a null state"

# ---- what an exec handler sees -------------------------------------------------
call "$U" 60 tools/call '{"name":"info","arguments":{"ask":true}}'
P='{"name":"info","arguments":{"ask":true}}'
call "$U" 61 tools/call "$(retry "$P" "$(rstate)" "$(accept q '{"answer":"x"}' | jq -c '. + {"unknown":{"action":"decline"}}')")"
I=$(txt)
is "$(jq -c .keys <<<"$I")" '["kind","name","state","arguments","principal","assigns","clientCapabilities","meta","inputResponses"]' \
	"exec input on a retry: server-vouched members first, inputResponses last"
is "$(jq -c .state <<<"$I")" '{"n":1,"nested":{"a":[1,2,"ü"]},"s":"x\"y"}' "the state comes back as sealed (nested, UTF-8, escapes)"
is "$(jq -c '.inputResponses|keys' <<<"$I")" '["q","unknown"]' "inputResponses reach the handler as sent (unknown keys too)"
is "$(jq -r .principal <<<"$I")" alice "the handler sees the principal"
call "$U" 62 tools/call '{"name":"info","inputResponses":{"q":{"action":"accept","content":{"answer":"y"}}}}'
I=$(txt)
is "$(jq -r '"\(.has_state) \(.inputResponses.q.content.answer)"' <<<"$I")" "false y" \
	"inputResponses without requestState: passed on, no state"
legacy "$U" 63 tools/call '{"name":"info","requestState":"garbage","inputResponses":{"q":1}}'
I=$(txt)
is "$(jq -c '[.keys, .legacy, .clientCapabilities]' <<<"$I")" \
	'[["kind","name","legacy","arguments","principal","assigns","clientCapabilities","meta"],true,{}]' \
	"2025-11-25: legacy true, clientCapabilities {}, requestState and inputResponses ignored"

# ---- refused requestState: -32602, and the next request is served ----------------
P='{"name":"sampling"}'
call "$U" 70 tools/call "$P"
GOOD=$(rstate)
SAMPLE='{"capital":{"role":"assistant","content":{"type":"text","text":"Paris"},"model":"m"}}'
refused() { # refused ID TOKEN MESSAGE-REGEX WHAT [PARAMS] [BEARER]
	local id=$1 tok=$2 re=$3 what=$4 p=${5:-$P}
	call "$U" "$id" tools/call "$(retry "$p" "$tok" "$SAMPLE")" "${6:-$TA}"
	is "$STATUS/$(jqr .error.code)" 200/-32602 "$what: -32602"
	like "$(jqr .error.message)" "$re" "$what: the message says so"
	is "$(jqr .id)" "$id" "$what: the id is echoed"
	still "$U" "$what"
}
mid=$(( ${#GOOD} / 2 ))
c=${GOOD:$mid:1}
[ "$c" = A ] && r=B || r=A
refused 71 "${GOOD:0:$mid}$r${GOOD:$((mid + 1))}" "not issued by this server or was altered" "a tampered requestState"
refused 72 "${GOOD:0:$mid}" "not issued by this server or was altered" "a truncated requestState"
refused 73 "not-a-real-token" "not issued by this server or was altered" "a garbage requestState"
refused 74 "$GOOD-TAMPERED" "not issued by this server or was altered" "a requestState with -TAMPERED appended"
refused 75 "$(head -c 9000 /dev/zero | tr '\0' A)" "too large" "a requestState over max_size"
refused 76 "$GOOD" "issued to another principal" "another principal (bob retries alice's)" "$P" "$TB"
call "$U" 77 prompts/get '{"name":"ask_prompt"}'
refused 78 "$(rstate)" "issued for another method" "another method (a prompts/get state on tools/call)" \
	'{"name":"ask_prompt"}'
refused 79 "$GOOD" "issued for another tool, prompt or resource" "another target (sampling's state on roots)" \
	'{"name":"roots"}'
call "$U" 80 tools/call '{"name":"info","arguments":{"ask":true}}'
refused 81 "$(rstate)" "issued for other arguments" "other arguments" '{"name":"info","arguments":{"ask":false}}'
call "$U" 82 tools/call "$(jq -c '. + {requestState:42}' <<<"$P")"
is "$(jqr .error.code)/$(jqr .error.message)" "-32602/Invalid params: requestState must be a string" \
	"a requestState that is not a string"
call "$U" 83 tools/call "$(retry "$P" "$GOOD" "$SAMPLE")"
is "$(txt)" "Sampling: Paris" "after all that, the genuine requestState still opens"

# expired: the instance behind nginx 3 seals for 1 second
call "$U3" 84 tools/call '{"name":"sampling"}'
is "$(served)/$(jqr .result.resultType)" phantom-r/input_required "the rotating instance seals for 1 s"
OLD=$(rstate)
sleep 2.2
call "$U3" 85 tools/call "$(retry "$P" "$OLD" "$SAMPLE")"
is "$(jqr .error.code)/$(jqr .error.message)" \
	"-32602/Invalid requestState: it has expired; start the request again" "an expired requestState"

# ---- malformed inputResponses ----------------------------------------------------
call "$U" 90 tools/call '{"name":"sampling","inputResponses":null}'
is "$STATUS/$(jqr .error.code)/$(jqr .error.message)" \
	"200/-32602/Invalid params: inputResponses must be an object" "inputResponses null: -32602"
call "$U" 91 tools/call '{"name":"sampling","inputResponses":"yes"}'
is "$(jqr .error.code)" -32602 "inputResponses a string: -32602"
call "$U" 92 tools/call '{"name":"sampling","inputResponses":{"capital":12345}}'
is "$(jqr .error.code)/$(jqr .error.message)" \
	"-32602/Invalid params: inputResponses[\"capital\"] must be an object (an elicitation, sampling or roots result)" \
	"a response that is not an object: -32602 naming its key"
call "$U" 93 tools/call "$(retry "$P" "$GOOD" '{"capital":[]}')"
is "$(jqr .error.code)" -32602 "checked before the requestState is even opened"
still "$U" "malformed inputResponses"

# ---- client capabilities ----------------------------------------------------------
missing() { # missing ID PARAMS CAPS REQUIRED WHAT
	CAPS=$3 call "$U" "$1" tools/call "$2"
	is "$STATUS/$(jqr .error.code)" 400/-32021 "$5: HTTP 400 -32021"
	is "$(jqr '.error.data.requiredCapabilities|tojson')" "$4" "$5: data.requiredCapabilities $4"
	is "$(jqr .id)" "$1" "$5: the id is echoed"
}
missing 100 '{"name":"sampling"}' '{"elicitation":{}}' '{"sampling":{}}' "sampling undeclared"
missing 101 '{"name":"roots"}' '{"sampling":{}}' '{"roots":{}}' "roots undeclared"
missing 102 '{"name":"info","arguments":{"ask":true}}' '{}' '{"elicitation":{}}' "elicitation undeclared"
missing 103 '{"name":"url"}' '{"elicitation":{}}' '{"elicitation":{"url":{}}}' "URL mode with elicitation {} (form only)"
missing 104 '{"name":"info","arguments":{"ask":true}}' '{"elicitation":{"url":{}}}' '{"elicitation":{"form":{}}}' \
	"form mode with elicitation {url} only"
missing 105 '{"name":"all3"}' '{"sampling":{}}' '{"elicitation":{},"roots":{}}' "two of three undeclared"
missing 106 '{"name":"undeclared"}' '{}' '{"sampling":{}}' "test_missing_capability's shape"
missing 107 '{"name":"link_account"}' '{"elicitation":{"form":{}}}' '{"elicitation":{"url":{}}}' "link_account without URL mode"
like "$(jqr .error.message)" "^Missing required client capability: tool link_account asks for elicitation \(URL mode\)" \
	"the message names the tool and what it asks for"
CAPS='{"elicitation":{"url":{}}}' call "$U" 108 tools/call '{"name":"url"}'
is "$(jqr .result.resultType)" input_required "URL mode with elicitation {url}: allowed"
CAPS='{"elicitation":{}}' call "$U" 109 tools/call '{"name":"careful"}'
is "$(txt)" "fallback: no sampling, answered without it" "a handler that checks clientCapabilities takes its fallback"
still "$U" "-32021"

# ---- handlers that answer wrongly: -32603, details in the log only ----------------
for t in bad_method bad_requests bad_entry empty empty_requests not_object bad_mode no_message no_schema \
	bad_sampling big_state; do
	call "$U" 110 tools/call "{\"name\":\"$t\"}"
	is "$STATUS/$(jqr .error.code)/$(jqr .error.message)" "200/-32603/Internal error: the handler failed" \
		"$t: -32603"
done
wait_for 2 grep -q "sealed state is .* bytes, over request_state.max_size" "$A_LOG" "$B_LOG"
grep -hq "sealed state is .* bytes, over request_state.max_size (8192)" "$A_LOG" "$B_LOG"
ok "big_state: the log says the state is over request_state.max_size"
grep -hq 'tool bad_method: inputRequests\["x"\] asks for a method other than' "$A_LOG" "$B_LOG"
ok "bad_method: the log names the request"
still "$U" "handler errors"

# ---- never input_required for other methods ----------------------------------
call "$U" 120 completion/complete '{"ref":{"type":"ref/prompt","name":"ask_prompt"},"argument":{"name":"topic","value":"a"}}'
is "$(jqr '.result.resultType // .error.code')" -32603 "completion/complete: a handler asking for input fails"
call "$U" 121 tools/list '{}'
is "$(jqr .result.resultType)" complete "tools/list is complete"

# ---- 2025-11-25 clients ----------------------------------------------------------
legacy "$U" 130 tools/call '{"name":"link_account"}'
is "$STATUS/$(jqr .error.code)/$(jqr .error.message)" "200/-32042/This request requires more information." \
	"legacy URL elicitation: -32042"
is "$(jqr '.error.data.elicitations[0]|"\(.mode) \(.message)"')" "url Open this page to link your account." \
	"data.elicitations[0]: mode and message"
like "$(jqr '.error.data.elicitations[0].url')" '^https://accounts\.example\.com/link\?request=[0-9a-f]{16}$' \
	"data.elicitations[0].url"
like "$(jqr '.error.data.elicitations[0].elicitationId')" '^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$' \
	"data.elicitations[0].elicitationId: a UUID made by Phantom"
legacy "$U" 131 tools/call '{"name":"url_with_id"}'
is "$(jqr '[.error.data.elicitations[].url]|join(" ")')" "https://auth.example.com/a https://auth.example.com/b" \
	"every URL elicitation is listed"
is "$(jqr '.error.data.elicitations[0].elicitationId')" my-id "a handler's own elicitationId is kept"
legacy "$U" 132 tools/call '{"name":"module_url"}'
is "$(jqr .error.code)" -32042 "legacy: a module's URL elicitation is -32042 too"
legacy "$U" 133 tools/call '{"name":"sampling"}'
is "$(jqr .error.code)/$(jqr '.error.data.requiredCapabilities|tojson')" '-32021/{"sampling":{}}' \
	"legacy: any other request is -32021"
legacy "$U" 134 tools/call '{"name":"shed"}'
is "$(jqr .error.code)" -32603 "legacy: a state-only answer cannot be given"
legacy "$U" 135 tools/call '{"name":"module_confirm"}'
is "$(jqr .result.isError)/$(txt)" "true/module_confirm needs a client that can answer an elicitation" \
	"legacy: a module sees phantom_call_legacy and falls back"
for u in "$U" "$U2" "$U3"; do
	call "$u" 136 tools/call '{"name":"link_account"}'
	is "$(jqr '.error.code // .result.resultType')" input_required "2026-07-28: link_account is input_required, never -32042"
done

# ---- key rotation ----------------------------------------------------------------
call "$U" 140 tools/call "$P"
FROM_A=$(rstate)
call "$U3" 141 tools/call "$(retry "$P" "$FROM_A" "$SAMPLE")"
is "$(served)/$(txt)" "phantom-r/Sampling: Paris" "rotation: a state sealed with the previous secret still opens"
call "$U3" 142 tools/call "$P"
FROM_R=$(rstate)
call "$U" 143 tools/call "$(retry "$P" "$FROM_R" "$SAMPLE")"
is "$(jqr .error.code)/$(jqr .error.message)" \
	"-32602/Invalid requestState: it was not issued by this server or was altered" \
	"rotation: the new secret seals (instances that do not have it refuse its states)"

# ---- different secrets behind one upstream: fails cleanly ----------------------------
a0=$(lines 'target=sampling' "$A_LOG")
c0=$(lines 'target=sampling' "$C_LOG")
call "$U2" 150 tools/call "$P"
one=$(served)
call "$U2" 151 tools/call "$(retry "$P" "$(rstate)" "$SAMPLE")"
is "$STATUS/$(jqr .error.code)/$(jqr .error.message)" \
	"200/-32602/Invalid requestState: it was not issued by this server or was altered" \
	"different secrets: the retry on the other instance is refused"
wait_for 2 count_is $((a0 + c0 + 2)) 'target=sampling' "$A_LOG" "$C_LOG"
is "$(( $(lines 'target=sampling' "$A_LOG") - a0 ))/$(( $(lines 'target=sampling' "$C_LOG") - c0 ))" 1/1 \
	"round 1 ($one) and the retry were served by different instances"
grep -q 'target=sampling status=200 code=-32602' "$A_LOG" "$C_LOG"
ok "the refusal is in the log with its code"
call "$U2" 152 tools/call "$P"
call "$U2" 153 tools/call "$P"
is "$STATUS/$(jqr .result.resultType)" 200/input_required "both instances keep serving"

# ---- the SDK v2 client answers input_required by itself --------------------------
if node_setup; then
	for how in http stdio; do
		echo y >"$SB/sdk-yes.txt"
		echo n >"$SB/sdk-no.txt"
		if [ "$how" = http ]; then
			node_client sdk-elicit.mjs --url "$U" --token "$TA"
		else
			# a sanitizer build reports into T_DIR, where done_testing looks
			ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$T_DIR/stdio-asan \
			UBSAN_OPTIONS=${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=$T_DIR/stdio-ubsan \
				node_client sdk-elicit.mjs --stdio "$PHANTOM" --arg -c --arg "$T_DIR/phantom-a.yaml" --arg --stdio
		fi
		test ! -e "$SB/sdk-yes.txt" && test -e "$SB/sdk-no.txt"
		ok "SDK over $how: the confirmed file is deleted, the other kept"
	done
	echo y >"$SB/sdk-yes.txt"
	node_client sdk-elicit.mjs --url "$U4" --token "$TA" --era legacy
	test ! -e "$SB/sdk-yes.txt" && test -e "$SB/sdk-no.txt"
	ok "SDK, 2025-11-25 over HTTP, two hosts routed by Mcp-Session-Id (requests pushed mid-call): the confirmed file is deleted, the other kept"
	echo y >"$SB/sdk-yes.txt"
	echo n >"$SB/sdk-no.txt"
	node_client sdk-elicit.mjs --stdio "$PHANTOM" --arg -c --arg "$T_DIR/phantom-a.yaml" --arg --stdio --era legacy
	test ! -e "$SB/sdk-yes.txt" && test -e "$SB/sdk-no.txt"
	ok "SDK, 2025-11-25 over stdio (requests on stdout mid-call, answers on stdin): the confirmed file is deleted, the other kept"
else
	diag "SDK client checks skipped: the npm packages are not installed (scripts/test.sh installs them)"
fi

done_testing
