#!/bin/bash
# OTLP over https (docs/telemetry.md), through lib/ph_http.h in the dynamic
# build (libcurl) and in the static one (make static: OpenSSL's engine,
# names by c-ares), behind nginx with a master: the collector stand-in
# (otel_collector.cjs) serves https with a certificate for localhost signed
# by a CA made here. With OTEL_EXPORTER_OTLP_CERTIFICATE naming that CA the
# spans arrive though the first export is answered 503 (Retry-After: 1),
# none lost, the OTLP headers reach the collector and never the log; with a
# collector whose certificate another CA signed nothing reaches it, the
# log says the certificate is not trusted, and /metrics counts the failed
# exports and the dropped spans; a CA file that cannot be read is an error
# of -t naming the variable. Then the OpenSSL engine posting an OTLP export
# (gzip, a secret header, 503 then 200) under valgrind, through
# tests/http_get (a static program cannot run under valgrind: its libc's
# own start-up is reported).
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/reglib.sh"
. "$top_srcdir/tests/oauth-lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
command -v jq >/dev/null || skip_all "jq not installed"
command -v openssl >/dev/null || skip_all "openssl not installed"
otel_collector_supported
"$PHANTOM" -V 2>&1 | grep -q 'HTTP client' || skip_all "this build has no HTTP client"

# the CA Phantom is given (ca.pem, which signed server.pem for localhost and
# 127.0.0.1) and another (wrong-ca.pem), which signs rogue.pem for localhost
tls_test_ca "$T_DIR/tls" || { echo "not ok 1 - a test CA"; exit 1; }
d=$T_DIR/tls
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=localhost \
	-keyout "$d/rogue.key" -out "$d/rogue.csr" 2>/dev/null
openssl x509 -req -in "$d/rogue.csr" -CA "$d/wrong-ca.pem" -CAkey "$d/wrong-ca.key" -CAcreateserial \
	-days 2 -extfile "$d/server.ext" -out "$d/rogue.pem" 2>/dev/null

# coll_start NAME CERT [FAIL_FIRST]: an https collector with CERT (and its
# key); sets C_URL (by name: localhost) and C_OUT (its JSON lines)
coll_start() {
	local dir=$T_DIR/$1
	mkdir -p "$dir"
	: >"$dir/out"
	OUT=$dir/out PORT_FILE=$dir/port FAIL_FIRST=${3:-0} PHANTOM_NPM_DIR=$NPM TLS_CERT=$d/$2.pem \
		TLS_KEY=$d/$2.key "$NODE" "$top_srcdir/tests/integration/otel_collector.cjs" 2>"$dir/err" &
	T_PIDS+=("$!")
	wait_for 30 test -s "$dir/port" || { echo "not ok - the collector starts"; cat "$dir/err"; exit 1; }
	C_URL=https://localhost:$(cat "$dir/port")
	C_OUT=$dir/out
}
# conf FILE ENDPOINT: a server without modules (the static build loads none)
conf() {
	cat >"$1" <<YAML
server: { name: otel-https, version: "1.0" }
workers: 2
http: { metrics: { path: /metrics } }
telemetry: { otlp: { endpoint: "$2" }, service_name: otel-https }
prompts:
  - { name: greet, messages: [ { role: user, text: hello } ] }
YAML
}
# greet N: N prompts/get calls through nginx; sets SERVED
greet() {
	local i
	SERVED=0
	for i in $(seq 1 "$1"); do
		mpost "$U" "$i" prompts/get '{"name":"greet"}'
		[ "$STATUS" = 200 ] && SERVED=$((SERVED + 1))
	done
}
nspans() { jq -c 'select(.kind == "span" and .name == "prompts/get greet")' "$C_OUT" | wc -l; }
scrape() { curl -s "${U%/mcp}/metrics"; }

# checks LABEL: the https checks with $PHANTOM
checks() {
	local l=$1
	# ---- the collector's CA named: 503 then 200, nothing lost
	coll_start "good-$l" server 1
	conf "$T_DIR/good-$l.yaml" "$C_URL"
	export OTEL_EXPORTER_OTLP_CERTIFICATE=$d/ca.pem OTEL_BSP_SCHEDULE_DELAY=300 \
		OTEL_EXPORTER_OTLP_HEADERS="x-test-token=s3cr%3Det"
	"$PHANTOM" -c "$T_DIR/good-$l.yaml" -t >"$T_DIR/t-$l.out" 2>&1
	is "$?" 0 "$l: -t accepts an https endpoint"
	behind_nginx phantom_up "$T_DIR/good-$l.yaml"
	unset OTEL_EXPORTER_OTLP_CERTIFICATE OTEL_BSP_SCHEDULE_DELAY OTEL_EXPORTER_OTLP_HEADERS
	greet 5
	is "$SERVED" 5 "$l: five prompts/get behind nginx"
	wait_for 60 sh -c "[ \$(jq -c 'select(.kind == \"span\" and .name == \"prompts/get greet\")' '$C_OUT' | wc -l) -ge 5 ]"
	is "$(nspans)" 5 "$l: over https, verified against OTEL_EXPORTER_OTLP_CERTIFICATE, all five spans arrive though the first export was answered 503"
	is "$(head -1 "$C_OUT.requests" | jq -r .auth)" "s3cr=et" "$l: OTEL_EXPORTER_OTLP_HEADERS reach the collector"
	grep -q 's3cr' "$PH_LOG"; [ $? -ne 0 ]; ok "$l: and never the log"
	test ! -s "$C_OUT.errors"; ok "$l: the collector decoded every export"
	wait_for 20 sh -c "curl -s '${U%/mcp}/metrics' | grep -Eq 'phantom_otel_records_total\\{event=\"export_retry\"\\} [1-9]'"
	like "$(scrape)" 'phantom_otel_records_total\{event="export_retry"\} [1-9]' "$l: /metrics counts the retried export"
	t_stop

	# ---- a collector whose certificate another CA signed: nothing sent
	coll_start "rogue-$l" rogue
	conf "$T_DIR/rogue-$l.yaml" "$C_URL"
	export OTEL_EXPORTER_OTLP_CERTIFICATE=$d/ca.pem OTEL_BSP_SCHEDULE_DELAY=100 OTEL_BSP_EXPORT_TIMEOUT=1500 \
		OTEL_BSP_MAX_QUEUE_SIZE=4 OTEL_BSP_MAX_EXPORT_BATCH_SIZE=2
	behind_nginx phantom_up "$T_DIR/rogue-$l.yaml"
	unset OTEL_EXPORTER_OTLP_CERTIFICATE OTEL_BSP_SCHEDULE_DELAY OTEL_BSP_EXPORT_TIMEOUT OTEL_BSP_MAX_QUEUE_SIZE \
		OTEL_BSP_MAX_EXPORT_BATCH_SIZE
	greet 20
	is "$SERVED" 20 "$l: a collector that is not trusted costs no request"
	wait_for 60 sh -c "curl -s '${U%/mcp}/metrics' | grep -Eq 'phantom_otel_records_total\\{event=\"dropped_export\"\\} [1-9]'"
	s=$(scrape)
	like "$s" 'phantom_otel_records_total\{event="export_failed"\} [1-9]' "$l: /metrics counts the failed exports"
	like "$s" 'phantom_otel_records_total\{event="dropped_export"\} [1-9]' "$l: and the spans they dropped"
	test ! -s "$C_OUT.requests"; ok "$l: the collector got nothing"
	like "$(cat "$PH_LOG")" "telemetry: $C_URL/v1/traces: (TLS: the server's certificate is not trusted|SSL certificate problem): unable to get local issuer certificate" \
		"$l: the log says the collector's certificate is not trusted"
	t_stop

	# ---- -t: a CA file that cannot be read
	OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE=$T_DIR/none.pem "$PHANTOM" -c "$T_DIR/good-$l.yaml" -t >"$T_DIR/t2-$l.out" 2>&1
	is "$?" 1 "$l: -t refuses a CA file that cannot be read"
	like "$(cat "$T_DIR/t2-$l.out")" "telemetry: OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE: cannot read $T_DIR/none.pem" \
		"$l: naming the variable and the file"
}

checks dynamic
if [ "${PHANTOM_STATIC_TESTS:-yes}" = no ]; then
	diag "the static build's checks skipped (PHANTOM_STATIC_TESTS=no)"
elif ! static_phantom; then
	echo "not ok - make static builds static/phantom-fcgi"
	T_FAIL=$((T_FAIL + 1))
elif ! "$STATIC" -V 2>&1 | grep -q 'HTTP client'; then
	diag "the static build's checks skipped: it has no HTTP client (libssl and c-ares not found)"
else
	DYN=$PHANTOM
	PHANTOM=$STATIC checks static
	PHANTOM=$DYN
fi

# ---- the OpenSSL engine posting an export, under valgrind
HG=$top_builddir/tests/http_get
if [ ! -x "$HG" ]; then
	diag "tests/http_get not built: the valgrind check of the OpenSSL engine is skipped"
elif ! command -v valgrind >/dev/null || nm "$HG" 2>/dev/null | grep -q ' __asan_init'; then
	diag "no valgrind (or a sanitizer build): the OpenSSL engine's export runs without it"
	VG=()
else
	VG=(valgrind -q --error-exitcode=97 --leak-check=full --errors-for-leak-kinds=definite)
fi
if [ -x "$HG" ]; then
	coll_start vg server 1
	printf '' | gzip -c >"$T_DIR/empty.gz" # an empty ExportTraceServiceRequest, gzipped
	post_vg() {
		timeout 120 "${VG[@]}" "$HG" -s -c "$d/ca.pem" -f "$T_DIR/empty.gz" -T application/x-protobuf \
			-H Content-Encoding=gzip -H x-test-token=vg-secret "$C_URL/v1/traces" >/dev/null 2>"$T_DIR/vg.err"
		RC=$?
		cat "$T_DIR/vg.err" >>"$T_DIR/vg.all"
		ERR=$(grep -v '^==' "$T_DIR/vg.err")
	}
	post_vg
	is "$RC/$ERR" "0/status 503 retry-after 1" "OpenSSL engine${VG:+ under valgrind}: an export answered 503 with its Retry-After"
	post_vg
	is "$RC/$ERR" "0/status 200 retry-after -1" "... and the next one 200"
	is "$(jq -r '.encoding + " " + .auth + " " + .type' "$C_OUT.requests" | sort -u)" \
		"gzip vg-secret application/x-protobuf" "... with Content-Encoding, the header and the type"
	test ! -s "$C_OUT.errors"; ok "... which the collector decoded"
	if [ ${#VG[@]} -gt 0 ]; then
		is "$(grep -c '^==[0-9]*== .' "$T_DIR/vg.all")" 0 "valgrind: no memory error and no definite leak"
	fi
fi
done_testing
