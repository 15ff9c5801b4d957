#!/bin/bash
# Hostile stdio framing: a last line without a newline is held to max_body
# exactly like one with a newline, a NUL byte does not cut a line short, a
# line that is not UTF-8 is -32700, U+0000 in a method or name is refused,
# and a queued notifications/cancelled that is not what it seems does not
# cancel anything. Each hostile line is followed by a normal request that
# must be answered by the same process.
. "${top_srcdir:-.}/tests/lib.sh"
export LC_ALL=C

test_conf "$T_DIR/phantom.yaml" hostile-stdio # http.max_body 2048
in=$T_DIR/in out=$T_DIR/out
ping() { printf '{"jsonrpc":"2.0","id":%s,"method":"ping"}' "$1"; }
pad=$(printf '%3000s' '')
# run: stdin from $in; sets N (lines out) and L1..: the answers as "id/code"
run() {
	"$PHANTOM" -c "$T_DIR/phantom.yaml" --stdio <"$in" >"$out" 2>"$T_DIR/err"
	RC=$?
	N=$(wc -l <"$out")
}
ans() { sed -n "$1p" "$out" | jq -r '"\(.id)/\(.error.code // "ok")"'; }
# byid ID: the answer to request ID (the lines come in the order they are
# ready: a call runs in a process of its own, a ping is answered at once)
byid() { jq -r --argjson i "$1" 'select(.id == $i) | "\(.id)/\(.error.code // "ok")"' "$out"; }

# ---- max_body on the last line -------------------------------------------------
# a complete message followed by blanks: the first max_body bytes parse
{ ping 1; echo; ping 2; printf '%s' "$pad"; } >"$in"
run
is "$RC/$N" 0/2 "a last line over max_body without a newline gets one answer"
is "$(ans 2)" null/-32000 "a last line over max_body without a newline is refused, not truncated and served"
{ ping 2; printf '%s\n' "$pad"; ping 3; echo; } >"$in"
run
is "$(ans 1)/$(ans 2)" null/-32000/3/ok "the same line with a newline is refused the same way, and the next served"
p4=$(ping 4)
printf '%s%*s' "$p4" $((2048 - ${#p4})) '' >"$in"
run
is "$(ans 1)" 4/ok "a last line of max_body bytes without a newline is served"

# ---- NUL bytes and UTF-8 -------------------------------------------------------
{ ping 5; printf '\0garbage\n'; ping 6; echo; ping 7; printf '\0xx'; } >"$in"
run
is "$(ans 1)/$(ans 2)/$(ans 3)" null/-32700/6/ok/null/-32700 \
	"a NUL byte in a line (the last one too) is -32700, not the part before it served"
{ printf '{"jsonrpc":"2.0","id":8,"method":"ping","params":{"x":"\xc0\xae"}}\n'; ping 9; echo
  printf '{"jsonrpc":"2.0","id":10,"method":"ping","params":{"x":"\xed\xa0\x80"}}\n'; ping 11; echo; } >"$in"
run
is "$(ans 1)/$(ans 2)/$(ans 3)/$(ans 4)" null/-32700/9/ok/null/-32700/11/ok \
	"lines with an overlong form or a surrogate are -32700, the next served"
jq -e . "$out" >/dev/null; ok "every answer is valid JSON"

# ---- U+0000 in names -----------------------------------------------------------
{ echo '{"jsonrpc":"2.0","id":12,"method":"ping\u0000x"}'; ping 13; echo
  echo '{"jsonrpc":"2.0","id":14,"method":"prompts/get","params":{"name":"a\u0000b"}}'; ping 15; echo
  echo '{"jsonrpc":"2.0","id":16,"method":"ping","params":{"a\u0000":1}}'; ping 17; echo; } >"$in"
run
is "$(ans 1)/$(ans 2)" 12/-32600/13/ok "U+0000 in a method: -32600, the next served"
is "$(byid 14)/$(byid 15)" 14/-32602/15/ok "U+0000 in a name: -32602, the next served"
is "$(byid 16)/$(byid 17)" 16/-32602/17/ok "U+0000 in a key: -32602, the next served"
is "$N" 6 "each of them answered once"

# ---- a queued cancel that is not one --------------------------------------------
# tools/call of a slow exec tool, then lookalike cancels read ahead while it runs
cat >"$T_DIR/slow.yaml" <<YAML
server: { name: hostile-stdio, version: "1.0" }
tools:
  items:
    - { name: slow, exec: [/bin/sh, -c, 'cat >/dev/null; sleep 1; echo "{\"content\":[]}"'] }
YAML
{ echo '{"jsonrpc":"2.0","id":"c","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
  echo '{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"slow"}}'
  echo '{"jsonrpc":"2.0","method":"notifications/cancelled\u0000x","params":{"requestId":"s"}}'
  echo '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s\u0000x"}}'
  printf '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s","r":"\xc0\xae"}}\n'
  sleep 2; ping 18; echo; } | "$PHANTOM" -c "$T_DIR/slow.yaml" --stdio >"$out" 2>"$T_DIR/err"
is "$(byid '"s"')" s/ok "lookalike cancels (U+0000 in the method or the id, bad UTF-8) do not cancel the call"
# the call runs in a process of its own; the lookalikes are answered at once
is "$(ans 2)/$(ans 3)/$(byid 18)" null/-32600/null/-32700/18/ok \
	"each is answered in its turn (-32600, none for the unknown id, -32700), the next request served"
is "$(wc -l <"$out")" 5 "nothing else is written"
done_testing
