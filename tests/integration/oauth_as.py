#!/usr/bin/env python3
"""oauth_as.py PORT DIR: a tiny authorization server for the key tests.

Serves on 127.0.0.1:PORT the RFC 8414 metadata of issuer
http://127.0.0.1:PORT/ (GET /.well-known/oauth-authorization-server) and its
JWK set (GET /jwks: the file DIR/jwks.json as it is at each request). Each
request appends its path to DIR/hits, so a test counts the fetches.
POST /introspect answers from DIR/introspect.json (RFC 7662) when the Basic
credentials are phantom:DIR/secret.
"""
import base64
import http.server
import os
import sys

PORT = int(sys.argv[1])
DIR = sys.argv[2]
ISSUER = "http://127.0.0.1:%d/" % PORT


class Handler(http.server.BaseHTTPRequestHandler):
    def send(self, code, body):
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def hit(self):
        with open(os.path.join(DIR, "hits"), "a") as f:
            f.write(self.command + " " + self.path + "\n")

    def do_GET(self):
        self.hit()
        if self.path == "/.well-known/oauth-authorization-server":
            self.send(200, '{"issuer":"%s","jwks_uri":"%sjwks"}' % (ISSUER, ISSUER))
        elif self.path == "/jwks":
            with open(os.path.join(DIR, "jwks.json")) as f:
                self.send(200, f.read())
        else:
            self.send(404, "{}")

    def do_POST(self):
        self.hit()
        body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
        with open(os.path.join(DIR, "introspect.body"), "w") as f:
            f.write(body)
        with open(os.path.join(DIR, "secret")) as f:
            want = "Basic " + base64.b64encode(("phantom:" + f.read().strip()).encode()).decode()
        if self.path != "/introspect" or self.headers.get("Authorization") != want:
            self.send(401, '{"error":"invalid_client"}')
            return
        with open(os.path.join(DIR, "introspect.json")) as f:
            self.send(200, f.read())

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
