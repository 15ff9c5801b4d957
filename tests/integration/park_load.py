#!/usr/bin/env python3
"""park_load.py HOST PORT SID N STATUS RELEASE: holds N legacy tools/call
requests of session SID parked at once through the web server at
HOST:PORT (each on its own keep-alive connection, its stream open), then
one call more, which must end at once with the sessions.max_parked error
result. It writes progress lines to STATUS ("parked N SECONDS", "over
TEXT", "held"), waits until the file RELEASE exists, answers one of the
parked calls and reads its result ("answered TEXT"), closes every other
connection and writes "done". Every wait is bounded; loopback only."""
import asyncio
import json
import os
import sys
import time

HOST, PORT, SID, N, STATUS, RELEASE = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6]
IN_FLIGHT = 64
LIMIT_S = 600


def status(line):
    with open(STATUS, "a") as f:
        f.write(line + "\n")


def request(body):
    b = json.dumps(body).encode()
    head = ("POST /mcp HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n"
            "Mcp-Session-Id: %s\r\nContent-Length: %d\r\n\r\n" % (HOST, PORT, SID, len(b)))
    return head.encode() + b


def events(buf):
    """The JSON messages of the complete 'data:' lines in buf (chunked
    framing lines are not JSON and are skipped)."""
    out = []
    for line in buf.split(b"\n"):
        if line.startswith(b"data: "):
            try:
                out.append(json.loads(line[6:]))
            except ValueError:
                pass
    return out


async def read_until(reader, buf, want, timeout):
    """Reads into buf until want(events) gives a value; returns it."""
    end = time.monotonic() + timeout
    while True:
        got = want(events(bytes(buf)))
        if got is not None:
            return got
        left = end - time.monotonic()
        if left <= 0:
            raise TimeoutError("no event in time")
        chunk = await asyncio.wait_for(reader.read(65536), left)
        if not chunk:
            raise ConnectionError("closed")
        buf += chunk


def pushed(evs):
    for e in evs:
        if e.get("method") == "elicitation/create" and "id" in e:
            return e["id"]
    return None


def final(cid):
    def f(evs):
        for e in evs:
            if e.get("id") == cid and "method" not in e:
                return e
        return None
    return f


async def park(i, calls, sem):
    async with sem:
        r, w = await asyncio.open_connection(HOST, PORT)
        w.write(request({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                         "params": {"name": "ask", "arguments": {}}}))
        await w.drain()
        buf = bytearray()
        pid = await read_until(r, buf, pushed, 60)
        calls[i] = (r, w, buf, pid)


async def main():
    calls = {}
    sem = asyncio.Semaphore(IN_FLIGHT)
    t0 = time.monotonic()
    await asyncio.gather(*(park(i, calls, sem) for i in range(1, N + 1)))
    status("parked %d %.1f" % (len(calls), time.monotonic() - t0))
    # one more: over sessions.max_parked
    r, w = await asyncio.open_connection(HOST, PORT)
    w.write(request({"jsonrpc": "2.0", "id": 0, "method": "tools/call",
                     "params": {"name": "ask", "arguments": {}}}))
    await w.drain()
    e = await read_until(r, bytearray(), final(0), 60)
    status("over " + json.dumps(e.get("result", e.get("error")), separators=(",", ":")))
    w.close()
    status("held")
    end = time.monotonic() + LIMIT_S
    while not os.path.exists(RELEASE):
        if time.monotonic() > end:
            raise TimeoutError("never released")
        await asyncio.sleep(0.1)
    # answer the first call (a separate POST), read its result on its stream
    r1, w1, buf1, pid1 = calls.pop(1)
    ar, aw = await asyncio.open_connection(HOST, PORT)
    aw.write(request({"jsonrpc": "2.0", "id": pid1, "result": {"action": "accept", "content": {"go": True}}}))
    await aw.drain()
    status_line = (await asyncio.wait_for(ar.readline(), 30)).decode().strip()
    aw.close()
    e = await read_until(r1, buf1, final(1), 30)
    status("answered %s %s" % (status_line.split(" ")[1], e["result"]["content"][0]["text"]))
    for r, w, _, _ in calls.values():
        w.close()
    w1.close()
    status("done")


asyncio.run(main())
