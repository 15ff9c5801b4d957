#!/bin/bash
# The bundled conf/phantom.yaml checks and runs from the build tree and from
# the source tree as they are, before `make install`, without
# PHANTOM_MODULE_PATH: the uninstalled phantom-fcgi finds the example module
# in its own build tree's examples/module/.libs. A copy of the same binary
# elsewhere never looks there (only PHANTOM_MODULE_PATH and the installed
# module directory).
. "${top_srcdir:-.}/tests/lib.sh"
conf=$top_srcdir/conf/phantom.yaml
exe=$(readlink -f "$PHANTOM")
[ "$exe" = "$(readlink -f "$top_builddir")/phantom-fcgi" ] || skip_all "PHANTOM is not this build tree's program"
mod=$(readlink -f "$top_builddir")/examples/module/.libs/phantom_example.so
test -f "$mod" || skip_all "the example module is not built"
out=$T_DIR/out err=$T_DIR/err

(cd "$top_builddir" && env -u PHANTOM_MODULE_PATH ./phantom-fcgi -t -c "$conf") >"$out" 2>"$err"
is "$?" 0 "from the build tree: phantom-fcgi -t -c conf/phantom.yaml passes"
like "$(cat "$err")" 'configuration OK' "from the build tree: it says configuration OK"
(cd "$top_srcdir" && env -u PHANTOM_MODULE_PATH "$exe" -t -c conf/phantom.yaml) >"$out" 2>"$err"
is "$?" 0 "from the source tree: phantom-fcgi -t -c conf/phantom.yaml passes"

# serve: a module tool and an exec tool of the bundled configuration
call() { req "$1" tools/call "{\"name\":\"$2\",\"arguments\":$3}"; }
# serve BINARY: runs the bundled configuration over stdio, one module and one
# exec tool call, and records which example module the process mapped
serve() {
	local bin=$1
	(call 1 echo '{"text":"from the tree"}'; call 2 echo_script '{"text":"shell"}'; sleep 1) |
		env -u PHANTOM_MODULE_PATH "$bin" -c "$conf" --stdio >"$out" 2>"$err" &
	local p=$!
	sleep 0.5
	# env execs the program: $p is phantom-fcgi
	grep -o '/[^ ]*phantom_example\.so' "/proc/$p/maps" 2>/dev/null | sort -u >"$T_DIR/maps"
	wait "$p"
}
serve "$exe"
is "$(sed -n 1p "$out" | jq -r '.result.content[0].text')" "from the tree" \
	"the module tool of the bundled configuration answers before make install"
like "$(sed -n 2p "$out" | jq -r '.result.content[0].text')" shell \
	"the exec tool of the bundled configuration answers"
is "$(cat "$T_DIR/maps")" "$mod" "the module came from this build tree's examples/module/.libs"

# a copy of the program is not in its build tree: no module from there
mkdir -p "$T_DIR/copy"
cp "$exe" "$T_DIR/copy/phantom-fcgi"
env -u PHANTOM_MODULE_PATH "$T_DIR/copy/phantom-fcgi" -t -c "$conf" >"$out" 2>"$err"
rc=$?
if [ "$rc" -ne 0 ]; then
	! grep -q 'examples/module/.libs' "$err"
	ok "a copied program does not look in the build tree (it reports the installed module directory)"
	like "$(cat "$err")" "module '/[^']*/phantom_example.so'" "and names the module path it tried"
else
	serve "$T_DIR/copy/phantom-fcgi"
	! grep -q 'examples/module/.libs' "$T_DIR/maps"
	ok "a copied program loads the installed module, not the build tree's ($(cat "$T_DIR/maps"))"
fi
done_testing
