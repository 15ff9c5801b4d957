#!/usr/bin/python3
# cached.py: a tool or resource whose answer carries the cache hints its
# arguments (or template parameters) "ttl" and "scope" ask for ("-":
# none), as an exec handler (one call) or, with --persistent, a persistent
# one (a JSON line in, one out, per call). For tests/integration/cache_hints.sh.
import json, sys

def answer(call):
    args = call.get("arguments") or {}
    if call.get("kind") == "resource":
        doc = {"contents": [{"uri": call["uri"], "mimeType": "text/plain", "text": "cached"}]}
    else:
        doc = {"content": [{"type": "text", "text": "cached"}]}
    ttl, scope = args.get("ttl", "-"), args.get("scope", "-")
    if ttl != "-":
        doc["ttlMs"] = int(ttl) if ttl.lstrip("-").isdigit() else ttl
    if scope != "-":
        doc["cacheScope"] = scope
    if "id" in call:
        doc["id"] = call["id"]
    return json.dumps(doc)

if len(sys.argv) > 1 and sys.argv[1] == "--persistent":
    for line in sys.stdin:
        sys.stdout.write(answer(json.loads(line)) + "\n")
        sys.stdout.flush()
else:
    print(answer(json.load(sys.stdin)))
