#!/bin/bash
# Builds Phantom and runs it for real behind nginx on http://127.0.0.1:8080/mcp.
# On a fresh Debian 12 machine as root it installs the packages it needs; as
# a normal user the packages must be there already.
#
#   bash scripts/run.sh          # build, (re)start - a running instance is stopped first
#   bash scripts/run.sh stop     # stop it
#
# Phantom is installed where it survives a reboot (as root: /usr/local, its
# configuration /usr/local/etc/phantom/phantom.yaml with a request_state
# secret made once beside it, the delete_file sandbox /var/local/phantom;
# else build-run/ in the checkout; never where the Debian package puts its
# files)
# and runs under `spawn-fcgi -n` on a unix socket in the run directory, its
# own master supervising the pool the configuration's workers: describes
# (--pool; the bundled one grows by demand from 4 workers up to 32), with the
# bundled configuration, example app and skills; nginx runs the shipped
# conf/nginx.conf with its paths pointed at the run directory. As root
# Phantom runs as the system user "phantom". At the end it prints a desktop
# client's stdio snippet with the installed paths.
#   PHANTOM_PORT (8080), PHANTOM_RUN_DIR (/run/phantom as root, else build-run/run)
set -u
cd "$(dirname "$0")/.." || exit 1
top=$(pwd)
port=${PHANTOM_PORT:-8080}
build=$top/build-run
if [ "$(id -u)" = 0 ]; then
	run=${PHANTOM_RUN_DIR:-/run/phantom}
	prefix=/usr/local
	etc=/usr/local/etc/phantom
	sandbox=/var/local/phantom/sandbox
	root=1
else
	run=${PHANTOM_RUN_DIR:-$build/run}
	prefix=$build/install
	etc=$build/etc
	sandbox=$prefix/share/phantom/examples/sandbox
	root=
fi
url=http://127.0.0.1:$port/mcp

die() { echo "run.sh: $*" >&2; exit 1; }

# is_phantom PID: PID is Phantom: its master (phantom-master), or the
# program before it names itself (phantom-fcgi, also an older build's master)
is_phantom() {
	case $(cat "/proc/$1/comm" 2>/dev/null) in
	phantom-master | phantom-fcgi) return 0 ;;
	*) return 1 ;;
	esac
}

# stop_all: stops what a previous run started (checked by pid and name)
stop_all() {
	local pid n
	if [ -f "$run/nginx.pid" ] && [ -f "$run/nginx.conf" ]; then
		nginx -c "$run/nginx.conf" -e "$run/nginx-error.log" -s stop 2>/dev/null
		for n in $(seq 1 50); do [ -f "$run/nginx.pid" ] || break; sleep 0.1; done
	fi
	if [ -f "$run/phantom.pid" ]; then
		pid=$(cat "$run/phantom.pid")
		if is_phantom "$pid"; then
			# SIGTERM: requests in flight finish (shutdown_timeout bounds it)
			kill "$pid"
			for n in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
			kill -0 "$pid" 2>/dev/null && { echo "Phantom ($pid) did not stop; killing it"; kill -9 "$pid"; }
		fi
		rm -f "$run/phantom.pid" "$run/phantom.sock"
	fi
}

if [ "${1:-}" = stop ]; then
	stop_all
	echo "Phantom and its nginx are stopped."
	exit 0
fi
[ $# -eq 0 ] || die "usage: bash scripts/run.sh [stop]"

# ---- packages ------------------------------------------------------------------
pkgs="build-essential autoconf automake libtool pkg-config
      libfcgi-dev libjson-c-dev libyaml-dev libsodium-dev spawn-fcgi curl
      python3"   # the example app's persistent word_count tool
# any nginx will do; nginx-light is the smallest
command -v nginx >/dev/null || pkgs="$pkgs nginx-light"
missing=$(for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
if [ -n "$missing" ]; then
	if [ -n "$root" ]; then
		echo "Installing:" $missing
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq || die "apt-get update failed"
		# shellcheck disable=SC2086
		apt-get install -y -qq $missing >/dev/null || die "apt-get install failed"
	else
		die "missing packages (install them as root): $(echo $missing)"
	fi
fi

# ---- build and install into the prefix ---------------------------------------------
stop_all
echo "Building in $build ..."
if [ ! -x configure ] || [ configure.ac -nt configure ] || [ Makefile.am -nt Makefile.in ]; then
	./autogen.sh >/dev/null 2>&1 || die "autogen.sh failed"
fi
mkdir -p "$build" "$run"
chmod 0755 "$run"
(
	cd "$build" || exit 1
	if [ ! -f Makefile ] || [ "$(cat .run-prefix 2>/dev/null)" != "$prefix" ]; then
		"$top/configure" -q --prefix="$prefix" >configure.out 2>&1 || { cat configure.out; exit 1; }
		echo "$prefix" >.run-prefix
	fi
	make -j"$(nproc)" >make.out 2>&1 || { tail -30 make.out; exit 1; }
	make install >install.out 2>&1 || { tail -30 install.out; exit 1; }
) || die "the build failed (logs in $build)"
bin=$prefix/bin/phantom-fcgi
share=$prefix/share/phantom   # conf/, examples/ and skills/ as make install put them
[ -n "$root" ] && { id phantom >/dev/null 2>&1 ||
	useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin phantom ||
	die "cannot create the user phantom"; }

# The server's configuration: the installed conf/phantom.yaml with absolute
# paths, the hub's control socket in the run directory and a request_state
# secret, so that a multi-round request resumes on any worker. It is made
# again on each run unless someone else wrote the file (then run.yaml).
mkdir -p "$etc"
conf=$etc/phantom.yaml
mark='# written by scripts/run.sh (made again on each run: edit a copy)'
[ -f "$conf" ] && [ "$(head -1 "$conf")" != "$mark" ] && conf=$etc/run.yaml
secret=$etc/request-state.key
if [ ! -s "$secret" ]; then
	(umask 077 && head -c 48 /dev/urandom | base64 -w0 >"$secret") || die "cannot write $secret"
fi
chmod 0600 "$secret"
[ -n "$root" ] && chown phantom "$secret"
mkdir -p "$sandbox"
[ -n "$root" ] && chown phantom "$sandbox"
# the hub's control socket (phantom-fcgi --notify) in a directory the user
# Phantom runs as may write
mkdir -p "$run/hub"
[ -n "$root" ] && chown phantom "$run/hub"
{
	echo "$mark"
	sed -e "s#\.\./examples/sandbox#$sandbox#g" -e "s#\.\./#$share/#g" \
		-e "s#^  control_socket: .*#  control_socket: $run/hub/hub.sock#" \
		-e "s#^\#request_state:\$#request_state:#" \
		-e "s#^  \#secret_file: .*#  secret_file: $secret#" "$share/conf/phantom.yaml"
} >"$conf.new" && mv "$conf.new" "$conf" || die "cannot write $conf"
chmod 0644 "$conf"
"$bin" -t -c "$conf" || die "the configuration has problems (see above)"

# ---- Phantom under spawn-fcgi ------------------------------------------------------
sock=$run/phantom.sock
ids=()
if [ -n "$root" ]; then
	# the socket belongs to nginx's worker user (nobody unless conf/nginx.conf says)
	ngx_user=$(sed -n 's/^ *user  *\([^ ;]*\).*/\1/p' conf/nginx.conf | head -1)
	ngx_user=${ngx_user:-nobody}
	ids=(-U "$ngx_user" -G "$(id -gn "$ngx_user")" -M 0660 -u phantom -g phantom)
fi
if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
	die "port $port is in use by another program (set PHANTOM_PORT)"
fi
# setsid: no controlling terminal, so closing it cannot send SIGHUP (a reload)
# --pool: the configuration's pool (--workers N would make it a static N)
setsid spawn-fcgi -n -s "$sock" "${ids[@]}" -- "$bin" -c "$conf" --pool \
	</dev/null >>"$run/phantom.log" 2>&1 &
pid=$!
echo "$pid" >"$run/phantom.pid"
for _ in $(seq 1 100); do
	[ -S "$sock" ] && is_phantom "$pid" && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
[ -S "$sock" ] && kill -0 "$pid" 2>/dev/null || { tail -20 "$run/phantom.log"; die "Phantom did not start"; }

# ---- nginx with the shipped configuration ---------------------------------------------
sed -e "s#127\\.0\\.0\\.1:8080#127.0.0.1:$port#" -e "s#/run/phantom#$run#g" \
	conf/nginx.conf >"$run/nginx.conf"
nginx -t -q -c "$run/nginx.conf" -e "$run/nginx-error.log" || { stop_all; die "nginx -t failed"; }
nginx -c "$run/nginx.conf" -e "$run/nginx-error.log" || { stop_all; die "nginx did not start"; }

# ---- prove it --------------------------------------------------------------------------
body='{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
example="curl -s $url \\
  -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \\
  -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: server/discover' \\
  -d '$body'"
for _ in $(seq 1 50); do
	answer=$(curl -s -w '\n%{http_code}' "$url" -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' \
		-H 'Mcp-Method: server/discover' -d "$body")
	[ "${answer##*$'\n'}" = 200 ] && break
	sleep 0.1
done
[ "${answer##*$'\n'}" = 200 ] || { echo "$answer"; die "Phantom did not answer through nginx"; }

cat <<EOF

Phantom is running behind nginx on $url
  Phantom  $bin, master pid $pid (workers: as $conf says) on $sock, log $run/phantom.log
  config   $conf (edit it, then: kill -HUP $pid; run.sh writes it again)
  secret   $secret (request_state, 0600)
  nginx    $run/nginx.conf, errors in $run/nginx-error.log

Try it:
$example

It answered:
${answer%$'\n'*}

Stop it:  bash scripts/run.sh stop

A desktop MCP client (stdio), e.g. in Claude Desktop's claude_desktop_config.json:
{ "mcpServers": { "phantom": { "command": "$bin",
                               "args": ["-c", "$share/conf/phantom.yaml", "--stdio"] } } }
EOF
