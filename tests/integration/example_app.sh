#!/bin/bash
# The shipped conf/phantom.yaml behind the shipped conf/nginx.conf: every
# tool (C module, sh scripts, a persistent Python loop), prompt and resource of the example app
# answers as documented.
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/reglib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"

OUT=$("$PHANTOM" -c "$top_srcdir/conf/phantom.yaml" -t 2>&1)
is "$?" 0 "conf/phantom.yaml passes -t"
behind_nginx phantom_up "$top_srcdir/conf/phantom.yaml" --workers 2
call() { local id=$1 p=$2; shift 2; mcall "$U" "$id" tools/call "$p" "$@"; }

mcall "$U" 1 server/discover '{}'
is "$(jqr '.result.capabilities|[has("tools"),has("prompts"),has("resources"),has("completions")]|all')" true \
	"tools, prompts, resources and completions are advertised"
is "$(jqr '.result._meta["io.modelcontextprotocol/serverInfo"].name')" phantom "the sample configuration keeps the default server name"
mcall "$U" 2 tools/list '{}'
is "$(jqr '[.result.tools[].name]|join(",")')" "echo,text_stats,count_to,host_info,echo_script,countdown,word_count,delete_file,link_account" "the example tools"
is "$(jqr .result.ttlMs)/$(jqr .result.cacheScope)" "300000/public" "tools list cache hints"

call 10 '{"name":"echo","arguments":{"text":"héllo"}}'
is "$(jqr '.result.content[0].text')" "héllo" "echo (module)"
call 11 '{"name":"text_stats","arguments":{"text":"one two\nthree"}}'
is "$(jqr '.result.structuredContent|"\(.characters) \(.words) \(.lines)"')" "13 3 2" "text_stats (module, structured, output schema)"
is "$(jqr '.result.content[0].text')" "13 characters, 3 words, 2 lines" "text_stats' summary"
call 21 '{"name":"text_stats","arguments":{"text":"a"}}'
is "$(jqr '.result.content[0].text')" "1 character, 1 word, 1 line" "text_stats' summary of one: singular"
PTOKEN=t mcall "$U" 12 tools/call '{"name":"count_to","arguments":{"n":3,"delay_ms":20}}'
is "$(sse_data | jq -r 'select(.method=="notifications/progress")|.params.progress' | tr '\n' ,)" "1,2,3," "count_to (module) reports progress"
is "$(fjq '.result.content[0].text')" "counted to 3" "count_to result"
call 13 '{"name":"count_to","arguments":{"n":0}}'
like "$(jqr '.result.content[0].text')" "Field n: must be >= 1" "count_to validates its input"
call 14 '{"name":"host_info"}'
is "$(jqr .result.isError)" false "host_info (sh script)"
is "$(jqr '.result.structuredContent.load|length')" 3 "host_info passes its output schema"
is "$(jqr .result.structuredContent.hostname)" "$(cat /proc/sys/kernel/hostname)" "host_info reports the host name"
call 17 '{"name":"word_count","arguments":{"text":"one two\nthree"}}'
is "$(jqr '.result.structuredContent|"\(.characters) \(.words) \(.lines)"')" "13 3 2" "word_count (persistent Python)"
call 18 '{"name":"word_count","arguments":{"text":"a b"}}'
is "$(jqr .result.structuredContent.words)" 2 "word_count answers again"
call 19 '{"name":"word_count","arguments":{"text":"a"}}' # three calls, two workers: one is warm
grep -q 'target=word_count status=200 .*exec=warm' "$PH_LOG"; ok "... from a warm process (the log line says so)"
call 15 '{"name":"echo_script","arguments":{"text":"plain words"}}'
is "$(jqr '.result.content[0].text')" "plain words" "echo_script (sh script)"
call 16 '{"name":"echo_script","arguments":{"text":"a\\b"}}'
is "$(jqr .result.isError)" true "echo_script refuses what it cannot handle"
call 20 '{"name":"echo_script","arguments":{"text":"two\tcolumns\nand/a line"}}'
is "$(jqr '.result.isError')/$(jqr '.result.content[0].text')" $'false/two\tcolumns\nand/a line' \
	"echo_script echoes tabs, newlines and slashes its input pattern allows"
PTOKEN=c mcall "$U" 17 tools/call '{"name":"countdown","arguments":{"from":3,"step_ms":20}}'
is "$(sse_data | jq -r 'select(.method=="notifications/progress")|.params.message' | tr '\n' ,)" "1 of 3,2 of 3,3 of 3," "countdown (sh) reports progress on fd 3"
is "$(fjq '.result.content[0].text')" "liftoff after 3 steps" "countdown result"
grep -q "tool countdown: stderr: countdown: done after 3 steps" "$PH_LOG"; ok "the script's stderr is in the log"
# delete_file asks first; its sandbox is in the source tree, so only "no"
CAPS='{"elicitation":{}}' call 18 '{"name":"delete_file","arguments":{"path":"README.txt"}}'
is "$(jqr .result.resultType)/$(jqr '.result.inputRequests.confirm.params.message')" \
	"input_required/Really delete README.txt?" "delete_file asks (form elicitation)"
RS=$(jqr .result.requestState)
CAPS='{"elicitation":{}}' call 19 "{\"name\":\"delete_file\",\"arguments\":{\"path\":\"README.txt\"},\"requestState\":\"$RS\",\"inputResponses\":{\"confirm\":{\"action\":\"accept\",\"content\":{\"confirm\":\"no\"}}}}"
is "$(jqr '.result.content[0].text')" "Not deleted: README.txt stays." "delete_file: no keeps the file"
test -f "$top_srcdir/examples/sandbox/README.txt"
ok "the sandbox file is still there"
CAPS='{"elicitation":{"url":{}}}' call 9 '{"name":"link_account"}'
is "$(jqr '.result.inputRequests.link.params.mode')" url "link_account asks with a URL elicitation"

mcall "$U" 20 prompts/list '{}'
is "$(jqr '[.result.prompts[].name]|join(",")')" "code_review,summarize_doc,describe_logo" "the example prompts"
mcall "$U" 21 prompts/get '{"name":"code_review","arguments":{"code":"int main;","language":"c"}}'
like "$(jqr '.result.messages[0].content.text|gsub("\\n";" ")')" "^Please review this c code.*int main;" "code_review substitutes"
mcall "$U" 22 completion/complete '{"ref":{"type":"ref/prompt","name":"code_review"},"argument":{"name":"language","value":"py"}}'
is "$(jqr '.result.completion.values|join(",")')" "python" "language completion from the module"
mcall "$U" 23 prompts/get '{"name":"summarize_doc","arguments":{"page":"getting-started.md"}}'
like "$(jqr '.result.messages[1].content.resource.text')" "^# Getting started" "summarize_doc embeds docs://{{page}}"
mcall "$U" 24 prompts/get '{"name":"describe_logo"}'
is "$(jqr '.result.messages[1].content.mimeType')" image/png "describe_logo carries the image"

mcall "$U" 30 resources/list '{}'
is "$(jqr '[.result.resources[].uri|select(startswith("skill://")|not)]|join(",")')" "docs://index,docs://logo,ui://phantom/host-info" \
	"the example resources"
is "$(jqr '[.result.resources[].uri|select(startswith("skill://"))]|length > 0')" true \
	"the bundled skills' SKILL.md files are listed after them"
mcall "$U" 31 resources/read '{"uri":"docs://index"}'
like "$(jqr '.result.contents[0].text')" "^# Phantom example documentation" "docs://index"
is "$(jqr .result.ttlMs)/$(jqr .result.cacheScope)" "60000/public" "with its cache hints"
mcall "$U" 32 resources/read '{"uri":"docs://logo"}'
is "$(jqr '.result.contents[0].blob|@base64d|.[1:4]')" PNG "docs://logo is a blob"
mcall "$U" 33 resources/read '{"uri":"docs://exec-handlers.md"}'
like "$(jqr '.result.contents[0].text')" "^# Exec handlers" "the docs://{page} template"
mcall "$U" 34 resources/read '{"uri":"docs://..%2F..%2Fconf%2Fphantom.yaml"}'
is "$(jqr .error.code)" -32602 "the template stays inside its directory"
mcall "$U" 35 resources/read '{"uri":"example://rot13/Hello%20World"}'
is "$(jqr '.result.contents[0].text')" "Uryyb Jbeyq" "example://rot13/{text} (module)"
mcall "$U" 36 completion/complete '{"ref":{"type":"ref/resource","uri":"docs://{page}"},"argument":{"name":"page","value":"g"}}'
is "$(jqr '.result.completion.values|join(",")')" "getting-started.md" "docs page completion"
done_testing
