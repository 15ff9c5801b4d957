#!/bin/bash
# subscriptions/listen through nginx and over stdio: the acknowledgement comes
# first and carries the subscription id, the filter is narrowed to what the
# server offers, keep-alives flow, the stream ends with a tagged result when
# it reaches subscriptions.max_ms or the server reloads (without a hub:
# subscriptions.alone_max_ms), a stream that
# would exceed subscriptions.max_streams is refused while others are served,
# and a listen may name as many resourceSubscriptions as
# subscriptions.max_resource_subscriptions allows (100,000).
. "${top_srcdir:-.}/tests/lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"

cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: listen-test, version: "1.0" }
workers: 3
subscriptions: { max_ms: 1500, keepalive_ms: 300, max_streams: 1 }
YAML
behind_nginx phantom_listen "$T_DIR/phantom.yaml"
listen_body='{"jsonrpc":"2.0","id":"L1","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true,"promptsListChanged":true},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
listen() {
	curl -sN -D "$1.h" -o "$1" "$U" -H 'Content-Type: application/json' \
		-H "MCP-Protocol-Version: $MODERN" -H 'Mcp-Method: subscriptions/listen' -d "$listen_body"
}
events() { sed -n 's/^data: //p' "$1"; }

start=$(date +%s%N)
listen "$T_DIR/s1"
took=$(( ($(date +%s%N) - start) / 1000000 ))
like "$(tr -d '\r' <"$T_DIR/s1.h")" 'Content-Type: text/event-stream' "listen answers with an event stream"
first=$(events "$T_DIR/s1" | head -1)
is "$(jq -r .method <<<"$first")" notifications/subscriptions/acknowledged "the first message is the acknowledgement"
is "$(jq -r '.params._meta["io.modelcontextprotocol/subscriptionId"]' <<<"$first")" L1 "the ack carries the subscription id"
is "$(jq -c .params.notifications <<<"$first")" '{}' "the filter is narrowed to what the server offers (no tools, no prompts)"
grep -q '^: keepalive' "$T_DIR/s1"; ok "keep-alive comments are sent"
last=$(events "$T_DIR/s1" | tail -1)
is "$(jq -r .id <<<"$last")" L1 "the stream ends with the listen request's result"
is "$(jq -r '.result._meta["io.modelcontextprotocol/subscriptionId"]' <<<"$last")" L1 "the result is tagged with the subscription id"
[ "$took" -ge 1400 ] && [ "$took" -lt 4000 ]; ok "the stream lasted about subscriptions.max_ms ($took ms)"
events "$T_DIR/s1" | jq -e 'select(.method != null and .id != null)' >/dev/null && r=1 || r=0
is "$r" 0 "no JSON-RPC request is ever sent on the stream"

# max_streams: 1 -> a second stream at the same time is refused, others served
listen "$T_DIR/s2" & lp=$!
sleep 0.4
post "$U" "$listen_body" -H "MCP-Protocol-Version: $MODERN" -H 'Mcp-Method: subscriptions/listen'
is "$(jqr .error.code)" -32603 "a listen over subscriptions.max_streams is refused"
mpost "$U" 5 server/discover '{}'
is "$STATUS" 200 "other requests are served while a stream is open"
# the open stream lives through a reload (in the hub) and ends with its result
kill -HUP "$PH_PID"
wait "$lp"
is "$(events "$T_DIR/s2" | tail -1 | jq -r .id)" L1 "across a reload the stream ends with its result"
sleep 0.3
listen "$T_DIR/s3"
is "$(events "$T_DIR/s3" | head -1 | jq -r .method)" notifications/subscriptions/acknowledged "after the reload a new stream is accepted"

# a client that walks away frees its stream slot at once (no keep-alive needed)
sed -i 's/keepalive_ms: 300/keepalive_ms: 60000/; s/max_ms: 1500/max_ms: 60000/' "$T_DIR/phantom.yaml"
kill -HUP "$PH_PID"; sleep 0.5
curl -sN -o "$T_DIR/s4" "$U" -H 'Content-Type: application/json' \
	-H "MCP-Protocol-Version: $MODERN" -H 'Mcp-Method: subscriptions/listen' -d "$listen_body" & lp=$!
sleep 0.4
kill "$lp" 2>/dev/null; wait "$lp" 2>/dev/null
sleep 0.5
timeout 2 curl -sN -o "$T_DIR/s5" "$U" -H 'Content-Type: application/json' \
	-H "MCP-Protocol-Version: $MODERN" -H 'Mcp-Method: subscriptions/listen' -d "$listen_body"
is "$(events "$T_DIR/s5" | head -1 | jq -r .method)" notifications/subscriptions/acknowledged \
	"a stream the client closed frees its slot within a second, keep-alives or not"

post "$U" '{"jsonrpc":"2.0","id":"L2","method":"subscriptions/listen","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}' \
	-H "MCP-Protocol-Version: $MODERN" -H 'Mcp-Method: subscriptions/listen'
is "$(jqr .error.code)" -32602 "listen without a notifications filter is -32602"
for bad in '{"toolsListChanged":"yes"}' '{"resourceSubscriptions":"file:///x"}' '{"resourceSubscriptions":[1]}'; do
	post "$U" '{"jsonrpc":"2.0","id":"L3","method":"subscriptions/listen","params":{"notifications":'"$bad"',"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}' \
		-H "MCP-Protocol-Version: $MODERN" -H 'Mcp-Method: subscriptions/listen'
	is "$(jqr .error.code)" -32602 "a filter of the wrong types ($bad) is -32602"
done
mpost "$U" 6 server/discover '{}'
is "$STATUS" 200 "and the server keeps serving"

# stdio: the ack, and other requests keep being answered while it is open
out=$( (printf '%s\n' "$listen_body"; printf '%s\n' "$(req 2 server/discover)") |
	timeout 5 "$PHANTOM" -c "$T_DIR/phantom.yaml" --stdio 2>/dev/null)
is "$(sed -n 1p <<<"$out" | jq -r .method)" notifications/subscriptions/acknowledged "stdio: the ack comes first"
is "$(sed -n 2p <<<"$out" | jq -r .id)" 2 "stdio: requests after a listen are answered"
# ---- without a hub (one process, as under mod_fcgid) a stream ends after
# subscriptions.alone_max_ms, well before max_ms, and frees its process
cat >"$T_DIR/alone.yaml" <<YAML
server: { name: listen-alone, version: "1.0" }
workers: 1
subscriptions: { max_ms: 60000, keepalive_ms: 60000, alone_max_ms: 1000 }
YAML
kill -TERM "$PH_PID"; wait_gone "$PH_PID" 10
behind_nginx phantom_listen "$T_DIR/alone.yaml"
curl -sN -m 20 -o "$T_DIR/alone" "$U" -H 'Content-Type: application/json' \
	-H "MCP-Protocol-Version: $MODERN" -H 'Mcp-Method: subscriptions/listen' -d "$listen_body"
is "$(events "$T_DIR/alone" | head -1 | jq -r .method)" notifications/subscriptions/acknowledged "no hub: the stream is acknowledged"
is "$(events "$T_DIR/alone" | tail -1 | jq -r .id)" L1 \
	"... and ends with its result after alone_max_ms (max_ms is 60 s; the process is not held)"
mpost "$U" 7 server/discover '{}'
is "$STATUS" 200 "the one process serves the next request"

# ---- 100,000 resourceSubscriptions: the documented limit is the real one -----------
kill -TERM "$PH_PID"; wait_gone "$PH_PID" 10
mkdir -p "$T_DIR/data"
printf 'one\n' >"$T_DIR/data/a.txt"
cat >"$T_DIR/many.yaml" <<YAML
server: { name: listen-many, version: "1.0" }
workers: 2
subscriptions: { max_ms: 60000, keepalive_ms: 1000, max_resource_subscriptions: 100000, control_socket: '' }
resource_templates:
  - { uri_template: "file:///data/{name}", name: data, dir: data }
YAML
phantom_listen "$T_DIR/many.yaml" || { echo "not ok - phantom restarts"; exit 1; }
nginx_start "$PH_ADDR" || { echo "not ok - nginx restarts"; exit 1; }
U=$NGINX_URL
python3 - "$U" "$T_DIR/ready-many" >"$T_DIR/many.out" <<'PY' &
import json, sys, urllib.request
url, ready = sys.argv[1:3]
uris = ["file:///data/unknown-%06d.txt" % i for i in range(99999)] + ["file:///data/a.txt"]
body = {"jsonrpc": "2.0", "id": "M", "method": "subscriptions/listen",
        "params": {"notifications": {"resourceSubscriptions": uris},
                   "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                             "io.modelcontextprotocol/clientCapabilities": {}}}}
req = urllib.request.Request(url, json.dumps(body).encode(), {
    "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"})
try:
    with urllib.request.urlopen(req, timeout=20) as r:
        for line in r:
            if not line.startswith(b"data: "):
                continue
            m = json.loads(line[6:])
            if "error" in m:
                print("error", m["error"]["message"], flush=True)
                break
            if m.get("method") == "notifications/subscriptions/acknowledged":
                print("acked", len(m["params"]["notifications"].get("resourceSubscriptions", [])), flush=True)
                open(ready, "w").close()
            if m.get("method") == "notifications/resources/updated":
                print("updated", m["params"]["uri"], flush=True)
                break
except Exception as e:
    print("exception", e, flush=True)
open(ready, "w").close()
PY
mp=$!
wait_for 30 test -e "$T_DIR/ready-many"
sleep 0.5
printf 'one, changed\n' >"$T_DIR/data/a.txt"
wait "$mp"
like "$(head -1 "$T_DIR/many.out")" "^acked [0-9]+$" "a listen naming 100,000 resourceSubscriptions is acknowledged"
is "$(grep '^updated' "$T_DIR/many.out")" "updated file:///data/a.txt" "and a change to one of them reaches it"
grep -q "longer than\|hand-over larger" "$PH_LOG" && r=1 || r=0
is "$r" 0 "the hub took the hand-over whole"
mpost "$U" 7 resources/read '{"uri":"file:///data/a.txt"}'
is "$(jqr '.result.contents[0].text')" "one, changed" "and the server serves as before"
done_testing
