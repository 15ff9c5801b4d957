#!/bin/bash
# The static phantom-fcgi (make static): one file that needs no shared
# library. It passes the dynamic build's smoke checks (stdio with the SDK
# client; FastCGI behind nginx with every HTTP rule), refuses what a static
# program cannot do at -t and at start (C modules, host names in listen:
# and --listen, user and group names in listen_owner and listen_group), and
# `make dist-static` packs it with what a hosting user needs, also in a tree
# configured in the sources (./configure; make dist-static).
. "${top_srcdir:-.}/tests/lib.sh"
# bail WHAT: a failed step the rest needs: one "not ok", then the end
bail() { T_N=$((T_N + 1)); T_FAIL=$((T_FAIL + 1)); echo "not ok $T_N - $1"; done_testing; exit 1; }

static_phantom || { echo "not ok 1 - make static builds static/phantom-fcgi"; exit 1; }
[ -x "$STATIC" ]; ok "make static builds static/phantom-fcgi"
like "$(ldd "$STATIC" 2>&1 | tr -d '[:space:]')" '^(notadynamicexecutable|staticallylinked)$' "ldd: not a dynamic executable, or statically linked (a static PIE)"
static_elf "$STATIC"
ok "no program interpreter and no shared library needed"
if readelf -hW "$STATIC" | grep -q 'Type:.*DYN'; then
	like "$("$STATIC" -V)" 'static build \(static PIE\)' "-V says it is a static PIE (ASLR)"
else
	like "$("$STATIC" -V)" 'static build \(static, not PIE\)' "-V says it is not a PIE"
fi
if pkg-config --exists libssl libcares libcrypto 2>/dev/null; then
	like "$("$STATIC" -V)" 'OAuth: yes, HTTP client: OpenSSL HTTP, c-ares' "-V says OAuth is in, with OpenSSL's HTTP client"
fi
like "$("$STATIC" -V)" '^phantom-fcgi [0-9.]+ .*static build' "-V says it is the static build"
like "$("$STATIC" -V)" 'numeric addresses and user and group ids only' "... and that it takes numbers for addresses, users and groups"
unlike_dyn=$("$PHANTOM" -V)
case $unlike_dyn in *static*) false ;; esac; ok "the dynamic build's -V does not"

# ---- what it refuses, at -t and at start ----------------------------------------
mkdir -p "$T_DIR/app"
nap_tool "$T_DIR/app"
test_conf "$T_DIR/module.yaml" static-test 'tools:' \
	'  - {name: echo, module: phantom_example.so, symbol: echo}'
out=$("$STATIC" -t -c "$T_DIR/module.yaml" 2>&1); rc=$?
is "$rc" 1 "-t refuses a module tool"
like "$out" "module.yaml:[0-9]+: .*module 'phantom_example.so': this phantom-fcgi is the static build" \
	"-t names the file, the line and why"
port=$(free_port)
out=$(timeout 5 "$STATIC" -c "$T_DIR/module.yaml" --listen "127.0.0.1:$port" 2>&1); rc=$?
is "$rc" 1 "a module tool: start refused (exit 1, nothing served)"
like "$out" "cannot start" "start says it cannot"
! port_open "$port"; ok "nothing listened"

test_conf "$T_DIR/named.yaml" static-test "listen: localhost:$port"
out=$("$STATIC" -t -c "$T_DIR/named.yaml" 2>&1); rc=$?
is "$rc" 1 "-t refuses a host name in listen:"
like "$out" "named\\.yaml:3: listen: cannot listen on 'localhost:$port': the static build does not look names up.*127\\.0\\.0\\.1" \
	"-t says why and what to give instead, at the line of listen: (3)"
"$PHANTOM" -t -c "$T_DIR/named.yaml" >/dev/null 2>&1; ok "the dynamic build takes the same file"
test_conf "$T_DIR/plain.yaml" static-test
out=$(timeout 5 "$STATIC" -c "$T_DIR/plain.yaml" --listen "localhost:$port" 2>&1); rc=$?
is "$rc" 1 "--listen localhost:PORT: start refused"
like "$out" "cannot listen on 'localhost:$port': the static build does not look names up" "and says why"
# -t with --listen checks it as the start does
out=$("$STATIC" -t -c "$T_DIR/plain.yaml" --listen "localhost:$port" 2>&1); rc=$?
is "$rc" 1 "-t --listen localhost:PORT: refused as the start refuses it"
like "$out" "^phantom-fcgi: --listen: cannot listen on 'localhost:$port': the static build does not look names up" \
	"-t says why"
! grep -q "configuration OK" <<<"$out"; ok "-t does not say the configuration is OK"
"$STATIC" -t -c "$T_DIR/plain.yaml" --listen "127.0.0.1:$port" >/dev/null 2>&1; ok "-t --listen 127.0.0.1:PORT passes"
"$PHANTOM" -t -c "$T_DIR/plain.yaml" --listen "localhost:$port" >/dev/null 2>&1
ok "the dynamic build's -t takes --listen localhost:PORT"
out=$("$PHANTOM" -t -c "$T_DIR/plain.yaml" --listen "localhost" 2>&1); rc=$?
is "$rc/$(grep -c 'phantom-fcgi: --listen: bad listen address' <<<"$out")" 1/1 \
	"the dynamic build's -t refuses --listen without a port, as its start does"
test_conf "$T_DIR/numeric.yaml" static-test "listen: \"[::1]:$port\""
"$STATIC" -t -c "$T_DIR/numeric.yaml" >/dev/null 2>&1; ok "-t takes a numeric address ([::1]:PORT)"
# the socket's owner and group: numbers only, the static build has no NSS
test_conf "$T_DIR/group.yaml" static-test "listen: unix:$T_DIR/g.sock" 'listen_group: root'
out=$("$STATIC" -t -c "$T_DIR/group.yaml" 2>&1); rc=$?
is "$rc" 1 "-t refuses a group name in listen_group"
like "$out" "group\\.yaml:4: listen_group: group 'root': the static build does not look names up.*give the number" \
	"-t says why and what to give instead, at the line of the key (4)"
"$PHANTOM" -t -c "$T_DIR/group.yaml" >/dev/null 2>&1; ok "the dynamic build takes the same file"
test_conf "$T_DIR/gid.yaml" static-test "listen: unix:$T_DIR/g.sock" 'listen_group: "0"' 'listen_owner: 0'
"$STATIC" -t -c "$T_DIR/gid.yaml" >/dev/null 2>&1; ok "-t takes listen_owner and listen_group as numbers"

# ---- the smoke checks of the dynamic build ------------------------------------
test_conf "$T_DIR/phantom.yaml" static-test 'workers: 2' 'tools:' \
	"  - {name: hello, exec: [$top_srcdir/examples/hosting/tools/hello.sh]}" \
	"  - {name: nap, exec: [$T_DIR/app/nap.sh]}"
if node_setup; then
	node_client sdk-v2.mjs --stdio "$STATIC" --arg -c --arg "$T_DIR/phantom.yaml" --arg --stdio \
		--era auto --expect-era modern --name static-test --call hello --args '{}' --expect 'Hello, world!'
else
	diag "npm packages missing: SDK stdio check skipped"
fi
PHANTOM=$STATIC phantom_unix "$T_DIR/phantom.yaml" || bail "static phantom starts"
nginx_start "$PH_BACKEND" || bail "nginx starts"
http_rule_checks "$NGINX_URL" static-test
workers_are "$PH_PID" 2 "the static master runs its two workers"
like "$(hub_of "$PH_PID")" '^[0-9]+$' "and its hub"
is "$(grep -c '\.so' "/proc/$PH_PID/maps")" 0 "the running master maps no shared object"
naps_at_once "$NGINX_URL" "$PH_LOG" "static behind nginx"

# ---- the release archive -------------------------------------------------------
tgz=$(flock "$top_builddir/.static.lock" env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s --no-print-directory -C "$top_builddir" dist-static 2>"$T_DIR/dist.err" | tail -1)
like "$tgz" '^phantom-[0-9.]+-static-[a-z0-9_]+\.tar\.gz$' "make dist-static makes the archive"
mkdir -p "$T_DIR/x"
tar -xzf "$top_builddir/$tgz" -C "$T_DIR/x"; ok "the archive unpacks"
is "$(ls -A "$T_DIR/x")" phantom "... as phantom/, one directory"
d=$T_DIR/x/phantom
grep -q "so that it is ~/phantom" "$d/README" && grep -q "unpacks as the directory phantom/" "$d/README"
ok "... which its README names (~/phantom)"
for f in bin/phantom-fcgi man/phantom-fcgi.8 man/phantom.yaml.5 man/phantom-skills.5 conf/htaccess \
	conf/mcp.fcgi starter/phantom.yaml starter/tools/hello.sh starter/tools/reverse.php \
	starter/tools/stats.py starter/tools/counter.py README; do
	[ -s "$d/$f" ]; ok "the archive holds $f"
done
static_elf "$d/bin/phantom-fcgi"; ok "its binary is the static one"
cmp -s "$d/conf/htaccess" "$top_srcdir/conf/htaccess"; ok "its conf/htaccess is the shipped one"
# the README's way to make the secret for the starter copied by hand
grep -q "od -An -vtx1" "$d/README"; ok "the README says how to make the secret"
(cd "$d/starter" && head -c 32 /dev/urandom | od -An -vtx1 | tr -d ' \n' >request_state.key &&
	chmod 600 request_state.key)
out=$("$d/bin/phantom-fcgi" -t -c "$d/starter/phantom.yaml" 2>&1)
like "$out" "configuration OK" "the archive's starter configuration checks"
rm -f "$top_builddir/$tgz"

# ---- in the sources: ./configure there, then make dist-static -----------------
# (a clean copy of the sources, as make distdir gives them: one more static
# build, some 20 s on 2 cores)
src=$T_DIR/intree
flock "$top_builddir/.static.lock" env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$top_builddir" \
	distdir distdir="$src" top_distdir="$src" >"$T_DIR/distdir.log" 2>&1 || bail "make distdir copies the sources"
(cd "$src" && ./configure -q >"$T_DIR/intree-configure.log" 2>&1) || bail "./configure in the sources"
tgz=$(cd "$src" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s --no-print-directory dist-static \
	2>"$T_DIR/intree.err" | tail -1)
like "$tgz" '^phantom-[0-9.]+-static-[a-z0-9_]+\.tar\.gz$' "configured in the sources, make dist-static makes the archive"
[ -s "$src/$tgz" ]; ok "... there"
static_elf "$src/static/phantom-fcgi"; ok "... of a static binary"
n=$(cd "$src" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make dist-static 2>&1 | grep -c '^ *CC ')
is "$n" 0 "a second make dist-static compiles nothing again"
rm -rf "$src" # its tests name the sanitizers' reports, which done_testing looks for
done_testing
