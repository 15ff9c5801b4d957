#!/bin/bash
# The Debian package, end to end, as root: dpkg-buildpackage -us -uc -b in a
# copy of the source tree, lintian without errors, dpkg -i, then the
# INSTALLED phantom-fcgi with the INSTALLED /etc/phantom/phantom.yaml, as the
# phantom user, on a socket passed the way phantom.socket passes it
# (systemd-socket-activate: no systemd runs here), behind the real nginx:
# a module tool, an exec tool, a resource and the skills answer. The units
# pass systemd-analyze verify, libphantom-dev builds a module with
# pkg-config, and dpkg --purge removes everything again.
# Takes about 20 s on a 2-core machine (the build dominates).
. "${top_srcdir:-.}/tests/lib.sh"
# the installed server finds its installed modules, not the build tree's
unset PHANTOM_MODULE_PATH
[ "$(id -u)" = 0 ] || skip_all "needs root (dpkg -i)"
[ -f "$top_srcdir/debian/control" ] || skip_all "no debian/ in this tree (a dist tarball)"
for t in dpkg-buildpackage dh lintian fakeroot systemd-socket-activate systemd-analyze nginx setpriv; do
	command -v "$t" >/dev/null || skip_all "$t not installed"
done
if dpkg -s phantom-fcgi >/dev/null 2>&1 || dpkg -s libphantom-dev >/dev/null 2>&1; then
	skip_all "phantom-fcgi or libphantom-dev is installed already: not ours to purge"
fi
dpkg-checkbuilddeps "$top_srcdir/debian/control" >/dev/null 2>&1 || skip_all "build dependencies missing"

# ---- build ----------------------------------------------------------------------
# The copy holds the files git knows (tracked or not ignored), without any
# configured build directory, as a fresh checkout would.
src=$T_DIR/pkg/phantom
mkdir -p "$src"
(
	cd "$top_srcdir" || exit 1
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git ls-files -co --exclude-standard
	else
		find . -type f ! -path './.git/*' | sed 's#^\./##'
	fi | while IFS= read -r f; do
		d=${f%%/*}
		[ "$d" != "$f" ] && [ -e "$d/config.status" ] && continue
		[ -e "$f" ] && printf '%s\n' "$f"
	done | tar -cf - -T -
) | tar -xf - -C "$src"
test -f "$src/debian/rules"; ok "the source tree is copied (without build directories)"

start=$(date +%s)
(cd "$src" && DEB_BUILD_OPTIONS="parallel=2 nocheck" dpkg-buildpackage -us -uc -b) \
	>"$T_DIR/build.log" 2>&1
rc=$?
is "$rc" 0 "dpkg-buildpackage -us -uc -b builds ($(( $(date +%s) - start )) s)"
[ "$rc" = 0 ] || { tail -40 "$T_DIR/build.log" | sed 's/^/#   /'; done_testing; exit 1; }
# the copied tree holds test sources that done_testing's log scan would read
rm -rf "$src"
debs=("$T_DIR"/pkg/phantom-fcgi_*.deb "$T_DIR"/pkg/libphantom-dev_*.deb)
test -f "${debs[0]}" && test -f "${debs[1]}"; ok "it makes phantom-fcgi and libphantom-dev"

lintian "$T_DIR"/pkg/phantom_*.changes >"$T_DIR/lintian.out" 2>&1
sed 's/^/# lintian: /' "$T_DIR/lintian.out" | grep -v 'root privileges'
is "$(grep -c '^E:' "$T_DIR/lintian.out")" 0 "lintian reports no error"

# ---- install --------------------------------------------------------------------
T_CLEANUP+=("dpkg --purge phantom-fcgi libphantom-dev")
dpkg -i "${debs[@]}" >"$T_DIR/install.log" 2>&1
is "$?" 0 "dpkg -i installs both packages"
[ -x /usr/bin/phantom-fcgi ]; ok "/usr/bin/phantom-fcgi is installed"
like "$(dpkg-query -W -f='${Conffiles}' phantom-fcgi)" '/etc/phantom/phantom.yaml [0-9a-f]{32}' \
	"/etc/phantom/phantom.yaml is a conffile"
getent passwd phantom >/dev/null; ok "the phantom system user exists"
is "$(stat -c %U "/var/lib/phantom/sandbox" 2>/dev/null)" phantom "/var/lib/phantom/sandbox belongs to phantom"
man -w phantom-fcgi >/dev/null 2>&1 && man -w 5 phantom.yaml >/dev/null 2>&1
ok "the man pages phantom-fcgi(8) and phantom.yaml(5) are installed"
out=$(systemd-analyze verify --man=no /lib/systemd/system/phantom.socket \
	/lib/systemd/system/phantom.service 2>&1); rc=$?
is "$rc/$out" "0/" "systemd-analyze verify accepts phantom.socket and phantom.service"
grep -q '^ExecReload=/bin/kill -HUP \$MAINPID' /lib/systemd/system/phantom.service
ok "phantom.service reloads with SIGHUP"

as_phantom() { setpriv --reuid phantom --regid phantom --init-groups -- "$@"; }
out=$(cd / && as_phantom /usr/bin/phantom-fcgi -t -c /etc/phantom/phantom.yaml 2>&1); rc=$?
is "$rc" 0 "the installed configuration passes -t as the phantom user"
[ "$rc" = 0 ] || printf '%s\n' "$out" | sed 's/^/#   /'

# ---- serve ----------------------------------------------------------------------
port=$(free_port)
PH_LOG=$T_DIR/installed.log
(cd /var/lib/phantom && exec setpriv --reuid phantom --regid phantom --init-groups -- \
	systemd-socket-activate -l "127.0.0.1:$port" -- \
	/usr/bin/phantom-fcgi -c /etc/phantom/phantom.yaml) 2>"$PH_LOG" &
PH_PID=$!
t_started phantom "$PH_PID" "$PH_LOG" port_open "$port" || { echo "not ok $((T_N + 1)) - phantom starts"; exit 1; }
nginx_start "127.0.0.1:$port" || { echo "not ok $((T_N + 1)) - nginx starts"; exit 1; }
U=$NGINX_URL
mpost "$U" 1 tools/call '{"name":"echo","arguments":{"text":"installed"}}'
is "$STATUS/$(jqr '.result.content[0].text')" 200/installed \
	"nginx: the module tool echo of the installed configuration answers"
mpost "$U" 2 tools/call '{"name":"host_info","arguments":{}}'
is "$STATUS/$(jqr '.result.structuredContent.hostname')" "200/$(hostname)" \
	"nginx: the exec tool host_info (an installed script) answers"
mpost "$U" 3 resources/read '{"uri":"docs://index"}'
like "$(jqr '.result.contents[0].text')" '[A-Za-z]' "nginx: the resource docs://index (an installed file) is read"
mpost "$U" 4 server/discover '{}'
like "$(jqr '.result.capabilities.extensions | keys | join(" ")')" skills \
	"nginx: the installed example skills are served"
is "$(ps -o user= -p "$PH_PID" | tr -d ' ')" phantom "the server runs as the phantom user"
workers_are "$PH_PID" 4 "the installed configuration's 4 workers serve the passed socket"
kill "$PH_PID"
wait "$PH_PID"; is "$?" 0 "SIGTERM stops the installed server with status 0"

# libphantom-dev: a module builds against the installed header with pkg-config
# shellcheck disable=SC2046
cc -shared -fPIC -o "$T_DIR/mod.so" "$top_srcdir/examples/module/phantom_example.c" \
	$(pkg-config --cflags phantom) >"$T_DIR/cc.log" 2>&1
ok "libphantom-dev: a module builds with pkg-config --cflags phantom"
pkg-config --libs phantom | grep -q -- '-lphantom'; ok "libphantom-dev: pkg-config --libs phantom gives -lphantom"

# ---- purge ----------------------------------------------------------------------
dpkg --purge phantom-fcgi libphantom-dev >"$T_DIR/purge.log" 2>&1
is "$?" 0 "dpkg --purge removes both packages"
! [ -e /usr/bin/phantom-fcgi ] && ! [ -e /etc/phantom/phantom.yaml ] && ! [ -e /var/lib/phantom ] &&
	! [ -e /usr/include/phantom.h ]
ok "nothing is left: binary, conffile, state directory and header are gone"
done_testing
