#!/bin/bash
# -t checks auth.oauth.cache_dir as the server would meet it, as the user -t
# runs as, and changes nothing: a missing cache_dir whose parent this user
# may write is fine and is not created; a missing parent, a parent that is
# not a directory, a cache_dir that is a symbolic link or writable by every
# user, and (as root) a parent this user may not write or a cache_dir of
# another user are problems that name the directory and why. Without -t a
# start is not refused for them (oauth_cache_trust.sh: requests get 503).
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/oauth-lib.sh"
why=$(oauth_supported) || skip_all "$why"
conf() { # conf FILE CACHE_DIR
	cat >"$1" <<YAML
server: { name: oauth-cache-check, version: "1.0" }
auth:
  mode: oauth
  oauth:
    issuer: "https://as.example.com"
    audiences: ["https://mcp.example.com/mcp"]
    cache_dir: $2
YAML
}
check() { # check CONF [COMMAND PREFIX...]: OUT, RC
	OUT=$("${@:2}" "$PHANTOM" -c "$1" -t 2>&1)
	RC=$?
}

conf "$T_DIR/fresh.yaml" fresh/oauth
mkdir "$T_DIR/fresh"
check "$T_DIR/fresh.yaml"
is "$RC" 0 "a missing cache_dir whose parent this user may write: -t OK"
[ ! -e "$T_DIR/fresh/oauth" ]
ok "... and -t did not create it"

conf "$T_DIR/orphan.yaml" nowhere/oauth
check "$T_DIR/orphan.yaml"
is "$RC" 1 "a cache_dir whose parent is missing: -t fails"
like "$OUT" "orphan.yaml:[0-9]+: .*cannot create auth.oauth.cache_dir $T_DIR/nowhere/oauth: No such file or directory" \
	"... and names the directory and why"
[ ! -e "$T_DIR/nowhere" ]
ok "... creating nothing"

: >"$T_DIR/plain"
conf "$T_DIR/file.yaml" plain/oauth
check "$T_DIR/file.yaml"
is "$RC" 1 "a cache_dir under a file: -t fails"
like "$OUT" "cannot create auth.oauth.cache_dir $T_DIR/plain/oauth: Not a directory" "... and says why"

mkdir -m 0777 "$T_DIR/open" && chmod 0777 "$T_DIR/open"
conf "$T_DIR/open.yaml" open
check "$T_DIR/open.yaml"
is "$RC" 1 "a cache_dir writable by every user: -t fails"
like "$OUT" "auth.oauth.cache_dir $T_DIR/open is writable by its group or by every user \(mode 0777\)" \
	"... as the runtime would refuse it"

mkdir -m 0700 "$T_DIR/real"
ln -s real "$T_DIR/link"
conf "$T_DIR/link.yaml" link
check "$T_DIR/link.yaml"
is "$RC" 1 "a cache_dir that is a symbolic link: -t fails"
like "$OUT" "auth.oauth.cache_dir $T_DIR/link is not a directory" "... and says so"

mkdir -m 0700 "$T_DIR/own"
conf "$T_DIR/own.yaml" own
check "$T_DIR/own.yaml"
is "$RC:$(grep -c cache_dir <<<"$OUT")" "0:0" "a cache_dir of Phantom's own, mode 0700: -t OK"

if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
	# the configurations must be readable by nobody
	chmod 0711 "$T_DIR"
	mkdir -m 0755 "$T_DIR/pub" "$T_DIR/pub/rootonly"
	conf "$T_DIR/pub/ro.yaml" rootonly/oauth
	chmod 0644 "$T_DIR/pub/ro.yaml"
	check "$T_DIR/pub/ro.yaml"
	is "$RC" 0 "as root: a missing cache_dir under a directory of root's: -t OK"
	check "$T_DIR/pub/ro.yaml" setpriv --reuid=nobody --regid=nogroup --clear-groups
	is "$RC" 1 "as nobody: the same cache_dir cannot be created: -t fails"
	like "$OUT" "cannot create auth.oauth.cache_dir $T_DIR/pub/rootonly/oauth: Permission denied \(checked as uid $(id -u nobody)" \
		"... and says as which user it checked"
	[ ! -e "$T_DIR/pub/rootonly/oauth" ]
	ok "... creating nothing"

	mkdir -m 0700 "$T_DIR/theirs"
	chown nobody "$T_DIR/theirs"
	conf "$T_DIR/theirs.yaml" theirs
	check "$T_DIR/theirs.yaml"
	is "$RC" 1 "as root: a cache_dir of another user: -t fails"
	like "$OUT" "auth.oauth.cache_dir $T_DIR/theirs belongs to another user" "... and says so"
fi
done_testing
