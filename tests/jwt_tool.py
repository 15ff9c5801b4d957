#!/usr/bin/env python3
"""jwt_tool.py: test-time JWTs and JWKs from keys the tests generate with openssl.

  jwt_tool.py jwk KEY.pem KID [ALG]           the public JWK of KEY (JSON on stdout)
  jwt_tool.py sign KEY.pem ALG HEADER CLAIMS  a compact JWS; HEADER and CLAIMS are JSON
                                              objects (alg and, unless given, typ added)
  jwt_tool.py hs256 SECRETFILE HEADER CLAIMS  an HS256 token keyed with a file's bytes

Signatures are made by the openssl command line (dgst, pkeyutl), so the tests
check Phantom's verifier against an independent implementation. ES256
signatures are turned from DER into the JOSE r||s form here.
"""
import base64
import hashlib
import hmac
import json
import re
import subprocess
import sys
import tempfile


def b64u(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def openssl(*args, data=None):
    return subprocess.run(["openssl", *args], input=data, capture_output=True, check=True).stdout


def der_public(key):
    return openssl("pkey", "-in", key, "-pubout", "-outform", "DER")


def key_type(key):
    text = openssl("pkey", "-in", key, "-noout", "-text").decode()
    if "ED25519" in text.upper().split("\n")[0]:
        return "OKP"
    if text.startswith("Private-Key: (") and "modulus:" in text:
        return "RSA"
    if "ASN1 OID: prime256v1" in text or "NIST CURVE: P-256" in text:
        return "EC"
    if "ED25519" in text.upper():
        return "OKP"
    raise SystemExit("unknown key type")


def jwk(key, kid, alg=None):
    kty = key_type(key)
    out = {"kty": kty, "kid": kid, "use": "sig"}
    if kty == "RSA":
        text = openssl("pkey", "-in", key, "-noout", "-text").decode()
        mod = re.search(r"modulus:\s*((?:\s*[0-9a-f]{2}:?)+)", text).group(1)
        n = bytes.fromhex(re.sub(r"[^0-9a-f]", "", mod)).lstrip(b"\0")
        e = int(re.search(r"publicExponent: (\d+)", text).group(1))
        out["n"] = b64u(n)
        out["e"] = b64u(e.to_bytes((e.bit_length() + 7) // 8, "big"))
    elif kty == "EC":
        point = der_public(key)[-65:]
        out.update(crv="P-256", x=b64u(point[1:33]), y=b64u(point[33:]))
    else:
        out.update(crv="Ed25519", x=b64u(der_public(key)[-32:]))
    if alg:
        out["alg"] = alg
    return out


def der_to_raw(der):
    """ECDSA-Sig-Value (SEQUENCE of two INTEGERs) to 64 bytes r||s."""
    assert der[0] == 0x30
    i = 2 if der[1] < 0x80 else 3
    parts = []
    for _ in range(2):
        assert der[i] == 0x02
        ln = der[i + 1]
        parts.append(der[i + 2:i + 2 + ln].lstrip(b"\0").rjust(32, b"\0"))
        i += 2 + ln
    return parts[0] + parts[1]


def sign(key, alg, header, claims):
    header = {"alg": alg, "typ": "at+jwt", **header}
    header = {k: v for k, v in header.items() if v is not None}
    data = (b64u(json.dumps(header).encode()) + "." + b64u(json.dumps(claims).encode())).encode()
    if alg == "RS256":
        sig = openssl("dgst", "-sha256", "-sign", key, data=data)
    elif alg == "PS256":
        sig = openssl("dgst", "-sha256", "-sigopt", "rsa_padding_mode:pss", "-sigopt",
                      "rsa_pss_saltlen:digest", "-sign", key, data=data)
    elif alg == "ES256":
        sig = der_to_raw(openssl("dgst", "-sha256", "-sign", key, data=data))
    elif alg == "EdDSA":
        with tempfile.NamedTemporaryFile() as f:  # pkeyutl -rawin reads a file whole
            f.write(data)
            f.flush()
            sig = openssl("pkeyutl", "-sign", "-rawin", "-inkey", key, "-in", f.name)
    else:
        raise SystemExit("unknown alg " + alg)
    return data.decode() + "." + b64u(sig)


def main(argv):
    if argv[1] == "jwk":
        print(json.dumps(jwk(argv[2], argv[3], argv[4] if len(argv) > 4 else None)))
    elif argv[1] == "sign":
        print(sign(argv[2], argv[3], json.loads(argv[4]), json.loads(argv[5])))
    elif argv[1] == "hs256":
        header = {"alg": "HS256", "typ": "at+jwt", **json.loads(argv[3])}
        data = (b64u(json.dumps(header).encode()) + "." + b64u(argv[4].encode())).encode()
        secret = open(argv[2], "rb").read()
        print(data.decode() + "." + b64u(hmac.new(secret, data, hashlib.sha256).digest()))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
