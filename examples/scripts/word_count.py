#!/usr/bin/python3
# word_count.py: a persistent tool (persistent: true). Phantom writes one
# call per line, the exec input plus an "id"; the answer is one line with
# the same id. The interpreter starts once, not once per call.
import json, sys
for line in sys.stdin:
    call = json.loads(line)
    text = call["arguments"].get("text", "")
    counts = {"characters": len(text), "words": len(text.split()), "lines": len(text.splitlines())}
    print(json.dumps({"id": call["id"], "structuredContent": counts}), flush=True)
