#!/bin/bash
# mrtr_handler.sh: the exec handler behind tests/integration/elicit.sh and
# tests/clients/sdk-elicit.mjs. One behaviour per tool, prompt or resource,
# each asking the client for input in its own way (or answering wrongly, to
# test how Phantom refuses it). Reads the exec input with jq.
set -u
in=$(cat)
q() { jq -r "$@" <<<"$in"; }
out() { printf '%s\n' "$1"; exit 0; }
text() { jq -cn --arg t "$1" '{content:[{type:"text",text:$t}]}'; exit 0; }
# need REQUESTS [STATE]: the inputRequired answer
need() {
	if [ $# -gt 1 ]; then
		jq -cn --argjson r "$1" --argjson s "$2" '{inputRequired:{inputRequests:$r,state:$s}}'
	else
		jq -cn --argjson r "$1" '{inputRequired:{inputRequests:$r}}'
	fi
	exit 0
}
# form MESSAGE FIELD: a form elicitation asking for one string
form() {
	jq -cn --arg m "$1" --arg f "$2" '{method:"elicitation/create",params:{mode:"form",message:$m,
		requestedSchema:{type:"object",properties:{($f):{type:"string"}},required:[$f]}}}'
}
sample() {
	jq -cn --arg t "$1" '{method:"sampling/createMessage",params:{messages:[{role:"user",
		content:{type:"text",text:$t}}],maxTokens:50}}'
}
# accepted KEY FIELD: a field of the content of an accepted elicitation
accepted() { q --arg k "$1" --arg f "$2" '.inputResponses[$k]|select(.action=="accept")|.content[$f] // empty'; }
# the exec input as the handler saw it
show() {
	jq -c '{content:[{type:"text",text:({keys:keys_unsorted,has_state:has("state"),state,
		inputResponses,legacy,principal,clientCapabilities}|tojson)}]}' <<<"$in"
	exit 0
}

name=$(q '.name // .uri')
case $(q .kind):$name in
tool:info)
	# arguments.ask: ask one question first, with a nested state
	if [ "$(q '.arguments.ask and (has("state")|not)')" = true ]; then
		need "{\"q\":$(form 'Anything?' answer)}" '{"n":1,"nested":{"a":[1,2,"ü"]},"s":"x\"y"}'
	fi
	show ;;
tool:sampling)
	r=$(q '.inputResponses.capital.content.text // empty')
	[ -n "$r" ] && text "Sampling: $r"
	need "{\"capital\":$(sample 'What is the capital of France?')}" ;;
tool:roots)
	r=$(q '.inputResponses.roots.roots // empty | map(.uri) | join(",")')
	[ -n "$r" ] && text "Roots: $r"
	need '{"roots":{"method":"roots/list"}}' ;;
tool:all3)
	n=$(accepted user_name name)
	g=$(q '.inputResponses.greeting.content.text // empty')
	r=$(q '.inputResponses.client_roots.roots // empty | length')
	if [ -n "$n" ] && [ -n "$g" ] && [ -n "$r" ] && [ "$(q '.state.t // empty')" = all3 ]; then
		text "$g $n - $r root(s)"
	fi
	need "{\"user_name\":$(form 'What is your name?' name),\"greeting\":$(sample 'Generate a greeting'),
		\"client_roots\":{\"method\":\"roots/list\",\"params\":{}}}" '{"t":"all3"}' ;;
tool:two_round)
	case $(q '.state.round // 0') in
	0) need "{\"step1\":$(form 'Step 1: what is your name?' name)}" '{"round":1}' ;;
	1)
		n=$(accepted step1 name)
		[ -n "$n" ] || need "{\"step1\":$(form 'Step 1: what is your name?' name)}" '{"round":1}'
		need "{\"step2\":$(form 'Step 2: what is your favourite colour?' color)}" \
			"$(jq -cn --arg n "$n" '{round:2,name:$n}')" ;;
	2)
		c=$(accepted step2 color)
		[ -n "$c" ] && text "$(q .state.name) likes $c"
		need "{\"step2\":$(form 'Step 2: what is your favourite colour?' color)}" "$(q -c .state)" ;;
	esac ;;
tool:shed)
	# requestState only: "call again" (load shedding)
	[ "$(q '.state.retry // false')" = true ] && text "served after a retry"
	out '{"inputRequired":{"state":{"retry":true}}}' ;;
tool:url)
	if [ "$(q '.inputResponses.login.action // empty')" = accept ] && [ "$(q '.state.login // empty')" = u1 ]; then
		text "url accepted"
	fi
	need '{"login":{"method":"elicitation/create","params":{"mode":"url","message":"Sign in to continue",
		"url":"https://auth.example.com/login?r=u1"}}}' '{"login":"u1"}' ;;
tool:url_with_id)
	need '{"a":{"method":"elicitation/create","params":{"mode":"url","message":"Open it",
		"url":"https://auth.example.com/a","elicitationId":"my-id"}},
		"b":{"method":"elicitation/create","params":{"mode":"url","message":"And this",
		"url":"https://auth.example.com/b"}}}' ;;
tool:undeclared)
	# asks for sampling whatever the client declared (conformance's test_missing_capability)
	[ -n "$(q '.inputResponses.llm_answer // empty')" ] && text "sampling round-trip complete"
	need "{\"llm_answer\":$(sample 'pong?')}" ;;
tool:careful)
	# checks the capabilities itself and falls back
	if [ "$(q '.clientCapabilities.sampling != null')" != true ]; then
		text "fallback: no sampling, answered without it"
	fi
	r=$(q '.inputResponses.s.content.text // empty')
	[ -n "$r" ] && text "sampled: $r"
	need "{\"s\":$(sample 'Say something')}" ;;
tool:bad_method) out '{"inputRequired":{"inputRequests":{"x":{"method":"tools/call","params":{}}}}}' ;;
tool:bad_requests) out '{"inputRequired":{"inputRequests":[1,2]}}' ;;
tool:bad_entry) out '{"inputRequired":{"inputRequests":{"x":"elicitation/create"}}}' ;;
tool:empty) out '{"inputRequired":{}}' ;;
tool:empty_requests) out '{"inputRequired":{"inputRequests":{}}}' ;;
tool:not_object) out '{"inputRequired":"please"}' ;;
tool:bad_mode)
	out '{"inputRequired":{"inputRequests":{"x":{"method":"elicitation/create","params":{"mode":"popup","message":"m"}}}}}' ;;
tool:no_message)
	out '{"inputRequired":{"inputRequests":{"x":{"method":"elicitation/create","params":{"requestedSchema":{"type":"object"}}}}}}' ;;
tool:no_schema)
	out '{"inputRequired":{"inputRequests":{"x":{"method":"elicitation/create","params":{"message":"m"}}}}}' ;;
tool:bad_sampling)
	out '{"inputRequired":{"inputRequests":{"x":{"method":"sampling/createMessage","params":{"messages":[]}}}}}' ;;
tool:big_state)
	jq -cn --argjson r "{\"q\":$(form 'Big?' a)}" '{inputRequired:{inputRequests:$r,state:{blob:("x"*20000)}}}'
	exit 0 ;;
prompt:ask_prompt)
	c=$(accepted user_context context)
	if [ -n "$c" ]; then
		jq -cn --arg c "$c" '{messages:[{role:"user",content:{type:"text",text:("Use the following context: "+$c)}}]}'
		exit 0
	fi
	need "{\"user_context\":$(form 'What context should the prompt use?' context)}" ;;
resource:mrtr://ask)
	c=$(accepted topic topic)
	if [ -n "$c" ]; then
		jq -cn --arg c "$c" '{contents:[{uri:"mrtr://ask",mimeType:"text/plain",text:("topic: "+$c)}]}'
		exit 0
	fi
	need "{\"topic\":$(form 'Which topic?' topic)}" '{"r":1}' ;;
completion:*)
	# completion never asks: Phantom refuses this answer
	need "{\"x\":$(form 'Which?' v)}" ;;
esac
echo "mrtr_handler: nothing for $(q .kind) $name" >&2
exit 1
