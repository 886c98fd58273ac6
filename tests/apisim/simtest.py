"""Test harness: start a simulator process on a free port, talk to it, stop it.

Every test gets its own simulator (`SimProcess`), so tests never share
state.  `request()` is a thin http.client wrapper returning (status,
headers, decoded JSON or bytes); `kubectl()` runs Debian's kubectl from
`<repo>/.deps/bin/kubectl` (or `$KUBECTL`) with a private discovery cache.
"""

import http.client
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
APISIM = os.path.join(HERE, "apisim.py")
CLUSTER = os.path.join(HERE, "data", "cluster.json")
sys.path.insert(0, HERE)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def kubectl_path():
    path = os.environ.get("KUBECTL") or os.path.join(REPO, ".deps", "bin", "kubectl")
    if not os.access(path, os.X_OK):
        raise RuntimeError("Debian's kubectl not found at %s: run scripts/deps.sh test (or set $KUBECTL)" % path)
    return path


def write_snapshot(items, directory):
    path = os.path.join(directory, "snapshot.json")
    with open(path, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f)
    return path


class SimProcess:
    """A running apisim.py; use as a context manager or call stop()."""

    def __init__(self, snapshot=CLUSTER, args=(), tls_dir=None, token=None, kubeconfig=True):
        self.tmp = tempfile.mkdtemp(prefix="apisim-test-")
        self.token = token
        self.tls_dir = tls_dir
        self.kubeconfig = os.path.join(self.tmp, "kubeconfig") if kubeconfig else None
        self.stderr_path = os.path.join(self.tmp, "stderr.log")
        last = None
        for _ in range(5):
            self.port = free_port()
            cmd = [sys.executable, APISIM, "--snapshot", snapshot, "--port", str(self.port)] + list(args)
            if tls_dir:
                cmd += ["--tls-dir", tls_dir]
            if token:
                cmd += ["--token", token]
            if self.kubeconfig:
                cmd += ["--kubeconfig-out", self.kubeconfig]
            self.stderr = open(self.stderr_path, "w")
            self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self.stderr, text=True)
            line = self.proc.stdout.readline()
            if line.strip() == "ready":
                break
            self.proc.wait(timeout=10)
            self.stderr.close()
            last = open(self.stderr_path).read()
            if "cannot listen" not in last:
                raise RuntimeError("simulator failed to start: %s" % last)
        else:
            raise RuntimeError("simulator failed to start: %s" % last)
        self.scheme = "https" if tls_dir else "http"
        self.base = "%s://127.0.0.1:%d" % (self.scheme, self.port)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def stop(self):
        """SIGTERM and wait; returns the exit code (tests assert it is 0)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()
        self.stderr.close()
        code = self.proc.returncode
        shutil.rmtree(self.tmp, ignore_errors=True)
        return code

    def log(self):
        with open(self.stderr_path) as f:
            return f.read()

    # -- HTTP ---------------------------------------------------------------

    def ssl_context(self, client_cert=True):
        ctx = ssl.create_default_context(cafile=os.path.join(self.tls_dir, "ca.crt"))
        if client_cert:
            ctx.load_cert_chain(os.path.join(self.tls_dir, "client.crt"), os.path.join(self.tls_dir, "client.key"))
        return ctx

    def connection(self, timeout=30, ssl_ctx=None):
        if self.scheme == "https":
            return http.client.HTTPSConnection("127.0.0.1", self.port, timeout=timeout,
                                               context=ssl_ctx or self.ssl_context())
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def request(self, method, path, body=None, headers=None, content_type="application/json", token=None,
                conn=None, raw=False, ssl_ctx=None):
        h = {"Accept": "application/json"}
        if body is not None:
            h["Content-Type"] = content_type
            if not isinstance(body, (bytes, str)):
                body = json.dumps(body)
        tok = token if token is not None else self.token
        if tok:
            h["Authorization"] = "Bearer " + tok
        h.update(headers or {})
        own = conn is None
        conn = conn or self.connection(ssl_ctx=ssl_ctx)
        try:
            conn.request(method, path, body=body, headers=h)
            r = conn.getresponse()
            data = r.read()
        finally:
            if own:
                conn.close()
        if raw:
            return r.status, dict(r.getheaders()), data
        try:
            return r.status, dict(r.getheaders()), json.loads(data) if data else None
        except ValueError:
            return r.status, dict(r.getheaders()), data

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def obj(self, path):
        code, _, body = self.get(path)
        if code != 200:
            raise AssertionError("GET %s -> %d %s" % (path, code, body))
        return body

    def evict(self, ns, name, descheduler=True, dry_run=False):
        ann = {"reason": "triggered by test/LowNodeUtilization: node is overutilized"}
        if descheduler:
            ann["requested-by"] = "sigs.k8s.io/descheduler"
        body = {"apiVersion": "policy/v1", "kind": "Eviction",
                "metadata": {"name": name, "namespace": ns, "annotations": ann}}
        path = "/api/v1/namespaces/%s/pods/%s/eviction" % (ns, name) + ("?dryRun=All" if dry_run else "")
        return self.request("POST", path, body)

    def control(self, method, what, body=None):
        code, _, data = self.request(method, "/_sim/" + what, body)
        if code >= 300:
            raise AssertionError("control %s %s -> %d %s" % (method, what, code, data))
        return data

    def settled_journal(self, timeout=10.0, watches=True):
        """The journal once no request is being served (watches=False: none but open watches).
        A request is journalled after its answer is sent, so its client can read the journal
        before the entry is there."""
        def settled():
            j = self.control("GET", "journal")
            busy = j["inFlight"] - (0 if watches else j["inFlightWatches"])
            return j if busy <= 0 else None
        return self.wait_for(settled, timeout, "the journal to settle")["items"]

    def launcher(self, ns, vmi_name):
        """The current (non-terminal) launcher pod of a VMI."""
        pods = self.obj("/api/v1/namespaces/%s/pods?labelSelector=vm.kubevirt.io/name%%3D%s" % (ns, vmi_name))
        live = [p for p in pods["items"] if p["status"].get("phase") not in ("Succeeded", "Failed")]
        if len(live) != 1:
            raise AssertionError("expected one live launcher for %s, got %s" % (vmi_name,
                                                                               [p["metadata"]["name"] for p in live]))
        return live[0]

    def wait_for(self, fn, timeout=10.0, what="condition"):
        end = time.monotonic() + timeout
        while True:
            v = fn()
            if v:
                return v
            if time.monotonic() > end:
                raise AssertionError("timed out waiting for %s" % what)
            time.sleep(0.05)

    def kubectl(self, *args, input=None, timeout=60, check=True):
        cmd = [kubectl_path(), "--kubeconfig", self.kubeconfig, "--cache-dir", os.path.join(self.tmp, "kcache")]
        cmd += list(args)
        p = subprocess.run(cmd, input=input, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=timeout)
        if check and p.returncode != 0:
            raise AssertionError("kubectl %s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr))
        return p


class KubectlCase(unittest.TestCase):
    """A test with its own simulator per test method, driven through kubectl (`self.k`); the
    simulator must stop cleanly and log no internal error."""

    def setUp(self):
        kubectl_path()  # fail early and clearly when kubectl is missing
        self.sim = SimProcess()

    def tearDown(self):
        log = self.sim.log()
        self.assertEqual(self.sim.stop(), 0)
        self.assertNotIn("internal error", log)

    def k(self, *args, **kw):
        return self.sim.kubectl(*args, **kw)
