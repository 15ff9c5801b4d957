#!/usr/bin/python3
# persist_modes.py: a persistent handler that misbehaves on request, for
# tests/integration/persistent.sh. The "mode" argument picks what it does;
# a good answer says which process served it and how many calls it had.
import json, os, signal, sys, time

calls = 0
def answer(call, text, **extra):
    doc = {"id": call["id"], "content": [{"type": "text", "text": text}]}
    doc.update(extra)
    sys.stdout.write(json.dumps(doc) + "\n")
    sys.stdout.flush()

for line in sys.stdin:
    call = json.loads(line)
    calls += 1
    mode = call["arguments"].get("mode", "ok")
    me = "pid=%d calls=%d" % (os.getpid(), calls)
    if mode == "ok":
        answer(call, me)
    elif mode == "hang":
        time.sleep(3600)
    elif mode == "twice":
        answer(call, me)
        answer(call, me)
    elif mode == "late":          # a second answer after the first was taken
        answer(call, me)
        time.sleep(0.3)
        answer(call, me)
    elif mode == "wrongid":
        call["id"] += 1
        answer(call, me)
    elif mode == "noid":
        sys.stdout.write('{"content":[]}\n'); sys.stdout.flush()
    elif mode == "notjson":
        sys.stdout.write("hello\n"); sys.stdout.flush()
    elif mode == "close":
        os.close(1)
        time.sleep(3600)
    elif mode == "flood3":
        while True:
            os.write(3, b'{"level":"info","data":"' + b"x" * 4000 + b'"}\n')
    elif mode == "floodstderr":
        while True:
            os.write(2, b"y" * 65536)
    elif mode == "fork":          # a child holds the pipes; the parent dies
        if os.fork() == 0:
            with open(call["arguments"]["file"], "w") as f:
                f.write(str(os.getpid()))
            time.sleep(3600)
        time.sleep(0.2)
        os._exit(0)
    elif mode == "forkhang":      # a child holds the pipes; the parent hangs
        if os.fork() == 0:
            with open(call["arguments"]["file"], "w") as f:
                f.write(str(os.getpid()))
            time.sleep(3600)
        time.sleep(3600)
    elif mode == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
    elif mode == "exit":
        sys.exit(0)
    elif mode == "diesoon":       # answers, then dies while the worker is idle
        answer(call, me)
        time.sleep(0.2)
        os._exit(3)
    elif mode == "big":
        answer(call, "z" * 100000)
    elif mode == "grow":
        ballast = bytearray(80 * 1024 * 1024)
        for i in range(0, len(ballast), 4096):
            ballast[i] = 1
        answer(call, me)
    elif mode == "slow":
        os.write(3, b'{"progress":1}\n')
        time.sleep(3600)
