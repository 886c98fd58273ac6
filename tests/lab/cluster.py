#!/usr/bin/env python3
"""The cluster lab: a closed loop of real Kubernetes and KubeVirt components on loopback.

    python3 tests/lab/cluster.py up --nodes N [--dir DIR] [--migration-seconds S]
        [--parallel-migrations-per-cluster N] [--parallel-outbound-migrations-per-node N]

prints `ready <admin kubeconfig>` once everything answers, runs until SIGTERM/SIGINT, then stops
every process it started. As a module, `Lab` (below) is the API the scenario runner uses.

What runs (README.md beside this file has the contract):
- etcd (Debian's etcd-server) and kube-apiserver (tests/realapi/build.sh), started by
  tests/realapi/realapi.py's `Cluster`: TLS from the lab's CA, static tokens (an admin, and one
  identity per component), RBAC, service-account token signing, an audit log of the requests
  that are not the components' own;
- kube-controller-manager and kube-scheduler (k8s.io/kubernetes, same release), with the
  controllers that matter to VMs on nodes: disruption (PDB status), garbage collector,
  replicaset/deployment/statefulset/daemonset/job, node lifecycle and node IPAM (pod CIDRs),
  taint eviction, service accounts, namespaces, root CA publisher, pod GC;
- KWOK (sigs.k8s.io/kwok) as the kubelet of every node annotated `kwok.x-k8s.io/node=fake`,
  with its default node stages and the pod stages in `KWOK_STAGES` (its own fast pod stages,
  plus one for a virt-launcher whose domain left);
- KubeVirt: the CRDs and webhook configurations printed by labmanifests (KubeVirt's own
  generators), the `kubevirt` namespace, a KubeVirt CR (status `Deployed`, as virt-operator
  leaves it), the `kubevirt-ca` ConfigMap, virt-api (TLS with the lab's CA; its webhooks
  registered at https://127.0.0.1:PORT/... since there is no service network) and
  virt-controller (leader election on);
- handler.py's `HandlerStandIn`, the one emulated part: what virt-handler reports.

Every process is in its own process group, gets SIGKILL if the Python process that started it
dies (PR_SET_PDEATHSIG), and is stopped by `Lab.stop()`, which also runs at interpreter exit.
"""

import argparse
import atexit
import base64
import ctypes
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
import threading
import time
import urllib.request
import weakref

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "realapi"))
sys.path.insert(0, os.path.join(ROOT, "tests", "apisim"))

import simcerts  # noqa: E402
from handler import HandlerStandIn  # noqa: E402
from kubeclient import ApiError, Client  # noqa: E402
from realapi import Cluster  # noqa: E402
from simtest import free_port  # noqa: E402

KUBEVIRT_NS = "kubevirt"
FAKE_NODE_ANNOTATION = "kwok.x-k8s.io/node"
LAUNCHER_IMAGE = "quay.io/kubevirt/virt-launcher:v1.6.0"
EXPORTER_IMAGE = "quay.io/kubevirt/virt-exportserver:v1.6.0"

# identities (static tokens). KubeVirt's webhooks treat these service-account names as
# KubeVirt's own (pkg/virt-api/webhooks/serviceaccounts.go): only they may change a VMI's spec
# or status the way the components do.
DESCHEDULER_USER = "system:serviceaccount:kube-system:descheduler"
SA_GROUPS = ["system:masters", "system:serviceaccounts", "system:serviceaccounts:" + KUBEVIRT_NS]
USERS = {
    "system:kube-controller-manager": ["system:masters"],
    "system:kube-scheduler": ["system:masters"],
    "system:serviceaccount:kube-system:kwok-controller": ["system:masters", "system:serviceaccounts"],
    "system:serviceaccount:kubevirt:kubevirt-apiserver": SA_GROUPS,
    "system:serviceaccount:kubevirt:kubevirt-controller": SA_GROUPS,
    "system:serviceaccount:kubevirt:kubevirt-handler": SA_GROUPS,
    # for the descheduler under test: cluster-admin like the rest (RBAC is checked by other
    # tiers); the only identity besides the admin whose requests the audit log keeps
    DESCHEDULER_USER: ["system:masters", "system:serviceaccounts", "system:serviceaccounts:kube-system"],
}
COMPONENT_USER = {
    "kube-controller-manager": "system:kube-controller-manager",
    "kube-scheduler": "system:kube-scheduler",
    "kwok": "system:serviceaccount:kube-system:kwok-controller",
    "virt-api": "system:serviceaccount:kubevirt:kubevirt-apiserver",
    "virt-controller": "system:serviceaccount:kubevirt:kubevirt-controller",
    "virt-handler": "system:serviceaccount:kubevirt:kubevirt-handler",
    "descheduler": DESCHEDULER_USER,
}

# kube-controller-manager's controllers (cmd/kube-controller-manager/names of k8s.io/kubernetes):
# the ones a cluster runs that act on VMs' pods, nodes and PDBs. The service-account token
# controller is left out: it only makes legacy token Secrets, and pods get projected tokens.
CONTROLLERS = ("disruption-controller", "garbage-collector-controller", "replicaset-controller",
               "deployment-controller", "statefulset-controller", "daemonset-controller", "job-controller",
               "node-lifecycle-controller", "node-ipam-controller", "taint-eviction-controller",
               "serviceaccount-controller", "namespace-controller", "root-ca-certificate-publisher-controller",
               "pod-garbage-collector-controller", "ttl-controller")
CLUSTER_CIDR = "10.128.0.0/12"   # /24 per node: room for 4,096 nodes
SERVICE_CIDR = "10.96.0.0/16"    # tests/realapi/realapi.py's --service-cluster-ip-range

# KWOK's pod stages (kustomize/stage/pod/fast of sigs.k8s.io/kwok v0.7.0: pod-ready, pod-complete,
# pod-delete), plus lab-launcher-exit: a virt-launcher whose domain migrated away exits, and the
# kubelet reports the pod Succeeded (handler.py sets the annotation). Giving any pod stage
# replaces all of KWOK's defaults, so the defaults are repeated here, with one addition: each
# container status has an `imageID` with a digest (a stable fake: the sha256 of the image name),
# as a kubelet reports the image it pulled. KubeVirt pins a migration target's container disks
# to the digests the source pod runs and refuses to migrate without them
# (pkg/container-disk/container-disk.go, ExtractImageIDsFromSourcePod, of kubevirt.io/kubevirt).
_POD_READY_TEMPLATE = """{{ $now := Now }}

conditions:
- lastTransitionTime: {{ $now | Quote }}
  status: "True"
  type: Initialized
- lastTransitionTime: {{ $now | Quote }}
  status: "True"
  type: Ready
- lastTransitionTime: {{ $now | Quote }}
  status: "True"
  type: ContainersReady
{{ range .spec.readinessGates }}
- lastTransitionTime: {{ $now | Quote }}
  status: "True"
  type: {{ .conditionType | Quote }}
{{ end }}

containerStatuses:
{{ range .spec.containers }}
- image: {{ .image | Quote }}
  imageID: {{ printf "%s@sha256:%s" (regexReplaceAll ":[^:/]+$" .image "") (sha256sum .image) | Quote }}
  name: {{ .name | Quote }}
  ready: true
  restartCount: 0
  state:
    running:
      startedAt: {{ $now | Quote }}
{{ end }}

initContainerStatuses:
{{ range .spec.initContainers }}
- image: {{ .image | Quote }}
  imageID: {{ printf "%s@sha256:%s" (regexReplaceAll ":[^:/]+$" .image "") (sha256sum .image) | Quote }}
  name: {{ .name | Quote }}
  ready: true
  restartCount: 0
  {{ if eq .restartPolicy "Always" }}
  started: true
  state:
    running:
      startedAt: {{ $now | Quote }}
  {{ else }}
  state:
    terminated:
      exitCode: 0
      finishedAt: {{ $now | Quote }}
      reason: Completed
      startedAt: {{ $now | Quote }}
  {{ end }}
{{ end }}

hostIP: {{ NodeIPWith .spec.nodeName | Quote }}
podIP: {{ PodIPWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) | Quote }}
phase: Running
startTime: {{ $now | Quote }}
"""
_POD_COMPLETE_TEMPLATE = """{{ $now := Now }}
{{ $root := . }}
containerStatuses:
{{ range $index, $item := .spec.containers }}
{{ $origin := index $root.status.containerStatuses $index }}
- image: {{ $item.image | Quote }}
  name: {{ $item.name | Quote }}
  ready: false
  restartCount: 0
  started: false
  state:
    terminated:
      exitCode: 0
      finishedAt: {{ $now | Quote }}
      reason: Completed
      startedAt: {{ $now | Quote }}
{{ end }}
phase: Succeeded
"""
_LAUNCHER_EXIT_TEMPLATE = """{{ $now := Now }}
conditions:
- lastTransitionTime: {{ $now | Quote }}
  status: "True"
  type: Initialized
- lastTransitionTime: {{ $now | Quote }}
  reason: PodCompleted
  status: "False"
  type: Ready
- lastTransitionTime: {{ $now | Quote }}
  reason: PodCompleted
  status: "False"
  type: ContainersReady
- lastTransitionTime: {{ $now | Quote }}
  status: "True"
  type: PodScheduled
containerStatuses:
{{ range .spec.containers }}
- image: {{ .image | Quote }}
  name: {{ .name | Quote }}
  ready: false
  restartCount: 0
  started: false
  state:
    terminated:
      exitCode: 0
      finishedAt: {{ $now | Quote }}
      reason: Completed
      startedAt: {{ $now | Quote }}
{{ end }}
phase: Succeeded
"""


def _stage(name, exprs, nxt):
    return {"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "Stage", "metadata": {"name": name},
            "spec": {"resourceRef": {"apiGroup": "v1", "kind": "Pod"},
                     "selector": {"matchExpressions": exprs}, "next": nxt}}


def _expr(key, op, values=None):
    e = {"key": key, "operator": op}
    if values is not None:
        e["values"] = values
    return e


KWOK_STAGES = [
    _stage("pod-ready", [_expr(".metadata.deletionTimestamp", "DoesNotExist"),
                         _expr(".status.podIP", "DoesNotExist")],
           {"statusTemplate": _POD_READY_TEMPLATE}),
    _stage("pod-complete", [_expr(".metadata.deletionTimestamp", "DoesNotExist"),
                            _expr(".status.phase", "In", ["Running"]),
                            _expr(".metadata.ownerReferences.[].kind", "In", ["Job"])],
           {"statusTemplate": _POD_COMPLETE_TEMPLATE}),
    _stage("pod-delete", [_expr(".metadata.deletionTimestamp", "Exists")],
           {"finalizers": {"empty": True}, "delete": True}),
    _stage("lab-launcher-exit", [_expr(".metadata.deletionTimestamp", "DoesNotExist"),
                                 _expr('.metadata.annotations["lab.kubevirt.io/launcher-exited"]', "Exists"),
                                 _expr(".status.phase", "In", ["Running"])],
           {"statusTemplate": _LAUNCHER_EXIT_TEMPLATE}),
]


# KWOK's own options. Its per-node pod sync asks for watch-list streams (sendInitialEvents),
# which the lab's kube-apiserver does not serve (WatchList is off, see Lab.__init__).
KWOK_CONFIGURATION = {"apiVersion": "config.kwok.x-k8s.io/v1alpha1", "kind": "KwokConfiguration",
                      "options": {"enablePodsOnNodeSyncStreamWatch": False}}


class LabUnavailable(Exception):
    """A component cannot be had on this machine (not built, no Go, no etcd); the message says
    which and why. Tests skip on it; anything else that fails is a failure."""


def log(msg):
    print("lab: " + msg, file=sys.stderr, flush=True)


def module_version(moddir, module):
    with open(os.path.join(HERE, "gomod", moddir, "go.mod")) as f:
        for line in f:
            parts = line.replace("require ", "").split()
            if len(parts) >= 2 and parts[0] == module and parts[1].startswith("v"):
                return parts[1]
    return "?"


def built_binaries():
    """{component: path} of what tests/lab/build.sh has built (never builds), and the lines it
    said about what is missing."""
    p = subprocess.run([os.path.join(HERE, "build.sh"), "--check"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    out = {}
    for line in p.stdout.splitlines():
        name, _, path = line.partition(" ")
        if path:
            out[name] = path.strip()
    return out, p.stderr.strip()


_libc = None


def _child_setup():
    # runs in the child between fork and exec: die with the parent (SIGKILL), so a killed test
    # leaves no orphans; the new session (start_new_session) makes it a process group to stop.
    # Linux sends the signal when the *thread* that forked exits, not the process: start a
    # component only from a thread that outlives it (a short-lived thread's child dies with it)
    try:
        _libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass


_LABS = weakref.WeakSet()


@atexit.register
def _stop_all():
    for lab in list(_LABS):
        lab.stop()


class _LabCluster(Cluster):
    """realapi's etcd + kube-apiserver, with the lab's process handling."""

    def _spawn(self, name, argv, env=None):
        global _libc
        if _libc is None:
            _libc = ctypes.CDLL(None, use_errno=True)
        full_env = None
        if env:
            full_env = dict(os.environ)
            full_env.update(env)
        with open(os.path.join(self.dir, name + ".log"), "ab") as out:
            p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 start_new_session=True, preexec_fn=_child_setup, env=full_env)
        self.procs.append((name, p))
        # how it was started, so that Lab.start_component can start it again the same way
        self.argvs = getattr(self, "argvs", {})
        self.argvs[name] = (list(argv), env)
        return p

    def stop(self):
        if getattr(self, "client", None) is not None:
            self.client.close()
        # everything is throw-away: a short grace, then the whole group goes
        for name, p in reversed(self.procs):
            if p.poll() is None:
                _signal_group(p, signal.SIGTERM)
        deadline = time.time() + 5
        for name, p in reversed(self.procs):
            try:
                p.wait(max(0.1, deadline - time.time()))
            except subprocess.TimeoutExpired:
                pass
            _signal_group(p, signal.SIGKILL)  # also children a component may have started
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                pass
        self.procs = []


def _signal_group(p, sig):
    try:
        os.killpg(p.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


class Lab:
    """A lab cluster. Typical use:

        with Lab(nodes=4).start() as lab:
            lab.client.create(...)             # kubeclient.Client as the lab's admin
            lab.wait_for(lambda: ..., 60, "...")

    Arguments: `nodes` KWOK nodes (named node-01, ...) each with `node_capacity`;
    `migration_seconds` how long a live migration takes (the stand-in's handlers);
    `parallel_migrations_per_cluster` / `parallel_outbound_migrations_per_node` and
    `eviction_strategy` go to the KubeVirt CR's spec.configuration; `workdir` keeps logs and
    kubeconfigs (default: a temporary directory, removed by stop() unless keep_dir).
    """

    def __init__(self, nodes=4, workdir=None, migration_seconds=3.0, parallel_migrations_per_cluster=5,
                 parallel_outbound_migrations_per_node=2, eviction_strategy=None, node_capacity=None,
                 node_prefix="node-", audit=True, keep_dir=False, controllers=CONTROLLERS,
                 node_monitor_grace_period="180s", log=log):
        self.n_nodes = nodes
        self.keep_dir = keep_dir or workdir is not None
        self.dir = workdir or tempfile.mkdtemp(prefix="lab.")
        os.makedirs(self.dir, exist_ok=True)
        self.migration_seconds = migration_seconds
        self.migration_config = {"parallelMigrationsPerCluster": parallel_migrations_per_cluster,
                                 "parallelOutboundMigrationsPerNode": parallel_outbound_migrations_per_node}
        self.eviction_strategy = eviction_strategy
        self.node_capacity = dict(node_capacity or {"cpu": "32", "memory": "128Gi", "pods": "110",
                                                   "ephemeral-storage": "200Gi"})
        self.node_prefix = node_prefix
        self.controllers = list(controllers)
        self.node_monitor_grace_period = node_monitor_grace_period
        self.log = log
        self.cluster = _LabCluster(self.dir, audit=audit, disable_admission=(), users=USERS,
                                   audited_users=[DESCHEDULER_USER], apiserver_args=[
            # virt-api reads the request-header CA from kube-system/extension-apiserver-authentication
            # at start (pkg/virt-api/api.go, readRequestHeader); kube-apiserver writes it there
            "--requestheader-client-ca-file", os.path.join(self.dir, "pki", "ca.crt"),
            "--requestheader-username-headers", "X-Remote-User",
            "--requestheader-group-headers", "X-Remote-Group",
            "--requestheader-extra-headers-prefix", "X-Remote-Extra-",
            # the lab has one CA: name the (absent) front proxy so an ordinary client
            # certificate is never taken for one
            "--requestheader-allowed-names", "front-proxy-client",
            # kube-apiserver 1.37 turns every watch from resourceVersion "" or "0" into a
            # watch-list stream (k8s.io/apimachinery pkg/apis/meta/internalversion/defaults.go,
            # SetListOptionsDefaults), which it cannot serve on Debian's etcd 3.4: such a watch
            # ends at once with "a watch stream was requested by the client but the required
            # storage feature RequestWatchProgress is disabled" (pkg/storage/cacher/cacher.go of
            # k8s.io/apiserver), and a client that watches that way (KWOK) backs off for seconds
            # each time. Off, such watches are served as before 1.34.
            "--feature-gates", "WatchList=false"])
        self.client = None
        self.handler = None
        self.nodes = []
        self.components = {}
        self.kubeconfig = os.path.join(self.dir, "kubeconfig")
        self.timings = {}
        self.stopped = False
        self.lock = threading.Lock()
        _LABS.add(self)

    # -- start ---------------------------------------------------------------------------

    def start(self, timeout=180):
        """Starts everything; returns self once the lab is ready. Raises LabUnavailable when a
        component cannot be had here, RuntimeError (with the component's log tail) when one fails."""
        t0 = time.time()
        try:
            self._start(timeout)
        except BaseException:
            self.stop()
            raise
        self.timings["start"] = round(time.time() - t0, 1)
        self.log("ready in %.1f s (%s); kubeconfig %s" % (
            self.timings["start"], ", ".join("%s %.1fs" % kv for kv in self.timings.items() if kv[0] != "start"),
            self.kubeconfig))
        return self

    def _mark(self, what, since):
        self.timings[what] = round(time.time() - since, 1)

    def _start(self, timeout):
        deadline = time.time() + timeout
        if not (shutil.which("etcd") or os.path.exists("/usr/bin/etcd")):
            raise LabUnavailable("no etcd (Debian package etcd-server; scripts/deps.sh test installs it)")
        bins, missing = built_binaries()
        need = ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", "virt-api",
                "virt-controller", "labmanifests")
        lacking = [n for n in need if n not in bins]
        if lacking:
            raise LabUnavailable("not built: %s (run tests/lab/build.sh)%s"
                                 % (", ".join(lacking), (": " + missing) if missing else ""))
        self.bins = bins
        k8s = module_version("k8s", "k8s.io/kubernetes")
        kv = module_version("kubevirt", "kubevirt.io/kubevirt")
        kwok = module_version("kwok", "sigs.k8s.io/kwok")
        etcd_v = subprocess.run(["etcd", "--version"], stdout=subprocess.PIPE, text=True).stdout.split("\n")[0]
        self.components = {
            "etcd": {"kind": "real", "version": etcd_v.replace("etcd Version: ", "")},
            "kube-apiserver": {"kind": "real", "version": k8s},
            "kube-controller-manager": {"kind": "real", "version": k8s},
            "kube-scheduler": {"kind": "real", "version": k8s},
            "kwok": {"kind": "real", "version": kwok, "role": "kubelet of the fake nodes"},
            "virt-api": {"kind": "real", "version": kv},
            "virt-controller": {"kind": "real", "version": kv},
            "virt-handler": {"kind": "stand-in", "version": kv,
                             "why": "needs a real node with libvirt; tests/lab/handler.py reports what it would"},
        }

        # etcd + kube-apiserver (tests/realapi/realapi.py)
        t = time.time()
        c = self.cluster
        c.start_etcd()
        c.start_apiserver(bins["kube-apiserver"])
        self.client = Client("127.0.0.1", c.port, c.certs["ca.crt"], c.admin_token)
        self.pki = c.certs
        simcerts.write_kubeconfig(self.kubeconfig, c.kubeconfig())
        self._mark("apiserver", t)
        for comp, user in COMPONENT_USER.items():
            simcerts.write_kubeconfig(self._kubeconfig_of(comp), c.kubeconfig(token=c.user_tokens[user]))

        # the Kubernetes controllers and KWOK, side by side
        t = time.time()
        self._start_kcm()
        self._start_scheduler()
        self._start_kwok()

        # KubeVirt's objects, while they start
        self._install_kubevirt()
        self._mark("kubevirt objects", t)
        self.add_nodes(self.n_nodes, wait=False)

        t = time.time()
        self.virt_api_port = free_port()
        self._spawn("virt-api", [
            bins["virt-api"], "--kubeconfig", self._kubeconfig_of("virt-api"),
            "--listen", "127.0.0.1", "--port", str(self.virt_api_port),
            "--tls-cert-file", self.pki["server.crt"], "--tls-key-file", self.pki["server.key"],
            # the client certificate virt-api shows virt-handler's console/VNC server (none here)
            "--handler-cert-file", self.pki["client.crt"], "--handler-key-file", self.pki["client.key"],
            "--ca-configmap-name", "kubevirt-ca", "--subresources-only=false"])
        self.virt_controller_port = free_port()
        self._spawn("virt-controller", [
            bins["virt-controller"], "--kubeconfig", self._kubeconfig_of("virt-controller"),
            "--listen", "127.0.0.1", "--port", str(self.virt_controller_port),
            "--launcher-image", LAUNCHER_IMAGE, "--exporter-image", EXPORTER_IMAGE,
            "--prom-cert-file", self.pki["server.crt"], "--prom-key-file", self.pki["server.key"],
            # a short lease: a restarted lab (or a second virt-controller) takes over fast
            "--leader-elect-lease-duration", "15s", "--leader-elect-renew-deadline", "10s",
            "--leader-elect-retry-period", "2s"])
        self._wait_https("virt-api", self.virt_api_port, "/", deadline)
        self._register_webhooks()
        self._mark("virt-api", t)

        # the virt-handler stand-in on every node
        self.handler = HandlerStandIn(Client("127.0.0.1", c.port, c.certs["ca.crt"],
                                             c.user_tokens[COMPONENT_USER["virt-handler"]]),
                                      migration_seconds=self.migration_seconds, log=self.log)
        self.handler.start()
        self.handler.add_nodes(self.nodes)

        t = time.time()
        self.wait_nodes_ready(self.nodes, deadline - time.time())
        self._mark("nodes ready", t)
        self._wait_leader(deadline)
        self._mark("virt-controller leading", t)
        # pods need the namespace's default ServiceAccount (ServiceAccount admission)
        self.wait_for(lambda: self._exists("/api/v1/namespaces/default/serviceaccounts/default"),
                      deadline - time.time(), "the default ServiceAccount (kube-controller-manager)")
        with open(os.path.join(self.dir, "components.json"), "w") as f:
            json.dump(self.components, f, indent=1)

    def _kubeconfig_of(self, comp):
        return os.path.join(self.dir, "kubeconfig-" + comp)

    def _spawn(self, name, argv, env=None):
        p = self.cluster._spawn(name, argv, env)
        self.components.setdefault(name, {})["pid"] = p.pid
        self.components[name]["log"] = os.path.join(self.dir, name + ".log")
        return p

    def _start_kcm(self):
        kc = self._kubeconfig_of("kube-controller-manager")
        self._spawn("kube-controller-manager", [
            self.bins["kube-controller-manager"], "--kubeconfig", kc,
            "--authentication-kubeconfig", kc, "--authorization-kubeconfig", kc,
            "--secure-port", "0", "--controllers", ",".join(self.controllers),
            "--root-ca-file", self.pki["ca.crt"],
            "--allocate-node-cidrs=true", "--cluster-cidr", CLUSTER_CIDR, "--node-cidr-mask-size", "24",
            "--service-cluster-ip-range", SERVICE_CIDR,
            # a lab of hundreds of nodes and thousands of pods: client-go's 20 QPS would throttle
            # the garbage collector and the disruption controller
            "--kube-api-qps", "100", "--kube-api-burst", "200",
            # 50 s by default. Here every kubelet (KWOK) and the whole control plane share two
            # cores: while hundreds of VMs start at once KWOK renewed some node leases more than
            # 50 s apart, the node lifecycle controller took those nodes for unreachable and
            # marked their pods NotReady (which KWOK, unlike a kubelet, never turns back), and
            # virt-controller stopped there. A node whose kubelet really stops (KWOK no longer
            # manages it once its kwok.x-k8s.io/node annotation is removed) still goes NotReady.
            "--node-monitor-grace-period", self.node_monitor_grace_period,
            "--leader-elect=true", "--v", "1"])

    def _start_scheduler(self):
        kc = self._kubeconfig_of("kube-scheduler")
        self._spawn("kube-scheduler", [
            self.bins["kube-scheduler"], "--kubeconfig", kc,
            "--authentication-kubeconfig", kc, "--authorization-kubeconfig", kc,
            "--secure-port", "0", "--leader-elect=true", "--v", "1"])

    def _start_kwok(self):
        cfg = os.path.join(self.dir, "kwok.yaml")
        with open(cfg, "w") as f:
            # YAML documents; JSON is YAML
            f.write("\n---\n".join(json.dumps(s, indent=1) for s in [KWOK_CONFIGURATION] + KWOK_STAGES) + "\n")
        self._spawn("kwok", [
            self.bins["kwok"], "--kubeconfig", self._kubeconfig_of("kwok"), "--config", cfg,
            "--manage-all-nodes=false",
            "--manage-nodes-with-annotation-selector", FAKE_NODE_ANNOTATION + "=fake",
            # pod IPs come from each node's spec.podCIDR (node IPAM); this only serves nodes
            # that have none
            "--cidr", "10.127.0.1/16", "--node-ip", "127.0.0.1"])

    # -- KubeVirt's objects ----------------------------------------------------------------

    def _install_kubevirt(self):
        p = subprocess.run([self.bins["labmanifests"], KUBEVIRT_NS], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            raise RuntimeError("labmanifests failed: " + p.stderr.strip())
        self.manifests = json.loads(p.stdout)
        names = []
        for crd in self.manifests["crds"]:
            crd.pop("status", None)
            crd["metadata"].pop("creationTimestamp", None)
            self.client.create("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
            names.append(crd["metadata"]["name"])
        self._create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                            "metadata": {"name": KUBEVIRT_NS}})
        with open(self.pki["ca.crt"]) as f:
            ca = f.read()
        # virt-api and virt-controller trust this CA for KubeVirt's internal TLS
        # (pkg/virt-operator/resource/generate/components/secrets.go, the kubevirt-ca ConfigMap)
        self._create("/api/v1/namespaces/%s/configmaps" % KUBEVIRT_NS, {
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kubevirt-ca"},
            "data": {"ca-bundle": ca}})
        deadline = time.time() + 60
        for n in names:
            self.wait_for(lambda: any(x.get("type") == "Established" and x.get("status") == "True"
                                      for x in (self.client.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
                                                                + n).get("status") or {}).get("conditions") or []),
                          deadline - time.time(), "CRD %s Established" % n, interval=0.05)
        self.wait_for(lambda: self._exists("/apis/kubevirt.io/v1/namespaces/%s/kubevirts" % KUBEVIRT_NS),
                      deadline - time.time(), "the kubevirt.io/v1 API", interval=0.05)
        conf = {"migrations": dict(self.migration_config),
                "developerConfiguration": {"featureGates": []}}
        if self.eviction_strategy:
            conf["evictionStrategy"] = self.eviction_strategy
        kv = self.client.create("/apis/kubevirt.io/v1/namespaces/%s/kubevirts" % KUBEVIRT_NS, {
            "apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
            "metadata": {"name": "kubevirt", "namespace": KUBEVIRT_NS},
            "spec": {"configuration": conf, "imageTag": self.components["virt-api"]["version"]}})
        # what virt-operator reports once installed; virt-api and virt-controller only read a
        # KubeVirt CR whose status.phase is set (pkg/virt-config/configuration.go,
        # GetConfigFromKubeVirtCR)
        v = self.components["virt-api"]["version"]
        kv["status"] = {"phase": "Deployed", "observedKubeVirtVersion": v, "targetKubeVirtVersion": v,
                        "observedDeploymentID": "lab", "defaultArchitecture": "amd64",
                        "conditions": [{"type": t, "status": s, "reason": "AllComponentsReady",
                                        "message": "All components are ready."}
                                       for t, s in (("Available", "True"), ("Progressing", "False"),
                                                    ("Degraded", "False"), ("Created", "True"))]}
        self.client.put("/apis/kubevirt.io/v1/namespaces/%s/kubevirts/kubevirt/status" % KUBEVIRT_NS, kv)

    def _register_webhooks(self):
        with open(self.pki["ca.crt"], "rb") as f:
            bundle = base64.b64encode(f.read()).decode()
        for kind, plural in (("mutatingWebhookConfiguration", "mutatingwebhookconfigurations"),
                             ("validatingWebhookConfiguration", "validatingwebhookconfigurations")):
            conf = self.manifests[kind]
            conf["metadata"].pop("creationTimestamp", None)
            for w in conf["webhooks"]:
                svc = w["clientConfig"].pop("service")
                # no service network: virt-api on loopback, the same path
                w["clientConfig"] = {"url": "https://127.0.0.1:%d%s" % (self.virt_api_port, svc.get("path") or "/"),
                                     "caBundle": bundle}
            self.client.create("/apis/admissionregistration.k8s.io/v1/" + plural, conf)

    def set_migration_config(self, parallel_migrations_per_cluster=None, parallel_outbound_migrations_per_node=None,
                             **more):
        """Changes spec.configuration.migrations of the KubeVirt CR (any MigrationConfiguration
        field by its JSON name in `more`); KubeVirt's components pick it up from their informers."""
        m = dict(more)
        if parallel_migrations_per_cluster is not None:
            m["parallelMigrationsPerCluster"] = parallel_migrations_per_cluster
        if parallel_outbound_migrations_per_node is not None:
            m["parallelOutboundMigrationsPerNode"] = parallel_outbound_migrations_per_node
        self.migration_config.update(m)
        return self.client.merge_patch("/apis/kubevirt.io/v1/namespaces/%s/kubevirts/kubevirt" % KUBEVIRT_NS,
                                       {"spec": {"configuration": {"migrations": m}}})

    def set_kubevirt_configuration(self, configuration):
        """Merges `configuration` into the KubeVirt CR's spec.configuration (JSON merge patch),
        e.g. {"apiConfiguration": {"restClient": {"rateLimiter": {"tokenBucketRateLimiter":
        {"qps": 50, "burst": 100}}}}}: virt-api's client is limited to 5 requests/s (burst 10) by
        default (pkg/virt-config/virt-config.go), and its eviction webhook makes three
        requests per launcher it marks, so a burst of evictions is answered at about two a
        second, as on a real cluster with KubeVirt's defaults."""
        return self.client.merge_patch("/apis/kubevirt.io/v1/namespaces/%s/kubevirts/kubevirt" % KUBEVIRT_NS,
                                       {"spec": {"configuration": configuration}})

    def set_migration_seconds(self, seconds):
        """How long the next migrations take (the handler stand-in)."""
        self.migration_seconds = float(seconds)
        self.handler.migration_seconds = float(seconds)

    # -- nodes -----------------------------------------------------------------------------

    def node_manifest(self, name, capacity=None, labels=None):
        cap = dict(self.node_capacity)
        cap.update(capacity or {})
        # what virt-handler's device plugins make the kubelet report (1k each, as on a real
        # node); every launcher pod requests them
        for dev in ("kvm", "tun", "vhost-net"):
            cap.setdefault("devices.kubevirt.io/" + dev, "1k")
        lab = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
               "type": "kwok", "node-role.kubernetes.io/worker": ""}
        lab.update(labels or {})
        return {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "labels": lab,
                             "annotations": {FAKE_NODE_ANNOTATION: "fake", "node.alpha.kubernetes.io/ttl": "0"}},
                "spec": {},
                "status": {"capacity": cap, "allocatable": dict(cap),
                           "nodeInfo": {"architecture": "amd64", "operatingSystem": "linux",
                                        "kubeletVersion": self.components["kube-apiserver"]["version"]}}}

    def add_nodes(self, count_or_names, capacity=None, labels=None, wait=True, timeout=120):
        """Creates KWOK nodes (a count: the next free node-NN names, or a list of names), served
        by the handler stand-in; with wait, returns once they are Ready and schedulable."""
        if isinstance(count_or_names, int):
            names, i = [], len(self.nodes)
            while len(names) < count_or_names:
                i += 1
                names.append("%s%02d" % (self.node_prefix, i))
        else:
            names = list(count_or_names)
        for n in names:
            self._create("/api/v1/nodes", self.node_manifest(n, capacity, labels))
        self.nodes.extend(n for n in names if n not in self.nodes)
        if self.handler is not None:
            self.handler.add_nodes(names)
        if wait:
            self.wait_nodes_ready(names, timeout)
        return names

    def node_ready(self, name):
        """Ready (KWOK), no taints left (node lifecycle lifted not-ready), KubeVirt-schedulable
        (the handler stand-in's label)."""
        try:
            n = self.client.get("/api/v1/nodes/" + name)
        except ApiError:
            return False
        ready = any(c.get("type") == "Ready" and c.get("status") == "True"
                    for c in (n.get("status") or {}).get("conditions") or [])
        return (ready and not (n.get("spec") or {}).get("taints")
                and (n["metadata"].get("labels") or {}).get("kubevirt.io/schedulable") == "true")

    def wait_nodes_ready(self, names, timeout=120):
        pending = list(names)
        deadline = time.time() + timeout
        while pending:
            pending = [n for n in pending if not self.node_ready(n)]
            if not pending:
                return
            if time.time() > deadline:
                raise RuntimeError("nodes not ready in %d s: %s%s" % (timeout, ", ".join(pending[:10]),
                                                                      self._failed_components()))
            self._check_alive()
            time.sleep(0.2)

    # -- waiting ---------------------------------------------------------------------------

    def _wait_https(self, name, port, path, deadline, check=None):
        ctx = ssl.create_default_context(cafile=self.pki["ca.crt"])
        while time.time() < deadline:
            (check or self._check_alive)()
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
                    with ctx.wrap_socket(s, server_hostname="127.0.0.1") as t:
                        t.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n" % path).encode())
                        if t.recv(12).startswith(b"HTTP/1."):
                            return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError("%s did not answer on port %d%s" % (name, port, self._tail(name)))

    def _wait_leader(self, deadline, check=None):
        ctx = ssl.create_default_context(cafile=self.pki["ca.crt"])
        while time.time() < deadline:
            (check or self._check_alive)()
            try:
                c = http.client.HTTPSConnection("127.0.0.1", self.virt_controller_port, context=ctx, timeout=2)
                c.request("GET", "/leader")
                body = c.getresponse().read()
                c.close()
                if json.loads(body).get("apiserver", {}).get("leader") == "true":
                    return
            except (OSError, ValueError, http.client.HTTPException):
                pass
            time.sleep(0.3)
        raise RuntimeError("virt-controller did not lead in time" + self._tail("virt-controller"))

    def wait_for(self, fn, timeout, what, interval=0.2):
        """Polls fn() until it returns something true (returned); RuntimeError naming `what`
        after `timeout` seconds, or at once when a component died."""
        deadline = time.time() + max(timeout, 0)
        while True:
            try:
                v = fn()
            except ApiError as e:
                if e.code not in (404, 409, 429):
                    raise
                v = None
            if v:
                return v
            self._check_alive()
            if time.time() > deadline:
                raise RuntimeError("timed out after %.0f s waiting for %s%s" % (timeout, what,
                                                                                 self._failed_components()))
            time.sleep(interval)

    def _exists(self, path):
        try:
            self.client.get(path)
            return True
        except ApiError as e:
            if e.code == 404:
                return False
            raise

    def _create(self, path, obj):
        try:
            return self.client.create(path, obj)
        except ApiError as e:
            if e.code != 409:
                raise

    # -- health ----------------------------------------------------------------------------

    def _check_alive(self):
        for name, p in self.cluster.procs:
            if p.poll() is not None:
                raise RuntimeError("%s exited with status %s%s" % (name, p.returncode, self._tail(name)))

    def _tail(self, name, n=3000):
        path = os.path.join(self.dir, name + ".log")
        try:
            with open(path, "rb") as f:
                f.seek(0, 2)
                size = f.tell()
                f.seek(max(0, size - n))
                return "\n--- %s (end):\n%s" % (path, f.read().decode("utf-8", "replace"))
        except OSError:
            return ""

    def _failed_components(self):
        dead = [(n, p.returncode) for n, p in self.cluster.procs if p.poll() is not None]
        return "".join("; %s exited with status %s" % d for d in dead)

    def status(self):
        """What runs: {"components": {name: {kind: real|stand-in, version, pid, log, alive}},
        "nodes": [...], "handler": the stand-in's counters, "kubeconfig", "dir", "timings"}."""
        alive = {n: p.poll() is None for n, p in self.cluster.procs}
        comps = json.loads(json.dumps(self.components))
        for n, c in comps.items():
            if n in alive:
                c["alive"] = alive[n]
        if "virt-handler" in comps:
            comps["virt-handler"]["alive"] = self.handler is not None and not self.handler.stopping.is_set()
        return {"components": comps, "nodes": list(self.nodes),
                "handler": dict(self.handler.stats) if self.handler else {},
                "kubeconfig": self.kubeconfig, "dir": self.dir, "timings": dict(self.timings)}

    # -- control-plane faults (tests/lab/faults.py) ---------------------------------------

    RESTARTABLE = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok",
                   "virt-api", "virt-controller")

    def stop_component(self, name, sig=signal.SIGTERM, timeout=15):
        """Stops one component's process group (SIGKILL: killed at once, as a crash or an OOM
        kill would) and takes it out of the health check until start_component; returns its
        exit status."""
        if name not in self.RESTARTABLE:
            raise ValueError("%s cannot be stopped and started again (one of %s)" % (name, ", ".join(self.RESTARTABLE)))
        procs = [(n, p) for n, p in self.cluster.procs if n == name]
        if not procs:
            raise RuntimeError("%s is not running" % name)
        self.cluster.procs = [(n, p) for n, p in self.cluster.procs if n != name]
        _, p = procs[-1]
        _signal_group(p, sig)
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            _signal_group(p, signal.SIGKILL)
            p.wait(5)
        self.components[name]["alive"] = False
        return p.returncode

    def start_component(self, name, timeout=120):
        """Starts a component stopped by stop_component again: the same command line (same
        ports, data directory, certificates, tokens), its log appended to; returns once it
        answers (etcd: healthy; kube-apiserver: /readyz; virt-api: HTTPS; virt-controller: it
        leads again, which waits for its old Lease to expire unless it was released)."""
        argv, env = self.cluster.argvs[name]
        deadline = time.time() + timeout
        proc = self._spawn(name, argv, env)
        self.components[name].pop("alive", None)

        def check():   # only this one: another may be down on purpose, or being restarted
            if proc.poll() is not None:
                raise RuntimeError("%s exited with status %s%s" % (name, proc.returncode, self._tail(name)))
        if name == "etcd":
            while time.time() < deadline:
                check()
                try:
                    with urllib.request.urlopen(self.cluster.etcd_url + "/health", timeout=1) as r:
                        if json.loads(r.read()).get("health") == "true":
                            return
                except (OSError, ValueError):
                    pass
                time.sleep(0.1)
            raise RuntimeError("etcd was not healthy again in %d s%s" % (timeout, self._tail("etcd")))
        if name == "kube-apiserver":
            while time.time() < deadline:
                check()
                try:
                    if self.client.request("GET", "/readyz", raw=True) == b"ok":
                        return
                except (ApiError, OSError):
                    pass
                time.sleep(0.1)
            raise RuntimeError("kube-apiserver was not ready again in %d s%s" % (timeout, self._tail(name)))
        if name == "virt-api":
            self._wait_https(name, self.virt_api_port, "/", deadline, check)
        elif name == "virt-controller":
            self._wait_leader(deadline, check)

    def kubeconfig_for(self, component):
        """The kubeconfig a component runs with (its own identity); "descheduler" is the one
        for the descheduler under test (user DESCHEDULER_USER, kept in the audit log)."""
        return self._kubeconfig_of(component)

    # -- stop ------------------------------------------------------------------------------

    def stop(self):
        with self.lock:
            if self.stopped:
                return
            self.stopped = True
        if self.handler is not None:
            self.handler.stop()
            self.handler.client.close()
        if self.client is not None:
            self.client.close()
        self.cluster.stop()
        if not self.keep_dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


# -- objects the runner and the tests create --------------------------------------------------

def vmi_manifest(name, namespace="default", memory="1Gi", cpu="1", eviction_strategy="LiveMigrate",
                 non_migratable=None, labels=None, annotations=None, node_selector=None):
    """A VirtualMachineInstance as users write one: a container disk, masquerade networking;
    `non_migratable` (a KubeVirt reason such as DisksNotLiveMigratable) makes the handler
    stand-in report it not live-migratable."""
    ann = dict(annotations or {})
    if non_migratable:
        ann["lab.kubevirt.io/non-migratable"] = non_migratable
    spec = {
        "domain": {"devices": {"disks": [{"name": "containerdisk", "disk": {"bus": "virtio"}}],
                               "interfaces": [{"name": "default", "masquerade": {}}]},
                   "resources": {"requests": {"memory": memory, "cpu": cpu}}},
        "networks": [{"name": "default", "pod": {}}],
        "volumes": [{"name": "containerdisk",
                     "containerDisk": {"image": "quay.io/kubevirt/cirros-container-disk-demo:v1.6.0"}}],
        "terminationGracePeriodSeconds": 0,
    }
    if eviction_strategy:
        spec["evictionStrategy"] = eviction_strategy
    if node_selector:
        spec["nodeSelector"] = dict(node_selector)
    md = {"name": name, "namespace": namespace, "labels": dict(labels or {})}
    if ann:
        md["annotations"] = ann
    return {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance", "metadata": md, "spec": spec}


def vm_manifest(name, namespace="default", run_strategy="Always", **kw):
    """A VirtualMachine whose template is vmi_manifest(**kw)."""
    vmi = vmi_manifest(name, namespace, **kw)
    tmd = {"labels": dict(vmi["metadata"]["labels"], **{"kubevirt.io/vm": name})}
    if vmi["metadata"].get("annotations"):
        tmd["annotations"] = vmi["metadata"]["annotations"]
    return {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"runStrategy": run_strategy, "template": {"metadata": tmd, "spec": vmi["spec"]}}}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    up = sub.add_parser("up", help="start a lab; runs until SIGTERM/SIGINT")
    up.add_argument("--nodes", type=int, default=4)
    up.add_argument("--dir", help="working directory, kept (default: a temporary one, removed at exit)")
    up.add_argument("--migration-seconds", type=float, default=3.0)
    up.add_argument("--parallel-migrations-per-cluster", type=int, default=5)
    up.add_argument("--parallel-outbound-migrations-per-node", type=int, default=2)
    up.add_argument("--eviction-strategy", help="the KubeVirt CR's cluster-wide evictionStrategy")
    args = ap.parse_args()
    # the handlers only append: taking a lock in a handler can deadlock the interrupted thread
    stopping = []
    signal.signal(signal.SIGTERM, lambda *a: stopping.append(1))
    signal.signal(signal.SIGINT, lambda *a: stopping.append(1))
    lab = Lab(nodes=args.nodes, workdir=args.dir, migration_seconds=args.migration_seconds,
              parallel_migrations_per_cluster=args.parallel_migrations_per_cluster,
              parallel_outbound_migrations_per_node=args.parallel_outbound_migrations_per_node,
              eviction_strategy=args.eviction_strategy)
    code = 0
    try:
        lab.start()
        with open(os.path.join(lab.dir, "status.json"), "w") as f:
            json.dump(lab.status(), f, indent=1)
        print("ready %s" % lab.kubeconfig, flush=True)
        while not stopping:
            time.sleep(0.5)
            dead = lab._failed_components()
            if dead:
                log("a component stopped%s (logs in %s)" % (dead, lab.dir))
                code = 1
                break
    except LabUnavailable as e:
        log("unavailable: %s" % e)
        code = 3
    except Exception as e:
        log(str(e))
        code = 2
    finally:
        lab.stop()
    sys.exit(code)


if __name__ == "__main__":
    main()
