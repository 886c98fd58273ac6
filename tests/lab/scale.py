#!/usr/bin/env python3
"""A real etcd + kube-apiserver filled with a synthetic cluster at scale, its pods run by KWOK.

    python3 tests/lab/scale.py --nodes 500 --pods 15000 --vms 2000 [--seed 1] [--workers 8]
        [--kubeconfig-out F] [--no-cache] [--dir D] [--keep-kwok] [--pod-status kwok|apply]

prints the load figures (JSON) and a line `ready` on stdout once the API server serves the
loaded cluster with every pod Running; progress and logs on stderr; runs until SIGTERM/SIGINT,
then stops every process it started. As a module, `ScaleCluster` (below) is the API a benchmark
uses.

What it does:
- the cluster is bench/gen_cluster.py's at the given sizes and seed (run into a file in the
  working directory, read back one object at a time): nodes, 71 namespaces, the two system
  priority classes, PDBs, the KubeVirt CR, VMIs and their virt-launcher pods, ReplicaSet pods;
- etcd and kube-apiserver are tests/realapi/realapi.py's `Cluster` (TLS, static tokens, RBAC,
  an audit log) with the lab's process handling (tests/lab/cluster.py) and a backend quota of
  8 GiB; no kube-controller-manager (its garbage collector would delete every pod whose owner
  ReplicaSet the snapshot does not hold) and no kube-scheduler (pods are created bound);
- every object is written by server-side apply (PATCH, `application/apply-patch+yaml`, field
  manager `scale-loader`, force), so its managedFields are the server's own; status goes
  through the status subresource the same way where the kind has one (nodes, the KubeVirt CR;
  the VMI CRD has none: a VMI's status is applied with it). The snapshot's uid,
  resourceVersion, creationTimestamp and managedFields are dropped; owner references and
  `kubevirt.io/created-by` labels are rewritten to the server's UIDs. Kinds go in dependency
  order, the objects of one kind `workers` at a time;
- KWOK (tests/lab/build.sh's, with the lab's pod stages) is the kubelet of every node and moves
  each pod to Running; once all are, KWOK is stopped (keep_kwok=True leaves it running), so it
  adds no load to what is measured next. Without kube-controller-manager nothing marks a node
  NotReady when its lease goes stale. With pod_status="apply" KWOK is not used: the snapshot's
  pod status is applied through the status subresource, and load_stats["podStatus"] says so;
- a cache: after a load, etcd is stopped cleanly, its data directory copied to
  ${XDG_CACHE_HOME:-~/.cache}/descheduler-scale/<nodes>-<pods>-<vms>-s<seed>-<key>/ (key: a
  hash of the code of gen_cluster.py and of this file, without docstrings and comments, the
  CRDs, KWOK's stages and the kube-apiserver and etcd versions) and etcd started again; a
  later start copies that directory in instead of loading. TLS material and tokens are new
  on every start: etcd holds no secret that depends on them (no controller-manager, so no
  token Secrets; the service-account signing key is only used for tokens issued later).
  cache=False loads afresh (and replaces the cache entry).

Audit: realapi's policy logs every user but its harness and the users named as unaudited. Here
the loader writes as the harness and KWOK as its own user, so neither is in the audit log;
the admin token's requests and those of the users in `audited_users` are.
"""

import argparse
import ast
import atexit
import hashlib
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import weakref

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "realapi"))
sys.path.insert(0, os.path.join(ROOT, "tests", "apisim"))

import kvstandin  # noqa: E402
import simcerts  # noqa: E402
import simresources  # noqa: E402
from cluster import (KWOK_CONFIGURATION, KWOK_STAGES, LabUnavailable, _LabCluster,  # noqa: E402
                     _signal_group, built_binaries)
from kubeclient import ApiError  # noqa: E402
from realapi import SERVER_SET, Cluster, _remap  # noqa: E402

GEN_CLUSTER = os.path.join(ROOT, "bench", "gen_cluster.py")
FIELD_MANAGER = "scale-loader"
KWOK_USER = "system:serviceaccount:kube-system:kwok-controller"
APPLY = "application/apply-patch+yaml"   # JSON is YAML
ETCD_QUOTA = 8 << 30                     # etcd's largest recommended backend
# the order the loader writes kinds in: what others refer to first (realapi.ORDER's, for the
# kinds gen_cluster writes); the CRDs come between the priority classes and the nodes
KIND_ORDER = ["Namespace", "PriorityClass", "Node", "KubeVirt", "VirtualMachineInstance",
              "PodDisruptionBudget", "Pod"]
PROGRESS_SECONDS = 5.0
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


_RUNNING = weakref.WeakSet()


@atexit.register
def _stop_all():
    for sc in list(_RUNNING):
        sc.stop()


def log(msg):
    print("scale: " + msg, file=sys.stderr, flush=True)


def _dur(s):
    s = int(max(s, 0))
    return "%dm%02ds" % (s // 60, s % 60) if s >= 60 else "%ds" % s


def _rss_mb(pid, field="VmRSS"):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return round(int(line.split()[1]) / 1024.0, 1)
    except (OSError, ValueError):
        pass
    return None


def _mem_available_mb():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / 1024.0
    except (OSError, ValueError):
        pass
    return None


def _du_mb(path):
    total = 0
    for d, _, files in os.walk(path):
        for n in files:
            try:
                total += os.lstat(os.path.join(d, n)).st_blocks * 512
            except OSError:
                pass
    return round(total / 1048576.0, 1)


def _code(path):
    """A Python file's code without its docstrings and comments: rewording them does not throw
    away a cache entry (the 150,000-pod one took 40 minutes to make)."""
    with open(path) as f:
        tree = ast.parse(f.read())
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            b = node.body
            if b and isinstance(b[0], ast.Expr) and isinstance(b[0].value, ast.Constant) \
                    and isinstance(b[0].value.value, str):
                node.body = b[1:] or [ast.Pass()]
    return ast.dump(tree)   # no line numbers: moved code is the same code


def cache_root():
    return os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "descheduler-scale")


def read_snapshot(path):
    """gen_cluster.py's objects one at a time: it writes one object a line (the List's header
    before the first, `,` before each next, `]}` after the last), so a 750 MB file is never
    held whole."""
    dec = json.JSONDecoder()
    with open(path) as f:
        for n, line in enumerate(f):
            s = line.rstrip("\n")
            if n == 0:
                head, sep, s = s.partition('"items":[')
                if not sep:
                    raise RuntimeError("%s: not a gen_cluster.py List (no items on its first line)" % path)
            s = s.lstrip(",")
            if not s or s == "]}":
                continue
            try:
                obj, _ = dec.raw_decode(s)
            except ValueError as e:
                raise RuntimeError("%s line %d: not one JSON object a line (did gen_cluster.py's output "
                                   "format change?): %s" % (path, n + 1, e)) from None
            yield obj


class ScaleCluster:
    """A loaded cluster. Typical use:

        sc = ScaleCluster(nodes=500, pods=15000, vms=2000).start()
        sc.cluster.kubeconfig()      # admin kubeconfig text (audited)
        ...
        sc.stop()

    users: extra static-token users {name: [groups]} (tokens in cluster.user_tokens); their
    requests are audited only if named in audited_users (the admin's always are). workdir:
    logs, certificates, etcd's data (default: a temporary directory removed by stop()).
    cache: see the module's docstring; cache_dir overrides where entries live. keep_kwok:
    leave KWOK running after the pods are Running. pod_status: "kwok" (default) or "apply"
    (the snapshot's pod status applied through the status subresource, no KWOK).
    kwok_stall_seconds: KWOK making no progress this long is an error. min_available_mb: the
    load stops with an error when the machine's available memory (MemAvailable) falls below
    it, before the kernel's OOM killer picks a process of other work on the machine.
    """

    def __init__(self, nodes, pods, vms, seed=1, workdir=None, workers=8, users=None, audited_users=(),
                 cache=True, cache_dir=None, keep_kwok=False, pod_status="kwok", kwok_stall_seconds=300,
                 min_available_mb=2048, log=log):
        if nodes < 1 or vms < 0 or pods < vms:
            raise ValueError("need nodes >= 1 and 0 <= vms <= pods")
        if pod_status not in ("kwok", "apply"):
            raise ValueError("pod_status is kwok or apply, not %r" % pod_status)
        self.nodes, self.pods, self.vms, self.seed = nodes, pods, vms, seed
        self.workers = max(1, int(workers))
        self.keep_dir = workdir is not None
        self.dir = workdir or tempfile.mkdtemp(prefix="scale.")
        os.makedirs(self.dir, exist_ok=True)
        self.use_cache = cache
        self.cache_root = cache_dir or cache_root()
        self.keep_kwok = keep_kwok
        self.pod_status = pod_status
        self.kwok_stall_seconds = kwok_stall_seconds
        self.min_available_mb = min_available_mb
        self.lock = threading.Lock()
        self.low_memory = None   # set by the progress thread; the load stops on it
        self.log = log
        all_users = {KWOK_USER: ["system:masters", "system:serviceaccounts"]}
        all_users.update(users or {})
        self.cluster = _LabCluster(self.dir, audit=True, users=all_users, audited_users=list(audited_users),
                                   disable_admission=Cluster.REALAPI_DISABLED_ADMISSION, apiserver_args=[
            # as in the lab (tests/lab/cluster.py, Lab.__init__): KWOK's watches from
            # resourceVersion "" would become watch-list streams, which kube-apiserver 1.37
            # cannot serve on Debian's etcd 3.4
            "--feature-gates", "WatchList=false"])
        self.load_stats = {}
        self.kwok_proc = None
        self.stopped = False
        self.res = {}
        _RUNNING.add(self)
        reg = simresources.Registry()
        for kind, av in (("Namespace", "v1"), ("PriorityClass", "scheduling.k8s.io/v1"), ("Node", "v1"),
                         ("KubeVirt", "kubevirt.io/v1"), ("VirtualMachineInstance", "kubevirt.io/v1"),
                         ("PodDisruptionBudget", "policy/v1"), ("Pod", "v1")):
            self.res[kind] = reg.by_kind(av, kind)
            if self.res[kind] is None:
                raise RuntimeError("tests/apisim/simresources.py has no %s %s" % (av, kind))

    # -- start ---------------------------------------------------------------------------

    def start(self):
        """Returns self once kube-apiserver serves the whole cluster and every pod is Running."""
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self):
        t0 = time.time()
        self.commit = _commit()   # what ran, even if HEAD moves during a 40-minute load
        if not (shutil.which("etcd") or os.path.exists("/usr/bin/etcd")):
            raise LabUnavailable("no etcd (Debian package etcd-server; scripts/deps.sh test installs it)")
        bins, missing = built_binaries()
        lacking = [n for n in ("kube-apiserver", "kwok") if n not in bins]
        if lacking:
            raise LabUnavailable("not built: %s (run tests/lab/build.sh)%s"
                                 % (", ".join(lacking), (": " + missing) if missing else ""))
        self.bins = bins
        self.key = self._cache_key()
        self.cache_path = os.path.join(self.cache_root, "%d-%d-%d-s%d-%s" % (
            self.nodes, self.pods, self.vms, self.seed, self.key))
        cached = self.use_cache and os.path.exists(os.path.join(self.cache_path, "meta.json"))
        st = self.load_stats = {"nodes": self.nodes, "pods": self.pods, "vms": self.vms, "seed": self.seed,
                                "workers": self.workers, "cacheEntry": self.cache_path,
                                "podStatus": "KWOK" if self.pod_status == "kwok" else
                                "applied through the status subresource (no KWOK)"}
        c = self.cluster
        if cached:
            st["source"] = "cached etcd data"
            t = time.time()
            with open(os.path.join(self.cache_path, "meta.json")) as f:
                meta = json.load(f)
            if meta.get("podStatus", "KWOK") != st["podStatus"]:
                raise RuntimeError("cache entry %s was made with pod status %r, not %r"
                                   % (self.cache_path, meta.get("podStatus"), st["podStatus"]))
            self._copy(os.path.join(self.cache_path, "etcd"), os.path.join(self.dir, "etcd"))
            st["cacheCopySeconds"] = round(time.time() - t, 1)
            self.log("copied the cached etcd data of %s in %.1f s" % (self.cache_path, st["cacheCopySeconds"]))
            c.start_etcd(quota_backend_bytes=ETCD_QUOTA, timeout=120)
            c.start_apiserver(bins["kube-apiserver"], timeout=300)
            self._verify(meta["counts"])
            st.update({k: meta["load"][k] for k in ("objects", "perKind", "loadSeconds", "kwokSeconds")
                       if k in meta["load"]})
            st["loadedOn"] = meta.get("loadedOn")
            if self.keep_kwok and self.pod_status == "kwok":
                self._start_kwok()
            st["kwok"] = "running" if self.kwok_proc else "not started (the cached pods are Running)"
            st["seconds"] = round(time.time() - t0, 1)
            st["objectsPerSecond"] = round(st.get("objects", 0) / max(st["seconds"], 1e-9), 1)
        else:
            st["source"] = "loaded"
            snap = os.path.join(self.dir, "cluster.json")
            t = time.time()
            # the generator runs while etcd and kube-apiserver start
            gen = subprocess.Popen([sys.executable, GEN_CLUSTER, "--nodes", str(self.nodes), "--pods",
                                    str(self.pods), "--vms", str(self.vms), "--seed", str(self.seed),
                                    "--out", snap], stdin=subprocess.DEVNULL)
            gen_done = []
            waiter = threading.Thread(target=lambda: gen_done.append((gen.wait(), time.time())), daemon=True)
            waiter.start()
            c.start_etcd(quota_backend_bytes=ETCD_QUOTA, timeout=120)
            c.start_apiserver(bins["kube-apiserver"], timeout=300)
            st["apiserverStartSeconds"] = round(time.time() - t, 1)
            waiter.join()
            if gen_done[0][0] != 0:
                raise RuntimeError("bench/gen_cluster.py exited with status %d" % gen_done[0][0])
            st["generateSeconds"] = round(gen_done[0][1] - t, 1)
            self._load(snap)
            os.unlink(snap)
            if self.pod_status == "kwok":
                self._start_kwok()
                self._wait_running()
                if not self.keep_kwok:
                    self._stop_kwok()
            st["kwok"] = ("not used" if self.pod_status != "kwok" else
                          "running" if self.kwok_proc else "stopped")
            counts = self._verify(self.snapshot_counts, at_least=("Namespace", "PriorityClass"))
            st["etcdDbMBBeforeCompaction"] = self._etcd_db_mb()
            self._save_cache(counts)
            st["seconds"] = round(time.time() - t0, 1)
        st["etcdDbMB"] = self._etcd_db_mb()
        st["etcdDataMB"] = _du_mb(os.path.join(self.dir, "etcd"))
        st["apiserverRssMB"] = _rss_mb(self.apiserver_pid())
        st["apiserverPeakRssMB"] = _rss_mb(self.apiserver_pid(), "VmHWM")
        st["etcdRssMB"] = _rss_mb(self._proc("etcd").pid)
        st["etcdPeakRssMB"] = _rss_mb(self._proc("etcd").pid, "VmHWM")
        st["commit"] = self.commit
        self.log("ready in %s (%s): %s" % (_dur(st["seconds"]), st["source"], json.dumps(st)))

    def _cache_key(self):
        """What the loaded etcd data depends on."""
        h = hashlib.sha256()
        for p in (GEN_CLUSTER, os.path.abspath(__file__)):
            h.update(_code(p).encode())
        reg = simresources.Registry()
        h.update(json.dumps([simresources.crd_for(r) for r in reg.resources if r.custom], sort_keys=True,
                            default=str).encode())
        h.update(json.dumps([KWOK_CONFIGURATION] + KWOK_STAGES, sort_keys=True).encode())
        for argv in ([self.bins["kube-apiserver"], "--version"], ["etcd", "--version"]):
            h.update(subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT).stdout)
        h.update(self.pod_status.encode())
        return h.hexdigest()[:10]

    @staticmethod
    def _copy(src, dst):
        if os.path.exists(dst):
            shutil.rmtree(dst)
        p = subprocess.run(["cp", "--reflink=auto", "-a", src, dst], stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            raise RuntimeError("copying %s to %s: %s" % (src, dst, p.stderr.strip()))

    # -- loading ---------------------------------------------------------------------------

    def _load(self, snap):
        st = self.load_stats
        by_kind = {k: [] for k in KIND_ORDER}
        n_pods = 0
        for o in read_snapshot(snap):   # everything but the pods (streamed in a second pass)
            k = o.get("kind")
            if k not in by_kind:
                raise RuntimeError("gen_cluster.py wrote a %s, which the loader does not know" % k)
            if k == "Pod":
                n_pods += 1
            else:
                by_kind[k].append(o)
        total = sum(len(v) for v in by_kind.values()) + n_pods
        self.snapshot_counts = {k: len(v) for k, v in by_kind.items()}
        self.snapshot_counts["Pod"] = n_pods
        if n_pods != self.pods or len(by_kind["Node"]) != self.nodes \
                or len(by_kind["VirtualMachineInstance"]) != self.vms:
            raise RuntimeError("gen_cluster.py wrote %d nodes, %d pods, %d VMIs; asked for %d, %d, %d"
                               % (len(by_kind["Node"]), n_pods, len(by_kind["VirtualMachineInstance"]),
                                  self.nodes, self.pods, self.vms))
        self.uids = {}
        self.progress = {"done": 0, "total": total, "pods": 0, "retries": 0, "start": time.time()}
        per_kind = st["perKind"] = {}
        t_load = time.time()
        self.log("loading %d objects (%d nodes, %d pods, %d VMIs), %d at a time"
                 % (total, self.nodes, n_pods, self.vms, self.workers))
        stop_progress = threading.Event()
        threading.Thread(target=self._progress_loop, args=(stop_progress,), daemon=True,
                         name="progress").start()
        try:
            for kind in KIND_ORDER:
                if kind == "Node":
                    t = time.time()
                    self.cluster.create_crds()
                    per_kind["CustomResourceDefinition"] = round(time.time() - t, 1)
                t = time.time()
                if kind == "Pod":
                    items = (o for o in read_snapshot(snap) if o.get("kind") == "Pod")
                else:
                    items = by_kind.pop(kind)
                self._apply_all(kind, items)
                per_kind[kind] = round(time.time() - t, 1)
        finally:
            stop_progress.set()
        st["objects"] = self.progress["done"]
        st["loadSeconds"] = round(time.time() - t_load, 1)
        st["objectsPerSecond"] = round(st["objects"] / max(st["loadSeconds"], 1e-9), 1)
        st["retries"] = self.progress["retries"]
        self.log("loaded %d objects in %s (%.0f a second, %d at a time; per kind, seconds: %s)"
                 % (st["objects"], _dur(st["loadSeconds"]), st["objectsPerSecond"], self.workers,
                    json.dumps(per_kind)))

    def _check_memory(self):
        avail = _mem_available_mb()
        if avail is not None and avail < self.min_available_mb:
            rss = ", ".join("%s %s MB" % (n, _rss_mb(p.pid)) for n, p in self.cluster.procs if p.poll() is None)
            return ("the machine's available memory fell to %.0f MB (below %d MB; %s): stopped"
                    % (avail, self.min_available_mb, rss))
        return None

    def _progress_loop(self, stop):
        p = self.progress
        while not stop.wait(PROGRESS_SECONDS):
            self.low_memory = self.low_memory or self._check_memory()
            el = time.time() - p["start"]
            rate = p["done"] / max(el, 1e-9)
            self.log("load: %d of %d objects (pods %d of %d), %.0f/s, %s elapsed, ETA %s"
                     % (p["done"], p["total"], p["pods"], self.pods, rate, _dur(el),
                        _dur((p["total"] - p["done"]) / rate) if rate > 0 else "?"))

    def _apply_all(self, kind, items):
        """Applies `items` with self.workers threads; the first failure stops the load."""
        q = queue.Queue(maxsize=self.workers * 16)   # bounds what is parsed ahead of the writers
        errors = []
        lock = threading.Lock()

        def worker():
            while True:
                o = q.get()
                if o is None:
                    return
                if errors:
                    continue
                if self.low_memory:
                    with lock:
                        errors.append(RuntimeError("loading: " + self.low_memory))
                    continue
                try:
                    self._apply_one(kind, o)
                except Exception as e:  # the first one is raised below; the rest are drained
                    with lock:
                        errors.append(e)
                    continue
                with lock:
                    self.progress["done"] += 1
                    if kind == "Pod":
                        self.progress["pods"] += 1

        threads = [threading.Thread(target=worker, daemon=True, name="apply-%d" % i) for i in range(self.workers)]
        for th in threads:
            th.start()
        try:
            for o in items:
                if errors:
                    break
                q.put(o)
        finally:
            for _ in threads:
                q.put(None)
            for th in threads:
                th.join()
        if errors:
            raise errors[0]

    def _apply_one(self, kind, o):
        res = self.res[kind]
        md = o["metadata"]
        ns = md.get("namespace") if res.namespaced else None
        old_uid = md.get("uid")
        for k in SERVER_SET:
            md.pop(k, None)
        _remap(o, self.uids)
        # a kind without a status subresource (the VMI CRD) takes status with the object; the
        # pods' is KWOK's to write unless pod_status is "apply"
        status = o.pop("status", None) if res.status_subresource else None
        if kind == "Pod" and self.pod_status == "kwok":
            status = None
        path = kvstandin.path_of(res, ns, md["name"])
        # only the VMIs' answers are needed (their UIDs): the rest are not decoded
        out = self._request("PATCH", path, o, kind, md, raw=kind != "VirtualMachineInstance")
        if old_uid and kind == "VirtualMachineInstance":
            self.uids[old_uid] = out["metadata"]["uid"]
        if status is not None:
            body = {"apiVersion": o["apiVersion"], "kind": kind, "metadata": {"name": md["name"]}, "status": status}
            if ns:
                body["metadata"]["namespace"] = ns
            self._request("PATCH", path + "/status", body, kind, md, raw=True)

    def _request(self, method, path, body, kind, md, raw):
        data = json.dumps(body, separators=(",", ":")).encode()
        for attempt in range(5):
            try:
                return self.cluster.client.request(method, path, data, content_type=APPLY, raw=raw,
                                                   query={"fieldManager": FIELD_MANAGER, "force": "true"})
            except ApiError as e:
                # an overloaded server's answers; anything else is the object's fault
                if e.code not in (429, 500, 503, 504) or attempt == 4:
                    raise RuntimeError("applying %s %s: %s" % (kind, _name(md), e)) from None
                err = e
            except OSError as e:
                if attempt == 4:
                    raise RuntimeError("applying %s %s: %s" % (kind, _name(md), e)) from None
                err = e
            with self.lock:
                self.progress["retries"] += 1
            self.log("applying %s %s: %s; again in %d s" % (kind, _name(md), err, 2 ** attempt))
            time.sleep(2 ** attempt)

    # -- KWOK ------------------------------------------------------------------------------

    def _start_kwok(self):
        cfg = os.path.join(self.dir, "kwok.yaml")
        conf = json.loads(json.dumps(KWOK_CONFIGURATION))
        # 4 by default: KWOK's status writes wait on the API server, not on CPU
        conf["options"]["podPlayStageParallelism"] = 16
        with open(cfg, "w") as f:
            f.write("\n---\n".join(json.dumps(s, indent=1) for s in [conf] + KWOK_STAGES) + "\n")
        kc = os.path.join(self.dir, "kubeconfig-kwok")
        simcerts.write_kubeconfig(kc, self.cluster.kubeconfig(token=self.cluster.user_tokens[KWOK_USER]))
        # every node: gen_cluster's nodes are a real cluster's, without KWOK's annotation; the
        # pod CIDR comes from each node's spec.podCIDR
        self.kwok_proc = self.cluster._spawn("kwok", [
            self.bins["kwok"], "--kubeconfig", kc, "--config", cfg, "--manage-all-nodes=true",
            "--cidr", "10.127.0.1/16", "--node-ip", "127.0.0.1"])
        self.kwok_started = time.time()

    def _stop_kwok(self):
        p = self.kwok_proc
        self.cluster.procs = [(n, q) for n, q in self.cluster.procs if q is not p]
        _signal_group(p, signal.SIGTERM)
        try:
            p.wait(15)
        except subprocess.TimeoutExpired:
            _signal_group(p, signal.SIGKILL)
            p.wait(5)
        self.kwok_proc = None
        self.log("KWOK stopped (the pods stay Running: nothing here marks a node NotReady)")

    def not_running(self, limit=10000):
        """How many pods are not Running (the server filters; rows of a Table, no objects)."""
        n, cont = 0, None
        while True:
            q = {"fieldSelector": "status.phase!=Running", "limit": limit, "includeObject": "None"}
            if cont:
                q["continue"] = cont
            page = self._read("/api/v1/pods", q, accept=TABLE)
            n += len(page.get("rows") or [])
            cont = (page.get("metadata") or {}).get("continue")
            if not cont:
                return n

    def _read(self, path, query, accept="application/json", raw=False, timeout=300):
        """A GET that outlasts a busy or starting server: kube-apiserver answers 429 while its
        watch cache of a kind initializes (150,000 pods take a while), and a request may time
        out while the load keeps both cores busy."""
        deadline = time.time() + timeout
        while True:
            try:
                return self.cluster.client.request("GET", path, query=query, accept=accept, raw=raw)
            except ApiError as e:
                if e.code not in (429, 500, 503, 504) or time.time() > deadline:
                    raise
                err = e
            except OSError as e:
                if time.time() > deadline:
                    raise RuntimeError("GET %s: %s" % (path, e)) from None
                err = e
            self.log("GET %s: %s; again in 2 s" % (path, err))
            time.sleep(2)

    def _status_writes(self):
        """kube-apiserver's count of writes to pods/status so far (KWOK's, while it runs)."""
        n = 0
        for line in self._read("/metrics", None, accept="text/plain", raw=True).decode().splitlines():
            if (line.startswith("apiserver_request_total{") and 'resource="pods"' in line
                    and 'subresource="status"' in line and 'code="200"' in line
                    and any('verb="%s"' % v in line for v in ("PATCH", "UPDATE", "APPLY"))):
                n += int(float(line.rsplit(" ", 1)[1]))
        return n

    def _wait_running(self):
        """Follows KWOK by kube-apiserver's count of pod status writes (its /metrics): counting
        the pods that are not Running is a pass over every pod, as rows of a Table, which took
        20 s of both cores at 40,000 pods. So it is counted only once KWOK has written as many
        statuses as there are pods (launchers get a second write), then every 15 s."""
        t0 = self.kwok_started
        base = self._status_writes()
        last_written, last_change, last_log, left = 0, time.time(), 0.0, None
        next_check = 0.0
        while True:
            low = self._check_memory()
            if low:
                raise RuntimeError("waiting for KWOK: " + low)
            if self.kwok_proc.poll() is not None:
                raise RuntimeError("KWOK exited with status %s\n%s"
                                   % (self.kwok_proc.returncode, _tail(self.dir, "kwok")))
            now = time.time()
            written = self._status_writes() - base
            if written != last_written:
                last_written, last_change = written, now
            elif now - last_change > self.kwok_stall_seconds:
                raise RuntimeError("KWOK wrote no pod status in %d s: %d writes for %d pods, %s not Running at the "
                                   "last count (see %s/kwok.log; pod_status=\"apply\" writes the snapshot's "
                                   "status instead)" % (self.kwok_stall_seconds, written, self.pods,
                                                        "?" if left is None else left, self.dir))
            if written >= self.pods and now >= next_check:
                left = self.not_running()
                next_check = time.time() + 15.0
                if left == 0:
                    break
            if now - last_log >= PROGRESS_SECONDS:
                last_log = now
                el = now - t0
                rate = written / max(el, 1e-9)
                self.log("kwok: %d pod status writes for %d pods%s, %.0f/s, %s elapsed, ETA %s"
                         % (written, self.pods, "" if left is None else " (%d not Running at the last count)" % left,
                            rate, _dur(el),
                            _dur((self.pods - written) / rate) if rate > 0 and written < self.pods else "?"))
            # /metrics is megabytes at scale: read it often only while a small cluster may be done
            time.sleep(0.5 if now - t0 < 10 else PROGRESS_SECONDS)
        self.load_stats["kwokSeconds"] = round(time.time() - t0, 1)
        self.load_stats["kwokStatusWrites"] = self._status_writes() - base
        self.load_stats["kwokRssMB"] = _rss_mb(self.kwok_proc.pid, "VmHWM")
        self.log("KWOK moved %d pods to Running in %s" % (self.pods, _dur(self.load_stats["kwokSeconds"])))

    # -- checks and the cache --------------------------------------------------------------

    def _count(self, path):
        page = self._read(path, {"limit": 1})
        return len(page.get("items") or []) + int((page.get("metadata") or {}).get("remainingItemCount") or 0)

    def _verify(self, want, at_least=()):
        """Checks what the server holds per kind against `want` (exactly, or at least for the
        kinds in at_least: kube-apiserver has namespaces and priority classes of its own) and
        that every pod is Running; returns the server's counts."""
        t = time.time()
        counts = {}
        for kind in KIND_ORDER:
            counts[kind] = self._count(kvstandin.path_of(self.res[kind]))
        wrong = ["%s %d (want %s%d)" % (k, counts[k], "at least " if k in at_least else "", v)
                 for k, v in sorted(want.items())
                 if (counts[k] < v if k in at_least else counts[k] != v)]
        if wrong:
            raise RuntimeError("kube-apiserver serves %s" % ", ".join(wrong))
        left = self.not_running()
        if left:
            raise RuntimeError("%d of %d pods are not Running" % (left, self.pods))
        self.load_stats["verifySeconds"] = round(time.time() - t, 1)
        return counts

    def _etcd_db_mb(self):
        try:
            return round(os.path.getsize(os.path.join(self.dir, "etcd", "member", "snap", "db")) / 1048576.0, 1)
        except OSError:
            return None

    def _save_cache(self, counts):
        """Compacts and defragments etcd (the copy is then the live data only), stops it, copies
        its data directory into the cache, starts it again on the same ports."""
        st = self.load_stats
        t = time.time()
        c = self.cluster
        c.compact()
        code, out = c._etcd("/v3/maintenance/defragment", {})
        if code != 200:
            raise RuntimeError("etcd defragment: HTTP %d %s" % (code, out))
        p = self._proc("etcd")
        argv, env = c.argvs["etcd"]
        c.procs = [(n, q) for n, q in c.procs if q is not p]
        p.terminate()   # etcd's SIGTERM handler closes the backend cleanly
        try:
            p.wait(60)
        except subprocess.TimeoutExpired:
            raise RuntimeError("etcd did not stop in 60 s after SIGTERM\n%s" % _tail(self.dir, "etcd")) from None
        if p.returncode not in (0, -signal.SIGTERM):
            raise RuntimeError("etcd exited with status %s when stopped\n%s" % (p.returncode, _tail(self.dir, "etcd")))
        os.makedirs(self.cache_root, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=".tmp-", dir=self.cache_root)
        try:
            self._copy(os.path.join(self.dir, "etcd"), os.path.join(tmp, "etcd"))
            meta = {"nodes": self.nodes, "pods": self.pods, "vms": self.vms, "seed": self.seed, "key": self.key,
                    "podStatus": st["podStatus"], "counts": counts,
                    "loadedOn": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    "commit": self.commit, "load": dict(st)}
            with open(os.path.join(tmp, "meta.json"), "w") as f:   # written last: marks the entry complete
                json.dump(meta, f, indent=1)
            if os.path.exists(self.cache_path):
                shutil.rmtree(self.cache_path)
            os.rename(tmp, self.cache_path)
        finally:
            if os.path.exists(tmp):
                shutil.rmtree(tmp, ignore_errors=True)
        st["cacheSaveSeconds"] = round(time.time() - t, 1)
        st["cacheMB"] = _du_mb(self.cache_path)
        self.log("cached etcd's data (%.0f MB) in %s (%.1f s)"
                 % (st["cacheMB"], self.cache_path, st["cacheSaveSeconds"]))
        c._spawn("etcd", argv, env)
        self._wait_etcd(120)
        self._wait_readyz(120)

    def _wait_etcd(self, timeout):
        p = self._proc("etcd")
        deadline = time.time() + timeout
        while time.time() < deadline:
            if p.poll() is not None:
                raise RuntimeError("etcd exited with status %s\n%s" % (p.returncode, _tail(self.dir, "etcd")))
            try:
                with urllib.request.urlopen(self.cluster.etcd_url + "/health", timeout=1) as r:
                    if json.loads(r.read()).get("health") == "true":
                        return
            except (OSError, ValueError):
                pass
            time.sleep(0.1)
        raise RuntimeError("etcd was not healthy in %d s\n%s" % (timeout, _tail(self.dir, "etcd")))

    def _wait_readyz(self, timeout):
        p = self._proc("kube-apiserver")
        deadline = time.time() + timeout
        while time.time() < deadline:
            if p.poll() is not None:
                raise RuntimeError("kube-apiserver exited with status %s\n%s"
                                   % (p.returncode, _tail(self.dir, "kube-apiserver")))
            try:
                if self.cluster.client.request("GET", "/readyz", raw=True) == b"ok":
                    return
            except (ApiError, OSError):
                pass
            time.sleep(0.1)
        raise RuntimeError("kube-apiserver was not ready in %d s\n%s" % (timeout, _tail(self.dir, "kube-apiserver")))

    # -- the benchmark's handles -------------------------------------------------------------

    def _proc(self, name):
        for n, p in reversed(self.cluster.procs):
            if n == name:
                return p
        raise RuntimeError("%s is not running" % name)

    def apiserver_pid(self):
        return self._proc("kube-apiserver").pid

    def apiserver_metrics(self):
        """The text of kube-apiserver's /metrics (read as the harness: not audited)."""
        return self.cluster.client.request("GET", "/metrics", raw=True, accept="text/plain").decode()

    def restart_apiserver(self, down_seconds=0.0):
        """SIGKILLs kube-apiserver, waits down_seconds, starts it again with the same command
        line (port, certificates, tokens); returns the seconds from its start to /readyz ok
        (its watch cache may still be filling then)."""
        c = self.cluster
        p = self._proc("kube-apiserver")
        argv, env = c.argvs["kube-apiserver"]
        c.procs = [(n, q) for n, q in c.procs if q is not p]
        _signal_group(p, signal.SIGKILL)
        p.wait(30)
        if down_seconds > 0:
            time.sleep(down_seconds)
        t = time.time()
        c._spawn("kube-apiserver", argv, env)
        self._wait_readyz(300)
        return round(time.time() - t, 2)

    def stop(self):
        if self.stopped:
            return
        self.stopped = True
        self.cluster.stop()
        if not self.keep_dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def _name(md):
    return "%s/%s" % (md["namespace"], md.get("name")) if md.get("namespace") else md.get("name", "?")


def _tail(d, name, n=3000):
    try:
        with open(os.path.join(d, name + ".log"), "rb") as f:
            f.seek(0, 2)
            f.seek(max(0, f.tell() - n))
            return "--- %s/%s.log (end):\n%s" % (d, name, f.read().decode("utf-8", "replace"))
    except OSError:
        return ""


def _commit():
    p = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty", "--abbrev=7"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return p.stdout.strip() or None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, required=True)
    ap.add_argument("--pods", type=int, required=True)
    ap.add_argument("--vms", type=int, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--kubeconfig-out", help="write the admin kubeconfig here")
    ap.add_argument("--no-cache", action="store_true", help="load afresh even if the cache has this cluster")
    ap.add_argument("--dir", help="working directory, kept (default: a temporary one, removed at exit)")
    ap.add_argument("--keep-kwok", action="store_true", help="leave KWOK running once the pods are Running")
    ap.add_argument("--pod-status", choices=("kwok", "apply"), default="kwok",
                    help="who writes the pods' status: KWOK (default), or the loader through the status "
                         "subresource from the snapshot")
    args = ap.parse_args()
    stopping = []   # the handlers only append (see realapi.py's main)
    signal.signal(signal.SIGTERM, lambda *a: stopping.append(1))
    signal.signal(signal.SIGINT, lambda *a: stopping.append(1))
    sc = ScaleCluster(args.nodes, args.pods, args.vms, seed=args.seed, workdir=args.dir, workers=args.workers,
                      cache=not args.no_cache, keep_kwok=args.keep_kwok, pod_status=args.pod_status)
    code = 0
    try:
        sc.start()
        if args.kubeconfig_out:
            simcerts.write_kubeconfig(args.kubeconfig_out, sc.cluster.kubeconfig())
        print(json.dumps(sc.load_stats, indent=1), flush=True)
        print("ready", flush=True)
        while not stopping:
            time.sleep(0.5)
            for name, p in sc.cluster.procs:
                if p.poll() is not None:
                    log("%s exited with status %d (see %s/%s.log)" % (name, p.returncode, sc.dir, name))
                    stopping.append(1)
                    code = 1
    except LabUnavailable as e:
        log("unavailable: %s" % e)
        code = 3
    except Exception as e:
        log(str(e))
        code = 2
    finally:
        sc.stop()
    sys.exit(code)


if __name__ == "__main__":
    main()
