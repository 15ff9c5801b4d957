#!/bin/bash
# A handler's own cache hints (issue 30): an exec, a persistent and a
# module handler, each for a tool and for a resource (a template), answer
# ttlMs and cacheScope (the module through phantom_result_cache); the
# client gets them capped by the configuration: the smaller TTL wins,
# "private" from the configuration, an allow-list or the handler wins, a
# hint out of range is logged and ignored; 2025-11-25 results carry none.
# Over stdio, modern and legacy requests in one process.
. "${top_srcdir:-.}/tests/lib.sh"
export PHANTOM_MODULE_PATH=$top_builddir/tests/modules/.libs
H=$top_srcdir/tests/handlers/cached.py
# conf FILE [AUTH LINES]
conf() {
	cat >"$1" <<YAML
server: { name: cache-hints, version: "1.0", ttl_ms: 60000, scope: public }
stdio: { concurrency: 1 }
${2-}
tools:
  - { name: exec, input: {ttl: string, scope: string}, exec: [$H] }
  - { name: persistent, input: {ttl: string, scope: string}, exec: [$H, --persistent], persistent: true }
  - { name: module, input: {ttl: string, scope: string}, module: testmod.so, symbol: cached }
resource_templates:
  - { uri_template: "exec://{ttl}/{scope}", name: e, exec: [$H] }
  - { uri_template: "persistent://{ttl}/{scope}", name: p, exec: [$H, --persistent], persistent: true }
  - { uri_template: "module://{ttl}/{scope}", name: m, module: testmod.so, symbol: cached }
  - { uri_template: "narrow://{ttl}/{scope}", name: n, exec: [$H], ttl_ms: 2000, scope: private }
YAML
}
conf "$T_DIR/phantom.yaml"
conf "$T_DIR/allow.yaml" 'auth: { mode: none, stdio_principal: sam, allow: { sam: { tools: ["*"] } } }'
"$PHANTOM" -t -c "$T_DIR/phantom.yaml" >"$T_DIR/t.out" 2>&1; ok "the configuration is valid"

n=0
# ask KIND TTL SCOPE: a modern tools/call of tool KIND, or resources/read of
# KIND://TTL/SCOPE when KIND ends in "://"
lines=()
ask() {
	local k=$1 params method
	n=$((n + 1))
	case $k in
	*://) method=resources/read; params="{\"uri\":\"$k$2/$3\"}" ;;
	*) method=tools/call; params="{\"name\":\"$k\",\"arguments\":{\"ttl\":\"$2\",\"scope\":\"$3\"}}" ;;
	esac
	lines+=("$(req "$n" "$method" "$params")")
}
# serve CONF: the asked lines through one stdio process, answers in $T_DIR/out
serve() {
	printf '%s\n' "${lines[@]}" | "$PHANTOM" -c "$1" --stdio >"$T_DIR/out" 2>>"$T_DIR/err"
	lines=()
}
hints() { jq -r --argjson id "$1" 'select(.id == $id) | .result | "\(.ttlMs) \(.cacheScope)"' "$T_DIR/out"; }

for k in exec persistent module exec:// persistent:// module://; do
	first=$((n + 1))
	ask "$k" 5000 public   # within the configuration: as the handler says
	ask "$k" 90000 public  # over server.ttl_ms 60000: capped
	ask "$k" 100 private   # the handler narrows the scope
	ask "$k" 300 -         # a TTL alone: the configured scope
	ask "$k" - -           # none: the configured hints (a tool: none at all)
	serve "$T_DIR/phantom.yaml"
	is "$(hints $first)" "5000 public" "$k: a handler's ttlMs 5000 public reaches the client"
	is "$(hints $((first + 1)))" "60000 public" "$k: ttlMs 90000 is capped to server.ttl_ms 60000"
	is "$(hints $((first + 2)))" "100 private" "$k: the handler's private narrows the public configuration"
	is "$(hints $((first + 3)))" "300 public" "$k: a ttlMs alone gets the configured scope"
	case $k in
	*://) want="60000 public" ;;
	*) want="null null" ;;
	esac
	is "$(hints $((first + 4)))" "$want" "$k: without hints from the handler, as before ($want)"
done

# the configuration narrowed: a template with ttl_ms 2000 and scope private
first=$((n + 1))
ask narrow:// 5000 public
ask narrow:// 500 public
serve "$T_DIR/phantom.yaml"
is "$(hints $first)" "2000 private" "a template's ttl_ms 2000 and scope private cap a handler's 5000 public"
is "$(hints $((first + 1)))" "500 private" "  a lower TTL passes, the scope stays private"

# an allow-list forces private whatever the handler says
first=$((n + 1))
ask exec 5000 public
ask module:// 5000 public
serve "$T_DIR/allow.yaml"
is "$(hints $first)" "5000 private" "with an allow-list (auth.allow): a tool's public becomes private"
is "$(hints $((first + 1)))" "5000 private" "  and a resource's"

# out of range: logged and ignored
first=$((n + 1))
ask exec 99999999999 public
ask exec:// 5 shared
serve "$T_DIR/phantom.yaml"
is "$(hints $first)" "60000 public" "a ttlMs over 86400000 is ignored (the configured TTL, the handler's scope)"
is "$(hints $((first + 1)))" "5 public" "a cacheScope other than public or private is ignored"
grep -q 'ttlMs must be an integer from 0 to 86400000; ignored' "$T_DIR/err"; ok "  the log says why (ttlMs)"
grep -q 'cacheScope must be "public" or "private"; ignored' "$T_DIR/err"; ok "  the log says why (cacheScope)"

# 2025-11-25: no hints at all
INIT='{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
lines=("$INIT")
for k in exec persistent module; do
	n=$((n + 1))
	lines+=("{\"jsonrpc\":\"2.0\",\"id\":$n,\"method\":\"tools/call\",\"params\":{\"name\":\"$k\",\"arguments\":{\"ttl\":\"5000\",\"scope\":\"public\"}}}")
	n=$((n + 1))
	lines+=("{\"jsonrpc\":\"2.0\",\"id\":$n,\"method\":\"resources/read\",\"params\":{\"uri\":\"$k://5000/public\"}}")
done
serve "$T_DIR/phantom.yaml"
is "$(jq -s '[.[] | select(.id != "i") | .result | select(.ttlMs != null or .cacheScope != null)] | length' "$T_DIR/out")" 0 \
	"2025-11-25: tool and resource results of the three handler kinds carry no hints"
is "$(jq -s '[.[] | select(.id != "i") | .result | select(.content != null or .contents != null)] | length' "$T_DIR/out")" 6 \
	"  and are served"
done_testing
