#!/usr/bin/env python3
"""authproxy.py - an HTTPS reverse proxy in front of Prometheus that wants a bearer token, as
an OpenShift Prometheus route (kube-rbac-proxy / oauth-proxy) does. Prometheus itself only
offers basic auth, so the descheduler's bearer-token paths are tested through this.

    authproxy.py --upstream http://127.0.0.1:9090 --tls-dir DIR --token-file FILE

Serves on 127.0.0.1 on a free port with the certificates of tests/apisim/simcerts.py made in
DIR (ca.crt is what a client must trust), prints `ready <port>` on stdout, and forwards GET and
POST requests whose `Authorization: Bearer <token>` matches the token file's content (read on
every request, so a test can change it); anything else gets 401 with Prometheus' error JSON.
Each request's method, path and whether it was authorized are logged on stderr. Python
standard library only.
"""

import argparse
import http.server
import os
import ssl
import sys
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "apisim"))
import simcerts  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--tls-dir", required=True)
    ap.add_argument("--token-file", required=True)
    a = ap.parse_args()
    certs = simcerts.ensure_certs(a.tls_dir)

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):
            pass

        def _forward(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            with open(a.token_file) as f:
                want = "Bearer " + f.read().strip()
            ok = self.headers.get("Authorization", "") == want
            sys.stderr.write("%s %s authorized=%s\n" % (self.command, self.path, ok))
            sys.stderr.flush()
            if not ok:
                out = b'{"status":"error","errorType":"unauthorized","error":"Unauthorized"}'
                self.send_response(401)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)
                return
            req = urllib.request.Request(a.upstream + self.path, data=body, method=self.command)
            if self.headers.get("Content-Type"):
                req.add_header("Content-Type", self.headers["Content-Type"])
            try:
                with urllib.request.urlopen(req, timeout=30) as r:
                    status, out, ctype = r.status, r.read(), r.headers.get("Content-Type", "")
            except urllib.error.HTTPError as e:
                status, out, ctype = e.code, e.read(), e.headers.get("Content-Type", "")
            self.send_response(status)
            self.send_header("Content-Type", ctype or "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        do_GET = _forward
        do_POST = _forward

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(certs["server.crt"], certs["server.key"])
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    print("ready %d" % srv.server_address[1], flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
