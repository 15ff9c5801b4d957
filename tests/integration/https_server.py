#!/usr/bin/env python3
"""https_server.py PORT CERT KEY [PORT2 CERT2 KEY2]: HTTP over TLS on 127.0.0.1
for tests/integration/http_client.sh.

GET /ok       a JSON body with its Content-Length
GET /nolen    a body without Content-Length, ended by closing
GET /big      2 MiB
GET /slow     headers never sent (the client must give up by itself)
GET /missing  404
GET /busy     503 with Retry-After: 7 and a body
GET /empty    204
POST /echo    the method, the body and the Basic credentials, as JSON
With PORT2, the same on PORT2 with CERT2 (another name); a CERT of - serves
plain HTTP.
"""
import base64
import http.server
import json
import ssl
import sys
import threading
import time


class Handler(http.server.BaseHTTPRequestHandler):
    def body(self, code, data, length=True):
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        if length:
            self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/ok":
            self.body(200, b'{"keys":[],"via":"tls"}')
        elif self.path == "/nolen":
            self.close_connection = True
            self.body(200, b'{"no":"length"}' * 1000, length=False)
        elif self.path == "/big":
            self.body(200, b"x" * (2 << 20))
        elif self.path == "/busy":
            self.send_response(503)
            self.send_header("Retry-After", "7")
            self.send_header("Content-Length", "4")
            self.end_headers()
            self.wfile.write(b"busy")
        elif self.path == "/empty":
            self.send_response(204)
            self.end_headers()
        elif self.path == "/slow":
            time.sleep(30)
        else:
            self.body(404, b'{"error":"not found"}')

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        data = self.rfile.read(n).decode()
        auth = self.headers.get("Authorization", "")
        cred = base64.b64decode(auth[6:]).decode() if auth.startswith("Basic ") else ""
        self.body(200, json.dumps({"method": "POST", "body": data, "basic": cred,
                                   "type": self.headers.get("Content-Type", ""),
                                   "test": self.headers.get("X-Test", "")}).encode())

    def log_message(self, *args):
        pass


def serve(port, cert, key):
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    srv.daemon_threads = True
    if cert != "-":
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    srv.serve_forever()


args = sys.argv[1:]
threads = []
for i in range(0, len(args), 3):
    t = threading.Thread(target=serve, args=(int(args[i]), args[i + 1], args[i + 2]), daemon=True)
    t.start()
    threads.append(t)
for t in threads:
    t.join()
