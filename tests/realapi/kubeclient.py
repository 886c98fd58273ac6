"""A small REST client for a real kube-apiserver (Python standard library).

The harness (realapi.py) and the KubeVirt stand-in (kvstandin.py) talk to the API server with
it: bearer-token auth over TLS verified against the test CA, JSON bodies, and an ApiError that
carries the HTTP status and the server's Status message, so a failed step says which object and
why. One keep-alive connection per thread.
"""

import http.client
import json
import ssl
import threading
import urllib.parse


class ApiError(Exception):
    def __init__(self, method, path, code, body):
        self.method, self.path, self.code, self.body = method, path, code, body
        try:
            st = json.loads(body)
            self.message = st.get("message", "") if isinstance(st, dict) else str(st)
            self.reason = st.get("reason", "") if isinstance(st, dict) else ""
        except ValueError:
            self.message, self.reason = body[:300], ""
        super().__init__("%s %s: HTTP %d %s" % (method, path, code, self.message))


class Client:
    """Requests to https://127.0.0.1:PORT as one user (token)."""

    def __init__(self, host, port, ca_file, token, timeout=30.0):
        self.host, self.port, self.token, self.timeout = host, port, token, timeout
        self.ctx = ssl.create_default_context(cafile=ca_file)
        self.local = threading.local()
        self.conns = []  # every thread's connection, for close()
        self.conns_lock = threading.Lock()

    def _conn(self, fresh=False):
        c = getattr(self.local, "conn", None)
        if c is None or fresh:
            if c is not None:
                c.close()
            c = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=self.timeout)
            self.local.conn = c
            with self.conns_lock:
                self.conns.append(c)
        return c

    def close(self):
        """Closes the connections of every thread (the server is going away)."""
        with self.conns_lock:
            for c in self.conns:
                c.close()
            self.conns = []

    def request(self, method, path, body=None, content_type="application/json", query=None, raw=False,
                accept="application/json"):
        """The decoded JSON answer (or bytes with raw=True); ApiError on a non-2xx answer."""
        if query:
            path = path + "?" + urllib.parse.urlencode(query)
        data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        headers = {"Authorization": "Bearer " + self.token, "Accept": accept}
        if data is not None:
            headers["Content-Type"] = content_type
        for attempt in (0, 1):
            c = self._conn(fresh=attempt == 1)
            try:
                c.request(method, path, body=data, headers=headers)
                r = c.getresponse()
                out = r.read()
                break
            except (http.client.HTTPException, ConnectionError, ssl.SSLError):
                if attempt == 1:
                    raise
        self.local.status = r.status  # for callers that compare codes (realtest.RealServer)
        if r.status >= 300:
            raise ApiError(method, path, r.status, out.decode("utf-8", "replace"))
        if raw:
            return out
        return json.loads(out) if out else None

    def get(self, path, **query):
        return self.request("GET", path, query=query or None)

    def create(self, path, obj):
        return self.request("POST", path, obj)

    def put(self, path, obj):
        return self.request("PUT", path, obj)

    def merge_patch(self, path, patch):
        return self.request("PATCH", path, patch, content_type="application/merge-patch+json")

    def delete(self, path, **query):
        return self.request("DELETE", path, query=query or None)

    def list_all(self, path, **query):
        """Every item of a collection, following continue tokens."""
        items, cont = [], None
        while True:
            q = dict(query)
            q["limit"] = q.get("limit", 500)
            if cont:
                q["continue"] = cont
            page = self.get(path, **q)
            items.extend(page.get("items") or [])
            cont = (page.get("metadata") or {}).get("continue")
            if not cont:
                return items, page
