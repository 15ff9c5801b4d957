#!/bin/bash
# A shared-hosting customer: an unprivileged user (made here) with a home,
# ~/public_html and the static phantom-fcgi in ~/bin, runs `phantom-fcgi
# --init` and nothing else. Apache (the shipped conf/apache-fcgid.conf: its
# UserDir part) serves ~user/ with the user's .htaccess, and suEXEC runs
# mcp.fcgi as that user, first under mod_fcgid, then as plain CGI. Apache
# runs in a mount namespace where Phantom's four libraries are empty files,
# as a hoster's cage lacks them; the SDK client calls the sh, PHP, Python and
# persistent Python tools through it, and the configuration, the secret and
# the tools cannot be downloaded.
. "${top_srcdir:-.}/tests/lib.sh"
# bail WHAT: a failed step the rest needs: one "not ok", then the end
bail() { T_N=$((T_N + 1)); T_FAIL=$((T_FAIL + 1)); echo "not ok $T_N - $1"; done_testing; exit 1; }
[ -n "$T_ROOT" ] || skip_all "needs root (a user of its own, suEXEC, a mount namespace)"
command -v apache2 >/dev/null || skip_all "apache2 not installed"
for m in fcgid userdir suexec cgid; do
	[ -e "/usr/lib/apache2/modules/mod_$m.so" ] || skip_all "mod_$m missing"
done
[ -u "$(readlink -f /usr/lib/apache2/suexec)" ] || skip_all "suEXEC missing (apache2-suexec-pristine)"
for c in useradd userdel unshare nsenter runuser ldconfig flock php python3 readelf; do
	command -v "$c" >/dev/null || skip_all "$c missing"
done
node_setup || skip_all "npm packages missing (scripts/test.sh installs them)"
. "$top_srcdir/tests/oauth-lib.sh"

static_phantom || { echo "not ok 1 - make static"; exit 1; }

# ---- the customer --------------------------------------------------------------
U=phhost$$
home=$T_DIR/home/$U
mkdir -p "$T_DIR/home" && chmod 0755 "$T_DIR/home"
useradd -M -U -d "$home" -s /bin/sh "$U" || { echo "not ok 1 - useradd $U"; exit 1; }
# its processes (Phantom under mod_fcgid) by pid, then the user and its group
T_CLEANUP+=("for p in \$(pgrep -u $U); do kill -9 \$p; done; sleep 0.2; userdel -f $U")
mkdir -p "$home/bin" "$home/public_html"
cp "$STATIC" "$home/bin/phantom-fcgi"
chown -R "$U:$U" "$home"
chmod 0711 "$home" && chmod 0755 "$home/bin" "$home/public_html"
as_user() { runuser -u "$U" -- "$@"; }
web=$home/public_html/mcp

# ---- phantom-fcgi --init --------------------------------------------------------
out=$(cd "$home" && as_user env USER="$U" "$home/bin/phantom-fcgi" --init "$web" 2>&1); rc=$?
is "$rc" 0 "--init in a fresh web directory succeeds (and its configuration checks)"
like "$out" 'URL to try.*' "--init prints the URL to try"
like "$out" "https://example.com/mcp/mcp" "the URL is the directory's, below public_html"
like "$out" "https://example.com/~$U/mcp/mcp" "and its UserDir form"
curl_line=$(grep '^  curl ' <<<"$out")
like "$curl_line" "^  curl -s https://example.com/mcp/mcp .*tools/list" "--init prints a curl line"
is "$(cd "$web" && ls -A | tr '\n' ' ')" ".htaccess mcp.fcgi phantom.yaml request_state.key tools " \
	"it wrote .htaccess, mcp.fcgi, phantom.yaml, the secret and tools/"
is "$(ls "$web/tools" | tr '\n' ' ')" "counter.py hello.sh reverse.php stats.py " "four tools: sh, PHP, Python, persistent Python"
is "$(stat -c '%a %U' "$web/request_state.key")" "600 $U" "the secret is the user's, mode 0600"
grep -Eqx '[0-9a-f]{64}' "$web/request_state.key"; ok "the secret is 32 bytes in hex"
key1=$(cat "$web/request_state.key")
is "$(stat -c '%a %U' "$web/mcp.fcgi")" "755 $U" "mcp.fcgi is the user's and executable"
grep -qxF "exec '$home/bin/phantom-fcgi' -c '$web/phantom.yaml'" "$web/mcp.fcgi"
ok "mcp.fcgi starts the real binary with the real configuration"
cmp -s "$web/.htaccess" "$top_srcdir/conf/htaccess"; ok "the .htaccess is the shipped conf/htaccess"

out=$(as_user "$home/bin/phantom-fcgi" --init "$web" 2>&1); rc=$?
is "$rc" 1 "--init again: refused"
like "$out" "request_state.key exists: not overwritten" "it names the files that exist"
is "$(cat "$web/request_state.key")" "$key1" "the secret is untouched"
as_user mkdir "$home/public_html/part"
as_user touch "$home/public_html/part/mcp.fcgi"
out=$(as_user "$home/bin/phantom-fcgi" --init "$home/public_html/part" 2>&1); rc=$?
is "$rc/$(ls -A "$home/public_html/part" | tr '\n' ' ')" "1/mcp.fcgi " \
	"one file in the way: refused, nothing written"
like "$out" "nothing written" "and it says so"
out=$(as_user "$home/bin/phantom-fcgi" --init "$home/public_html/no/such" 2>&1); rc=$?
is "$rc" 1 "--init below a directory that does not exist: refused"
like "$out" "cannot make $home/public_html/no/such: No such file or directory" "and says why"
out=$(as_user "$home/bin/phantom-fcgi" --init "$home/public_html/it's" 2>&1); rc=$?
is "$rc" 1 "a path with a quote (it goes into mcp.fcgi): refused"
[ ! -e "$home/public_html/it's" ]; ok "and nothing made"
like "$out" "quote or newline is not supported" "and says why"
as_user "$home/bin/phantom-fcgi" --init a b c >/dev/null 2>&1
is "$?" 2 "--init with two directories after it is a usage error"
# the configuration, secret and tools outside the web root
app=$home/mcp-app
out=$(as_user "$home/bin/phantom-fcgi" --init "$home/public_html/outside" "$app" 2>&1); rc=$?
is "$rc" 0 "--init with the application outside the web root"
is "$(ls -A "$home/public_html/outside" | tr '\n' ' ')" ".htaccess mcp.fcgi " "the web directory holds only .htaccess and mcp.fcgi"
is "$(ls -A "$app" | tr '\n' ' ')" ".htaccess phantom.yaml request_state.key tools " \
	"the application directory the rest, and an .htaccess refusing everything"
grep -qxF "exec '$home/bin/phantom-fcgi' -c '$app/phantom.yaml'" "$home/public_html/outside/mcp.fcgi"
ok "that mcp.fcgi names the configuration outside"

# ---- the hoster's cage: Phantom's libraries hidden ------------------------------
# Each of the four shared libraries the dynamic build needs becomes an empty
# file in a private mount namespace that Apache and everything it starts
# live in. PHP links libsodium itself: it finds a copy through the cage's own
# library cache, as a hoster's PHP finds its libraries; the dynamic
# phantom-fcgi then cannot start there, the static one does not care.
cage=$T_DIR/cage
mkdir -p "$cage/lib"
: >"$cage/empty"
libs=$(ldd "$PHANTOM" | awk '/lib(fcgi|json-c|yaml-0|sodium)\.so/ { print $3 }' | xargs -r readlink -f | tr '\n' ' ')
is "$(wc -w <<<"$libs")" 4 "the dynamic build needs four libraries: $(echo $libs | xargs -n1 basename | tr '\n' ' ')"
cp "$(ldd "$(readlink -f "$(command -v php)")" | awk '/libsodium/ { print $3 }')" "$cage/lib/"
printf '%s\ninclude /etc/ld.so.conf.d/*.conf\n' "$cage/lib" >"$cage/ld.so.conf"
cat >"$cage/cage.sh" <<SH
set -e
for l in $libs; do mount --bind "$cage/empty" "\$l"; done
ldconfig -X -C "$cage/ld.so.cache" -f "$cage/ld.so.conf" 2>/dev/null
mount --bind "$cage/ld.so.cache" /etc/ld.so.cache
exec "\$@"
SH

# start_apache NAME [SED-ARGS...]: the shipped hoster configuration, its
# UserDir part pointed at this test's homes, in the cage; sets BASE (~user/)
start_apache() {
	local name=$1 dir; shift
	dir=$(run_dir "$name")
	APACHE_WRAP="unshare -m --propagation private bash $cage/cage.sh" \
		apache_start "$top_srcdir/conf/apache-fcgid.conf" "$dir" \
		-e "s#/home/\\*/public_html#$T_DIR/home/*/public_html#" "$@" || return 1
	grep -q 'suEXEC mechanism enabled' "$dir/apache-error.log" "$dir/stderr.log" 2>/dev/null ||
		diag "Apache did not report suEXEC enabled"
	BASE=${APACHE_URL%/mcp}/~$U
}
# not_served WHAT: the files of the application are refused over HTTP
not_served() {
	local what=$1 f code body
	for f in mcp/phantom.yaml mcp/request_state.key mcp/tools/hello.sh mcp/tools/counter.py mcp/tools/ \
		mcp/mcp.fcgi mcp/.htaccess mcp/ outside/phantom.yaml outside/mcp.fcgi; do
		code=$(curl -s -o "$T_DIR/dl" -w '%{http_code}' "$BASE/$f")
		like "$code" '^40[34]$' "$what: $f is not served ($code)"
		! grep -qF "$key1" "$T_DIR/dl" || { T_N=$((T_N + 1)); T_FAIL=$((T_FAIL + 1)); echo "not ok $T_N - $what: the secret leaked"; }
	done
}

# ---- mod_fcgid ------------------------------------------------------------------
start_apache hosting-fcgid || bail "apache (mod_fcgid, suEXEC) starts"
node_client sdk-hosting.mjs --url "$BASE/mcp/mcp" --label "mod_fcgid" --warm
app_pid=$(pgrep -u "$U" -x phantom-fcgi | head -1)
like "$app_pid" '^[0-9]+$' "mod_fcgid runs phantom-fcgi as $U"
[ -n "$app_pid" ] || sed 's/^/#   /' "$APACHE_DIR/apache-error.log"
is "$(awk '/^Uid:/ { print $2 }' "/proc/$app_pid/status" 2>/dev/null)" "$(id -u "$U")" "its uid is the user's (suEXEC)"
is "$(readlink "/proc/$app_pid/exe")" "$home/bin/phantom-fcgi" "it is the user's copy of the static binary"
[ "$(readlink "/proc/$app_pid/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ]
ok "it lives in the cage's mount namespace"
is "$(grep -c '\.so' "/proc/$app_pid/maps")" 0 "its /proc/PID/maps holds no shared object"
for l in $libs; do
	is "$(nsenter -t "$app_pid" -m -- stat -c %s "$l")" 0 "in its namespace $(basename "$l") is an empty file"
done
out=$(nsenter -t "$app_pid" -m -- "$PHANTOM" -V 2>&1)
like "$out" 'error while loading shared libraries' "the dynamic phantom-fcgi cannot start there"
like "$(nsenter -t "$app_pid" -m -- ldd "$home/bin/phantom-fcgi" 2>&1 | tr -d '[:space:]')" \
	'^(notadynamicexecutable|staticallylinked)$' "ldd in the cage: not a dynamic executable (or a static PIE)"
grep -q "phantom\\[$app_pid\\] method=tools/call target=reverse status=200" "$APACHE_DIR/apache-error.log"
ok "Phantom's request log is in Apache's error log"
body=$(eval "${curl_line//https:\/\/example.com\//$BASE\/}")
is "$(jq -r '[.result.tools[].name] | sort | join(",")' <<<"$body" 2>/dev/null)" "counter,hello,reverse,stats" \
	"--init's curl line, with the site's address, lists the tools"
not_served "mod_fcgid"
# ten Inspector CLI runs in a row: each (2026-07-28) opens a listen stream by
# itself and leaves. With no hub such a stream held a process about 30 s
# (mod_fcgid's buffer hid the client's leaving) and the fifth run waited
# for one of the four; now each stream ends after alone_max_ms (2 s), as
# Phantom's own request log shows
INSPECTOR=$NODE_DIR/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js
if [ -f "$INSPECTOR" ] &&
   [ "$("$NODE" -p 'const [a,b]=process.versions.node.split(".").map(Number); a>22||(a==22&&b>=19)?1:0')" = 1 ]; then
	mkdir -p "$T_DIR/ihome"
	runs_ok=0 times=""
	for i in $(seq 1 10); do
		t0=$(date +%s%N)
		out=$(cd "$T_DIR" && HOME=$T_DIR/ihome timeout 90 "$NODE" "$INSPECTOR" --cli "$BASE/mcp/mcp" \
			--transport http --protocol-era modern --method tools/list --format json -q 2>>"$T_DIR/inspector.err")
		times="$times $(( ($(date +%s%N) - t0) / 1000000 ))"
		[ "$(jq -r '[.result.tools[].name] | sort | join(",")' <<<"$out" 2>/dev/null)" = counter,hello,reverse,stats ] &&
			runs_ok=$((runs_ok + 1))
	done
	diag "ten Inspector CLI runs through mod_fcgid, ms each:$times"
	is "$runs_ok" 10 "ten Inspector CLI runs in a row through mod_fcgid (4 processes) all list the tools"
	held=$(grep -o 'method=subscriptions/listen [^ ]* status=[0-9]* code=[^ ]* us=[0-9]*' "$APACHE_DIR/apache-error.log" |
		sed 's/.*us=//' | sort -n | tail -1)
	diag "the longest listen stream lasted ${held:-?} us"
	[ -n "$held" ] && [ "$held" -lt 7000000 ]
	ok "no listen stream held its process much past subscriptions.alone_max_ms (2 s; before: about 30 s)"
fi
mpost "$BASE/outside/mcp" 1 tools/call '{"name":"stats","arguments":{"text":"a b"}}'
is "$STATUS/$(jqr .result.structuredContent.words)" 200/2 "the application outside the web root is served"
# a changed configuration: mod_fcgid keeps the process (touching mcp.fcgi
# does not replace it); the user sends it SIGHUP, as the README says
as_user sed -i 's/^  name: my-phantom$/  name: my-renamed-phantom/' "$app/phantom.yaml"
mpost "$BASE/outside/mcp" 2 server/discover '{}'
is "$(jqr '.result._meta["io.modelcontextprotocol/serverInfo"].name')" my-phantom "before the reload the old configuration serves"
for p in $(pgrep -u "$U" -x phantom-fcgi); do as_user kill -HUP "$p"; done
sleep 0.3
mpost "$BASE/outside/mcp" 3 server/discover '{}'
is "$(jqr '.result._meta["io.modelcontextprotocol/serverInfo"].name')" my-renamed-phantom \
	"after the user's kill -HUP the new configuration serves"
kill "$APACHE_PID"; wait_gone "$APACHE_PID" 10

# ---- plain CGI (mod_cgid), the same way --------------------------------------------
log0=$(grep -c "($(id -u "$U")/$U).*cmd: mcp.fcgi" /var/log/apache2/suexec.log 2>/dev/null)
start_apache hosting-cgi \
	-e "s#^LoadModule fcgid_module .*#LoadModule cgid_module /usr/lib/apache2/modules/mod_cgid.so\\nScriptSock /run/phantom/cgid.sock#" \
	-e '/^Fcgid/d' || bail "apache (CGI, suEXEC) starts"
node_client sdk-hosting.mjs --url "$BASE/mcp/mcp" --label "CGI" --cold
log1=$(grep -c "($(id -u "$U")/$U).*cmd: mcp.fcgi" /var/log/apache2/suexec.log 2>/dev/null)
[ "$((log1 - log0))" -ge 6 ]; ok "suEXEC ran mcp.fcgi as $U for each CGI request ($((log1 - log0)) in its log)"
n=$(grep -c 'phantom\[[0-9]*\] method=' "$APACHE_DIR/apache-error.log")
p=$(grep -o 'phantom\[[0-9]*\] method=' "$APACHE_DIR/apache-error.log" | sort -u | wc -l)
is "$p" "$n" "CGI: every request ran in a process of its own ($n requests)"
not_served "CGI"
kill "$APACHE_PID"; wait_gone "$APACHE_PID" 10

# ---- OAuth, in the one file ---------------------------------------------------------
# The static binary is the resource server of oidc-provider, which serves
# https as localhost with a certificate of a CA made here: the binary
# resolves the name itself (c-ares), fetches the metadata and the keys over
# TLS (OpenSSL's HTTP client) trusting the CA of auth.oauth.ca_file, with
# no master: the request's process fetches, under the cache's lock. The SDK
# v2 client runs its own OAuth flow through Apache (mod_fcgid, suEXEC).
if ! "$STATIC" -V | grep -q 'OAuth: yes'; then
	diag "the static build has no OAuth (libssl-dev, libc-ares-dev missing): its OAuth journey skipped"
	done_testing
	exit 0
fi
tls_test_ca "$T_DIR/tls" || bail "a test CA and a certificate for localhost"
oauth_site() { # oauth_site NAME CA-FILE: --init ~/public_html/NAME with auth.mode oauth
	local web=$home/public_html/$1
	as_user "$home/bin/phantom-fcgi" --init "$web" >/dev/null 2>&1 || return 1
	cp "$2" "$web/ca.pem" && chown "$U:$U" "$web/ca.pem"
	as_user tee -a "$web/phantom.yaml" >/dev/null <<YAML
  - name: admin_reverse
    description: Reverse, for holders of mcp:admin.
    input: {text: {type: string, required: true}}
    exec: [php, tools/reverse.php]
    auth_scopes: ["mcp:admin"]
auth:
  mode: oauth
  metadata: { path: /~$U/$1/.well-known/oauth-protected-resource/mcp, document: { resource: "$BASE/$1/mcp" } }
  oauth: { issuer: "$AS_URL", required_scopes: ["mcp:read"], ca_file: ca.pem, cache_dir: oauth-cache, min_refresh_s: 10 }
YAML
}
start_apache hosting-oauth || bail "apache (mod_fcgid, suEXEC) starts again"
AS_TLS_CERT=$T_DIR/tls/server.pem AS_TLS_KEY=$T_DIR/tls/server.key AS_CA=$T_DIR/tls/ca.pem
as_start RS256 "$BASE/oauth/mcp" "$BASE/wrongca/mcp" || bail "oidc-provider starts (https, localhost)"
like "$AS_URL" '^https://localhost:[0-9]+$' "the authorization server's issuer is https, by name"
oauth_site oauth "$T_DIR/tls/ca.pem" || bail "--init, then auth.mode oauth in phantom.yaml"
out=$(as_user "$home/bin/phantom-fcgi" -t -c "$home/public_html/oauth/phantom.yaml" 2>&1)
is "$?" 0 "-t of the static binary accepts auth.mode oauth with ca_file${out:+: $out}"
as_user sed -i 's#ca_file: ca.pem#ca_file: tools#' "$home/public_html/oauth/phantom.yaml"
out=$(as_user "$home/bin/phantom-fcgi" -t -c "$home/public_html/oauth/phantom.yaml" 2>&1)
like "$out" "auth.oauth.ca_file $home/public_html/oauth/tools: not a regular file" "-t refuses a ca_file that is a directory"
as_user sed -i 's#ca_file: tools#ca_file: ca.pem#' "$home/public_html/oauth/phantom.yaml"
export NODE_EXTRA_CA_CERTS=$T_DIR/tls/ca.pem # the SDK client trusts the test CA too
node_client sdk-oauth-v2.mjs --url "$BASE/oauth/mcp" --alg RS256 --era 2026-07-28 \
	--tool reverse --args '{"text":"olleh"}' --expect hello \
	--step-up admin_reverse --step-up-scope mcp:admin --step-up-args '{"text":"nimda"}' --step-up-expect admin
app_pid=$(pgrep -u "$U" -x phantom-fcgi | head -1)
is "$(readlink "/proc/$app_pid/exe" 2>/dev/null)" "$home/bin/phantom-fcgi" "the static binary served it, as $U"
is "$(grep -c '\.so' "/proc/$app_pid/maps" 2>/dev/null)" 0 "with no shared object mapped (no libssl, no libcurl)"
for l in $(ldd "$(command -v curl)" | awk '/lib(ssl|crypto|curl|cares)\.so/ { print $3 }'); do
	diag "present on this host, unused by the static binary: $l"
done
grep -q "phantom\[[0-9]*\] method=tools/call target=admin_reverse status=200 .*principal=alice" "$APACHE_DIR/apache-error.log"
ok "the log names the principal of the token after step-up"
compgen -G "$home/public_html/oauth/oauth-cache/jwks-*.json" >/dev/null
ok "a request's process fetched the keys and published them in cache_dir"
is "$(grep -c 'GET /jwks' "$AS_LOG")" 1 "one fetch of the key set for every process of the host"
# two rotations within a minute: a token of each new key is never 401
call_tok() { mpost "$BASE/oauth/mcp" "$2" tools/call '{"name":"reverse","arguments":{"text":"x"}}' -H "Authorization: Bearer $1"; }
for r in 1 2; do
	kid=$(as_rotate) || bail "the authorization server rotates its key ($r)"
	tok=$(as_token "mcp:read mcp:write" "$BASE/oauth/mcp")
	is "$(jwt_field "$tok" 0 .kid)" "$kid" "rotation $r: a token signed by the new key $kid"
	codes=""
	for i in $(seq 1 40); do
		call_tok "$tok" "$((10 + i))"
		codes="$codes $STATUS"
		[ "$STATUS" = 503 ] || break
		ra=$(header Retry-After | tr -dc 0-9)
		sleep "${ra:-1}"
	done
	diag "rotation $r: statuses$codes"
	is "$STATUS" 200 "rotation $r: the token of the new key is served"
	unlike "$codes" 401 "rotation $r: never 401 on the way"
done
# a wrong CA: the fetch fails, says why, and requests end (503) without hanging
oauth_site wrongca "$T_DIR/tls/wrong-ca.pem" || bail "a second site whose ca_file is another CA"
tok=$(as_token "mcp:read" "$BASE/wrongca/mcp")
mpost "$BASE/wrongca/mcp" 1 tools/call '{"name":"reverse","arguments":{"text":"x"}}' -H "Authorization: Bearer $tok"
is "$STATUS" 503 "wrong CA: a valid token gets 503 (no key could be fetched)"
grep -q "auth.oauth: fetching the keys failed: $AS_URL/.well-known/oauth-authorization-server: TLS: the server's certificate is not trusted: unable to get local issuer certificate (CA certificates: $home/public_html/wrongca/ca.pem)" "$APACHE_DIR/apache-error.log"
ok "the log says the server's certificate is not trusted, and which CA file was used"
kill "$APACHE_PID"; wait_gone "$APACHE_PID" 10
done_testing
