#!/usr/bin/python3
# echo.py: the benchmark's Python tool, returning its "text" argument. The
# same loop serves per call (one object on stdin, then EOF) and persistent
# (one line per call, answered with the call's id).
import json, sys
for line in sys.stdin:
    call = json.loads(line)
    answer = {"content": [{"type": "text", "text": call["arguments"].get("text", "")}]}
    if "id" in call:
        answer["id"] = call["id"]
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
