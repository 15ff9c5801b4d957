# stats.py: an exec tool in Python, run as `python3 tools/stats.py` for each
# call: one JSON object in on stdin, one out on stdout. structuredContent
# matches the tool's output_schema.
import json
import sys

call = json.load(sys.stdin)
text = call["arguments"]["text"]
counts = {"characters": len(text), "words": len(text.split()), "lines": len(text.splitlines())}
print(json.dumps({"content": [{"type": "text", "text": json.dumps(counts)}],
                  "structuredContent": counts}))
