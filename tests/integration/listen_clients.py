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
"resources", "result", "error", "closed", "http", "updated", "ack_uris",
"t_ack", "t_tools", "t_updated", "t_closed"}; "updated" lists the uris of the
notifications/resources/updated received, "ack_uris" the acknowledged
resourceSubscriptions (null without an acknowledgement); "http" is the response's status code (0 before one arrived),
the t_ fields are the wall-clock times (time.time()) the acknowledgement,
the first tools/list_changed, the first resources/updated and the end of
the connection were read, or null.

Environment:
  LISTEN_AUTH=VALUE    sends it as the Authorization header
  LISTEN_DUMP=DIR      writes what stream i received to DIR/i.txt
  LISTEN_BATCH=K       keeps at most K streams connecting and waiting for
                       their acknowledgement at a time (default: all N)
  LISTEN_PROGRESS=FILE rewrites FILE about every 0.25 s with one line
                       "opened acked tools closed" (stream counts)"""
import errno, json, os, resource, selectors, socket, sys, time
from urllib.parse import urlparse

url, n, seconds, ready_file = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
filters = [json.loads(f) for f in sys.argv[5:]] or [{"toolsListChanged": True}]
batch = int(os.environ.get("LISTEN_BATCH") or n) or n
progress = os.environ.get("LISTEN_PROGRESS")
u = urlparse(url)
auth = ("Authorization: %s\r\n" % os.environ["LISTEN_AUTH"]) if os.environ.get("LISTEN_AUTH") else ""
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, n + 64)), hard))
sel = selectors.DefaultSelector()
ACK = b"notifications/subscriptions/acknowledged"
TOOLS = b"notifications/tools/list_changed"
UPDATED = b"notifications/resources/updated"
TAIL = max(len(ACK), len(TOOLS), len(UPDATED))

def request(i, flt):
    body = json.dumps({"jsonrpc": "2.0", "id": "S%d" % i, "method": "subscriptions/listen",
                       "params": {"notifications": flt, "_meta": {
                           "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                           "io.modelcontextprotocol/clientCapabilities": {}}}}).encode()
    head = ("POST %s HTTP/1.0\r\nHost: %s\r\nContent-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
            "Mcp-Method: subscriptions/listen\r\n%sContent-Length: %d\r\n\r\n"
            % (u.path, u.netloc, auth, len(body))).encode()
    return head + body

streams = [{"i": i, "filter": filters[i % len(filters)], "sock": None, "buf": b"", "closed": False,
            "acked": False, "http": 0, "t_ack": None, "t_tools": None, "t_updated": None, "t_closed": None,
            "out": b""}
           for i in range(n)]
opened = acked = tooled = closed = settled = 0  # settled: acknowledged or closed

def settle(st):
    global settled
    if not st.get("settled"):
        st["settled"] = True
        settled += 1

def close(st, now):
    global closed
    settle(st)
    st["closed"] = True
    st["t_closed"] = now
    sel.unregister(st["sock"])
    st["sock"].close()
    closed += 1

def open_next():
    """Starts the next stream's connection (non-blocking)."""
    global opened
    st = streams[opened]
    opened += 1
    st["out"] = request(st["i"], st["filter"])
    s = socket.socket(socket.AF_INET6 if ":" in (u.hostname or "") else socket.AF_INET)
    s.setblocking(False)
    st["sock"] = s
    sel.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE, st)
    rc = s.connect_ex((u.hostname, u.port))
    if rc not in (0, errno.EINPROGRESS):
        close(st, time.time())

def received(st, data, now):
    global acked, tooled
    seen = st["buf"][-TAIL:] + data
    st["buf"] += data
    if not st["http"] and b"\r\n" in st["buf"]:
        parts = st["buf"].split(b" ", 2)
        st["http"] = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else -1
    if not st["acked"] and ACK in seen:
        st["acked"] = True
        st["t_ack"] = now
        acked += 1
        settle(st)
    if st["t_tools"] is None and TOOLS in seen:
        st["t_tools"] = now
        tooled += 1
    if st["t_updated"] is None and UPDATED in seen:
        st["t_updated"] = now

ready = False
last_progress = 0.0
deadline = time.time() + seconds
while closed < n and time.time() < deadline:
    while opened < n and opened - settled < batch:
        open_next()
    for key, ev in sel.select(timeout=0.1):
        st = key.data
        if st["closed"]:
            continue
        now = time.time()
        if ev & selectors.EVENT_WRITE and st["out"]:
            try:
                sent = st["sock"].send(st["out"])
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                close(st, now)
                continue
            st["out"] = st["out"][sent:]
            if not st["out"]:
                sel.modify(st["sock"], selectors.EVENT_READ, st)
        if ev & selectors.EVENT_READ:
            try:
                data = st["sock"].recv(65536)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                data = b""
            if not data:
                close(st, now)
            else:
                received(st, data, now)
    now = time.time()
    if progress and now - last_progress >= 0.25:
        with open(progress + ".tmp", "w") as f:
            f.write("%d %d %d %d\n" % (opened, acked, tooled, closed))
        os.replace(progress + ".tmp", progress)
        last_progress = now
    if not ready and settled == n:
        with open(ready_file, "w") as f:
            f.write("%d\n" % acked)
        ready = True
if not ready:
    with open(ready_file, "w") as f:
        f.write("%d\n" % acked)
if progress:
    with open(progress, "w") as f:
        f.write("%d %d %d %d\n" % (opened, acked, tooled, closed))
def updated_uris(b):
    """The uris of the notifications/resources/updated events in b, in order."""
    uris = []
    for line in b.split(b"\n"):
        if line.startswith(b"data: ") and b"notifications/resources/updated" in line:
            try:
                uris.append(json.loads(line[6:])["params"]["uri"])
            except (ValueError, KeyError, TypeError):
                uris.append(None)
    return uris

def acked_uris(b):
    """The resourceSubscriptions of the acknowledgement in b (None: no ack)."""
    for line in b.split(b"\n"):
        if line.startswith(b"data: ") and ACK in line:
            try:
                return json.loads(line[6:])["params"]["notifications"].get("resourceSubscriptions", [])
            except (ValueError, KeyError, TypeError, AttributeError):
                return None
    return None

dump = os.environ.get("LISTEN_DUMP")
for st in streams:
    b = st["buf"]
    if dump:
        with open(os.path.join(dump, "%d.txt" % st["i"]), "wb") as f:
            f.write(b)
    print(json.dumps({"i": st["i"], "filter": st["filter"], "acked": st["acked"],
                      "tools": b.count(TOOLS),
                      "prompts": b.count(b"notifications/prompts/list_changed"),
                      "resources": b.count(b"notifications/resources/list_changed"),
                      "result": b.count(b'"resultType":"complete"'),
                      "error": b.count(b'"error":'), "closed": st["closed"], "http": st["http"],
                      "updated": updated_uris(b), "ack_uris": acked_uris(b),
                      "t_ack": st["t_ack"], "t_tools": st["t_tools"], "t_updated": st["t_updated"],
                      "t_closed": st["t_closed"]}))
