#!/usr/bin/env python3
"""push_answer.py TARGET SID TOOL BYTES: a client that answers in turn, as
a simple one written with one blocking request at a time does, straight on
Phantom's FastCGI socket TARGET (tests/fcgi.py plays the web server). It
starts a legacy tools/call of TOOL on session SID, reads its stream up to
the pushed elicitation/create, POSTs an answer whose content.blob is BYTES
long and waits for that POST's response before it reads the call's stream
on. Prints "answer STATUS" and "result TEXT-LENGTH ENDED" (ENDED: the
stream ended with FCGI_END_REQUEST); every wait is bounded."""
import json
import os
import re
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import fcgi  # noqa: E402

TARGET, SID, TOOL, BYTES = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])


def params(n):
    return fcgi.cgi_params(n, HTTP_MCP_PROTOCOL_VERSION="2025-11-25", HTTP_MCP_SESSION_ID=SID,
                           HTTP_ACCEPT="application/json, text/event-stream")


def request(body):
    p = params(len(body))
    del p["HTTP_MCP_METHOD"]
    return fcgi.request_bytes(body, params=p)


call = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                   "params": {"name": TOOL, "arguments": {}}}).encode()


class Stream:
    """The records of one connection, taken apart as they come."""
    def __init__(self, sock):
        self.sock, self.buf, self.out, self.ended = sock, b"", b"", False

    def more(self):
        """Reads once; False at the end of the connection or a timeout."""
        try:
            d = self.sock.recv(65536)
        except OSError:
            return False
        self.buf += d
        while len(self.buf) >= 8:
            v, t, rid, n, pad = struct.unpack(">BBHHBx", self.buf[:8])
            if len(self.buf) < 8 + n + pad:
                break
            if t == fcgi.STDOUT:
                self.out += self.buf[8:8 + n]
            self.ended = self.ended or t == fcgi.END
            self.buf = self.buf[8 + n + pad:]
        return bool(d)


s = Stream(fcgi.connect(TARGET, timeout=60))
s.sock.sendall(request(call))
pid = None
while pid is None:
    m = re.search(rb'"id":"(ph-[0-9a-f-]+)","method":"elicitation/create"[^\n]*\n\n', s.out)
    pid = m.group(1).decode() if m else None
    if pid is None and not s.more():
        sys.exit("the call's stream ended before a request was pushed: %r" % s.out[-300:])
answer = ('{"jsonrpc":"2.0","id":"%s","result":{"action":"accept","content":{"blob":"%s"}}}'
          % (pid, "a" * BYTES)).encode()
a = fcgi.connect(TARGET, timeout=60)
a.sendall(request(answer))
status, _, _ = fcgi.response(fcgi.read_records(a))
a.close()
print("answer %d" % status, flush=True)
while not s.ended and s.more():
    pass
s.sock.close()
out, ended = s.out, s.ended
text = -1
for line in out.split(b"\n"):
    if line.startswith(b"data: ") and b'"result"' in line:
        try:
            text = len(json.loads(line[6:])["result"]["content"][0]["text"])
        except (ValueError, KeyError, IndexError):
            text = -2
print("result %d %s" % (text, "ended" if ended else "cut"), flush=True)
