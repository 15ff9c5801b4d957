# tests/auth-lib.sh: web servers configured the way docs/auth.md tells users
# to, for the auth integration tests (sourced after tests/lib.sh).

# nginx_start_auth BACKEND MCP_EXTRA SERVER_EXTRA: the shipped conf/nginx.conf
# (as nginx_start adapts it) with MCP_EXTRA added inside `location = /mcp`
# and SERVER_EXTRA added to the server block; sets NGINX_URL and NGINX_BASE
nginx_start_auth() {
	local backend=$1 mcp_extra=$2 server_extra=$3 port dir
	command -v nginx >/dev/null || return 1
	port=$(free_port)
	dir=$T_DIR/nginx-$port
	mkdir -p "$dir"
	printf '%s\n' "$mcp_extra" >"$dir/mcp-extra.conf"
	printf '%s\n' "$server_extra" >"$dir/server-extra.conf"
	sed -e "s#127.0.0.1:8080#127.0.0.1:$port#" \
	    -e "s#server unix:/run/phantom/phantom.sock;#server $backend;#" \
	    -e "s#/run/phantom#$dir#g" \
	    -e "s#^\( *\)location = /mcp {#\1include $dir/server-extra.conf;\n&\n\1    include $dir/mcp-extra.conf;#" \
	    "$top_srcdir/conf/nginx.conf" >"$dir/nginx.conf"
	grep -q "include $dir/mcp-extra.conf" "$dir/nginx.conf" || return 1
	nginx -c "$dir/nginx.conf" -e "$dir/error.log" || return 1
	T_CLEANUP+=("nginx -c '$dir/nginx.conf' -e '$dir/error.log' -s stop")
	wait_port "$port" || return 1
	NGINX_BASE=http://127.0.0.1:$port
	NGINX_URL=$NGINX_BASE/mcp
}

# apache_start_auth KEY=VALUE...: runs tests/apache-auth.conf (placeholders
# @KEY@ replaced) in the foreground, in the background of the test; sets
# APACHE_BASE. Needs root (Apache switches to www-data).
apache_start_auth() {
	local port dir args=() kv
	command -v apache2 >/dev/null || return 1
	port=$(free_port)
	dir=$T_DIR/apache-$port
	mkdir -p "$dir/htdocs"
	args=(-e "s#@PORT@#$port#g" -e "s#@DIR@#$dir#g")
	for kv in "$@"; do args+=(-e "s#@${kv%%=*}@#${kv#*=}#g"); done
	sed "${args[@]}" "$top_srcdir/tests/apache-auth.conf" >"$dir/httpd.conf"
	apache2 -f "$dir/httpd.conf" -DFOREGROUND 2>>"$dir/error.log" &
	APACHE_PID=$!
	T_PIDS+=("$APACHE_PID")
	T_CLEANUP+=("kill $APACHE_PID")
	wait_port "$port" || { sed 's/^/#   /' "$dir/error.log"; return 1; }
	APACHE_BASE=http://127.0.0.1:$port
	APACHE_LOG=$dir/error.log
}

# lighttpd_start_auth BACKEND_HOST BACKEND_PORT: lighttpd with Phantom at /mcp
# and the metadata route of docs/auth.md; sets LIGHTTPD_BASE
lighttpd_start_auth() {
	local host=$1 bport=$2 port dir
	command -v lighttpd >/dev/null || return 1
	port=$(free_port)
	dir=$T_DIR/lighttpd-$port
	mkdir -p "$dir/www"
	cat >"$dir/lighttpd.conf" <<EOF
server.modules = ( "mod_fastcgi" )
server.bind = "127.0.0.1"
server.port = $port
server.document-root = "$dir/www"
server.errorlog = "$dir/error.log"
server.pid-file = "$dir/lighttpd.pid"
fastcgi.server = (
    "/mcp" => (( "host" => "$host", "port" => $bport,
                 "check-local" => "disable", "fix-root-scriptname" => "disable" )),
    "/.well-known/oauth-protected-resource/mcp" => ((
                 "host" => "$host", "port" => $bport, "check-local" => "disable" )),
)
EOF
	lighttpd -D -f "$dir/lighttpd.conf" 2>>"$dir/error.log" &
	T_PIDS+=("$!")
	wait_port "$port" || { sed 's/^/#   /' "$dir/error.log"; return 1; }
	LIGHTTPD_BASE=http://127.0.0.1:$port
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
