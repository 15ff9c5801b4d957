#!/usr/bin/python3
# catalog.py SIZE: a resource list handler for catalog.sh and the benchmark
# (resource_lists:, persistent exec). It builds SIZE entries once, at start,
# as an application would load its catalogue, then answers each call (one
# JSON line {kind: "resource_list", cursor, limit, id, ...}) with the page
# at its cursor, the next offset in decimal, and the call's id. Run per
# call (no id, one object then EOF) it serves one page the same way.
import json, sys
size = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
catalog = [{"uri": "study://%d" % i, "name": "study-%d" % i, "mimeType": "application/json",
            "description": "Study %d" % i, "size": 100} for i in range(size)]
for line in sys.stdin:
    call = json.loads(line)
    off = int(call.get("cursor") or 0)
    stop = min(off + int(call.get("limit") or 100), size)
    page = {"resources": catalog[off:stop]}
    if stop < size:
        page["nextCursor"] = str(stop)
    if "id" in call:
        page["id"] = call["id"]
    sys.stdout.write(json.dumps(page, separators=(",", ":")) + "\n")
    sys.stdout.flush()
