# listen_slots.py SOCK LOG MASTER: the issue 18 item 1 reproduction against
# a 4-worker Phantom with subscriptions.max_streams 2. Two listen streams
# stay with their workers (the hub is stopped and its channel filled with
# announcements, so the hand-over finds no room), those workers are killed
# (SIGKILL) while they hold them, the hub goes on, the configuration is
# reloaded, and the slots they held must be free again: the metrics count
# no stream, and two new listens are accepted.
# Prints "description<TAB>got<TAB>expected" lines.
import json
import os
import re
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import fcgi  # noqa: E402

SOCK, LOG = sys.argv[1:3]
MASTER = int(sys.argv[3])
# the hub's channel holds up to twice its send buffer (4 MiB, as far as
# net.core.wmem_max allows): announcements of 180 kB to fill it
with open("/proc/sys/net/core/wmem_max") as f:
    FILL = 2 * min(int(f.read()), 4 << 20) // (180 << 10) + 8
KEEP = re.compile(r"phantom\[(\d+)\] warning: the hub does not take the stream")


def check(desc, got, want):
    print("%s\t%s\t%s" % (desc, got, want), flush=True)


def listen(rid, pad=0):
    """Opens a listen stream whose id is "L<rid>" and pad bytes more;
    returns (socket, acknowledged?)."""
    meta = {"io.modelcontextprotocol/protocolVersion": fcgi.MODERN,
            "io.modelcontextprotocol/clientCapabilities": {}}
    body = json.dumps({"jsonrpc": "2.0", "id": "L%d" % rid + "x" * pad,
                       "method": "subscriptions/listen",
                       "params": {"notifications": {"toolsListChanged": True},
                                  "_meta": meta}}).encode()
    s = fcgi.connect(SOCK, timeout=10)
    s.sendall(fcgi.request_bytes(body, params=fcgi.cgi_params(
        len(body), "subscriptions/listen", HTTP_ACCEPT="application/json, text/event-stream")))
    # the whole acknowledgement event is read: a worker blocked writing it
    # would not get as far as the hand-over
    got = bytearray()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and b"Too many" not in got[-4096:]:
        try:
            d = s.recv(1 << 20)
        except OSError:
            break
        if not d:
            break
        got += d
        if b"\n\n" in got[-(len(d) + 2):] and b"subscriptions/acknowledged" in got:
            break
    return s, b"subscriptions/acknowledged" in got


def hub_pid():
    """The master's child named phantom-hub."""
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
        except OSError:
            continue
        comm = st[st.index("(") + 1:st.rindex(")")]
        if comm == "phantom-hub" and int(st[st.rindex(")") + 2:].split()[1]) == MASTER:
            return int(d)
    return None


def announce(n):
    """n tools/call of the announce tool: each worker tells the hub."""
    meta = {"io.modelcontextprotocol/protocolVersion": fcgi.MODERN,
            "io.modelcontextprotocol/clientCapabilities": {}}
    for i in range(n):
        body = json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                           "params": {"name": "announce", "arguments": {}, "_meta": meta}}).encode()
        fcgi.post(SOCK, body, params=fcgi.cgi_params(len(body), "tools/call", HTTP_MCP_NAME="announce"))


def kept_by():
    with open(LOG, errors="replace") as f:
        return [int(p) for p in KEEP.findall(f.read())]


def open_streams():
    p = {"GATEWAY_INTERFACE": "CGI/1.1", "REQUEST_METHOD": "GET", "REQUEST_URI": "/metrics",
         "SCRIPT_NAME": "/metrics", "REMOTE_ADDR": "127.0.0.1", "HTTP_HOST": "localhost",
         "SERVER_PROTOCOL": "HTTP/1.1"}
    st, _, body = fcgi.post(SOCK, b"", params=p)
    m = re.search(rb"^phantom_listen_streams (\d+)", body, re.M)
    return int(m.group(1)) if m else -1


def wait(cond, secs=5):
    end = time.monotonic() + secs
    while time.monotonic() < end and not cond():
        time.sleep(0.05)
    return cond()


def gone(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split()[2] == "Z"
    except OSError:
        return True


def main():
    hub = hub_pid()
    os.kill(hub, signal.SIGSTOP)
    try:
        announce(FILL)
        big = [listen(i)[0] for i in (1, 2)]
        wait(lambda: len(kept_by()) >= 2)
    finally:
        os.kill(hub, signal.SIGCONT)
    holders = kept_by()
    check("two workers keep listen streams the hub cannot take", len(holders), 2)
    check("the metrics count them", open_streams(), 2)
    for pid in holders:
        os.kill(pid, signal.SIGKILL)
    wait(lambda: all(gone(p) for p in holders))
    check("after the workers were killed the metrics count no stream",
          wait(lambda: open_streams() == 0) and open_streams(), 0)
    os.kill(MASTER, signal.SIGHUP)
    wait(lambda: open(LOG, errors="replace").read().count("configuration reloaded") >= 1)
    check("after SIGHUP the metrics count no stream", open_streams(), 0)
    socks = []
    for i in (3, 4):
        s, acked = listen(i)
        socks.append(s)
        check("listen %d of subscriptions.max_streams 2 is accepted" % (i - 2), acked, True)
    s, acked = listen(5)
    check("a third is refused (the limit holds)", acked, False)
    s.close()
    for s in socks + big:
        s.close()
    check("once the clients have gone the slots are free",
          wait(lambda: open_streams() == 0, 10) and open_streams(), 0)


main()
