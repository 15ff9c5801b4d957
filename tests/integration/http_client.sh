#!/bin/bash
# The OpenSSL engine of src/lib/ph_http.h (the static build's HTTP client for
# OAuth: OpenSSL's HTTP client, names by c-ares), through tests/http_get,
# under valgrind when it is installed (no memory error, no definite leak),
# against https_server.py with a CA made here: GET by name (localhost) and
# by address, POST with Basic credentials, a body ended by closing, plain
# http; and what it must refuse with a clear reason and within its
# timeout: another CA, another name, no CA file, a 404 and a 503, too large
# an answer, a server that never answers, a name that does not resolve. With
# -s (ph_http_send) any status is an answer: a 503 with its Retry-After, a 204.
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/oauth-lib.sh"
HG=$top_builddir/tests/http_get
[ -x "$HG" ] || skip_all "tests/http_get not built (no libssl-dev or libc-ares-dev)"
command -v openssl >/dev/null || skip_all "openssl missing"
VG=()
if command -v valgrind >/dev/null && ! nm "$HG" 2>/dev/null | grep -q ' __asan_init'; then
	VG=(valgrind -q --error-exitcode=97 --leak-check=full --errors-for-leak-kinds=definite
		--log-file="$T_DIR/vg.%p")
fi
tls_test_ca "$T_DIR/tls" || { echo "not ok 1 - a test CA"; exit 1; }
d=$T_DIR/tls
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=other.example \
	-keyout "$d/other.key" -out "$d/other.csr" 2>/dev/null
printf 'subjectAltName=DNS:other.example\n' >"$d/other.ext"
openssl x509 -req -in "$d/other.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" -CAcreateserial -days 2 \
	-extfile "$d/other.ext" -out "$d/other.pem" 2>/dev/null
P1=$(free_port) P2=$(free_port) P3=$(free_port)
python3 "$top_srcdir/tests/integration/https_server.py" "$P1" "$d/server.pem" "$d/server.key" \
	"$P2" "$d/other.pem" "$d/other.key" "$P3" - - &
T_PIDS+=("$!")
wait_port "$P1" && wait_port "$P2" && wait_port "$P3" || { echo "not ok 1 - the servers start"; exit 1; }

# hg ARGS...: http_get under valgrind (when there), bounded by timeout 60;
# sets OUT, ERR, RC
hg() {
	OUT=$(timeout 60 "${VG[@]}" "$HG" "$@" 2>"$T_DIR/err"); RC=$?
	ERR=$(grep -v '^==' "$T_DIR/err")
}

hg -c "$d/ca.pem" "https://localhost:$P1/ok"
is "$RC/$OUT" '0/{"keys":[],"via":"tls"}' "GET https by name (c-ares: localhost), verified against ca_file"
hg -c "$d/ca.pem" "https://127.0.0.1:$P1/ok"
is "$RC/$OUT" '0/{"keys":[],"via":"tls"}' "GET https by IP address (the certificate's IP name)"
hg -c "$d/ca.pem" -u 'phantom:s3cr:et' -d 'token=a%2Bb&token_type_hint=access_token' "https://localhost:$P1/echo"
is "$RC/$(jq -r '[.method, .body, .basic, .type, .test] | join(" ")' <<<"$OUT" 2>/dev/null)" \
	"0/POST token=a%2Bb&token_type_hint=access_token phantom:s3cr:et application/x-www-form-urlencoded http_get" \
	"POST with a body, Basic credentials and the request's headers"
hg -c "$d/ca.pem" "https://localhost:$P1/nolen"
is "$RC/${#OUT}" 0/15000 "a body without Content-Length is read to the end of the connection"
hg "http://127.0.0.1:$P3/nolen"
is "$RC/${#OUT}" 0/15000 "plain http (a loopback issuer in tests)"
SSL_CERT_FILE=$d/ca.pem hg "https://localhost:$P1/ok"
is "$RC" 0 "without ca_file, SSL_CERT_FILE names the CA bundle"

hg -c "$d/wrong-ca.pem" "https://localhost:$P1/ok"
is "$RC" 1 "another CA: refused"
like "$ERR" "https://localhost:$P1/ok: TLS: the server's certificate is not trusted: unable to get local issuer certificate \\(CA certificates: $d/wrong-ca.pem\\)" \
	"... saying the certificate is not trusted, and by which CA file"
hg -c "$d/ca.pem" "https://localhost:$P2/ok"
is "$RC" 1 "a certificate for another name: refused"
like "$ERR" "not trusted: hostname mismatch" "... saying the name does not match"
SSL_CERT_FILE=$T_DIR/none.pem hg "https://localhost:$P1/ok"
like "$RC/$ERR" "^1/.*cannot load the CA certificates of $T_DIR/none.pem \\(SSL_CERT_FILE" "no CA file there: refused, naming it"
hg -c "$d/ca.pem" "https://localhost:$P1/missing"
like "$RC/$ERR" "^1/.*code=404" "a 404: refused, naming the status"
hg -s -c "$d/ca.pem" "https://localhost:$P1/busy"
is "$RC/$ERR/$OUT" "0/status 503 retry-after 7/busy" "any status asked for (ph_http_send): a 503, its Retry-After and body"
hg -s -c "$d/ca.pem" "https://localhost:$P1/ok"
is "$RC/$ERR" "0/status 200 retry-after -1" "... a 200 without Retry-After"
hg -s "http://127.0.0.1:$P3/empty"
is "$RC/$ERR/$OUT" "0/status 204 retry-after -1/" "... a 204: no body"
hg -c "$d/ca.pem" "https://localhost:$P1/busy"
like "$RC/$ERR" "^1/.*received error \\(code=503, reason=Service Unavailable\\)" "a 503 to a fetch: refused, naming the status"
hg -c "$d/ca.pem" -m 100000 "https://localhost:$P1/big"
like "$RC/$ERR" "^1/.*(more than 100000 bytes|max=100000)" "an answer above max_bytes: refused"
hg -c "$d/ca.pem" -t 1500 "https://localhost:$P1/slow"
is "$RC" 1 "a server that never answers: the client gives up by itself (not timeout(1)'s 124)"
like "$ERR" "no answer in time" "... saying so"
hg -t 3000 "https://no-such-host.invalid/ok"
like "$RC/$ERR" "^1/.*cannot look up no-such-host.invalid" "a name that does not resolve: refused, saying so"
if [ ${#VG[@]} -gt 0 ]; then
	is "$(cat "$T_DIR"/vg.* 2>/dev/null | grep -c '^==[0-9]*== .')" 0 "valgrind: no memory error and no definite leak in any run (exit status 97 above otherwise)"
fi
done_testing
