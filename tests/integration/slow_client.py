# slow_client.py TARGET: clients that trickle a request one byte a second
# straight over FastCGI, against a 2-worker Phantom with
# http.params_timeout_ms and http.body_timeout_ms of 1500 (issue 18, item 3).
# Prints "description<TAB>got<TAB>expected" lines for slow_client.sh.
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import fcgi  # noqa: E402

TARGET = sys.argv[1]
BODY = fcgi.discover_body()
results = {}


def check(desc, got, want):
    print("%s\t%s\t%s" % (desc, got, want), flush=True)


def trickle(name, head, slow):
    """Sends head at once, then slow one byte a second; records the answer
    and how long it took."""
    t0 = time.monotonic()
    s = fcgi.connect(TARGET, timeout=20)
    try:
        s.sendall(head)
        for i in range(len(slow)):
            s.sendall(slow[i:i + 1])
            r, _, _ = select_read(s, 1.0)
            if r:
                break
        recs = fcgi.read_records(s)
    except (ConnectionError, socket.timeout):
        recs = []
    finally:
        s.close()
    results[name] = (fcgi.response(recs)[0], time.monotonic() - t0)


def select_read(s, secs):
    import select
    return select.select([s], [], [], secs)


def main():
    whole = fcgi.request_bytes(BODY)
    body_at = len(whole) - len(fcgi.stream(fcgi.STDIN, 1, BODY))
    threads = [threading.Thread(target=trickle, args=("body%d" % i, whole[:body_at + 12],
                                                        whole[body_at + 12:]))
               for i in range(2)]
    for t in threads:
        t.start()
    time.sleep(0.3)  # both workers are reading a trickled body now
    status, secs = fcgi.discover(TARGET, timeout=20)
    check("a normal request beside two tricklers is served", status, 200)
    check("... within 3 s (the tricklers are dropped after 1.5 s)", secs < 3, True)
    for t in threads:
        t.join()
    for i in range(2):
        st, secs = results["body%d" % i]
        check("a trickled body gets 408", st, 408)
        check("... after http.body_timeout_ms, not at the end of the trickle", 1.2 < secs < 4, True)

    # records of another request id, which libfcgi skips without returning
    skips = fcgi.record(fcgi.STDIN, 7, b"x" * 40) * 3
    t = threading.Thread(target=trickle, args=("skips", whole[:body_at], skips))
    t.start()
    t.join()
    st, secs = results["skips"]
    check("trickled records of another request id get 408", st, 408)
    check("... after http.body_timeout_ms", 1.2 < secs < 4, True)

    # the parameters trickled: 408 (the request has begun)
    t = threading.Thread(target=trickle, args=("params", whole[:12], whole[12:body_at]))
    t.start()
    t.join()
    st, secs = results["params"]
    check("trickled parameters get 408", st, 408)
    check("... after http.params_timeout_ms", 1.2 < secs < 4, True)
    # a connection that says nothing is closed without an answer
    s = fcgi.connect(TARGET, timeout=20)
    t0 = time.monotonic()
    recs = fcgi.read_records(s)
    s.close()
    check("a silent connection is closed without an answer", len(recs), 0)
    check("... after http.params_timeout_ms", 1.2 < time.monotonic() - t0 < 4, True)
    status, secs = fcgi.discover(TARGET)
    check("after the slow clients the next request is served", status, 200)


main()
