#!/usr/bin/python3
# catalog_walk.py URL DIR KEEP: walks resources/list (2026-07-28) from the
# first page to the last, as a client would, writing the request bodies
# wrk replays into DIR: walk.bodies (KEEP of them, spread evenly over the
# pages), first.bodies and last.bodies. Prints "ENTRIES PAGES DISTINCT
# LAST-URI MS" on one line. Only 127.0.0.1 is ever asked.
import json, sys, time, urllib.request
url, out, keep = sys.argv[1], sys.argv[2], int(sys.argv[3])
assert url.startswith("http://127.0.0.1:")
meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}
hdrs = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "resources/list"}
bodies, uris, cursor, t0 = [], [], None, time.time()
while len(bodies) < 100000:
    params = {"_meta": meta}
    if cursor is not None:
        params["cursor"] = cursor
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "resources/list", "params": params},
                      separators=(",", ":"))
    bodies.append(body)
    with urllib.request.urlopen(urllib.request.Request(url, body.encode(), hdrs), timeout=30) as r:
        res = json.load(r)["result"]
    uris += [e["uri"] for e in res["resources"]]
    cursor = res.get("nextCursor")
    if cursor is None:
        break
ms = int((time.time() - t0) * 1000)
step = max(1, len(bodies) // keep)
with open(out + "/walk.bodies", "w") as f:
    f.write("".join(b + "\n" for b in bodies[::step][:keep]))
with open(out + "/first.bodies", "w") as f:
    f.write(bodies[0] + "\n")
with open(out + "/last.bodies", "w") as f:
    f.write(bodies[-1] + "\n")
print(len(uris), len(bodies), len(set(uris)), uris[-1] if uris else "-", ms)
