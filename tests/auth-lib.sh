# tests/auth-lib.sh: web servers configured the way docs/auth.md tells users
# to, for the auth integration tests (sourced after tests/lib.sh).

# nginx_start_auth BACKEND MCP_EXTRA SERVER_EXTRA: the shipped conf/nginx.conf
# (adapted as nginx_start does) with MCP_EXTRA added inside `location = /mcp`
# and SERVER_EXTRA added to the server block; sets NGINX_URL and NGINX_BASE
nginx_start_auth() {
	local backend=$1 port dir
	command -v nginx >/dev/null || return 1
	port=$(free_port)
	dir=$(run_dir "nginx-$port")
	printf '%s\n' "$2" >"$dir/mcp-extra.conf"
	printf '%s\n' "$3" >"$dir/server-extra.conf"
	conf_subst "$top_srcdir/conf/nginx.conf" "$dir/nginx.conf" "$port" "$dir" \
		-e "s#server unix:/run/phantom/phantom.sock;#server $backend;#" \
		-e "s#^\( *\)location = /mcp {#\1include $dir/server-extra.conf;\n&\n\1    include $dir/mcp-extra.conf;#"
	grep -q "include $dir/mcp-extra.conf" "$dir/nginx.conf" || return 1
	nginx -c "$dir/nginx.conf" -e "$dir/error.log" || return 1
	T_CLEANUP+=("nginx -c '$dir/nginx.conf' -e '$dir/error.log' -s stop; sleep 0.1")
	wait_port "$port" || return 1
	NGINX_BASE=http://127.0.0.1:$port
	NGINX_URL=$NGINX_BASE/mcp
}

# with_snippet CONF SNIPPET: prints the path of a copy of the shipped CONF
# with SNIPPET (text, as docs/auth.md shows it) appended
with_snippet() {
	local out; out=$T_DIR/$(basename "$1").$RANDOM
	{ cat "$1"; printf '\n%s\n' "$2"; } >"$out"
	echo "$out"
}

# apache_start_auth KEY=VALUE...: runs tests/apache-auth.conf (placeholders
# @KEY@ replaced) in the foreground; sets APACHE_BASE, APACHE_PID. Needs
# root (Apache switches to www-data).
apache_start_auth() {
	local port dir pid args=() kv
	command -v apache2 >/dev/null || return 1
	port=$(free_port)
	dir=$(run_dir "apache-auth-$port")
	args=(-e "s#@PORT@#$port#g" -e "s#@DIR@#$dir#g")
	for kv in "$@"; do args+=(-e "s#@${kv%%=*}@#${kv#*=}#g"); done
	sed "${args[@]}" "$top_srcdir/tests/apache-auth.conf" >"$dir/httpd.conf"
	apache2 -t -f "$dir/httpd.conf" >"$dir/test.out" 2>&1 ||
		{ sed 's/^/#   /' "$dir/test.out"; return 1; }
	apache2 -f "$dir/httpd.conf" -DFOREGROUND >"$dir/stderr.log" 2>&1 &
	pid=$!
	T_CLEANUP+=("kill $pid; wait_gone $pid")
	wait_port "$port" || { sed 's/^/#   /' "$dir/stderr.log" "$dir/error.log"; return 1; }
	APACHE_PID=$pid
	APACHE_BASE=http://127.0.0.1:$port
}

# get URL: a GET; sets STATUS, BODY, HEADERS like post
get() {
	local out=$T_DIR/get.$$ hdr=$T_DIR/gethdr.$$
	STATUS=$(curl -s -o "$out" -D "$hdr" -w '%{http_code}' "$@")
	BODY=$(cat "$out"); HEADERS=$(tr -d '\r' <"$hdr")
}

# in_log PATTERN: waits up to 2 s for an extended regex in PH_LOG
in_log() {
	for _ in $(seq 1 40); do grep -Eq -- "$1" "$PH_LOG" && return 0; sleep 0.05; done
	return 1
}
