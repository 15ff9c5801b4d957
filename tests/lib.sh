# tests/lib.sh: shared helpers for the integration tests (sourced, bash).
# Output is TAP: every check is one "ok"/"not ok" line, counted by make check.
#
# Environment (set by make check): top_srcdir, top_builddir, PHANTOM.
set -u
: "${top_srcdir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
: "${PHANTOM:=$top_builddir/phantom-fcgi}"
T_N=0
T_FAIL=0
T_DIR=$(mktemp -d "${TMPDIR:-/tmp}/phantom-test.XXXXXX")
T_PIDS=()
T_CLEANUP=()
MODERN=2026-07-28

t_cleanup() {
	local c p
	for c in "${T_CLEANUP[@]+"${T_CLEANUP[@]}"}"; do eval "$c" >/dev/null 2>&1 || true; done
	for p in "${T_PIDS[@]+"${T_PIDS[@]}"}"; do kill "$p" 2>/dev/null || true; done
	sleep 0.1
	for p in "${T_PIDS[@]+"${T_PIDS[@]}"}"; do kill -9 "$p" 2>/dev/null || true; done
	if [ "${KEEP_TEST_DIR:-}" = "" ]; then rm -rf "$T_DIR"; fi
}
trap t_cleanup EXIT

# ok COND-EXIT-STATUS DESCRIPTION: "ok" when the previous command's status is 0
ok() { # usage: cmd; ok "description"   or   ok_if test-expr... -- desc
	local rc=$? desc="$1"
	T_N=$((T_N + 1))
	if [ "$rc" -eq 0 ]; then echo "ok $T_N - $desc"; else
		echo "not ok $T_N - $desc"; T_FAIL=$((T_FAIL + 1)); fi
}
# is GOT EXPECTED DESCRIPTION
is() {
	T_N=$((T_N + 1))
	if [ "$1" = "$2" ]; then echo "ok $T_N - $3"; else
		echo "not ok $T_N - $3"; echo "#   got:      '$1'"; echo "#   expected: '$2'"
		T_FAIL=$((T_FAIL + 1)); fi
}
# like GOT REGEX DESCRIPTION
like() {
	T_N=$((T_N + 1))
	if printf '%s' "$1" | grep -Eq -- "$2"; then echo "ok $T_N - $3"; else
		echo "not ok $T_N - $3"; echo "#   got:      '$1'"; echo "#   expected to match: '$2'"
		T_FAIL=$((T_FAIL + 1)); fi
}
skip_all() { echo "1..0 # SKIP $1"; exit 0; }
done_testing() { echo "1..$T_N"; [ "$T_FAIL" -eq 0 ]; }
diag() { echo "# $*"; }

# free_port: prints a TCP port on 127.0.0.1 that nothing listens on
free_port() {
	local p
	for _ in $(seq 1 200); do
		p=$((20000 + RANDOM % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
	done
	return 1
}
# wait_port PORT: waits until something accepts on 127.0.0.1:PORT (5 s)
wait_port() {
	for _ in $(seq 1 100); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
		sleep 0.05
	done
	return 1
}
# wait_file PATH: waits until PATH exists (5 s)
wait_file() {
	for _ in $(seq 1 100); do [ -e "$1" ] && return 0; sleep 0.05; done
	return 1
}

# phantom_listen CONF [ARGS...]: starts phantom-fcgi --listen on a free port;
# sets PH_PID, PH_ADDR (host:port) and PH_LOG
phantom_listen() {
	local conf=$1; shift
	local port; port=$(free_port)
	PH_ADDR=127.0.0.1:$port
	PH_LOG=$T_DIR/phantom-$port.log
	"$PHANTOM" -c "$conf" --listen "$PH_ADDR" "$@" 2>"$PH_LOG" &
	PH_PID=$!
	T_PIDS+=("$PH_PID")
	wait_port "$port" || { echo "# phantom did not start:"; sed 's/^/#   /' "$PH_LOG"; return 1; }
}

# nginx_start BACKEND: runs the shipped conf/nginx.conf with the listen port,
# the upstream and the run directory replaced; sets NGINX_URL
nginx_start() {
	local backend=$1 port dir
	command -v nginx >/dev/null || return 1
	port=$(free_port)
	dir=$T_DIR/nginx-$port
	mkdir -p "$dir"
	sed -e "s#127.0.0.1:8080#127.0.0.1:$port#" \
	    -e "s#server unix:/run/phantom/phantom.sock;#server $backend;#" \
	    -e "s#/run/phantom#$dir#g" \
	    "$top_srcdir/conf/nginx.conf" >"$dir/nginx.conf"
	nginx -c "$dir/nginx.conf" -e "$dir/error.log" || return 1
	T_CLEANUP+=("nginx -c '$dir/nginx.conf' -e '$dir/error.log' -s stop")
	wait_port "$port" || return 1
	NGINX_URL=http://127.0.0.1:$port/mcp
}

# meta: the 2026-07-28 _meta object
meta() {
	printf '{"io.modelcontextprotocol/protocolVersion":"%s","io.modelcontextprotocol/clientCapabilities":%s}' \
		"$MODERN" "${1:-{\}}"
}
# req ID METHOD [PARAMS-WITHOUT-META]: a modern request body
req() {
	local id=$1 method=$2 params=${3:-{\}}
	printf '%s' "$params" | jq -c --argjson id "$id" --arg m "$method" --argjson meta "$(meta)" \
		'{jsonrpc:"2.0",id:$id,method:$m,params:(. + {_meta:$meta})}'
}

# post URL BODY [CURL-ARGS...]: POSTs JSON; sets STATUS, BODY, HEADERS.
# CT=... overrides the Content-Type (CT= sends none).
post() {
	local url=$1 body=$2; shift 2
	local out=$T_DIR/resp.$$ hdr=$T_DIR/hdr.$$
	STATUS=$(curl -s -o "$out" -D "$hdr" -w '%{http_code}' -X POST \
		-H "Content-Type: ${CT-application/json}" -H 'Accept: application/json, text/event-stream' \
		"$@" --data-binary "$body" "$url")
	BODY=$(cat "$out"); HEADERS=$(tr -d '\r' <"$hdr")
}
# mpost URL ID METHOD [PARAMS] [CURL-ARGS...]: a modern request with the
# standard routing headers (Mcp-Name from params.name or params.uri)
mpost() {
	local url=$1 id=$2 method=$3 params=${4:-{\}}; shift 4 2>/dev/null || shift $#
	local name; name=$(printf '%s' "$params" | jq -r '.name // .uri // empty')
	local h=(-H "MCP-Protocol-Version: $MODERN" -H "Mcp-Method: $method")
	[ -n "$name" ] && h+=(-H "Mcp-Name: $name")
	post "$url" "$(req "$id" "$method" "$params")" "${h[@]}" "$@"
}
# jqr FILTER: applies a jq filter to BODY (the last response), -r output
jqr() { printf '%s' "$BODY" | jq -r "$1"; }
# header NAME: value of a response header of the last post (case-insensitive)
header() { printf '%s\n' "$HEADERS" | grep -i "^$1:" | head -1 | sed 's/^[^:]*: *//'; }

# node_setup: finds the npm packages of tests/node/package.json (installed by
# scripts/test.sh into PHANTOM_NPM_DIR) and copies our client scripts next to
# their node_modules, where bare imports resolve. Sets NODE_DIR.
node_setup() {
	NODE_DIR=${PHANTOM_NPM_DIR:-/var/cache/phantom-npm}
	command -v node >/dev/null || return 1
	[ -d "$NODE_DIR/node_modules/@modelcontextprotocol/client" ] || return 1
	mkdir -p "$NODE_DIR/phantom-clients"
	cp "$top_srcdir"/tests/clients/*.mjs "$NODE_DIR/phantom-clients/"
}
# node_client SCRIPT ARGS...: runs one of tests/clients/*.mjs and turns its
# "ok - x" / "not ok - x" lines into numbered TAP checks
node_client() {
	local script=$1 line out rc; shift
	out=$(timeout 120 node "$NODE_DIR/phantom-clients/$script" "$@" 2>&1); rc=$?
	while IFS= read -r line; do
		case "$line" in
		"ok - "*) T_N=$((T_N + 1)); echo "ok $T_N - ${line#ok - }" ;;
		"not ok - "*) T_N=$((T_N + 1)); T_FAIL=$((T_FAIL + 1)); echo "not ok $T_N - ${line#not ok - }" ;;
		*) echo "# $line" ;;
		esac
	done <<<"$out"
	if [ "$rc" -ne 0 ] && ! grep -q '^not ok' <<<"$out"; then
		T_N=$((T_N + 1)); T_FAIL=$((T_FAIL + 1)); echo "not ok $T_N - $script $* exited $rc"
	fi
}
