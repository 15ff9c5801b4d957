#!/usr/bin/python3
"""jwt_auth.py: an auth.mode exec authenticator that verifies a JWT access
token with the Debian python3-jwt package, written as a user would before
auth.mode oauth: what tests/bench/auth_bench.sh compares oauth with.

  jwt_auth.py --jwks FILE --issuer URL --audience URL [--alg RS256 ...]
              [--tool-scope TOOL=SCOPE ...]

Reads Phantom's exec authenticator document on stdin, answers allow with
the token's sub, unauthorized (invalid_token) for a token that does not
verify, and forbidden naming the scope when a tools/call needs a scope the
token lacks. The token itself is never printed.
"""
import argparse
import json
import sys

import jwt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jwks", required=True)
    ap.add_argument("--issuer", required=True)
    ap.add_argument("--audience", required=True)
    ap.add_argument("--alg", action="append", default=[])
    ap.add_argument("--tool-scope", action="append", default=[])
    a = ap.parse_args()
    doc = json.load(sys.stdin)
    hdr = doc.get("headers", {})
    auth = hdr.get("authorization", "")
    if not auth.startswith("Bearer "):
        return {"decision": "unauthorized"}
    token = auth[7:].strip()
    with open(a.jwks) as f:
        keys = {k.get("kid"): k for k in json.load(f)["keys"]}
    try:
        kid = jwt.get_unverified_header(token).get("kid")
        key = jwt.PyJWK(keys[kid])
        claims = jwt.decode(token, key.key, algorithms=a.alg or ["RS256"], audience=a.audience,
                            issuer=a.issuer, options={"require": ["exp", "iss", "aud"]})
    except (KeyError, jwt.PyJWTError, ValueError):
        return {"decision": "unauthorized", "error": "invalid_token"}
    granted = set(str(claims.get("scope", "")).split())
    if hdr.get("mcp-method") == "tools/call":
        for ts in a.tool_scope:
            tool, _, scope = ts.partition("=")
            if tool == hdr.get("mcp-name") and scope not in granted:
                return {"decision": "forbidden", "message": "Forbidden: insufficient scope", "scope": scope}
    return {"decision": "allow", "principal": str(claims.get("sub", ""))}


if __name__ == "__main__":
    print(json.dumps(main()))
