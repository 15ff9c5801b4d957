#!/bin/sh
# delete_file: deletes one file of the sandbox directory (the tool's working
# directory, examples/sandbox in conf/phantom.yaml) once the user has said
# yes to "Really delete <path>?". Nothing outside that directory can be
# named: the path is a plain file name.
#
# Round 1. The client calls delete_file {path}; the script answers
#   {"inputRequired": {"inputRequests": {"confirm": <a form elicitation>},
#                      "state": {"asked": "delete_file"}}}
# and Phantom sends the client resultType "input_required" with the state
# sealed in requestState.
# Round 2. The client calls again with the same path, inputResponses.confirm
# and the requestState. Phantom has opened it and checked that it was issued
# to the same principal, for delete_file with the same path, less than
# request_state.max_age seconds ago; the state comes back on stdin. Only then
# does "yes" delete: an answer without Phantom's sealed state is asked again.
#
# No JSON parser is needed: Phantom writes the members it vouches for first,
# in a fixed order ({"kind":"tool","name":"delete_file","state":...,
# "legacy":...,"arguments":...) and inputResponses last, and the input
# schema lets path hold only letters, digits, '.', '_' and '-'.
IFS= read -r req

# reply TEXT [error]: the tool result; TEXT holds no quotes or backslashes
reply() {
	if [ -n "${2:-}" ]; then err=',"isError":true'; else err=; fi
	printf '{"content":[{"type":"text","text":"%s"}]%s}\n' "$1" "$err"
	exit 0
}

head='{"kind":"tool","name":"delete_file",'
case $req in
"$head"'"legacy":true,'*)
	# 2025-11-25: no second round to ask in, so nothing is deleted
	reply "delete_file must ask for confirmation, which this client cannot give: nothing was deleted" error ;;
esac

path=${req#*\"arguments\":\{\"path\":\"}
[ "$path" != "$req" ] || reply "delete_file needs a path" error
path=${path%%\"*}
case $path in
'' | .* | *[!A-Za-z0-9._-]*)
	# the schema already refuses these; a script does not rely on that
	reply "delete_file takes a plain file name of the sandbox directory" error ;;
esac
if [ ! -f "./$path" ] || [ -L "./$path" ]; then
	reply "There is no file $path in the sandbox directory" error
fi

resumed=
case $req in "$head"'"state":{"asked":"delete_file"},'*) resumed=1 ;; esac
answer=
case $req in *',"inputResponses":'*) answer=${req##*,\"inputResponses\":} ;; esac

if [ -n "$resumed" ]; then
	case $answer in
	*'"confirm":{"action":"accept","content":{"confirm":"yes"}}'* | \
	*'"confirm":{"content":{"confirm":"yes"},"action":"accept"}'*)
		rm -f -- "./$path" || reply "Could not delete $path" error
		echo "delete_file: deleted $path" >&2
		reply "Deleted $path." ;;
	*'"confirm":{'*)
		reply "Not deleted: $path stays." ;;
	esac
fi

# A client that cannot be asked gets this fallback rather than -32021.
caps=${req#*\"clientCapabilities\":}
caps=${caps%%,\"meta\":*}
case $caps in
*'"elicitation":'*) ;;
*) reply "delete_file must ask for confirmation, which this client cannot give: nothing was deleted" error ;;
esac

printf '{"inputRequired":{"inputRequests":{"confirm":{"method":"elicitation/create","params":{'
printf '"mode":"form","message":"Really delete %s?","requestedSchema":{"type":"object",' "$path"
printf '"properties":{"confirm":{"type":"string","title":"Delete %s?","enum":["yes","no"]}},' "$path"
printf '"required":["confirm"]}}}},"state":{"asked":"delete_file"}}}\n'
