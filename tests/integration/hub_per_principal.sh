#!/bin/bash
# subscriptions.max_per_principal in the hub: a principal holding that many
# listen streams has the next refused while another principal is served;
# once one of its streams ends it may open another (the hub counts each
# principal's streams in a table, not by scanning every stream).
. "${top_srcdir:-.}/tests/lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
bearer_token T_ALICE H_ALICE
bearer_token T_BOB H_BOB
cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: per-principal, version: "1.0" }
workers: 2
subscriptions: { max_ms: 60000, keepalive_ms: 1000, max_per_principal: 2, control_socket: '' }
auth:
  mode: bearer
  tokens:
    - { principal: alice, sha256: $H_ALICE }
    - { principal: bob, sha256: $H_BOB }
YAML
behind_nginx phantom_listen "$T_DIR/phantom.yaml"
body='{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{"notifications":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
# listen OUT TOKEN [SECONDS]: a listen stream in the background, its body in OUT; sets LP
listen() {
	curl -sN -m "${3:-30}" -o "$1" "$U" -H 'Content-Type: application/json' -H "Authorization: Bearer $2" \
		-H "MCP-Protocol-Version: $MODERN" -H 'Mcp-Method: subscriptions/listen' -d "$body" &
	LP=$!
	T_PIDS+=("$LP")
}
acked() { grep -q 'subscriptions/acknowledged' "$1" 2>/dev/null; }
listen "$T_DIR/a1" "$T_ALICE"; A1=$LP
listen "$T_DIR/a2" "$T_ALICE"
wait_for 10 acked "$T_DIR/a1" && wait_for 10 acked "$T_DIR/a2"
ok "alice holds two listen streams"
listen "$T_DIR/a3" "$T_ALICE" 10; A3=$LP
wait "$A3"
like "$(cat "$T_DIR/a3")" "Too many open subscriptions for this principal \(subscriptions.max_per_principal is 2\)" \
	"a third for alice is refused, naming the limit"
listen "$T_DIR/b1" "$T_BOB"
wait_for 10 acked "$T_DIR/b1"
ok "bob's stream is served meanwhile"
kill "$A1"
ended() { grep -q 'hub: listen L of alice ended' "$PH_LOG"; }
wait_for 10 ended
ok "one of alice's streams ends (the client left)"
listen "$T_DIR/a4" "$T_ALICE"
wait_for 10 acked "$T_DIR/a4"
ok "alice may open another once one has ended"
listen "$T_DIR/a5" "$T_ALICE" 10; A5=$LP
wait "$A5"
like "$(cat "$T_DIR/a5")" "Too many open subscriptions for this principal" "... and no more than two again"
done_testing
