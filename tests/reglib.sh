# tests/reglib.sh: helpers for the registry tests (tools, prompts,
# resources, completion), on top of tests/lib.sh.

# mbody ID METHOD PARAMS: a 2026-07-28 request; CAPS (client capabilities,
# default {}) and PTOKEN (a progressToken) come from the environment
mbody() {
	local id=$1 method=$2 params=${3:-{\}}
	printf '%s' "$params" | jq -c --argjson id "$id" --arg m "$method" \
		--argjson caps "${CAPS:-{\}}" --arg tok "${PTOKEN:-}" '
		{jsonrpc:"2.0", id:$id, method:$m, params:(. + {_meta:(
			{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
			 "io.modelcontextprotocol/clientCapabilities":$caps}
			+ (if $tok == "" then {} else {progressToken:$tok} end))})}'
}

# mcall URL ID METHOD PARAMS [CURL-ARGS...]: mbody with the standard routing
# headers; sets STATUS, BODY, HEADERS like post
mcall() {
	local url=$1 id=$2 method=$3 params=${4:-{\}}
	shift 4 2>/dev/null || shift $#
	local name; name=$(printf '%s' "$params" | jq -r '.name // .uri // empty')
	local h=(-H "MCP-Protocol-Version: $MODERN" -H "Mcp-Method: $method")
	[ -n "$name" ] && h+=(-H "Mcp-Name: $name")
	post "$url" "$(mbody "$id" "$method" "$params")" "${h[@]}" "$@"
}

# lcall URL ID METHOD PARAMS: a legacy (2025-11-25) request without _meta
lcall() {
	local url=$1 id=$2 method=$3 params=${4:-{\}}
	post "$url" "$(printf '%s' "$params" | jq -c --argjson id "$id" --arg m "$method" \
		'{jsonrpc:"2.0", id:$id, method:$m, params:.}')" -H "MCP-Protocol-Version: 2025-11-25"
}

# sse_data: the JSON messages of an SSE BODY, one per line
sse_data() { printf '%s\n' "$BODY" | sed -n 's/^data: //p'; }
# final: the last JSON-RPC message of BODY (the response, SSE or JSON)
final() {
	if printf '%s' "$BODY" | grep -q '^data: '; then sse_data | tail -1; else printf '%s' "$BODY"; fi
}
# fjq FILTER: jq on the final message
fjq() { final | jq -r "$1"; }

# descendants PID: every process below PID (not PID itself)
descendants() {
	local p
	for p in $(ps -o pid= --ppid "$1" 2>/dev/null); do
		echo "$p"
		descendants "$p"
	done
}
# zombies_below PID: how many zombie processes sit below PID
zombies_below() {
	local n=0 p
	for p in $(descendants "$1"); do
		[ "$(ps -o stat= -p "$p" 2>/dev/null | cut -c1)" = Z ] && n=$((n + 1))
	done
	echo "$n"
}
# extra_below PID COMM: processes named COMM below PID (left-over handlers)
count_below() {
	local n=0 p
	for p in $(descendants "$1"); do
		[ "$(ps -o comm= -p "$p" 2>/dev/null)" = "$2" ] && n=$((n + 1))
	done
	echo "$n"
}
# phantom_up CONF [ARGS...]: phantom_listen, tried again when the free port
# was taken in the meantime (other test runs share the machine)
phantom_up() {
	local i
	for i in 1 2 3; do
		phantom_listen "$@" 2>/dev/null && return 0
		grep -q "Address already in use" "$PH_LOG" 2>/dev/null || break
	done
	phantom_listen "$@"
}
