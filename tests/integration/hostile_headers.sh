#!/bin/bash
# Hostile HTTP headers over raw FastCGI (cgi-fcgi sets any value a web server
# might pass): Host and Origin with odd bracketed IPv6 forms or ports are 403
# (DNS rebinding), Mcp-Param-* integers match only in decimal form, header
# values never match a body value that differs after a U+0000, and a base64
# header that decodes to anything but UTF-8 is -32020. Each hostile request is
# followed by a normal one that must be served by the same server.
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/reglib.sh"
command -v cgi-fcgi >/dev/null || skip_all "cgi-fcgi not installed"
export LC_ALL=C

cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: hostile-headers, version: "1.0" }
workers: 1
http: { hosts: [localhost, "[::1]"] }
tools:
  items:
    - name: headers
      input:
        region: {type: string, x-mcp-header: Region}
        priority: {type: integer, x-mcp-header: Priority}
      module: testmod.so
      symbol: args_echo
YAML
phantom_up "$T_DIR/phantom.yaml" || { echo "not ok 1 - phantom starts"; exit 1; }

send() { local b=$1 m=$2; shift 2; fcgi_post "$PH_ADDR" "$b" $(mhdr "$m") "$@"; }
still() {
	send "$(req 99 server/discover)" server/discover
	is "$STATUS/$(jqr .result.resultType)" 200/complete "the next request after $1 is served"
}
discover() { send "$(req 1 server/discover)" server/discover "$@"; }

# ---- Host and Origin ---------------------------------------------------------
host_ok() { discover "HTTP_HOST=$1"; is "$STATUS" 200 "Host: $1 is allowed"; }
host_bad() {
	discover "HTTP_HOST=$1"
	is "$STATUS/$(jqr .error.code)" 403/-32000 "Host: $1 is refused (403)"
	still "Host: $1"
}
host_ok '[::1]'
host_ok '[::1]:8080'
host_ok 'localhost:8080'
host_ok 'LOCALHOST'
host_bad '[::1]evil'
host_bad '[::1].evil.com'
host_bad '[::1]:80evil'
host_bad '[::1'
host_bad '[]'
host_bad '[::1@evil]'
host_bad 'localhost:80x'
host_bad 'localhost:8080:1'
host_bad 'localhost:123456'
host_bad "localhost$(printf 'x%.0s' $(seq 300))"

origin_ok() { discover "HTTP_ORIGIN=$1"; is "$STATUS" 200 "Origin: $1 is allowed"; }
origin_bad() {
	discover "HTTP_ORIGIN=$1"
	is "$STATUS/$(jqr .error.code)" 403/-32000 "Origin: $1 is refused (403)"
	still "Origin: $1"
}
origin_ok 'http://[::1]'
origin_ok 'http://[::1]:3000'
origin_ok 'http://localhost:3000'
origin_bad 'http://[::1].evil.com'
origin_bad 'http://[::1]evil'
origin_bad 'http://[::1]:3000.evil.com'
origin_bad 'http://localhost:80@evil.com'
origin_bad 'http://localhost.evil.com'

# ---- Mcp-Param-* integers (mcp-wire §6.3: integers as decimal) -----------------
H='{"name":"headers","arguments":{"region":"eu","priority":42}}'
param() { send "$(req 2 tools/call "$H")" tools/call HTTP_MCP_NAME=headers HTTP_MCP_PARAM_REGION=eu \
	"HTTP_MCP_PARAM_PRIORITY=$1"; }
for v in 42 42.0 ' 42 '; do
	param "$v"
	is "$STATUS/$(jqr .result.isError)" 200/false "Mcp-Param-Priority: '$v' matches 42"
done
for v in 0x2A +42 042 4.2e1 42e0 42. .42e2 4_2 '' 42abc; do
	param "$v"
	is "$STATUS/$(jqr .error.code)" 400/-32020 "Mcp-Param-Priority: '$v' does not match 42"
	still "Mcp-Param-Priority: '$v'"
done

# ---- U+0000 and encodings in mirrored values ---------------------------------
send "$(req 3 tools/call '{"name":"headers","arguments":{"region":"eu\u0000west"}}')" tools/call \
	HTTP_MCP_NAME=headers HTTP_MCP_PARAM_REGION=eu
is "$(jqr .error.code)" -32602 "a mirrored argument holding U+0000 is -32602, Mcp-Param-Region: eu does not match it"
like "$(jqr .error.message)" 'region, mirrored in Mcp-Param-Region, contains U\+0000' "the message names both"
still "a header matching a value up to its U+0000"
send "$(req 4 tools/call '{"name":"headers","arguments":{"region":"eu\u0000west"}}')" tools/call \
	HTTP_MCP_NAME=headers HTTP_MCP_PARAM_REGION="=?base64?$(printf 'eu\0west' | base64)?="
is "$(jqr .error.code)" -32602 "the same with the value in base64: -32602"
still "a base64 header holding U+0000"
send "$(req 4 tools/call "$H")" tools/call \
	HTTP_MCP_NAME=headers HTTP_MCP_PARAM_PRIORITY=42 HTTP_MCP_PARAM_REGION="=?base64?$(printf 'eu\0west' | base64)?="
is "$STATUS/$(jqr .error.code)" 400/-32020 "a base64 header decoding to U+0000 is malformed (-32020)"
still "a base64 header decoding to U+0000"
for bytes in '\xc0\xae' '\xed\xa0\x80' '\xf4\x90\x80\x80' '\xff'; do
	send "$(req 5 tools/call "$H")" tools/call HTTP_MCP_NAME=headers HTTP_MCP_PARAM_PRIORITY=42 \
		HTTP_MCP_PARAM_REGION="=?base64?$(printf "eu$bytes" | base64)?="
	is "$STATUS/$(jqr .error.code)" 400/-32020 "a base64 Mcp-Param-Region decoding to eu$bytes (not UTF-8): -32020"
	still "a base64 header that is not UTF-8 ($bytes)"
done
send "$(req 6 tools/call "$H")" tools/call HTTP_MCP_NAME="=?base64?$(printf 'head\xc0\xaeers' | base64)?=" \
	HTTP_MCP_PARAM_PRIORITY=42 HTTP_MCP_PARAM_REGION=eu
is "$STATUS/$(jqr .error.code)" 400/-32020 "a base64 Mcp-Name that is not UTF-8: -32020"
send "$(req 7 tools/call "$H")" tools/call HTTP_MCP_NAME="=?base64?$(printf 'headers' | base64)?=" \
	HTTP_MCP_PARAM_PRIORITY=42 HTTP_MCP_PARAM_REGION="=?base64?$(printf 'eu' | base64)?="
is "$STATUS/$(jqr .result.isError)" 200/false "base64 headers that decode to the body values match"

# ---- header values quoted in error messages ----------------------------------
utf8() { printf '%s' "$BODY" | iconv -f UTF-8 -t UTF-8 >/dev/null 2>&1; }
send "$(req 8 tools/list)" $'tools/\xc0\xaelist'
is "$STATUS/$(jqr .error.code)" 400/-32020 "Mcp-Method: bytes that are not UTF-8 do not match"
utf8; ok "the -32020 message quoting them is still UTF-8"
like "$(jqr .error.message)" "'tools/\\?\\?list'" "the bad bytes are shown as '?'"
still "an Mcp-Method that is not UTF-8"
long=$(printf '\xc3\xa9%.0s' $(seq 300))
send "$(req 9 tools/call "$H")" tools/call "HTTP_MCP_NAME=$long" HTTP_MCP_PARAM_PRIORITY=42 HTTP_MCP_PARAM_REGION=eu
is "$STATUS/$(jqr .error.code)" 400/-32020 "a long Mcp-Name of 'é' does not match"
utf8; ok "the message, cut to its buffer, is still UTF-8"
send "$(req 10 tools/call "$H")" tools/call HTTP_MCP_NAME=headers HTTP_MCP_PARAM_PRIORITY=42 "HTTP_MCP_PARAM_REGION=x$long"
is "$STATUS/$(jqr .error.code)" 400/-32020 "a long Mcp-Param-Region of 'é' does not match"
utf8; ok "its message, cut at 200 bytes, is still UTF-8"
still "long header values quoted in messages"
done_testing
