#!/bin/bash
# assigns_tool.sh: an exec tool for the assigns tests (assigns.sh,
# assigns_module.sh): answers with the assigns it was given; the tool
# "twice" first asks for input, then names the principal and its plan.
in=$(cat)
if [ "$(jq -r '.state // empty | .round' <<<"$in")" = 1 ]; then
	jq -c '{content: [{type: "text", text: "retried for \(.principal) on \(.assigns.plan)"}]}' <<<"$in"
elif [ "$(jq -r .name <<<"$in")" = twice ]; then
	echo '{"inputRequired":{"state":{"round":1}}}'
else
	jq -c '{content: [{type: "text", text: (.assigns | tojson)}]}' <<<"$in"
fi
