#!/bin/bash
# phantom-fcgi --init where another user could reach: it writes nothing
# through a symbolic link named tools, into a directory another user can
# write (itself, or one above it), or into a tools/ another user made; it
# says why each time. A root-owned sticky directory above (as /tmp) is
# fine, and a clean --init still works. The user-to-user cases run as
# nobody beside root's files when the test runs as root.
. "${top_srcdir:-.}/tests/lib.sh"
D=$T_DIR/init
mkdir -p "$D"
chmod 0755 "$T_DIR" "$D"
init() { "$PHANTOM" --init "$@" >"$T_DIR/out" 2>&1; }
# written DIR: the names --init may have left in DIR, sorted, one line
written() { (cd "$1" && find . -mindepth 1 | sort | tr '\n' ' '); }

# ---- a symbolic link named tools
mkdir -p "$D/link/app" "$D/elsewhere"
ln -s "$D/elsewhere" "$D/link/app/tools"
init "$D/link/web" "$D/link/app"; rc=$?
is "$rc" 1 "a symbolic link named tools: refused"
is "$(written "$D/elsewhere")" "" "nothing written where the link points"
is "$(written "$D/link/app")" "./tools " "nor in the application directory"
like "$(cat "$T_DIR/out")" "tools is not a directory \(a symbolic link or a file\): not followed" "it says why"

# ---- a directory every user can write
mkdir -p "$D/open"
chmod 0777 "$D/open"
init "$D/open"; rc=$?
is "$rc:$(written "$D/open")" "1:" "a world-writable directory (0777): refused, nothing written"
like "$(cat "$T_DIR/out")" "open is writable by every user \(mode 0777\).*chmod go-w" "it says why and what to do"
mkdir -p "$D/group"
chmod 0775 "$D/group"
init "$D/group"; rc=$?
is "$rc:$(written "$D/group")" "1:" "a group-writable directory (0775): refused"
like "$(cat "$T_DIR/out")" "group is writable by its group \(mode 0775\)" "it says so"

# ---- a directory above it that every user can write (not sticky)
mkdir -p "$D/shared/mine"
chmod 0777 "$D/shared"
chmod 0755 "$D/shared/mine"
init "$D/shared/mine"; rc=$?
is "$rc:$(written "$D/shared/mine")" "1:" "a world-writable directory above (another user could rename it): refused"
like "$(cat "$T_DIR/out")" "shared is writable by every user" "it names the directory above"

# ---- a root-owned sticky directory above is fine (as /tmp)
if [ "$(id -u)" = 0 ]; then
	mkdir -p "$D/sticky"
	chmod 1777 "$D/sticky"
	init "$D/sticky/mine"; rc=$?
	is "$rc" 0 "below a root-owned sticky directory (as /tmp): written"
	is "$(stat -c %a "$D/sticky/mine/request_state.key")" 600 "the secret is 0600"
fi

# ---- a clean --init
init "$D/good"; rc=$?
is "$rc" 0 "a directory of one's own: written"
is "$(written "$D/good")" "./.htaccess ./mcp.fcgi ./phantom.yaml ./request_state.key ./tools ./tools/counter.py ./tools/hello.sh ./tools/reverse.php ./tools/stats.py " \
	"every file, in the directory and tools/"

# ---- another user's directories (needs root to be two users)
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
	as_nobody() { setpriv --reuid nobody --regid "$(id -g nobody)" --clear-groups -- "$@"; }
	mkdir -p "$D/theirs"
	chown nobody "$D/theirs"
	init "$D/theirs"; rc=$?
	is "$rc:$(written "$D/theirs")" "1:" "a directory of another user: refused"
	like "$(cat "$T_DIR/out")" "theirs belongs to another user \(uid $(id -u nobody)\)" "it says whose"
	mkdir -p "$D/pre/app"
	as_nobody true && chown nobody "$D/pre/app"
	as_nobody mkdir -m 0777 "$D/pre/app/tools"
	chown root "$D/pre/app"
	init "$D/pre/web" "$D/pre/app"; rc=$?
	is "$rc:$(written "$D/pre/app")" "1:./tools " "a tools/ another user made (0777): refused, nothing written"
	like "$(cat "$T_DIR/out")" "tools belongs to another user" "it says why"
fi
done_testing
