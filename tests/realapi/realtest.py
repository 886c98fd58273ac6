"""Test harness for the real API server: tests/apisim/simtest.py's SimProcess, over realapi.Cluster.

`RealServer` starts etcd, kube-apiserver and the KubeVirt stand-in in this process (realapi.py)
and offers what the simulator's tests use: `kubeconfig` (an admin), `kubectl()`, `request()`,
`obj()`, `wait_for()`, `control()` (the `/_sim/` paths the harness has: `requests`,
`migrations/advance`) and `log()`. What only a real server has:

- `service_account_kubeconfig(ns, name)`: a kubeconfig with a token the API server issued for
  that ServiceAccount (TokenRequest), so a program runs with exactly the rights its roles give;
  from then on `control("GET", "requests")` counts that user's requests only;
- `forbidden()`: that user's requests the RBAC authorizer refused (403), from the audit log;
- `compact()`: compacts etcd, so older resourceVersions and continue tokens answer 410.
"""

import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "apisim"))

import realapi  # noqa: E402
import simcerts  # noqa: E402
from kubeclient import ApiError, Client  # noqa: E402
from simtest import SimProcess  # noqa: E402


class RealServer:
    authorizes = True  # RBAC is enforced (the simulator only stores roles)

    def __init__(self, snapshot, args=(), apiserver_args=()):
        args = list(args)
        migration = float(args[args.index("--migration-seconds") + 1]) if "--migration-seconds" in args else 5.0
        self.tmp = tempfile.mkdtemp(prefix="realapi-test-")
        self.lines = []
        realapi.log = self._log  # the harness's lines, kept for log()
        self.cluster = realapi.Cluster(os.path.join(self.tmp, "cluster"), migration, apiserver_args=apiserver_args)
        os.makedirs(self.cluster.dir)
        self.user = None
        try:
            self.cluster.start_etcd()
            self.cluster.start_apiserver(realapi.binary_path())
            self.cluster.create_crds()
            self.cluster.load(snapshot)
            self.cluster.start_standin()
        except BaseException:
            self.cluster.stop()
            shutil.rmtree(self.tmp, ignore_errors=True)
            raise
        self.kubeconfig = os.path.join(self.tmp, "kubeconfig")
        simcerts.write_kubeconfig(self.kubeconfig, self.cluster.kubeconfig())
        self.admin = Client("127.0.0.1", self.cluster.port, self.cluster.certs["ca.crt"], self.cluster.admin_token)

    def _log(self, msg):
        self.lines.append(msg)
        print("realapi: " + msg, file=sys.stderr, flush=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def stop(self):
        self.admin.close()
        self.cluster.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)
        return 0

    def log(self):
        return "\n".join(self.lines)

    # -- as the simulator's SimProcess ------------------------------------------------

    def request(self, method, path, body=None, content_type="application/json", raw=False, **_):
        try:
            out = self.admin.request(method, path, body, content_type=content_type, raw=raw)
            return self.admin.local.status, {}, out
        except ApiError as e:
            try:
                return e.code, {}, json.loads(e.body)
            except ValueError:
                return e.code, {}, e.body

    # reads, waits and kubectl as the simulator's harness does them (they use only request(),
    # self.kubeconfig and self.tmp)
    get = SimProcess.get
    obj = SimProcess.obj
    wait_for = SimProcess.wait_for
    kubectl = SimProcess.kubectl

    def control(self, method, what, body=None):
        if what == "requests" and method == "DELETE":
            self.cluster.reset_requests()
            return {"ok": True}
        if what == "requests" and method == "GET":
            return self.counts()
        if what == "migrations/advance" and method == "POST":
            return {"phases": self.cluster.standin.advance(float((body or {}).get("seconds", 5)))}
        raise AssertionError("control %s %s: the real-server harness has no such path" % (method, what))

    # -- what only a real server has ------------------------------------------------------

    def service_account_kubeconfig(self, namespace, name):
        """A kubeconfig whose token the API server issued for namespace/name (TokenRequest)."""
        out = self.admin.create("/api/v1/namespaces/%s/serviceaccounts/%s/token" % (namespace, name),
                                {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                                 "spec": {"expirationSeconds": 3600}})
        path = os.path.join(self.tmp, "kubeconfig-%s-%s" % (namespace, name))
        simcerts.write_kubeconfig(path, self.cluster.kubeconfig(token=out["status"]["token"]))
        self.user = "system:serviceaccount:%s:%s" % (namespace, name)
        return path

    def events(self, since_reset=True):
        """Audit events (completed requests) since the last reset, of the user when one is set."""
        return [e for e in self.cluster.audit_events(since_reset)
                if self.user is None or (e.get("user") or {}).get("username") == self.user]

    def counts(self):
        return self.cluster.request_counts(self.user)

    def forbidden(self):
        """["<verb> <path>"] the authorizer refused to the user, over the whole run."""
        return ["%s %s" % (e.get("verb"), e.get("requestURI", "").split("?")[0]) for e in self.events(False)
                if (e.get("responseStatus") or {}).get("code") == 403]

    def compact(self):
        return self.cluster.compact()
