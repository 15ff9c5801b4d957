# counter.py: a persistent exec tool (persistent: true). Python starts once;
# Phantom writes one call per line (the exec input plus an "id") and reads
# one answer per line carrying the same id, so state such as this counter
# lives from call to call.
import json
import os
import sys

served = 0
for line in sys.stdin:
    call = json.loads(line)
    served += 1
    text = "call %d of Python process %d" % (served, os.getpid())
    answer = {"id": call["id"], "content": [{"type": "text", "text": text}],
              "structuredContent": {"served": served, "pid": os.getpid()}}
    print(json.dumps(answer), flush=True)
