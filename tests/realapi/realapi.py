#!/usr/bin/env python3
"""A real kube-apiserver with etcd on loopback, loaded with a cluster, KubeVirt standing in.

The end-to-end tests run the descheduler against this as they run it against the API
simulator (tests/apisim/apisim.py), with the same command-line contract, so
tests/cli/livelib.sh can start either (LIVE_BACKEND=realapi):

  python3 tests/realapi/realapi.py --snapshot FILE --kubeconfig-out FILE [--migration-seconds N]
      [--dir DIR] [--port 0]

prints one line `ready` on stdout once the API server answers, the snapshot is loaded and the
stand-in controllers have run once; logs go to stderr; SIGTERM/SIGINT stop everything.

- etcd (Debian's etcd-server) and kube-apiserver (built by tests/realapi/build.sh) on free
  loopback ports, a throw-away data directory, TLS with a CA made by openssl, static tokens:
  an admin (group system:masters) for the tests and the descheduler, a second one for this
  harness, RBAC authorization, service-account token signing (TokenRequest works), an audit
  log of every request except this harness's own;
- the CRDs of KubeVirt's objects (the simulator's definitions: tests/apisim/simresources.py),
  the snapshot's objects created in dependency order (status written through `/status`,
  owner references and `kubevirt.io/created-by` labels rewritten to the new UIDs);
- tests/realapi/kvstandin.py: KubeVirt's eviction webhook and controllers, the PDB status
  writer, a kubelet that finishes deletions;
- a plain-HTTP control endpoint on 127.0.0.1 (`--port`) with the simulator's paths that make
  sense on a real server: `GET /_sim/health`, `POST /_sim/migrations/advance`,
  `GET|DELETE /_sim/requests` (counts from the audit log, the same keys as the simulator's),
  `POST /_sim/etcd/compact` (compacts etcd at its current revision: older resourceVersions
  and continue tokens then get 410). Faults are the simulator's alone: `/_sim/faults` is 501.
  The control URL is written to DIR/control-url and to `<kubeconfig-out>.control`.
"""

import argparse
import base64
import concurrent.futures
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "apisim"))
sys.path.insert(0, HERE)

import kvstandin  # noqa: E402
import simcerts  # noqa: E402
import simresources  # noqa: E402
from apisim import iter_snapshot  # noqa: E402
from kubeclient import ApiError, Client  # noqa: E402
from simtest import free_port  # noqa: E402

HARNESS_USER = "realapi-harness"
ADMIN_USER = "realapi-admin"

# creation order: what others refer to first
ORDER = ["Namespace", "PriorityClass", "CustomResourceDefinition", "StorageClass", "Node", "KubeVirt",
         "HyperConverged", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding",
         "ConfigMap", "Secret", "PersistentVolume", "PersistentVolumeClaim", "Service", "Deployment",
         "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob", "VirtualMachine",
         "VirtualMachineInstance", "PodDisruptionBudget", "Pod", "VirtualMachineInstanceMigration"]
SERVER_SET = ("uid", "resourceVersion", "creationTimestamp", "generation", "selfLink", "managedFields",
              "deletionTimestamp", "deletionGracePeriodSeconds")


def log(msg):
    print("realapi: " + msg, file=sys.stderr, flush=True)


def binary_path():
    """The kube-apiserver tests/realapi/build.sh made; never builds (that takes minutes)."""
    p = subprocess.run([os.path.join(HERE, "build.sh"), "--check"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip() + " (run tests/realapi/build.sh, or make test-realapi)")
    return p.stdout.strip().splitlines()[-1]


class Cluster:
    # without a controller-manager nobody creates ServiceAccounts or lifts the not-ready taint a
    # new Node gets; a harness that runs one (tests/lab/cluster.py) passes disable_admission=()
    REALAPI_DISABLED_ADMISSION = ("ServiceAccount", "TaintNodesByCondition")

    def __init__(self, workdir, migration_seconds=5.0, audit=True, apiserver_args=(),
                 disable_admission=REALAPI_DISABLED_ADMISSION, users=None, audited_users=()):
        """users: extra static-token users, {name: [groups]}, for controllers a harness runs;
        their tokens are in self.user_tokens, and their requests stay out of the audit log
        like the harness's own, except those of the users named in audited_users."""
        self.dir = workdir
        self.apiserver_args = list(apiserver_args)
        self.disable_admission = list(disable_admission)
        self.users = dict(users or {})
        self.user_tokens = {name: uuid.uuid4().hex for name in self.users}
        self.audited_users = set(audited_users)
        self.migration_seconds = migration_seconds
        self.audit = audit
        self.procs = []
        self.admin_token = uuid.uuid4().hex
        self.harness_token = uuid.uuid4().hex
        self.requests_base = 0   # audit lines before the last DELETE /_sim/requests

    # -- processes ---------------------------------------------------------------

    def _spawn(self, name, argv):
        with open(os.path.join(self.dir, name + ".log"), "wb") as out:  # the child keeps its own copy
            p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.procs.append((name, p))
        return p

    def _fail(self, what, name):
        tail = ""
        path = os.path.join(self.dir, name + ".log")
        if os.path.exists(path):
            with open(path, "rb") as f:
                tail = f.read()[-3000:].decode("utf-8", "replace")
        raise RuntimeError("%s\n--- %s.log (end):\n%s" % (what, name, tail))

    def start_etcd(self, quota_backend_bytes=2 << 30, timeout=10.0):
        """quota_backend_bytes: etcd's backend quota (past it etcd refuses writes, "mvcc:
        database space exceeded"); a harness that loads far more than the tests' snapshots
        (tests/lab/scale.py) raises it. timeout: seconds until etcd must be healthy (a large
        data directory copied in takes longer to open)."""
        etcd = shutil.which("etcd") or "/usr/bin/etcd"
        if not os.path.exists(etcd):
            raise RuntimeError("etcd not found (Debian package etcd-server; scripts/deps.sh realapi installs it)")
        self.etcd_port, peer = free_port(), free_port()
        self.etcd_url = "http://127.0.0.1:%d" % self.etcd_port
        p = self._spawn("etcd", [
            etcd, "--name", "realapi", "--data-dir", os.path.join(self.dir, "etcd"),
            "--listen-client-urls", self.etcd_url, "--advertise-client-urls", self.etcd_url,
            "--listen-peer-urls", "http://127.0.0.1:%d" % peer,
            "--initial-advertise-peer-urls", "http://127.0.0.1:%d" % peer,
            "--initial-cluster", "realapi=http://127.0.0.1:%d" % peer,
            "--snapshot-count", "10000", "--quota-backend-bytes", str(quota_backend_bytes)])
        deadline = time.time() + timeout
        while time.time() < deadline:
            if p.poll() is not None:
                self._fail("etcd exited with status %d" % p.returncode, "etcd")
            try:
                with urllib.request.urlopen(self.etcd_url + "/health", timeout=1) as r:
                    if json.loads(r.read()).get("health") == "true":
                        return
            except OSError:
                pass
            time.sleep(0.05)
        self._fail("etcd did not become healthy in %.0f s" % timeout, "etcd")

    def start_apiserver(self, binary, timeout=90.0):
        d = self.dir
        self.certs = simcerts.ensure_certs(os.path.join(d, "pki"))
        subprocess.run(["openssl", "genrsa", "-out", os.path.join(d, "pki", "sa.key"), "2048"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(os.path.join(d, "tokens.csv"), "w") as f:
            f.write('%s,%s,uid-admin,"system:masters"\n' % (self.admin_token, ADMIN_USER))
            f.write('%s,%s,uid-harness,"system:masters"\n' % (self.harness_token, HARNESS_USER))
            for i, (name, groups) in enumerate(sorted(self.users.items())):
                f.write('%s,%s,uid-user-%d,"%s"\n' % (self.user_tokens[name], name, i, ",".join(groups)))
        self.audit_log = os.path.join(d, "audit.log")
        with open(os.path.join(d, "audit-policy.yaml"), "w") as f:
            f.write("apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n"
                    "- level: None\n  users: %s\n- level: Metadata\n"
                    % json.dumps([HARNESS_USER, "system:apiserver"] + sorted(set(self.users) - self.audited_users)))
        self.port = free_port()
        argv = [binary, "--etcd-servers", self.etcd_url, "--bind-address", "127.0.0.1",
                "--advertise-address", "127.0.0.1", "--secure-port", str(self.port),
                "--cert-dir", os.path.join(d, "pki"),
                "--tls-cert-file", self.certs["server.crt"], "--tls-private-key-file", self.certs["server.key"],
                "--client-ca-file", self.certs["ca.crt"], "--token-auth-file", os.path.join(d, "tokens.csv"),
                "--authorization-mode", "RBAC",
                "--service-account-issuer", "https://kubernetes.default.svc",
                "--service-account-key-file", os.path.join(d, "pki", "sa.key"),
                "--service-account-signing-key-file", os.path.join(d, "pki", "sa.key"),
                "--service-cluster-ip-range", "10.96.0.0/16",
                "--endpoint-reconciler-type", "none", "--profiling=false", "--v", "1"] + self.apiserver_args
        if self.disable_admission:
            argv += ["--disable-admission-plugins", ",".join(self.disable_admission)]
        if self.audit:
            argv += ["--audit-policy-file", os.path.join(d, "audit-policy.yaml"),
                     "--audit-log-path", self.audit_log, "--audit-log-format", "json", "--audit-log-maxbackup", "0"]
        p = self._spawn("kube-apiserver", argv)
        self.client = Client("127.0.0.1", self.port, self.certs["ca.crt"], self.harness_token)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if p.poll() is not None:
                self._fail("kube-apiserver exited with status %d" % p.returncode, "kube-apiserver")
            try:
                if self.client.request("GET", "/readyz", raw=True) == b"ok":
                    return
            except (ApiError, OSError):
                pass
            time.sleep(0.2)
        self._fail("kube-apiserver was not ready in %.0f s" % timeout, "kube-apiserver")

    def stop(self):
        if getattr(self, "standin", None) is not None:
            self.standin.close()
        if getattr(self, "client", None) is not None:
            self.client.close()
        for name, p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
        for name, p in reversed(self.procs):
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    # -- objects -----------------------------------------------------------------

    def create_crds(self):
        reg = simresources.Registry()
        names = []
        for r in reg.resources:
            if not r.custom:
                continue
            crd = simresources.crd_for(r)
            crd.pop("status", None)
            crd["metadata"].pop("creationTimestamp", None)
            self.client.create("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
            names.append(crd["metadata"]["name"])
        deadline = time.time() + 30
        for n in names:
            while True:
                c = self.client.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + n)
                if any(x.get("type") == "Established" and x.get("status") == "True"
                       for x in (c.get("status") or {}).get("conditions") or []):
                    break
                if time.time() > deadline:
                    raise RuntimeError("CRD %s not Established in 30 s" % n)
                time.sleep(0.1)
        # the first requests to a new group can race its discovery; wait until it lists
        for r in reg.resources:
            if r.custom:
                while True:
                    try:
                        self.client.get(kvstandin.path_of(r))
                        break
                    except ApiError as e:
                        if e.code != 404 or time.time() > deadline:
                            raise
                        time.sleep(0.1)

    def load(self, snapshot, workers=None):
        """Creates the snapshot's objects, kind after kind in dependency order, and the objects of
        one kind `workers` requests at a time ($REALAPI_LOAD_WORKERS, default 1: the tests' objects
        are created in file order; a big snapshot is bound by the API server, not by one
        connection: 8 created 17,612 objects, 500 nodes and 15,000 pods, in 80 s on 2 cores).
        Returns how many. Says how far it got every 10 s, and how long it took."""
        workers = workers or int(os.environ.get("REALAPI_LOAD_WORKERS") or 1)
        with open(snapshot) as f:
            objs = list(flatten(iter_snapshot(f.read())))
        reg = simresources.Registry()
        rank = {k: i for i, k in enumerate(ORDER)}
        objs.sort(key=lambda o: rank.get(o.get("kind"), len(ORDER)))
        uids = {}
        namespaces = {"default", "kube-system", "kube-public", "kube-node-lease"}
        plan = []  # (rank, res, ns, obj)
        for o in objs:
            kind, av = o.get("kind") or "", o.get("apiVersion") or ""
            res = reg.by_kind(av, kind) or reg.by_kind_any_version(av.rpartition("/")[0], kind)
            if res is None or res.virtual or res.view or kind == "CustomResourceDefinition":
                log("snapshot: skipping %s %s" % (av, kind))
                continue
            md = o.setdefault("metadata", {})
            ns = md.get("namespace", "default") if res.namespaced else None
            if res.namespaced:
                md["namespace"] = ns
            if kind == "Namespace":
                if md["name"] in namespaces:
                    continue
                namespaces.add(md["name"])
            plan.append((rank.get(kind, len(ORDER)), res, ns, o))
        # the namespaces the objects need, before anything in them
        for _, res, ns, o in plan:
            if res.namespaced and ns not in namespaces:
                self._ensure_namespace(ns)
                namespaces.add(ns)
        done = [0]
        lock = threading.Lock()
        start = last = time.time()

        def create(item):
            _, res, ns, o = item
            kind, md = o.get("kind"), o["metadata"]
            old_uid = md.get("uid")
            for k in SERVER_SET:
                md.pop(k, None)
            _remap(o, uids)
            if kind == "Service":
                (o.get("spec") or {}).pop("clusterIP", None)
                (o.get("spec") or {}).pop("clusterIPs", None)
            status = o.get("status")
            try:
                out = self.client.create(kvstandin.path_of(res, ns), o)
            except ApiError as e:
                if e.code == 409 and kind in ("PriorityClass", "Namespace"):
                    return
                raise RuntimeError("snapshot %s: creating %s %s: %s" % (snapshot, kind, _name(md), e)) from None
            if old_uid:
                uids[old_uid] = out["metadata"]["uid"]
            if status and res.status_subresource:
                out["status"] = status
                try:
                    self.client.put(kvstandin.path_of(res, ns, md["name"], "status"), out)
                except ApiError as e:
                    raise RuntimeError("snapshot %s: writing the status of %s %s: %s"
                                       % (snapshot, kind, _name(md), e)) from None
            with lock:
                done[0] += 1

        with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
            i = 0
            while i < len(plan):
                j = i
                while j < len(plan) and plan[j][0] == plan[i][0]:
                    j += 1
                # one kind at a time: the next may refer to it (owners, the uids remapped)
                for fut in concurrent.futures.as_completed([pool.submit(create, it) for it in plan[i:j]]):
                    fut.result()
                    if time.time() - last >= 10:
                        last = time.time()
                        log("snapshot: %d of %d objects created (%.0f s)" % (done[0], len(plan), last - start))
                i = j
        log("snapshot: %d objects created in %.1f s (%.0f a second, %d at a time)"
            % (done[0], time.time() - start, done[0] / max(time.time() - start, 1e-9), workers))
        return done[0]

    def _ensure_namespace(self, ns):
        try:
            self.client.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                      "metadata": {"name": ns}})
        except ApiError as e:
            if e.code != 409:
                raise

    def start_standin(self):
        self.standin = kvstandin.StandIn(self.client, self.migration_seconds, log=log)
        wport = self.standin.serve_webhook(self.certs["server.crt"], self.certs["server.key"])
        with open(self.certs["ca.crt"], "rb") as f:
            self.client.create("/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
                               kvstandin.webhook_configuration(wport, f.read()))
        self.standin.start()

    def kubeconfig(self, token=None):
        return simcerts.kubeconfig_text("https://127.0.0.1:%d" % self.port, ca_path=self.certs["ca.crt"],
                                        token=token or self.admin_token)

    # -- control ---------------------------------------------------------------------

    def audit_events(self, since_reset=True):
        """Completed requests in the audit log (since the last reset), as dicts."""
        out = []
        try:
            with open(self.audit_log) as f:
                lines = f.readlines()
        except FileNotFoundError:
            return out
        for line in lines[self.requests_base if since_reset else 0:]:
            try:
                ev = json.loads(line)
            except ValueError:
                continue  # a line being written
            if ev.get("stage") == "ResponseComplete":
                out.append(ev)
        return out

    def reset_requests(self):
        try:
            with open(self.audit_log) as f:
                self.requests_base = sum(1 for _ in f)
        except FileNotFoundError:
            self.requests_base = 0

    def request_counts(self, user=None):
        """The simulator's /_sim/requests shape, from the audit log (one user's, or everyone's)."""
        counts = {"total": 0, "byVerb": {}, "byPath": {}, "byVerbAndPath": {}}
        for ev in self.audit_events():
            if user is not None and (ev.get("user") or {}).get("username") != user:
                continue
            verb, path = ev.get("verb", ""), ev.get("requestURI", "").split("?")[0]
            counts["total"] += 1
            for k, v in (("byVerb", verb), ("byPath", path), ("byVerbAndPath", verb + " " + path)):
                counts[k][v] = counts[k].get(v, 0) + 1
        return counts

    def _etcd(self, path, body):
        """One call to etcd's v3 JSON gateway; (HTTP status, answer)."""
        req = urllib.request.Request(self.etcd_url + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"{}")

    def etcd_range_at(self, revision):
        """etcd's answer to reading the registry at a revision: (status, answer); after compaction
        past it, etcd refuses ("required revision has been compacted")."""
        return self._etcd("/v3/kv/range", {"key": base64.b64encode(b"/registry/").decode(),
                                           "range_end": base64.b64encode(b"/registry0").decode(),
                                           "limit": 1, "revision": str(revision)})

    def compact(self):
        """Compacts etcd at its current revision (etcd's v3 JSON gateway); returns the revision."""
        # any range answer carries the store's current revision in its header
        code, out = self._etcd("/v3/kv/range", {"key": base64.b64encode(b"/registry").decode(), "limit": 1})
        if code != 200:
            raise RuntimeError("etcd range: HTTP %d %s" % (code, out))
        rev = int(out["header"]["revision"])
        code, out = self._etcd("/v3/kv/compaction", {"revision": str(rev), "physical": True})
        if code != 200:
            raise RuntimeError("etcd compaction at %d: HTTP %d %s" % (rev, code, out))
        return rev

    def serve_control(self, port):
        cluster = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def send_obj(self, code, obj):
                out = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def body(self):
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                return json.loads(raw) if raw.strip() else {}

            def handle_any(self, method):
                path = self.path.split("?")[0]
                try:
                    if path == "/_sim/health":
                        return self.send_obj(200, {"ok": True, "backend": "realapi", "passes": cluster.standin.passes,
                                                   "errors": cluster.standin.errors})
                    if path == "/_sim/migrations/advance" and method == "POST":
                        secs = self.body().get("seconds", cluster.migration_seconds)
                        return self.send_obj(200, {"phases": cluster.standin.advance(float(secs))})
                    if path == "/_sim/requests" and method == "GET":
                        return self.send_obj(200, cluster.request_counts())
                    if path == "/_sim/requests" and method == "DELETE":
                        cluster.reset_requests()
                        return self.send_obj(200, {"ok": True})
                    if path == "/_sim/etcd/compact" and method == "POST":
                        return self.send_obj(200, {"revision": cluster.compact()})
                    if path.startswith("/_sim/faults"):
                        return self.send_obj(501, {"error": "faults are the API simulator's alone (tests/apisim)"})
                    return self.send_obj(404, {"error": "no such control path: " + path})
                except Exception as e:  # a control request reports its failure, never kills the harness
                    log("control %s %s failed: %s" % (method, path, e))
                    return self.send_obj(500, {"error": str(e)})

            def do_GET(self):
                self.handle_any("GET")

            def do_POST(self):
                self.handle_any("POST")

            def do_DELETE(self):
                self.handle_any("DELETE")

        srv = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        srv.daemon_threads = True
        threading.Thread(target=srv.serve_forever, daemon=True, name="control").start()
        return srv.server_address[1]


def _name(md):
    return "%s/%s" % (md["namespace"], md.get("name")) if md.get("namespace") else md.get("name", "?")


def _remap(o, uids):
    md = o["metadata"]
    for ref in md.get("ownerReferences") or []:
        if ref.get("uid") in uids:
            ref["uid"] = uids[ref["uid"]]
    labels = md.get("labels") or {}
    for k, v in labels.items():
        if v in uids:
            labels[k] = uids[v]


def flatten(items):
    for o in items:
        if isinstance(o, dict) and (o.get("kind") or "").endswith("List") and isinstance(o.get("items"), list):
            yield from flatten(o["items"])
        elif isinstance(o, dict):
            yield o


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--snapshot", required=True)
    ap.add_argument("--kubeconfig-out", required=True)
    ap.add_argument("--port", type=int, default=0, help="control endpoint port (0: a free one)")
    ap.add_argument("--migration-seconds", type=float, default=5.0)
    ap.add_argument("--dir", help="working directory (default: a new temporary one, removed at exit)")
    args = ap.parse_args()
    workdir = args.dir or tempfile.mkdtemp(prefix="realapi.")
    os.makedirs(workdir, exist_ok=True)
    cluster = Cluster(workdir, args.migration_seconds)
    # the handlers only append: one that takes a lock (Event.set does) deadlocks the main
    # thread when a second signal lands while the first handler holds it
    stopping = []
    signal.signal(signal.SIGTERM, lambda *a: stopping.append(1))
    signal.signal(signal.SIGINT, lambda *a: stopping.append(1))
    code = 0
    try:
        t0 = time.time()
        binary = binary_path()
        cluster.start_etcd()
        cluster.start_apiserver(binary)
        t1 = time.time()
        cluster.create_crds()
        n = cluster.load(args.snapshot)
        cluster.start_standin()
        cport = cluster.serve_control(args.port)
        simcerts.write_kubeconfig(args.kubeconfig_out, cluster.kubeconfig())
        url = "http://127.0.0.1:%d" % cport
        for p in (os.path.join(workdir, "control-url"), args.kubeconfig_out + ".control"):
            with open(p, "w") as f:
                f.write(url + "\n")
        with open(os.path.join(workdir, "admin-token"), "w") as f:
            f.write(cluster.admin_token)
        log("etcd + kube-apiserver ready in %.1f s; %d objects loaded; control %s; dir %s"
            % (t1 - t0, n, url, workdir))
        print("ready", flush=True)
        while not stopping:
            time.sleep(0.5)
            if stopping:
                break
            for name, p in cluster.procs:
                if p.poll() is not None:
                    log("%s exited with status %d (see %s/%s.log)" % (name, p.returncode, workdir, name))
                    stopping.append(1)
                    code = 1
    except Exception as e:
        log(str(e))
        code = 2
    finally:
        cluster.stop()
        if not args.dir:
            shutil.rmtree(workdir, ignore_errors=True)
    sys.exit(code)


if __name__ == "__main__":
    main()
