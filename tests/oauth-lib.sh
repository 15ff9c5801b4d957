# tests/oauth-lib.sh: a real authorization server (tests/oauth/as.mjs, the
# npm package oidc-provider) for the OAuth tests and benches, and Phantom set
# up as its resource server behind the shipped nginx configuration
# (sourced after tests/lib.sh).

# oauth_supported: this build accepts auth.mode oauth. A build without
# libcrypto and libcurl says so at the configuration check, and a Phantom
# older than auth.mode oauth does not list it; prints why not.
oauth_supported() {
	local f=$T_DIR/oauth-probe.yaml out
	printf '%s\n' 'server: { name: probe, version: "1" }' 'auth:' '  mode: oauth' \
		'  oauth: { issuer: "https://as.example.com", jwks_file: probe-jwks.json }' >"$f"
	printf '{"keys":[]}\n' >"$T_DIR/probe-jwks.json"
	out=$("$PHANTOM" -c "$f" -t 2>&1) && return 0
	if grep -q 'built without OAuth support' <<<"$out" ||
	   grep -Eq 'auth\.mode: expected one of [a-z_|]*$' <<<"$out"; then
		echo "$out" | head -1
		return 1
	fi
	return 0 # another complaint (this probe has no key): the tests will show more
}

# oauth_keygen DIR NAME:KIND...: private keys made now with openssl, each
# in DIR/NAME.pem; KIND is rsa (2048 bits), rsa1024 (too small: refused),
# ec (P-256) or ed25519
oauth_keygen() {
	local dir=$1 k opts; shift
	mkdir -p "$dir"
	for k in "$@"; do
		case ${k#*:} in
		rsa) opts=(-algorithm RSA -pkeyopt rsa_keygen_bits:2048) ;;
		rsa1024) opts=(-algorithm RSA -pkeyopt rsa_keygen_bits:1024) ;;
		ec) opts=(-algorithm EC -pkeyopt ec_paramgen_curve:P-256) ;;
		ed25519) opts=(-algorithm ED25519) ;;
		*) echo "oauth_keygen: unknown key kind ${k#*:}" >&2; return 1 ;;
		esac
		openssl genpkey "${opts[@]}" -out "$dir/${k%%:*}.pem" 2>/dev/null || return 1
	done
}
# oauth_jwks DIR NAME:KID...: a JWK set (JSON) of the public halves of
# DIR/NAME.pem, each with its KID (tests/jwt_tool.py)
oauth_jwks() {
	local dir=$1 out="" k; shift
	for k in "$@"; do
		out="$out${out:+,}$(python3 "$top_srcdir/tests/jwt_tool.py" jwk "$dir/${k%%:*}.pem" "${k##*:}")"
	done
	printf '{"keys":[%s]}' "$out"
}

# tiny_as DIR: tests/integration/oauth_as.py (RFC 8414 metadata, DIR/jwks.json,
# introspection from DIR/introspect.json) on a free port; sets ASPORT and ISS
tiny_as() {
	ASPORT=$(free_port) || return 1
	ISS=http://127.0.0.1:$ASPORT/
	python3 "$top_srcdir/tests/integration/oauth_as.py" "$ASPORT" "$1" &
	T_PIDS+=("$!")
	wait_port "$ASPORT"
}

# as_start ALG RESOURCE...: starts the authorization server signing access
# tokens with ALG (RS256, ES256, EdDSA) for the RESOURCEs; keeps its keys in
# $T_DIR/as-keys.json (a restart with another ALG keeps the older keys
# published), on the port it had before when AS_PORT is set, its tokens
# valid for AS_TTL seconds (default 300). Sets AS_URL,
# AS_PID, AS_LOG, AS_KEYS, AS_PORT, AS_SECRET. Needs node_setup. With
# AS_TLS_CERT and AS_TLS_KEY it serves https as localhost (AS_URL
# https://localhost:PORT; as_token trusts AS_CA).
as_start() {
	local alg=$1 r args=(); shift
	for r in "$@"; do args+=(--resource "$r"); done
	cp "$top_srcdir/tests/oauth/as.mjs" "$NODE_CLIENTS/" || return 1
	AS_KEYS=$T_DIR/as-keys.json
	AS_LOG=$T_DIR/as.log
	rm -f "$T_DIR/as.port"
	[ -n "${AS_TLS_CERT:-}" ] && args+=(--tls-cert "$AS_TLS_CERT" --tls-key "$AS_TLS_KEY" --host localhost)
	"$NODE" "$NODE_CLIENTS/as.mjs" --alg "$alg" --keys "$AS_KEYS" --port-file "$T_DIR/as.port" \
		--port "${AS_PORT:-0}" --ttl "${AS_TTL:-300}" "${args[@]}" >>"$AS_LOG" 2>&1 &
	AS_PID=$!
	t_started oauth-as "$AS_PID" "$AS_LOG" test -s "$T_DIR/as.port" || return 1
	AS_PORT=$(cat "$T_DIR/as.port")
	AS_URL=http://127.0.0.1:$AS_PORT
	[ -n "${AS_TLS_CERT:-}" ] && AS_URL=https://localhost:$AS_PORT
	AS_SECRET=$(cat "$AS_KEYS.secret")
}
# as_stop: stops the authorization server
as_stop() { kill "$AS_PID" 2>/dev/null; wait_gone "$AS_PID"; }
# as_rotate: a new signing key at the authorization server (the old ones stay
# published); waits until it signs with it. Prints the new kid.
as_rotate() {
	local n; n=$(as_rotations)
	kill -HUP "$AS_PID"
	wait_for 5 as_rotations_past "$n" || return 1
	grep 'rotated' "$AS_LOG" | tail -1 | sed 's/.* signed by //'
}
as_rotations() { grep -c 'rotated' "$AS_LOG"; }
as_rotations_past() { [ "$(as_rotations)" -gt "$1" ]; }
# as_token SCOPE [RESOURCE]: an access token from the authorization server
# (client_credentials, client phantom-tests) for RESOURCE (default
# OAUTH_RESOURCE) with SCOPE
as_token() {
	curl -s ${AS_CA:+--cacert "$AS_CA"} -u "phantom-tests:$AS_SECRET" -d grant_type=client_credentials \
		--data-urlencode "resource=${2:-$OAUTH_RESOURCE}" --data-urlencode "scope=$1" \
		"$AS_URL/token" | jq -r '.access_token // empty'
}
# jwts_with_kids TOKEN PREFIX N [AGE]: N copies of TOKEN, one a line, each
# with a header (RS256, at+jwt) naming a kid of its own (PREFIX-i-random):
# their signatures no longer match, but the key is looked up first. With
# AGE, the payload's iat is AGE seconds ago (a token issued long before the
# last fetch of the keys: its unknown kid is 401 at once)
jwts_with_kids() {
	/usr/bin/python3 -c '
import base64, json, os, sys, time
tok, prefix, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
body = tok.split(".", 1)[1]
if len(sys.argv) > 4:
    head, sig = body.split(".")
    claims = json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
    claims["iat"] = int(time.time()) - int(sys.argv[4])
    enc = json.dumps(claims, separators=(",", ":")).encode()
    body = base64.urlsafe_b64encode(enc).decode().rstrip("=") + "." + sig
for i in range(n):
    kid = "%s-%d-%s" % (prefix, i, os.urandom(6).hex())
    h = json.dumps({"alg": "RS256", "typ": "at+jwt", "kid": kid}, separators=(",", ":"))
    print(base64.urlsafe_b64encode(h.encode()).decode().rstrip("=") + "." + body)
' "$@"
}
# jwt_field TOKEN PART FILTER: a jq FILTER on the JWT's header (0) or payload (1)
jwt_field() {
	local s; s=$(cut -d. -f$(($2 + 1)) <<<"$1" | tr '_-' '/+')
	while [ $((${#s} % 4)) -ne 0 ]; do s=$s=; done
	base64 -d <<<"$s" 2>/dev/null | jq -r "$3"
}

# oauth_front: starts the shipped nginx for a Phantom that will listen on a
# TCP port chosen now (the resource URL must be known before Phantom's
# configuration is written). Sets OAUTH_BASE, OAUTH_RESOURCE (the MCP URL),
# OAUTH_PRM (the metadata URL), OAUTH_PH_PORT.
oauth_front() {
	OAUTH_PH_PORT=$(free_port) || return 1
	nginx_start "127.0.0.1:$OAUTH_PH_PORT" || return 1
	OAUTH_RESOURCE=$NGINX_URL
	OAUTH_BASE=${NGINX_URL%/mcp}
	OAUTH_PRM=$OAUTH_BASE/.well-known/oauth-protected-resource/mcp
}

# oauth_yaml FILE [AUTH-OAUTH-YAML...]: a Phantom configuration in
# auth.mode oauth for the authorization server at AS_URL and the resource
# OAUTH_RESOURCE: the example module's echo as `echo` (any token) and as
# `admin_echo` (auth_scopes mcp:admin); extra lines go under auth.oauth
oauth_yaml() {
	local f=$1 mod=$top_builddir/examples/module/.libs/phantom_example.so l; shift
	{
		cat <<YAML
server: { name: oauth-e2e, version: "1.0" }
workers: ${OAUTH_WORKERS:-2}
tools:
  - { name: echo, input: {text: {type: string, required: true}}, module: $mod, symbol: echo }
  - { name: admin_echo, input: {text: {type: string}}, module: $mod, symbol: echo, auth_scopes: ["mcp:admin"] }
auth:
  mode: oauth
  resource_metadata: $OAUTH_PRM
  metadata:
    path: /.well-known/oauth-protected-resource/mcp
    document:
      resource: $OAUTH_RESOURCE
      authorization_servers: ["$AS_URL"]
      scopes_supported: ["mcp:read", "mcp:write", "mcp:admin"]
      bearer_methods_supported: [header]
  oauth:
    issuer: $AS_URL
    algorithms: [RS256, ES256, EdDSA]
    required_scopes: ["mcp:read"]
    cache_dir: $T_DIR/oauth-cache
YAML
		for l in "$@"; do printf '    %s\n' "$l"; done
	} >"$f"
	chmod 0644 "$f"
}

# oauth_phantom CONF [ARGS...]: Phantom on OAUTH_PH_PORT (behind oauth_front's nginx)
oauth_phantom() {
	local conf=$1; shift
	PH_CONF=$conf PH_ADDR=127.0.0.1:$OAUTH_PH_PORT PH_BACKEND=$PH_ADDR PH_SOCK=
	PH_LOG=$T_DIR/phantom-$OAUTH_PH_PORT.log
	"$PHANTOM" -c "$conf" --listen "$PH_ADDR" "$@" 2>>"$PH_LOG" &
	PH_PID=$!
	t_started phantom "$PH_PID" "$PH_LOG" port_open "$OAUTH_PH_PORT"
}

# tls_test_ca DIR: a test CA made now (DIR/ca.pem), a server certificate it
# signed for localhost and 127.0.0.1 (DIR/server.pem, DIR/server.key), and
# another CA that signed nothing here (DIR/wrong-ca.pem)
tls_test_ca() {
	local d=$1 c
	mkdir -p "$d"
	for c in ca wrong-ca; do
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
			-subj "/CN=Phantom test $c" -keyout "$d/$c.key" -out "$d/$c.pem" 2>/dev/null || return 1
	done
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=localhost \
		-keyout "$d/server.key" -out "$d/server.csr" 2>/dev/null || return 1
	printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$d/server.ext"
	openssl x509 -req -in "$d/server.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" -CAcreateserial -days 2 \
		-extfile "$d/server.ext" -out "$d/server.pem" 2>/dev/null
}
