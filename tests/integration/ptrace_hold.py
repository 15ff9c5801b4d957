# ptrace_hold.py PID RELEASE: holds process PID as a tracer that never
# waits for it (PTRACE_SEIZE), until the file RELEASE exists (at most
# 60 s). A signal then stops PID instead of ending it, and once SIGKILL
# ends it, its parent cannot reap it (waitpid sees nothing) until this
# tracer goes away: a child the parent cannot reap, as one stuck in the
# kernel would be. Prints "held" once attached, or "refused ERRNO" (no
# ptrace here) and exits.
import ctypes
import os
import sys
import time

PTRACE_SEIZE = 0x4206

pid, release = int(sys.argv[1]), sys.argv[2]
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
if libc.ptrace(PTRACE_SEIZE, pid, None, None) != 0:
    print("refused %d" % ctypes.get_errno(), flush=True)
    sys.exit(0)
print("held", flush=True)
end = time.monotonic() + 60
while not os.path.exists(release) and time.monotonic() < end:
    time.sleep(0.05)
