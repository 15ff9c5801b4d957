#!/bin/bash
# Hostile JSON envelopes over raw FastCGI (cgi-fcgi, no web server): strings
# that are not UTF-8 by RFC 3629 (overlong forms, surrogates, code points past
# U+10FFFF) are -32700; U+0000 in a method is -32600, in a name, uri, cursor,
# protocol version or any object key -32602; U+0000 in an argument value
# reaches module and exec handlers intact. Each hostile request is followed by
# a normal one that must be served by the same server.
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/reglib.sh"
command -v cgi-fcgi >/dev/null || skip_all "cgi-fcgi not installed"
export LC_ALL=C # ${#body} counts bytes, and bodies hold bytes that are not UTF-8

B=$T_DIR/bin
mkdir -p "$B"
# the request document comes back as structuredContent
printf '#!/bin/sh\nprintf "{\\"content\\":[],\\"structuredContent\\":"; cat; printf "}\\n"\n' >"$B/echo_input.sh"
chmod +x "$B/echo_input.sh"
cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: hostile-json, version: "1.0" }
workers: 1
tools:
  items:
    - { name: echo, input: {text: string}, module: testmod.so, symbol: args_echo }
    - { name: show, input: {text: string}, exec: [$B/echo_input.sh] }
YAML
phantom_up "$T_DIR/phantom.yaml" || { echo "not ok 1 - phantom starts"; exit 1; }

# send BODY [VAR=VALUE...]: one request with the 2026-07-28 routing headers
# of its method (up to an escape; Mcp-Name added by the caller). Not jq:
# some bodies are JSON that jq refuses.
send() {
	local b=$1 m; shift
	m=$(printf '%s' "$b" | sed -n 's/^[^"]*"jsonrpc":"2.0","id":[0-9]*,"method":"\([^"\\]*\).*/\1/p')
	fcgi_post "$PH_ADDR" "$b" $(mhdr "$m") "$@"
}
still() {
	send "$(req 99 server/discover)"
	is "$STATUS/$(jqr .result.resultType)" 200/complete "the next request after $1 is served"
}
# call ID JSON-PARAMS-TEXT: tools/call whose params are spliced in as text
# (so they may hold bytes jq would not pass)
call() {
	send "{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"tools/call\",\"params\":{$2,\"_meta\":$(meta)}}" "${@:3}"
}

send "$(req 1 tools/call '{"name":"echo","arguments":{"text":"hi"}}')" HTTP_MCP_NAME=echo
is "$STATUS/$(jqr .result.content[0].text)" '200/{"text":"hi"}' "a normal call is served"

# ---- UTF-8 (RFC 3629) -------------------------------------------------------
bad_utf8() { # ID BYTES WHAT
	call "$1" "\"name\":\"echo\",\"arguments\":{\"text\":\"a$2b\"}" HTTP_MCP_NAME=echo
	is "$STATUS/$(jqr .error.code)" 400/-32700 "$3 in a string: 400 -32700"
	like "$(jqr .error.message)" 'not valid UTF-8' "$3: the message says why"
	still "$3"
}
bad_utf8 2 $'\xc0\xae' "an overlong '.' (C0 AE)"
bad_utf8 3 $'\xe0\x80\xaf' "an overlong '/' (E0 80 AF)"
bad_utf8 4 $'\xed\xa0\x80' "a surrogate (ED A0 80)"
bad_utf8 5 $'\xf4\x90\x80\x80' "a code point past U+10FFFF (F4 90 80 80)"
bad_utf8 6 $'\xff' "a byte that is never UTF-8 (FF)"
bad_utf8 7 $'\xe2\x82' "a sequence cut short (E2 82)"
send "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\",\"params\":{\"_meta\":$(meta)},\"x$'\xc0\xae'\":1}"
is "$STATUS/$(jqr .error.code)" 400/-32700 "an overlong form in an object key: -32700"
still "an overlong form in a key"
call 9 '"name":"echo","arguments":{"text":"\ud800 \udbff\udfff é"}' HTTP_MCP_NAME=echo
is "$STATUS/$(jqr .result.content[0].text | jq -r .text)" "200/$(printf '\xef\xbf\xbd \xf4\x8f\xbf\xbf \xc3\xa9')" \
	"escapes: a lone surrogate becomes U+FFFD, a pair its code point, raw UTF-8 passes"

# ---- U+0000 where a name is meant --------------------------------------------
send "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/call\\u0000x\",\"params\":{\"name\":\"echo\",\"_meta\":$(meta)}}" \
	HTTP_MCP_METHOD=tools/call HTTP_MCP_NAME=echo
is "$STATUS/$(jqr .error.code)/$(jqr .id)" 400/-32600/10 "U+0000 in the method: 400 -32600 with the id"
still "U+0000 in the method"
call 11 '"name":"echo\u0000evil","arguments":{"text":"x"}' HTTP_MCP_NAME=echo
is "$(jqr .error.code)/$(jqr .id)" -32602/11 "U+0000 in the tool name: -32602 (Mcp-Name: echo does not match it)"
like "$(jqr .error.message)" 'name contains U\+0000' "the message names the member"
still "U+0000 in a tool name"
send "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"resources/read\",\"params\":{\"uri\":\"docs://index\\u0000.evil\",\"_meta\":$(meta)}}" \
	HTTP_MCP_NAME=docs://index
is "$(jqr .error.code)/$(jqr .error.message)" "-32602/Invalid params: uri contains U+0000" "U+0000 in a uri: -32602"
still "U+0000 in a uri"
send "{\"jsonrpc\":\"2.0\",\"id\":13,\"method\":\"tools/list\",\"params\":{\"cursor\":\"a\\u0000b\",\"_meta\":$(meta)}}"
is "$(jqr .error.code)/$(jqr .error.message)" "-32602/Invalid params: cursor contains U+0000" "U+0000 in a cursor: -32602"
still "U+0000 in a cursor"
send "{\"jsonrpc\":\"2.0\",\"id\":14,\"method\":\"completion/complete\",\"params\":{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"p\\u0000q\"},\"argument\":{\"name\":\"a\",\"value\":\"\"},\"_meta\":$(meta)}}"
is "$(jqr .error.code)/$(jqr .error.message)" "-32602/Invalid params: ref.name contains U+0000" \
	"U+0000 in a completion ref name: -32602"
v=$(meta | sed 's/"2026-07-28"/"2026-07-28\\u0000x"/')
send "{\"jsonrpc\":\"2.0\",\"id\":15,\"method\":\"ping\",\"params\":{\"_meta\":$v}}"
is "$STATUS/$(jqr .error.code)" 400/-32602 "U+0000 in the protocol version: 400 -32602"
still "U+0000 in the protocol version"

# ---- object keys and argument values -----------------------------------------
call 16 '"name":"echo","arguments":{"text\u0000evil":"x"}' HTTP_MCP_NAME=echo
is "$(jqr .error.code)/$(jqr .id)" -32602/16 "U+0000 in an argument key: -32602 with the id"
like "$(jqr .error.message)" 'object key contains U\+0000' "the message says what is wrong"
still "U+0000 in an argument key"
send "{\"jsonrpc\":\"2.0\",\"id\":17,\"method\":\"ping\",\"params\":{\"_meta\":$(meta),\"_meta\\u0000\":{}}}"
is "$(jqr .error.code)" -32602 "U+0000 in any other key: -32602"
still "U+0000 in a key of params"
call 18 '"name":"echo","arguments":{"text":"a\u0000b"}' HTTP_MCP_NAME=echo
is "$STATUS/$(jqr .result.isError)" 200/false "U+0000 in an argument value is served (module)"
is "$(jqr .result.content[0].text | jq -c '.text == "a\u0000b"')" true \
	"the module handler gets the value whole, the bytes after U+0000 too"
call 19 '"name":"show","arguments":{"text":"a\u0000b"}' HTTP_MCP_NAME=show
is "$(jqr '.result.structuredContent.arguments.text == "a\u0000b"')" true \
	"the exec handler gets the value whole on stdin"
still "U+0000 in argument values"
done_testing
