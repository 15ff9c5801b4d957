#!/usr/bin/env python3
"""pool_load.py URL SLOW FAST [DELAY_MS]: starts SLOW tools/call of the
tool "slow" at once through the web server at URL (each on a connection of
its own), then, DELAY_MS (default 300) later, FAST requests one after the
other, alternating tools/list and tools/call of the module tool "echo",
timing each. Every answer is checked (tools/list names "slow", echo gives
back its text, slow says "slept"). Prints one JSON object: slow and fast
requests sent and answered right, the fast ones' p50, p99 and max in ms,
and the longest slow call in seconds. Loopback only; every wait is
bounded (60 s a request)."""
import http.client
import json
import sys
import threading
import time
import urllib.parse

URL = urllib.parse.urlsplit(sys.argv[1])
SLOW, FAST = int(sys.argv[2]), int(sys.argv[3])
DELAY = (int(sys.argv[4]) if len(sys.argv) > 4 else 300) / 1000.0
MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {}}


def call(rid, method, params, name=None):
    """One request on a new connection; returns the parsed answer or None."""
    p = dict(params)
    p["_meta"] = META
    body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": p})
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if name:
        headers["Mcp-Name"] = name
    conn = http.client.HTTPConnection(URL.hostname, URL.port, timeout=60)
    try:
        conn.request("POST", URL.path, body, headers)
        r = conn.getresponse()
        data = r.read()
        if r.status != 200:
            return None
        if data.startswith(b"event:") or data.startswith(b"data:"):
            data = [l[6:] for l in data.split(b"\n") if l.startswith(b"data: ")][-1]
        return json.loads(data)
    except (OSError, ValueError, IndexError, http.client.HTTPException):
        return None
    finally:
        conn.close()


def text_of(ans):
    try:
        return ans["result"]["content"][0]["text"]
    except (TypeError, KeyError, IndexError):
        return None


slow_ok = [0]
slow_max = [0.0]
lock = threading.Lock()


def slow(i):
    t0 = time.monotonic()
    ok = text_of(call(1000 + i, "tools/call", {"name": "slow", "arguments": {}}, "slow")) == "slept"
    with lock:
        slow_ok[0] += ok
        slow_max[0] = max(slow_max[0], time.monotonic() - t0)


threads = [threading.Thread(target=slow, args=(i,)) for i in range(SLOW)]
for t in threads:
    t.start()
time.sleep(DELAY)
times, fast_ok = [], 0
for i in range(FAST):
    t0 = time.monotonic()
    if i % 2 == 0:
        ans = call(i, "tools/list", {})
        good = ans is not None and any(t.get("name") == "slow" for t in ans.get("result", {}).get("tools", []))
    else:
        word = "w%d" % i
        ans = call(i, "tools/call", {"name": "echo", "arguments": {"text": word}}, "echo")
        good = text_of(ans) == word
    times.append((time.monotonic() - t0) * 1000)
    fast_ok += good
for t in threads:
    t.join()
times.sort()


def pct(p):
    """The nearest-rank percentile p of the fast requests' times."""
    return round(times[max(0, -(-len(times) * p // 100) - 1)], 1) if times else 0


print(json.dumps({"slow": SLOW, "slow_ok": slow_ok[0], "fast": FAST, "fast_ok": fast_ok,
                  "p50_ms": pct(50), "p99_ms": pct(99), "max_ms": round(times[-1], 1) if times else 0,
                  "slow_max_s": round(slow_max[0], 2)}))
