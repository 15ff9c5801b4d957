# pool_stall.py TARGET N RELEASE: N connections straight to Phantom's
# FastCGI socket that send a BEGIN_REQUEST and half a PARAMS record and then
# stall, as a slow or hostile client would; while they stall, one ordinary
# server/discover on a connection of its own. Prints "STATUS SECONDS" of
# that call (status 0: no answer within 15 s), then holds the stalled
# connections until the file RELEASE exists (at most 60 s), so that the
# caller can look at the pool meanwhile.
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import fcgi  # noqa: E402

TARGET, N, RELEASE = sys.argv[1], int(sys.argv[2]), sys.argv[3]

# a PARAMS record that declares all its pairs and carries the first half
pairs = fcgi.pairs(fcgi.cgi_params(100))
half = fcgi.record(fcgi.PARAMS, 1, pairs[:len(pairs) // 2], length=len(pairs))
stalled = []
for _ in range(N):
    s = fcgi.connect(TARGET, timeout=60)
    s.sendall(fcgi.begin(1) + half)
    stalled.append(s)
try:
    status, secs = fcgi.discover(TARGET, timeout=15)
except OSError:
    status, secs = 0, 15.0
print("%d %.3f" % (status, secs), flush=True)
end = time.monotonic() + 60
while not os.path.exists(RELEASE) and time.monotonic() < end:
    time.sleep(0.05)
for s in stalled:
    s.close()
