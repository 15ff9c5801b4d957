#!/usr/bin/env python3
"""Opens many subscriptions/listen streams at once through a web server and
reports what each received.

  listen_clients.py URL N SECONDS READY_FILE [FILTER...]

Opens N streams (HTTP/1.0, so the body arrives unchunked until the server
closes), the i-th with FILTER[i % len(FILTER)] as its notifications filter
(a JSON object; default {"toolsListChanged": true}), writes the number of
acknowledged streams to READY_FILE once every stream is acknowledged or
failed, reads everything until each stream closes or SECONDS pass, and
prints one JSON line per stream: {"i", "filter", "acked", "tools", "prompts",
"resources", "result", "error", "closed"}."""
import json, os, resource, selectors, socket, sys, time
from urllib.parse import urlparse

url, n, seconds, ready_file = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
filters = [json.loads(f) for f in sys.argv[5:]] or [{"toolsListChanged": True}]
u = urlparse(url)
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, n + 64)), hard))
sel = selectors.DefaultSelector()
streams = []

def request(i, flt):
    body = json.dumps({"jsonrpc": "2.0", "id": "S%d" % i, "method": "subscriptions/listen",
                       "params": {"notifications": flt, "_meta": {
                           "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                           "io.modelcontextprotocol/clientCapabilities": {}}}}).encode()
    head = ("POST %s HTTP/1.0\r\nHost: %s\r\nContent-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
            "Mcp-Method: subscriptions/listen\r\nContent-Length: %d\r\n\r\n"
            % (u.path, u.netloc, len(body))).encode()
    return head + body

for i in range(n):
    s = socket.create_connection((u.hostname, u.port))
    s.setblocking(False)
    st = {"i": i, "filter": filters[i % len(filters)], "sock": s, "buf": b"", "closed": False,
          "out": request(i, filters[i % len(filters)])}
    streams.append(st)
    sel.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE, st)

def acked(st):
    if not st.get("acked"):
        st["acked"] = b"notifications/subscriptions/acknowledged" in st["buf"]
    return st["acked"]

def pending(streams):
    """Streams neither acknowledged nor closed yet."""
    return sum(1 for st in streams if not (st["closed"] or acked(st)))

ready = False
deadline = time.time() + seconds
open_count = n
while open_count > 0 and time.time() < deadline:
    for key, ev in sel.select(timeout=0.2):
        st = key.data
        if ev & selectors.EVENT_WRITE and st["out"]:
            sent = st["sock"].send(st["out"])
            st["out"] = st["out"][sent:]
            if not st["out"]:
                sel.modify(st["sock"], selectors.EVENT_READ, st)
        if ev & selectors.EVENT_READ:
            try:
                data = st["sock"].recv(65536)
            except BlockingIOError:
                continue
            except ConnectionResetError:
                data = b""
            if not data:
                st["closed"] = True
                sel.unregister(st["sock"])
                st["sock"].close()
                open_count -= 1
            else:
                st["buf"] += data
    if not ready and pending(streams) == 0:
        with open(ready_file, "w") as f:
            f.write("%d\n" % sum(1 for st in streams if acked(st)))
        ready = True
if not ready:
    with open(ready_file, "w") as f:
        f.write("%d\n" % sum(1 for st in streams if acked(st)))
dump = os.environ.get("LISTEN_DUMP")
for st in streams:
    b = st["buf"]
    if dump:
        with open(os.path.join(dump, "%d.txt" % st["i"]), "wb") as f:
            f.write(b)
    print(json.dumps({"i": st["i"], "filter": st["filter"], "acked": acked(st),
                      "tools": b.count(b"notifications/tools/list_changed"),
                      "prompts": b.count(b"notifications/prompts/list_changed"),
                      "resources": b.count(b"notifications/resources/list_changed"),
                      "result": b.count(b'"resultType":"complete"'),
                      "error": b.count(b'"error":'), "closed": st["closed"]}))
