#!/bin/bash
# auth.oauth.cache_dir is trusted only when it is Phantom's own: keys another
# local user planted there are never used. Each request a CGI process (the
# process reads the cache, and fetches from oauth_as.py when it has nothing
# it trusts). A key set planted in a world-writable cache_dir, in place of
# the cache file as a symbolic link, or (as root) in a file or directory of
# another user: a token of the planted key is refused, and the log says
# why. Then, as root, a process serving alone whose every write of the key
# file fails (a full file system in a mount namespace of its own) keeps
# its number of open descriptors: the failed write no longer leaks one.
. "${top_srcdir:-.}/tests/lib.sh"
command -v jq >/dev/null || skip_all "jq not installed"
. "$top_srcdir/tests/oauth-lib.sh"
why=$(oauth_supported) || skip_all "$why"
JT="python3 $top_srcdir/tests/jwt_tool.py"
K=$T_DIR/keys
AS=$T_DIR/as
mkdir -p "$AS"
oauth_keygen "$K" good:ec evil:ec
oauth_jwks "$K" good:g1 >"$AS/jwks.json"
oauth_jwks "$K" evil:g1 evil:e1 >"$T_DIR/planted.json"
RES=https://mcp.example.com/mcp
tiny_as "$AS" || { echo "not ok - the authorization server starts"; exit 1; }
conf() { # conf FILE CACHE [WORKERS]
	cat >"$1" <<YAML
server: { name: oauth-cache, version: "1.0" }
workers: ${3:-0}
auth:
  mode: oauth
  metadata:
    document: { resource: "$RES" }
  oauth:
    issuer: "$ISS"
    min_refresh_s: 1
    refresh_s: 3600
    fetch_timeout_ms: 2000
    cache_dir: $2
YAML
}
NOW=$(date +%s)
claims='{"iss":"'$ISS'","aud":"'$RES'","sub":"alice","exp":'$((NOW + 900))'}'
GOOD=$($JT sign "$K/good.pem" ES256 '{"kid":"g1"}' "$claims")
EVIL=$($JT sign "$K/evil.pem" ES256 '{"kid":"e1"}' "$claims")
BODY1=$(req 1 server/discover)
cgi() { # cgi CONF TOKEN
	CGI_ARGS="-c $1" cgi_post "$BODY1" "HTTP_AUTHORIZATION=Bearer $2" \
		"$(mhdr server/discover | cut -d' ' -f1)" "$(mhdr server/discover | cut -d' ' -f2)"
}

# ---- Phantom's own cache: the fetched keys serve, the planted kid is unknown
conf "$T_DIR/own.yaml" own
cgi "$T_DIR/own.yaml" "$GOOD"
is "$STATUS" 200 "a cache_dir of Phantom's own: the fetched key serves"
is "$(stat -c %a "$T_DIR/own")" 700 "it was made mode 0700"
CACHE_FILE=$(cd "$T_DIR/own" && ls jwks-*.json)
cgi "$T_DIR/own.yaml" "$EVIL"
is "$STATUS" 401 "a token of a key the authorization server never published: 401"

# ---- a world-writable cache_dir holding a planted key set
mkdir -m 0777 "$T_DIR/open" && chmod 0777 "$T_DIR/open"
cp "$T_DIR/planted.json" "$T_DIR/open/$CACHE_FILE"
conf "$T_DIR/open.yaml" open
cgi "$T_DIR/open.yaml" "$EVIL"
is "$STATUS" 503 "a world-writable cache_dir: the planted key is not used (503, no trusted keys)"
like "$(cat "$T_DIR"/cgi.*.err)" "cache_dir $T_DIR/open is writable by its group or by every user \(mode 0777\)" \
	"the log says why"
cgi "$T_DIR/open.yaml" "$GOOD"
is "$STATUS" 503 "nor is anything fetched into it"

# ---- the cache file a symbolic link to planted keys
mkdir -m 0700 "$T_DIR/linked"
ln -s "$T_DIR/planted.json" "$T_DIR/linked/$CACHE_FILE"
conf "$T_DIR/linked.yaml" linked
cgi "$T_DIR/linked.yaml" "$EVIL"
is "$STATUS" 401 "the cache file a symbolic link: not followed, the planted key is unknown"
[ ! -L "$T_DIR/linked/$CACHE_FILE" ] && cmp -s "$T_DIR/linked/$CACHE_FILE" "$AS/jwks.json"
ok "... the fetched keys replaced the link"
cgi "$T_DIR/linked.yaml" "$GOOD"
is "$STATUS" 200 "... and serve"

if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	# ---- another user's file, another user's directory
	mkdir -m 0700 "$T_DIR/theirfile"
	cp "$T_DIR/planted.json" "$T_DIR/theirfile/$CACHE_FILE"
	chown nobody "$T_DIR/theirfile/$CACHE_FILE"
	conf "$T_DIR/theirfile.yaml" theirfile
	cgi "$T_DIR/theirfile.yaml" "$EVIL"
	is "$STATUS" 401 "a cache file of another user: its planted key is not used"
	is "$(stat -c %U "$T_DIR/theirfile/$CACHE_FILE")" root "... the fetched keys replaced it"
	mkdir -m 0700 "$T_DIR/theirdir"
	cp "$T_DIR/planted.json" "$T_DIR/theirdir/$CACHE_FILE"
	chown -R nobody "$T_DIR/theirdir"
	conf "$T_DIR/theirdir.yaml" theirdir
	rm -f "$T_DIR"/cgi.*.err
	cgi "$T_DIR/theirdir.yaml" "$EVIL"
	is "$STATUS" 503 "a cache_dir of another user: not used (503)"
	like "$(cat "$T_DIR"/cgi.*.err)" "cache_dir $T_DIR/theirdir belongs to another user" "the log says so"

	# ---- a process serving alone (as under mod_fcgid) whose writes of the
	# key file fail: no descriptor leaks (a master fetches in a child)
	if command -v unshare >/dev/null && unshare -m true 2>/dev/null && command -v cgi-fcgi >/dev/null; then
		conf "$T_DIR/full.yaml" full 1
		mkdir -p "$T_DIR/full"
		# a key set larger than the file system it is written to
		{ printf '{"keys":['; for i in $(seq 1 60); do printf '%s,' "$($JT jwk "$K/good.pem" "g$i")"; done
		  printf '%s]}' "$($JT jwk "$K/good.pem" g1)"; } >"$AS/jwks.json"
		port=$(free_port)
		unshare -m sh -c "mount -t tmpfs -o size=4k,mode=0700 tmpfs '$T_DIR/full' && exec '$PHANTOM' -c '$T_DIR/full.yaml' --listen 127.0.0.1:$port" \
			2>"$T_DIR/full.log" &
		FULL_PID=$!
		T_PIDS+=("$FULL_PID")
		wait_for 10 port_open "$port"
		attempts() { grep -c "warning: auth.oauth: fetching the keys failed: writing .*: No space left on device" "$T_DIR/full.log"; }
		fds() { ls "/proc/$FULL_PID/fd" 2>/dev/null | wc -l; }
		fcall() { fcgi_post "127.0.0.1:$port" "$BODY1" HTTP_AUTHORIZATION="Bearer $GOOD" \
			"$(mhdr server/discover | cut -d' ' -f1)" "$(mhdr server/discover | cut -d' ' -f2)"; }
		fcall
		is "$STATUS:$(attempts)" "503:1" "the process's own write of the key file fails (a full file system): 503"
		n0=$(fds)
		for i in 1 2 3 4 5; do sleep 1.1; fcall; done # past min_refresh_s each time
		[ "$(attempts)" -ge 4 ]; ok "five more requests, at least three more failed writes ($(( $(attempts) - 1 )))"
		is "$(fds)" "$n0" "the process holds as many descriptors as before them"
	fi
fi
done_testing
