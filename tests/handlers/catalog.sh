#!/bin/bash
# catalog.sh MODE [SIZE]: a resource list handler (resource_lists:) for the
# tests. It reads {kind, cursor, limit, principal, assigns, ...} on stdin
# and pages a catalogue of SIZE studies (default 1000), study://N, with its
# own cursor: the next offset as a decimal string.
#   ok       the catalogue; the principal "bob" sees only even studies
#   junk     entries that break every rule, between two good ones
#   fail     exits 3
#   slow     sleeps longer than any test timeout
#   garbage  writes something that is not JSON
#   record   the ok catalogue, and appends the stdin document to the file $3
#   over     the ok catalogue in pages of $3 entries whatever the limit
mode=${1:-ok} size=${2:-1000} step=null
in=$(cat)
case $mode in
fail) echo "catalog: failing on purpose" >&2; exit 3 ;;
slow) sleep 30; exit 0 ;;
garbage) echo 'this is not JSON'; exit 0 ;;
junk)
	printf '%s' '{"resources":[{"uri":"study://good-1","name":"good 1"},'
	printf '%s' '"a string",{"name":"no uri"},{"uri":"no scheme","name":"x"},{"uri":"skill://a/SKILL.md","name":"x"},'
	printf '%s' '{"uri":"study://bad-size","name":"x","size":-1},{"uri":"study://bad-mime","name":"x","mimeType":"text"},'
	printf '%s' '{"uri":"study://no-name"},{"uri":"study://good-2","name":"good 2","secret":"dropped"}]}'
	exit 0 ;;
record) printf '%s\n' "$in" >>"$3" ;;
over) step=$3 ;;
esac
jq -c --argjson size "$size" --argjson step "$step" '
	((.cursor // "0") | tonumber) as $o | ($step // .limit) as $l | ([$o + $l, $size] | min) as $stop |
	(.principal == "bob") as $even |
	{resources: [range($o; $stop) | select(($even | not) or (. % 2 == 0)) |
		{uri: "study://\(.)", name: "study-\(.)", mimeType: "application/json",
		 description: "Study \(.)", size: 100}]}
	+ (if $stop < $size then {nextCursor: "\($stop)"} else {} end)' <<<"$in"
