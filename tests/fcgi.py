# tests/fcgi.py: a small raw FastCGI client for the tests, playing the web
# server record by record, so that tests can also send what no web server
# would (bad versions, absurd lengths, trickled bytes, cut streams).
import json
import socket
import struct
import time

VERSION = 1
BEGIN, ABORT, END, PARAMS, STDIN, STDOUT, STDERR = 1, 2, 3, 4, 5, 6, 7
GET_VALUES, GET_VALUES_RESULT, UNKNOWN_TYPE = 9, 10, 11
MODERN = "2026-07-28"


def connect(target, timeout=10):
    """A connection to TARGET: a unix socket path or HOST:PORT."""
    if target.startswith("/"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        s.connect(target)
    else:
        host, port = target.rsplit(":", 1)
        s = socket.create_connection((host, int(port)), timeout=timeout)
    return s


def record(rtype, rid, content=b"", pad=0, version=VERSION, length=None):
    """One record; length overrides the declared content length."""
    n = len(content) if length is None else length
    return struct.pack(">BBHHBx", version, rtype, rid, n, pad) + content + b"\0" * pad


def begin(rid=1, keep=False, role=1):
    return record(BEGIN, rid, struct.pack(">HB5x", role, 1 if keep else 0))


def _len(n):
    return bytes([n]) if n < 128 else struct.pack(">I", n | 0x80000000)


def pairs(params):
    """The name-value pairs of params (a dict of str) as bytes."""
    out = b""
    for k, v in params.items():
        k, v = k.encode(), v.encode()
        out += _len(len(k)) + _len(len(v)) + k + v
    return out


def stream(rtype, rid, data, chunk=32768):
    """data as records of rtype, then the empty record that ends the stream."""
    out = b""
    for i in range(0, len(data), chunk):
        out += record(rtype, rid, data[i:i + chunk])
    return out + record(rtype, rid)


def discover_body(rid=1):
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {}}
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "server/discover",
                       "params": {"_meta": meta}}).encode()


def cgi_params(body_len, method="server/discover", **extra):
    """The variables a web server sets for a POST of body_len bytes."""
    p = {"GATEWAY_INTERFACE": "CGI/1.1", "REQUEST_METHOD": "POST",
         "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(body_len),
         "REQUEST_URI": "/mcp", "SCRIPT_NAME": "/mcp", "SERVER_PROTOCOL": "HTTP/1.1",
         "HTTP_HOST": "localhost", "HTTP_MCP_PROTOCOL_VERSION": MODERN,
         "HTTP_MCP_METHOD": method}
    p.update(extra)
    return p


def request_bytes(body, rid=1, params=None, keep=False):
    """A whole request: begin, parameters, body."""
    if params is None:
        params = cgi_params(len(body))
    return begin(rid, keep) + stream(PARAMS, rid, pairs(params)) + stream(STDIN, rid, body)


def read_records(s, until_end=True):
    """Records read until FCGI_END_REQUEST (until_end) or EOF, as a list of
    (type, rid, content); stops quietly on a timeout or a reset."""
    buf, recs = b"", []
    while True:
        while len(buf) >= 8:
            v, t, rid, n, pad = struct.unpack(">BBHHBx", buf[:8])
            if len(buf) < 8 + n + pad:
                break
            recs.append((t, rid, buf[8:8 + n]))
            buf = buf[8 + n + pad:]
            if until_end and t == END:
                return recs
        try:
            d = s.recv(65536)
        except (socket.timeout, ConnectionError):
            return recs
        if not d:
            return recs
        buf += d


def response(recs):
    """(status, headers dict lower-cased, body bytes) from the STDOUT records;
    status 0 when there was no response."""
    out = b"".join(c for t, _, c in recs if t == STDOUT)
    if not out:
        return 0, {}, b""
    head, _, body = out.partition(b"\r\n\r\n")
    hdrs = {}
    for line in head.decode("latin-1").split("\r\n"):
        k, _, v = line.partition(":")
        hdrs[k.strip().lower()] = v.strip()
    status = int(hdrs.get("status", "200").split()[0])
    return status, hdrs, body


def post(target, body, params=None, timeout=10):
    """One ordinary request on a new connection: (status, headers, body)."""
    s = connect(target, timeout)
    try:
        s.sendall(request_bytes(body, params=params))
        return response(read_records(s))
    finally:
        s.close()


def discover(target, timeout=10):
    """A server/discover; returns (status, seconds taken)."""
    t0 = time.monotonic()
    status, _, _ = post(target, discover_body(), timeout=timeout)
    return status, time.monotonic() - t0
