"""KubeVirt, the disruption controller and a kubelet, standing in beside a real kube-apiserver.

A real API server with etcd has no controllers: nobody answers a launcher's eviction as
KubeVirt does, computes a PodDisruptionBudget's status, or finishes a pod's deletion. This
module plays those parts with the simulator's own rules, so the texts, the evacuation, the
migration limits and placement are the same code the API simulator (tests/apisim) runs:

- a mirror: the objects the controllers read (nodes, pods, PDBs, VMIs, VMIMs, the KubeVirt CR)
  are listed from the real server into an apisim `Store`; each object is written into the
  mirror only when its real resourceVersion changed, and objects gone from the server leave it
  (a deleted launcher reaches `KubeVirtSim` as a deletion, as in the simulator);
- the controllers: `KubeVirtSim.tick()` (tests/apisim/simkubevirt.py: VMI, evacuation and
  migration controllers) and `refresh_pdb_status()` (tests/apisim/simeviction.py, the
  disruption controller's arithmetic) run on the mirror; every write they make is captured and
  replayed onto the real server as a controller would write it: create, update of the main
  resource, update of `/status`, a `binding` for a pod's node, delete. A conflict (someone
  else wrote first) drops the write; the next pass starts from the server's state again;
- the webhook: `virt-launcher-eviction-interceptor.kubevirt.io`, an HTTPS server the API server
  calls for every `pods/eviction` CREATE (a ValidatingWebhookConfiguration as KubeVirt
  installs it). It answers with `KubeVirtSim.admit_eviction()`; a denial is HTTP 429 with the
  message, which the API server prefixes with `admission webhook "..." denied the request: `;
  marking the VMI is a real write on the server before the answer;
- a kubelet: a pod bound to a node that is still Pending starts Running and Ready (the
  simulator's rule at creation; launchers excepted: KubeVirt starts those); a pod with a
  deletionTimestamp is deleted for good (grace period 0), as the kubelet does once its
  containers stopped. Without it an evicted pod stays Terminating.

Time is apisim's `CLOCK`, which `advance()` (the control endpoint `/_sim/migrations/advance`)
moves forward, so a 10-minute migration completes when a test says so.
"""

import copy
import json
import os
import ssl
import sys
import threading
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "apisim"))

import simresources  # noqa: E402
from kubeclient import ApiError  # noqa: E402
from simeviction import refresh_pdb_status  # noqa: E402
from simkubevirt import WEBHOOK, KubeVirtSim, _running_status  # noqa: E402
from simstore import Store  # noqa: E402
from simutil import CLOCK, rfc3339  # noqa: E402

MIRRORED = (("", "v1", "nodes"), ("", "v1", "pods"), ("policy", "v1", "poddisruptionbudgets"),
            ("kubevirt.io", "v1", "virtualmachineinstances"),
            ("kubevirt.io", "v1", "virtualmachineinstancemigrations"), ("kubevirt.io", "v1", "kubevirts"))
META_KEYS = ("labels", "annotations", "finalizers", "ownerReferences")


def path_of(res, ns=None, name=None, sub=None):
    """The REST path of a resource, a namespace's collection, an object or its subresource."""
    base = "/apis/%s/%s" % (res.group, res.version) if res.group else "/api/v1"
    if res.namespaced and ns:
        base += "/namespaces/" + ns
    base += "/" + res.plural
    if name:
        base += "/" + name
        if sub:
            base += "/" + sub
    return base


def _clean(obj):
    obj["metadata"].pop("managedFields", None)
    return obj


class StandIn:
    """The controllers and the webhook over one API server; `client` has cluster-admin rights."""

    def __init__(self, client, migration_seconds=5.0, log=None):
        self.client = client
        self.log = log or (lambda msg: print("kvstandin: " + msg, file=sys.stderr, flush=True))
        self.registry = simresources.Registry()
        self.store = Store(self.registry)
        self.kv = KubeVirtSim(self.store, self.registry, migration_seconds, log=self.log)
        self.lock = threading.RLock()        # the mirror, the controllers and the replay
        self.real_rv = {}                    # (storage, key) -> the server's resourceVersion
        self.captured = None                 # writes made by the controllers, while capturing
        self.written, self.uids = {}, {}     # during a replay: (storage, key) -> version, uid map
        self.store.listeners.append(self._on_write)
        self.stop = threading.Event()
        self.wake = threading.Event()
        self.passes = 0
        self.errors = 0
        self.thread = None

    # -- the mirror --------------------------------------------------------------

    def _on_write(self, storage, typ, entry, prev):
        if self.captured is not None:
            self.captured.append((storage, typ, entry, prev))

    def sync(self, only=None):
        """Brings the mirror to the server's state (the resources in `only`, default all)."""
        for g, v, plural in MIRRORED:
            if only and plural not in only:
                continue
            res = self.registry.get(g, v, plural)
            items, _ = self.client.list_all(path_of(res))
            seen = set()
            for obj in items:
                md = obj["metadata"]
                if plural == "pods" and md.get("deletionTimestamp"):
                    self._finish_deletion(res, obj)
                elif plural == "pods" and self._start(res, obj):
                    continue  # the next sync takes it Running
                key = res.key(md.get("namespace", ""), md["name"])
                seen.add(key)
                rk = (res.storage, key)
                if self.real_rv.get(rk) == md["resourceVersion"]:
                    continue
                self.real_rv[rk] = md["resourceVersion"]
                self.store.put_raw(res, _clean(obj))
            bucket = self.store.bucket(res.storage)
            for key in [k for k in bucket.entries if k not in seen]:
                self.real_rv.pop((res.storage, key), None)
                with self.store.lock:
                    self.store._delete_entry(res, key, bucket.entries[key].obj(), cascade=False)

    def _start(self, res, pod):
        """The kubelet's first step: a pod bound to a node and still Pending starts Running and
        Ready (the simulator does this at creation). Launchers are KubeVirt's to start."""
        md, st = pod["metadata"], pod.get("status") or {}
        if not (pod.get("spec") or {}).get("nodeName") or st.get("phase", "Pending") != "Pending" or \
                st.get("conditions") or (md.get("labels") or {}).get("kubevirt.io") == "virt-launcher":
            return False
        pod["status"] = _running_status(pod, rfc3339(CLOCK.now()))
        try:
            self.client.put(path_of(res, md["namespace"], md["name"], "status"), pod)
        except ApiError as e:
            if e.code not in (404, 409):
                self.log("kubelet: starting pod %s/%s: %s" % (md["namespace"], md["name"], e))
        return True

    def _finish_deletion(self, res, pod):
        """The kubelet's last step: the containers are gone, the pod object goes."""
        md = pod["metadata"]
        try:
            self.client.request("DELETE", path_of(res, md["namespace"], md["name"]),
                                {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0,
                                 "preconditions": {"uid": md["uid"]}})
        except ApiError as e:
            if e.code not in (404, 409):
                self.log("kubelet: deleting pod %s/%s: %s" % (md["namespace"], md["name"], e))

    # -- replaying the controllers' writes -------------------------------------------

    def _capture(self, fn, *args):
        """Runs fn with the mirror's writes captured and replays them.

        A write builds on the version the previous write of the same object returned; every
        object written is then taken again from the server by the next sync (its real UID,
        what the server defaulted). Returns (fn's result, whether every write reached the
        server, how many there were)."""
        self.captured = []
        try:
            out = fn(*args)
        finally:
            writes, self.captured = self.captured, None
        ok = True
        self.written, self.uids = {}, {}
        for w in writes:
            ok &= self._replay(*w)
        for rk in self.written:
            self.real_rv.pop(rk, None)
        return out, ok, len(writes)

    def _remap(self, obj):
        """References to objects created in this pass: the mirror's UID -> the server's."""
        md = obj["metadata"]
        if md.get("uid") in self.uids:
            md["uid"] = self.uids[md["uid"]]
        for ref in md.get("ownerReferences") or []:
            ref["uid"] = self.uids.get(ref.get("uid"), ref.get("uid"))
        for k, v in (md.get("labels") or {}).items():
            if v in self.uids:
                md["labels"][k] = self.uids[v]
        return obj

    def _replay(self, storage, typ, entry, prev):
        res = self.registry.storage_resource(storage)
        obj = self._remap(entry.obj())
        md = obj["metadata"]
        ns, name = md.get("namespace", ""), md["name"]
        key = res.key(ns, name)
        rk = (storage, key)
        what = "%s %s" % (res.kind, key)
        try:
            if typ == "DELETED":
                self.client.request("DELETE", path_of(res, ns, name),
                                    {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0})
                self.written[rk] = None
                return True
            if typ == "ADDED" and rk not in self.real_rv and rk not in self.written:
                body = copy.deepcopy(obj)
                for k in ("resourceVersion", "uid", "creationTimestamp", "generation"):
                    body["metadata"].pop(k, None)
                node = (body.get("spec") or {}).get("nodeName") if storage == "pods" else None
                status = body.get("status")
                out = self.client.create(path_of(res, ns), body)
                self.uids[md.get("uid")] = out["metadata"]["uid"]
                if status and res.status_subresource:
                    out["status"] = status
                    out = self.client.put(path_of(res, ns, name, "status"), out)
                if node and not (out.get("spec") or {}).get("nodeName"):
                    out = self._bind(res, ns, name, node)
                self.written[rk] = out["metadata"]["resourceVersion"]
                return True
            # an update: the main resource and/or its status, on the server's last version
            old = self._remap(prev.obj()) if prev is not None else {}
            rv = self.written.get(rk) or self.real_rv.get(rk)
            if rv is None:
                self.log("replay: %s changed on the server meanwhile; left for the next pass" % what)
                return False
            main_changed = any(md.get(k) != (old.get("metadata") or {}).get(k) for k in META_KEYS) or \
                any(obj.get(k) != old.get(k) for k in obj if k not in ("metadata", "status"))
            status_changed = obj.get("status") != old.get("status")
            body = copy.deepcopy(obj)
            if storage == "pods":
                node, old_node = (obj.get("spec") or {}).get("nodeName"), (old.get("spec") or {}).get("nodeName")
                if node and not old_node:
                    rv = self._bind(res, ns, name, node)["metadata"]["resourceVersion"]
                    main_changed = any(md.get(k) != (old.get("metadata") or {}).get(k) for k in META_KEYS)
            body["metadata"]["resourceVersion"] = rv
            out = None
            if not res.status_subresource:
                out = self.client.put(path_of(res, ns, name), body)
            else:
                if main_changed:
                    out = self.client.put(path_of(res, ns, name), body)
                    body["metadata"]["resourceVersion"] = out["metadata"]["resourceVersion"]
                    if storage == "pods":
                        body["spec"] = out["spec"]
                if status_changed:
                    out = self.client.put(path_of(res, ns, name, "status"), body)
            self.written[rk] = out["metadata"]["resourceVersion"] if out else rv
            return True
        except ApiError as e:
            self.written[rk] = None
            if e.code in (404, 409):
                self.log("replay: %s: %s; left for the next pass" % (what, e.message))
            else:
                self.errors += 1
                self.log("replay: %s %s: %s" % (typ.lower(), what, e))
            return False

    def _bind(self, res, ns, name, node):
        """Binds a pod to a node as the scheduler does; returns the pod as it is then."""
        self.client.create(path_of(res, ns, name, "binding"),
                           {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name, "namespace": ns},
                            "target": {"apiVersion": "v1", "kind": "Node", "name": node}})
        return self.client.get(path_of(res, ns, name))

    # -- the controllers -------------------------------------------------------------

    def one_pass(self):
        """Sync, then the KubeVirt controllers and the PDB status writer; True when they wrote."""
        with self.lock:
            self.sync()
            _, _, n = self._capture(self.kv.tick)
            pdb_ns = {e.ns for e in self.store.entries(self.registry.get("policy", "v1", "poddisruptionbudgets"))}
            _, _, m = self._capture(refresh_pdb_status, self.store, self.registry, sorted(pdb_ns))
            self.passes += 1
            return n + m > 0

    def advance(self, seconds):
        """Moves the clock and runs the controllers until they are quiet; VMIM counts by phase."""
        CLOCK.advance(max(0.0, float(seconds)))
        for _ in range(100):
            if not self.one_pass():
                break
        with self.lock:
            self.sync(("virtualmachineinstancemigrations",))
            return self.kv.summary()

    def run(self, interval=0.5):
        while not self.stop.is_set():
            try:
                self.one_pass()
            except Exception as e:  # a bad pass must not end the stand-in: log it, go on
                self.errors += 1
                self.log("pass failed: %s\n%s" % (e, traceback.format_exc()))
            # a write of the webhook or the test wakes the controllers at once, as a watch would
            self.wake.wait(interval if not self.kv.busy else 0.2)
            self.wake.clear()

    def close(self):
        """Stops the controllers (after the pass under way) and the webhook."""
        self.stop.set()
        self.wake.set()
        if self.thread is not None:
            self.thread.join(30)
        if getattr(self, "webhook_server", None) is not None:
            self.webhook_server.shutdown()
            self.webhook_server.server_close()

    def start(self):
        self.one_pass()  # PDB status written before anyone evicts
        self.thread = threading.Thread(target=self.run, daemon=True, name="kvstandin")
        self.thread.start()

    # -- the webhook -----------------------------------------------------------------

    def review(self, review):
        """The AdmissionReview answer for one pods/eviction CREATE."""
        req = review.get("request") or {}
        ns, name = req.get("namespace", ""), req.get("name", "")
        dry_run = bool(req.get("dryRun"))
        msg = None
        for _ in range(3):
            with self.lock:
                self.sync(("virtualmachineinstances", "kubevirts"))
                pods = self.registry.get("", "v1", "pods")
                try:
                    pod = _clean(self.client.get(path_of(pods, ns, name)))
                except ApiError as e:
                    if e.code == 404:
                        break  # the eviction itself answers 404
                    raise
                msg, ok, _ = self._capture(self.kv.admit_eviction, pod, req.get("object"), dry_run)
                if ok:
                    break
        self.wake.set()
        resp = {"uid": req.get("uid", ""), "allowed": msg is None}
        if msg is not None:
            resp["status"] = {"code": 429, "message": msg}
        return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": resp}

    def serve_webhook(self, cert, key, port=0):
        """Starts the HTTPS webhook on 127.0.0.1; returns its port."""
        standin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                try:
                    n = int(self.headers.get("Content-Length") or 0)
                    out = json.dumps(standin.review(json.loads(self.rfile.read(n)))).encode()
                    code = 200
                except Exception as e:  # the API server reports a failed call; say why here
                    standin.errors += 1
                    standin.log("webhook failed: %s\n%s" % (e, traceback.format_exc()))
                    out, code = b'{"error":"webhook failed"}', 500
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        srv = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        srv.daemon_threads = True
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
        threading.Thread(target=srv.serve_forever, daemon=True, name="webhook").start()
        self.webhook_server = srv
        return srv.server_address[1]


def webhook_configuration(port, ca_pem):
    """KubeVirt's ValidatingWebhookConfiguration for evictions, pointed at the stand-in."""
    import base64
    return {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "virt-api-validator"},
        "webhooks": [{
            "name": WEBHOOK, "admissionReviewVersions": ["v1"], "sideEffects": "NoneOnDryRun",
            "failurePolicy": "Fail", "matchPolicy": "Equivalent", "timeoutSeconds": 10,
            "clientConfig": {"url": "https://127.0.0.1:%d/launcher-eviction-validate" % port,
                             "caBundle": base64.b64encode(ca_pem).decode()},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                       "resources": ["pods/eviction"], "scope": "Namespaced"}]}]}


def wait_quiet(standin, seconds=5.0):
    """Waits until a controller pass completed after now (tests reading what it wrote)."""
    start = standin.passes
    deadline = time.time() + seconds
    while standin.passes < start + 2 and time.time() < deadline:
        time.sleep(0.05)
