#!/usr/bin/env python3
"""Control-plane faults in the cluster lab: the descheduler while real components fail.

    python3 tests/lab/faults.py [--binary build/descheduler] [--write] [--only NAME] [--keep]
    python3 tests/lab/faults.py --from-json tests/lab/out/faults.json [--write]

Each fault is one run on a fresh lab (cluster.py: etcd, kube-apiserver, kube-controller-manager,
kube-scheduler, KWOK, virt-api, virt-controller, the virt-handler stand-in): four KWOK nodes of
16 CPUs, twelve VMs of one CPU started on node-01 (the others cordoned meanwhile), so that the
policy (tests/lab/policies/faults.yaml: LowNodeUtilization on requests, 4 evictions a cycle, 3 a
node) has VMs to move for several cycles and KubeVirt's limits (parallelOutboundMigrationsPerNode
2, parallelMigrationsPerCluster 3) are what caps each cycle. The descheduler runs in Deployment
mode (`--descheduling-interval`, the watch cache, EvictionsInBackground); the fault is injected
after its first cycle, held for a few cycles, lifted, and the run goes on for a few more.

Recorded per run (the exact figures in tests/lab/out/faults.json): the descheduler's error and
warning lines, the requests it sent by verb and resource before, during and after the fault
(kube-apiserver's audit log, by its own identity), evictions and VMI migrations, and these
invariants:

  vms       every VMI that ran when the descheduler started still runs at every sample (about
            three a second) and at the end: present, phase Running, the same UID
  limits    per cycle (cycles start at the log's "Resetting pod evictor counters"), evictions
            carried out (201, or KubeVirt's 429 "Eviction triggered evacuation") <= the policy's
            maxNoOfPodsToEvictTotal and, per node, maxNoOfPodsToEvictPerNode; and at every sample
            the VMIs marked for evacuation or with an unfinished migration, counted by the node
            they leave, <= parallelOutboundMigrationsPerNode, and in all <=
            parallelMigrationsPerCluster
  view      no eviction request was sent by a cycle that began while a kind it reads was not
            synced: every kind listed with a 200 and, since its last failure (a failed list, a
            refused watch, kube-apiserver restarting), listed again or watched again with a 200
            (the audit log; the fault matrix's definition, tests/faults/fault_matrix.py, as far as
            the audit log shows it: it has no request bodies, so the UID precondition is not
            checked here, and a watch that starts with a 200 and then reports 410 in its stream
            counts as a watch)
  crash     the process runs until SIGTERM and exits 0; no sanitizer report, no signal
  recovery  a cycle completes (its "Number of evictions/requests" line) after the fault is lifted
  log       the fault is named by the expected line(s); the fault's own checks (one error line a
            launcher a cycle at most, for the eviction webhook)

The table it renders is the section "Control-plane faults (cluster lab)" of docs/fault-matrix.md,
from its heading to the end of the file (tests/faults/fault_matrix.py keeps what comes before).
By default the run fails when the rendered section differs from the committed one; --write
replaces it. Only what is stable goes in the table (held or not, the lines named, bounded
counts); timings and exact request counts go to the JSON file.

Takes about five minutes on two cores once the lab is built (make lab-faults). Exit status: 0 all
held and the section matches, 1 otherwise, 3 when the lab cannot run here.
"""

import argparse
import calendar
import difflib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

from cluster import DESCHEDULER_USER, FAKE_NODE_ANNOTATION, Lab, LabUnavailable, vm_manifest  # noqa: E402

DOC = os.path.join(ROOT, "docs", "fault-matrix.md")
SECTION = "## Control-plane faults (cluster lab)"
POLICY = os.path.join(HERE, "policies", "faults.yaml")
OUT = os.path.join(HERE, "out")

NODES = 4
NODE_CAPACITY = {"cpu": "16", "memory": "64Gi", "pods": "110", "ephemeral-storage": "200Gi"}
VMS = 12
HOT = "node-01"
PER_NODE, PER_CLUSTER = 2, 3          # KubeVirt's parallelOutbound...PerNode, parallelMigrationsPerCluster
LIMIT_TOTAL, LIMIT_NODE = 4, 3        # the policy's (policies/faults.yaml)
INTERVAL = 5                          # --descheduling-interval, seconds
HOLD = 3                              # cycles the fault lasts (at least)
AFTER = 3                             # cycles after it is lifted
MIGRATION_SECONDS = 3
BACKGROUND_TEXT = "Eviction triggered evacuation"
VMI_PATH = "/apis/kubevirt.io/v1/virtualmachineinstances"
VMIM_PATH = "/apis/kubevirt.io/v1/virtualmachineinstancemigrations"
CYCLE_START = "Resetting pod evictor counters"
CYCLE_END = ('"Number of evictions/requests"', '"Failed to read the cluster state')


def log(msg):
    print("lab-faults: " + msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# the faults

FAULTS = [
    {"name": "kube-apiserver",
     "title": "kube-apiserver killed mid-cycle and restarted",
     "injected": "SIGKILL to kube-apiserver as the second cycle starts (its log's first line); "
                 "started again %d s later with the same command line: same etcd, port, certificates, "
                 "tokens" % INTERVAL,
     "expect": [(r'^E.*"Watch (stream broke; opening it again|failed; retrying)"', "a watch broke or failed"),
                (r'^I.*"The watch cannot go on; listing again"|^I.*"Listed for the watch cache"',
                 "the watch cache listed again")]},
    {"name": "etcd",
     "title": "etcd restarted, kube-apiserver up",
     "injected": "etcd stopped (SIGTERM) after the first cycle's migrations ended, started again %d s "
                 "later on the same data directory and ports" % (2 * INTERVAL),
     "expect": [(r'^E.*"Error evicting pod" err=', "an eviction failed")]},
    {"name": "virt-controller",
     "title": "virt-controller stopped for several cycles",
     "injected": "virt-controller stopped (SIGTERM) after the first cycle's migrations ended, for %d "
                 "cycles; then started again (it leads once its old Lease expires)" % HOLD,
     "expect": [(r'^I.*"VM safety: not requesting the eviction of this launcher".*rule="migrationLimits"',
                 "`migrationLimits` refuses more")]},
    {"name": "virt-api",
     "title": "KubeVirt's eviction webhook unreachable (virt-api stopped)",
     "injected": "virt-api stopped (SIGTERM) after the first cycle's migrations ended, for %d cycles; then "
                 "started again" % HOLD,
     "expect": [(r'^E.*"Error evicting pod" err=".*failed calling webhook', "the webhook call failed")]},
    {"name": "node-notready",
     "title": "a node going NotReady while its VMs migrate",
     "injected": "as the second cycle's first migration from %s runs (migrations take 10 s here), KWOK "
                 "lets go of the node (its `kwok.x-k8s.io/node` annotation removed: no more heartbeats) "
                 "and the node's Ready condition is set False through the API, as the node lifecycle "
                 "controller does once the heartbeats are late; %d cycles later the annotation is back "
                 "and KWOK reports it Ready" % (HOT, HOLD),
     "expect": [(r'^I.*"Ignoring node" node="%s" condition="Ready" status="False"' % HOT,
                 "the node is left out of the cycle")]},
]


# ---------------------------------------------------------------------------------------------
# reading the logs

KLOG = re.compile(r'^([IWEF])(\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d+)\s+\d+\s+\S+\] (?:"((?:[^"\\]|\\.)*)"|(.*))')


def klog_time(line):
    """Epoch seconds of a klog line (local time, this year), or None."""
    m = KLOG.match(line)
    if not m:
        return None
    _, mon, day, hh, mm, ss, frac = m.groups()[:7]
    t = time.mktime((time.localtime().tm_year, int(mon), int(day), int(hh), int(mm), int(ss), 0, 0, -1))
    return t + float("0." + frac)


def klog_msg(line):
    m = KLOG.match(line)
    return (m.group(1), m.group(8) if m.group(8) is not None else m.group(9)) if m else (None, None)


def rfc3339(s):
    """Epoch seconds of an audit timestamp (2006-01-02T15:04:05.999999Z)."""
    base, _, frac = s.rstrip("Z").partition(".")
    return calendar.timegm(time.strptime(base, "%Y-%m-%dT%H:%M:%S")) + (float("0." + frac) if frac else 0.0)


def audit_events(path, user):
    """The user's audit events, each {t (received), end (stage time), stage, verb, kind, sub, name,
    ns, code, message}."""
    out = []
    try:
        f = open(path)
    except FileNotFoundError:
        return out
    with f:
        for line in f:
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            if (ev.get("user") or {}).get("username") != user:
                continue
            ref = ev.get("objectRef") or {}
            st = ev.get("responseStatus") or {}
            out.append({"t": rfc3339(ev["requestReceivedTimestamp"]), "end": rfc3339(ev["stageTimestamp"]),
                        "stage": ev.get("stage"), "verb": ev.get("verb"),
                        "kind": ("%s/%s" % (ref.get("apiGroup") or "core", ref["resource"]) if ref.get("resource")
                                 else "path/" + ev.get("requestURI", "?").split("?")[0]),
                        "sub": ref.get("subresource") or "", "name": ref.get("name") or "",
                        "ns": ref.get("namespace") or "", "code": st.get("code"),
                        "message": st.get("message") or "", "uri": ev.get("requestURI", "")})
    out.sort(key=lambda e: e["end"])
    return out


def is_eviction(e):
    return e["verb"] == "create" and e["sub"] == "eviction" and e["stage"] == "ResponseComplete"


def accepted(e):
    return e["code"] == 201 or (e["code"] == 429 and BACKGROUND_TEXT in e["message"])


# ---------------------------------------------------------------------------------------------
# sampling the cluster

class Sampler:
    """Every ~0.3 s: the VMIs, their migrations and the launcher pods (the lab's admin, whose
    requests the audit log keeps apart from the descheduler's). Records the migrations in flight
    by the node they leave, VMIs that stopped, and where each launcher pod runs."""

    def __init__(self, lab, baseline):
        self.lab, self.baseline = lab, baseline
        self.stop_ev = threading.Event()
        self.max_node, self.max_total, self.max_at = 0, 0, None
        self.over = []          # samples over KubeVirt's limits
        self.stopped = {}       # VMI key -> why (first seen)
        self.pod_node = {}
        self.samples = 0
        self.failed = 0
        self.migrations = {}    # VMIM name -> {vmi, phase, source, target}
        self.thread = threading.Thread(target=self._run, daemon=True, name="sampler")

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.stop_ev.set()
        self.thread.join(10)

    def _run(self):
        while not self.stop_ev.is_set():
            try:
                self.sample()
            except Exception:
                self.failed += 1   # the API server (or etcd) is away: nothing to see
            self.stop_ev.wait(0.3)

    def sample(self):
        c = self.lab.client
        vmis = c.list_all(VMI_PATH)[0]
        vmims = c.list_all(VMIM_PATH)[0]
        pods = c.list_all("/api/v1/pods", labelSelector="kubevirt.io=virt-launcher")[0]
        for p in pods:
            if (p.get("spec") or {}).get("nodeName"):
                self.pod_node["%s/%s" % (p["metadata"]["namespace"], p["metadata"]["name"])] = p["spec"]["nodeName"]
        by_key = {"%s/%s" % (v["metadata"]["namespace"], v["metadata"]["name"]): v for v in vmis}
        flights = {}
        for m in vmims:
            st = m.get("status") or {}
            ms = st.get("migrationState") or {}
            key = "%s/%s" % (m["metadata"]["namespace"], m["spec"].get("vmiName"))
            self.migrations[m["metadata"]["name"]] = {"vmi": key, "phase": st.get("phase") or "Pending",
                                                     "source": ms.get("sourceNode"), "target": ms.get("targetNode")}
            if st.get("phase") in ("Succeeded", "Failed"):
                continue
            v = by_key.get(key)
            flights[key] = ms.get("sourceNode") or ((v or {}).get("status") or {}).get("nodeName") or "?"
        for key, v in by_key.items():
            ev = (v.get("status") or {}).get("evacuationNodeName")
            if ev and key not in flights:
                flights[key] = ev
        per_node = {}
        for node in flights.values():
            per_node[node] = per_node.get(node, 0) + 1
        top = max(per_node.values(), default=0)
        if top > self.max_node or len(flights) > self.max_total:
            self.max_at = time.time()
        self.max_node = max(self.max_node, top)
        self.max_total = max(self.max_total, len(flights))
        if top > PER_NODE or len(flights) > PER_CLUSTER:
            self.over.append({"t": time.time(), "perNode": per_node, "vmis": sorted(flights)})
        for key, uid in self.baseline.items():
            if key in self.stopped:
                continue
            v = by_key.get(key)
            if v is None:
                self.stopped[key] = "its VMI is gone"
            elif v["metadata"]["uid"] != uid:
                self.stopped[key] = "its VMI was replaced (a new UID): the VM restarted"
            elif (v.get("status") or {}).get("phase") != "Running":
                self.stopped[key] = "its VMI is %s" % (v.get("status") or {}).get("phase")
        self.samples += 1


# ---------------------------------------------------------------------------------------------
# one run

class Descheduler:
    def __init__(self, binary, kubeconfig, work):
        self.log_path = os.path.join(work, "descheduler.log")
        self.f = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [binary, "--kubeconfig", kubeconfig, "--policy-config-file", POLICY, "--v=3", "--secure-port=0",
             "--feature-gates=EvictionsInBackground=true", "--descheduling-interval=%ds" % INTERVAL],
            stdout=self.f, stderr=subprocess.STDOUT, start_new_session=True)

    def text(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def count(self, *needles):
        t = self.text()
        return sum(t.count(n) for n in needles)

    def ends(self):
        return self.count(*CYCLE_END)

    def wait(self, fn, timeout, what):
        end = time.time() + timeout
        while time.time() < end:
            if self.proc.poll() is not None:
                raise RuntimeError("the descheduler exited %s while waiting for %s" % (self.proc.returncode, what))
            if fn():
                return True
            time.sleep(0.02)
        raise RuntimeError("timed out after %d s waiting for %s" % (timeout, what))

    def wait_ends(self, n, timeout):
        return self.wait(lambda: self.ends() >= n, timeout, "%d cycles" % n)

    def stop(self):
        alive = self.proc.poll() is None
        if alive:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = "hung on SIGTERM"
        self.f.close()
        return alive, rc


def git_commit():
    p = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return p.stdout.strip() or "unknown"


def binary_version(binary):
    p = subprocess.run([binary, "version"], capture_output=True, text=True)
    m = re.search(r'(v[0-9][^\s",}]*)', p.stdout + p.stderr)
    return m.group(1) if m else "unknown"


def wait_until(fn, timeout, what, interval=0.2):
    """Polls fn() until true (returned). Unlike Lab.wait_for, a component that is down (the fault,
    or one the supervisor restarts) is not an error here, nor is a request that fails."""
    end = time.time() + timeout
    while True:
        try:
            v = fn()
        except Exception:
            v = None
        if v:
            return v
        if time.time() > end:
            raise RuntimeError("timed out after %d s waiting for %s" % (timeout, what))
        time.sleep(interval)


def in_flight(lab):
    """Migrations not yet ended, and VMIs marked for evacuation."""
    c = lab.client
    n = sum(1 for m in c.list_all(VMIM_PATH)[0] if (m.get("status") or {}).get("phase") not in ("Succeeded", "Failed"))
    return n + sum(1 for v in c.list_all(VMI_PATH)[0] if (v.get("status") or {}).get("evacuationNodeName")
                   and not (v.get("status") or {}).get("migrationState", {}).get("startTimestamp"))


def make_lab(work, fault):
    lab = Lab(nodes=NODES, workdir=os.path.join(work, "lab"), node_capacity=NODE_CAPACITY,
              migration_seconds=10 if fault["name"] == "node-notready" else MIGRATION_SECONDS,
              parallel_migrations_per_cluster=PER_CLUSTER, parallel_outbound_migrations_per_node=PER_NODE,
              log=log).start()
    c = lab.client
    # the VMs start on the hot node: the others are cordoned meanwhile
    for n in lab.nodes:
        c.merge_patch("/api/v1/nodes/" + n, {"spec": {"unschedulable": n != HOT}})
    c.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "vms"}})
    lab.wait_for(lambda: lab._exists("/api/v1/namespaces/vms/serviceaccounts/default"), 60,
                 "the namespace's default ServiceAccount")
    for i in range(VMS):
        c.create("/apis/kubevirt.io/v1/namespaces/vms/virtualmachines",
                 vm_manifest("vm-%02d" % (i + 1), "vms", memory="1Gi", cpu="1"))

    def running():
        vmis = c.list_all(VMI_PATH)[0]
        return sum(1 for v in vmis if (v.get("status") or {}).get("phase") == "Running") >= VMS
    lab.wait_for(running, 240, "%d VMs running" % VMS, interval=1.0)
    for n in lab.nodes:
        c.merge_patch("/api/v1/nodes/" + n, {"spec": {"unschedulable": False}})
    return lab


class Supervisor:
    """A control-plane component that exits while the API is away (kube-controller-manager,
    kube-scheduler and virt-controller exit when they cannot renew their Lease within 10 s) is
    started again a second later, as a kubelet restarts a static pod. A component the fault stops
    is out of its sight (Lab.stop_component takes it out of the list)."""

    def __init__(self, lab):
        self.lab, self.restarted = lab, []
        self.stop_ev = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True, name="supervisor")

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.stop_ev.set()
        self.thread.join(130)

    def _run(self):
        while not self.stop_ev.wait(1.0):
            for name, p in list(self.lab.cluster.procs):
                if p.poll() is None or name not in self.lab.RESTARTABLE:
                    continue
                try:
                    self.lab.cluster.procs.remove((name, p))
                except ValueError:
                    continue
                self.restarted.append("%s (exit %s)" % (name, p.returncode))
                log("%s exited (%s); starting it again" % (name, p.returncode))
                try:
                    self.lab.start_component(name, timeout=60)
                except Exception as e:  # the next round tries again
                    log("%s did not start again: %s" % (name, e))


def inject(lab, fault, d, marks):
    """Injects the fault after the first cycle, holds it, lifts it. marks: times."""
    name = fault["name"]
    c = lab.client
    if name == "kube-apiserver":
        d.wait(lambda: d.count(CYCLE_START) >= 2, 3 * INTERVAL, "the second cycle")
        marks["inject"] = time.time()
        lab.stop_component("kube-apiserver", signal.SIGKILL)
        marks["cycleEndedBeforeKill"] = d.ends() >= 2
        marks["restarts"] = [marks["inject"]]
        time.sleep(INTERVAL)
        lab.start_component("kube-apiserver")
        marks["lift"] = time.time()
    elif name == "etcd":
        # the next cycle has VMs to move: its requests meet the outage
        wait_until(lambda: in_flight(lab) == 0, 60, "the first cycle's migrations to end")
        lab.stop_component("etcd", signal.SIGTERM)
        marks["inject"] = time.time()   # once it is down
        time.sleep(2 * INTERVAL)
        lab.start_component("etcd")
        marks["lift"] = time.time()
    elif name in ("virt-controller", "virt-api"):
        wait_until(lambda: in_flight(lab) == 0, 60, "the first cycle's migrations to end")
        lab.stop_component(name, signal.SIGTERM)
        marks["inject"] = time.time()   # once it is down
        if name == "virt-api":
            marks["webhook"] = eviction_webhook(lab)
        n = d.ends()
        d.wait_ends(n + HOLD, (HOLD + 2) * INTERVAL + 30)
        lab.start_component(name)
        marks["lift"] = time.time()
    elif name == "node-notready":
        wait_until(lambda: in_flight(lab) == 0, 60, "the first cycle's migrations to end")

        def migrating():
            for v in c.list_all(VMI_PATH)[0]:
                st = v.get("status") or {}
                ms = st.get("migrationState") or {}
                if ms.get("sourceNode") == HOT and ms.get("startTimestamp") and not ms.get("completed"):
                    return v["metadata"]["name"]
            return None
        marks["migrating"] = wait_until(migrating, 3 * INTERVAL + 30, "a migration from %s running" % HOT, 0.1)
        marks["inject"] = time.time()
        c.merge_patch("/api/v1/nodes/" + HOT, {"metadata": {"annotations": {FAKE_NODE_ANNOTATION: None}}})
        node = c.get("/api/v1/nodes/" + HOT)
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        conds = [x for x in node["status"].get("conditions") or [] if x.get("type") != "Ready"]
        conds.append({"type": "Ready", "status": "False", "reason": "KubeletNotReady",
                      "message": "lab: KWOK no longer runs this node's kubelet", "lastHeartbeatTime": now,
                      "lastTransitionTime": now})
        c.merge_patch("/api/v1/nodes/%s/status" % HOT, {"status": {"conditions": conds}})
        n = d.ends()
        d.wait_ends(n + HOLD, (HOLD + 2) * INTERVAL + 30)
        marks["migrationDuringFault"] = marks["migrating"]
        c.merge_patch("/api/v1/nodes/" + HOT, {"metadata": {"annotations": {FAKE_NODE_ANNOTATION: "fake"}}})
        wait_until(lambda: lab.node_ready(HOT), 60, "%s Ready again" % HOT)
        marks["lift"] = time.time()


def eviction_webhook(lab):
    """The failure policy of KubeVirt's eviction webhook, as registered."""
    for w in lab.client.list_all("/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations")[0]:
        for h in w.get("webhooks") or []:
            if h.get("name", "").startswith("virt-launcher-eviction-interceptor"):
                return {"name": h["name"], "failurePolicy": h.get("failurePolicy"),
                        "timeoutSeconds": h.get("timeoutSeconds")}
    return None


def run_fault(binary, fault, base):
    work = os.path.join(base, fault["name"])
    os.makedirs(work, exist_ok=True)
    t0 = time.time()
    lab = make_lab(work, fault)
    res = {"name": fault["name"], "problems": {k: [] for k in ("vms", "limits", "view", "crash", "recovery", "log")}}
    marks = {}
    sampler = d = None
    supervisor = Supervisor(lab).start()
    try:
        c = lab.client
        baseline = {"%s/%s" % (v["metadata"]["namespace"], v["metadata"]["name"]): v["metadata"]["uid"]
                    for v in c.list_all(VMI_PATH)[0]}
        res["setupSeconds"] = round(time.time() - t0, 1)
        sampler = Sampler(lab, baseline).start()
        d = Descheduler(binary, lab.kubeconfig_for("descheduler"), work)
        marks["start"] = time.time()
        d.wait_ends(1, 60)
        inject(lab, fault, d, marks)
        n = d.ends()
        try:
            d.wait_ends(n + AFTER, (AFTER + 3) * INTERVAL + 30)
        except RuntimeError as e:
            res["problems"]["recovery"].append(str(e))
        # the moves under way end before the last look
        try:
            wait_until(lambda: in_flight(lab) == 0, 90, "the migrations to end")
        except RuntimeError as e:
            res["migrationsUnfinished"] = str(e)
        alive, rc = d.stop()
        marks["end"] = time.time()
        sampler.sample()
        sampler.stop()
        res["components"] = {n: (x.get("version") if x.get("kind") == "real" else "stand-in")
                             for n, x in lab.status()["components"].items()}
        check(res, fault, lab, d, sampler, marks, alive, rc, baseline)
        res["componentsRestarted"] = supervisor.restarted
        res["marks"] = {k: (round(v - marks["start"], 2) if isinstance(v, float) else v) for k, v in marks.items()}
        res["seconds"] = round(time.time() - t0, 1)
        shutil.copy(d.log_path, os.path.join(OUT, "faults-%s.log" % fault["name"]))
        return res
    finally:
        supervisor.stop()
        if sampler:
            sampler.stop()
        if d and d.proc.poll() is None:
            d.stop()
        lab.stop()


# ---------------------------------------------------------------------------------------------
# the checks

def sync_problems(events, cycle_starts, restarts):
    """The view invariant: the evictions sent by a cycle that began while a kind was not synced."""
    kinds = sorted({e["kind"] for e in events if e["verb"] == "list"})
    timeline = []   # (time, order, what, kind)
    for e in events:
        if e["verb"] == "list" and e["stage"] == "ResponseComplete":
            timeline.append((e["end"], 1, "list-ok" if e["code"] == 200 else "list-failed", e["kind"]))
        elif e["verb"] == "watch":
            if e["stage"] == "ResponseStarted" and e["code"] == 200:
                timeline.append((e["end"], 1, "watch-ok", e["kind"]))
            elif e["stage"] == "ResponseComplete" and e["code"] not in (200, None):
                timeline.append((e["end"], 1, "watch-refused", e["kind"]))
    for t in restarts:
        timeline.append((t, 0, "restart", None))
    for t in cycle_starts:
        timeline.append((t, 2, "cycle", None))
    timeline.sort(key=lambda x: (x[0], x[1]))
    state = {k: "needs-list" for k in kinds}
    unsynced_at = []   # (cycle start, kinds not synced)
    for t, _, what, kind in timeline:
        if what == "list-ok":
            state[kind] = "synced"
        elif what == "list-failed":
            state[kind] = "needs-list"
        elif what == "watch-ok" and state.get(kind) == "needs-watch":
            state[kind] = "synced"
        elif what == "watch-refused" and state.get(kind) == "synced":
            state[kind] = "needs-watch"
        elif what == "restart":
            for k in state:
                if state[k] == "synced":
                    state[k] = "needs-watch"
        elif what == "cycle":
            unsynced_at.append((t, sorted(k for k, s in state.items() if s != "synced")))
    problems = []
    for e in events:
        if not is_eviction(e):
            continue
        began = [u for u in unsynced_at if u[0] <= e["t"]]
        if not began:
            problems.append("eviction of %s/%s before any cycle began" % (e["ns"], e["name"]))
        elif began[-1][1]:
            problems.append("eviction of %s/%s sent by a cycle that began while %s were not synced"
                            % (e["ns"], e["name"], ", ".join(began[-1][1])))
    return problems, kinds


def phase_of(t, marks):
    if t < marks["inject"]:
        return "before"
    if t < marks["lift"]:
        return "during"
    return "after"


def check(res, fault, lab, d, sampler, marks, alive, rc, baseline):
    p = res["problems"]
    text = d.text()
    lines = text.splitlines()
    # crash
    if not alive:
        p["crash"].append("the descheduler ended by itself (exit %s)" % rc)
    elif rc != 0:
        p["crash"].append("exit %s on SIGTERM" % rc)
    if re.search(r"AddressSanitizer|UndefinedBehaviorSanitizer|runtime error:|Segmentation fault", text):
        p["crash"].append("a sanitizer report or a crash in the log")
    # recovery: a cycle completed after the fault was lifted
    ends_after = [ln for ln in lines if any(x in ln for x in CYCLE_END) and (klog_time(ln) or 0) > marks["lift"]]
    completed_after = [ln for ln in ends_after if '"Number of evictions/requests"' in ln]
    if not completed_after:
        p["recovery"].append("no cycle completed after the fault was lifted")
    # vms
    for key, why in sorted(sampler.stopped.items()):
        p["vms"].append("%s: %s" % (key, why))
    # cycles and requests
    starts = [klog_time(ln) for ln in lines if CYCLE_START in ln]
    starts = [t for t in starts if t]
    events = audit_events(lab.cluster.audit_log, DESCHEDULER_USER)
    evictions = [e for e in events if is_eviction(e)]
    per_cycle = {}
    for e in evictions:
        k = sum(1 for t in starts if t <= e["t"])
        node = sampler.pod_node.get("%s/%s" % (e["ns"], e["name"]), "?")
        cyc = per_cycle.setdefault(k, {"sent": 0, "accepted": 0, "nodes": {}, "pods": {}, "codes": {}})
        cyc["sent"] += 1
        cyc["codes"][str(e["code"])] = cyc["codes"].get(str(e["code"]), 0) + 1
        cyc["pods"][e["name"]] = cyc["pods"].get(e["name"], 0) + 1
        if accepted(e):
            cyc["accepted"] += 1
            cyc["nodes"][node] = cyc["nodes"].get(node, 0) + 1
    for k, cyc in sorted(per_cycle.items()):
        if cyc["accepted"] > LIMIT_TOTAL:
            p["limits"].append("cycle %d: %d evictions carried out (maxNoOfPodsToEvictTotal %d)"
                               % (k, cyc["accepted"], LIMIT_TOTAL))
        for node, n in cyc["nodes"].items():
            if n > LIMIT_NODE:
                p["limits"].append("cycle %d: %d evictions from %s (maxNoOfPodsToEvictPerNode %d)"
                                   % (k, n, node, LIMIT_NODE))
        for pod, n in cyc["pods"].items():
            if n > 1:
                p["log"].append("cycle %d: %d eviction requests for %s" % (k, n, pod))
    for o in sampler.over[:5]:
        p["limits"].append("migrations in flight over KubeVirt's limits (%d a node, %d in all): %s"
                           % (PER_NODE, PER_CLUSTER, json.dumps(o["perNode"], sort_keys=True)))
    view, kinds = sync_problems(events, starts, marks.get("restarts", []))
    p["view"] += view
    # requests by phase
    requests = {"before": {}, "during": {}, "after": {}}
    for e in events:
        # a watch counts when it starts (or is refused), a request when it completes
        if e["verb"] == "watch" and not (e["stage"] == "ResponseStarted" or e["code"] not in (200, None)):
            continue
        if e["verb"] != "watch" and e["stage"] != "ResponseComplete":
            continue
        key = "%s %s%s" % (e["verb"], e["kind"].split("/", 1)[1], "/" + e["sub"] if e["sub"] else "")
        ph = requests[phase_of(e["t"], marks)]
        ph[key] = ph.get(key, 0) + 1
    # log lines: errors and warnings, by message, by phase
    named = {"before": {}, "during": {}, "after": {}}
    error_lines = {}
    for ln in lines:
        sev, msg = klog_msg(ln)
        t = klog_time(ln)
        if sev in ("E", "W") and t:
            ph = named[phase_of(t, marks)]
            ph[msg] = ph.get(msg, 0) + 1
        if msg == "Error evicting pod" and t:
            m = re.search(r' pod="([^"]*)"', ln)
            k = (sum(1 for s in starts if s <= t), m.group(1) if m else "?")
            error_lines[k] = error_lines.get(k, 0) + 1
    for (k, pod), n in sorted(error_lines.items()):
        if n > 1:
            p["log"].append("cycle %d: %d \"Error evicting pod\" lines for %s" % (k, n, pod))
    for rx, what in fault["expect"]:
        if not any(re.search(rx, ln) for ln in lines if (klog_time(ln) or 0) >= marks["inject"]):
            p["log"].append("not named: %s (%s)" % (what, rx))
    # the audit log cannot show requests that never reached a server
    res.update({
        "cycles": len(starts),
        "cyclesBefore": sum(1 for t in starts if t < marks["inject"]),
        "cyclesDuring": sum(1 for t in starts if marks["inject"] <= t < marks["lift"]),
        "cyclesAfter": sum(1 for t in starts if t >= marks["lift"]),
        "cyclesCompletedAfter": len(completed_after),
        "kindsRead": kinds,
        "requests": requests,
        "evictionsByCycle": {str(k): v for k, v in sorted(per_cycle.items())},
        "evictionsSent": len(evictions),
        "evictionsCarriedOut": sum(1 for e in evictions if accepted(e)),
        "evictionsFromHotDuring": sum(1 for e in evictions if phase_of(e["t"], marks) == "during" and accepted(e)
                                      and sampler.pod_node.get("%s/%s" % (e["ns"], e["name"])) == HOT),
        "kindsWatchedAgain": sorted({e["kind"] for e in events if e["end"] >= marks["inject"] and e["code"] == 200
                                     and ((e["verb"] == "watch" and e["stage"] == "ResponseStarted")
                                          or (e["verb"] == "list" and e["stage"] == "ResponseComplete"))}
                                    & set(kinds)),
        "evictionsDuring": sum(1 for e in evictions if phase_of(e["t"], marks) == "during"),
        "evictionsCarriedOutDuring": sum(1 for e in evictions if phase_of(e["t"], marks) == "during" and accepted(e)),
        "maxEvictionsCarriedOutPerCycle": max((c["accepted"] for c in per_cycle.values()), default=0),
        "maxErrorLinesPerLauncherPerCycle": max(error_lines.values(), default=0),
        "migrations": len(sampler.migrations),
        "migrationsByPhase": count_by(m["phase"] for m in sampler.migrations.values()),
        "maxInFlightPerNode": sampler.max_node,
        "maxInFlight": sampler.max_total,
        "vmsStopped": len(sampler.stopped),
        "samples": sampler.samples,
        "samplesFailed": sampler.failed,
        "logLines": named,
        "webhook": marks.get("webhook"),
    })


def count_by(it):
    out = {}
    for x in it:
        out[x] = out.get(x, 0) + 1
    return dict(sorted(out.items()))


# ---------------------------------------------------------------------------------------------
# the section of docs/fault-matrix.md

INVARIANTS = ("vms", "limits", "view", "crash", "recovery", "log")


def did(fault, r):
    """What the descheduler did, in stable words."""
    name = fault["name"]
    named = "<br>".join("`%s`" % rx.replace("|", "\\|") for rx, _ in fault["expect"]) or "none required"
    during = r["evictionsCarriedOutDuring"]
    if name == "virt-api":
        webhook = r.get("webhook") or {}
        return ("evictions refused (the webhook's failurePolicy is `%s`); at most one error line a launcher a "
                "cycle: %s; named: %s" % (webhook.get("failurePolicy"), "held" if r["maxErrorLinesPerLauncherPerCycle"]
                                          <= 1 else "**not held**", named))
    if name == "etcd":
        return ("%s; an eviction fails; named: %s"
                % ("its watches stay open (kube-apiserver serves them from its watch cache)"
                   if not r["kindsWatchedAgain"] else "it watched or listed again", named))
    if name == "virt-controller":
        return ("evacuations pile up unstarted; no more requested beyond KubeVirt's limits (pending evacuations "
                "counted); named: %s" % named)
    return "named: %s%s" % (named, "; no eviction carried out while it lasted" if not during else "")


def requests_cell(fault, r):
    """The requests the descheduler sent, in stable words (the counts are in the JSON)."""
    name = fault["name"]
    carried = r["evictionsCarriedOutDuring"]
    if name == "kube-apiserver":
        again = len(r["kindsWatchedAgain"]) == len(r["kindsRead"])
        return ("%s once kube-apiserver was back" % ("every kind it reads (%d) watched or listed again"
                                                      % len(r["kindsRead"]) if again
                                                      else "**not every kind watched or listed again**"))
    carried_words = "none carried out" if not carried else "**%d carried out**" % carried
    if name == "virt-api":
        return ("one eviction request a launcher a cycle while virt-api was away (every launcher the plugin "
                "picked, each refused once), %s; no retry within a cycle: %s"
                % (carried_words, "held" if not r["problems"]["log"] else "**not held**"))
    if name == "etcd":
        # whether a request sent near the end is carried out once etcd is back depends on timing:
        # the counts are in the JSON
        return ("eviction requests while etcd was away wait for the eviction webhook (kube-apiserver calls it "
                "first; virt-api cannot read the pod and VMI): one fails on the webhook's 10 s timeout, one "
                "sent near the end may be carried out once etcd is back")
    if name == "virt-controller":
        return ("evictions carried out while it lasted: ≤ %d (KubeVirt's per-node limit; the VMIs stay marked "
                "for evacuation, no migration is created)" % PER_NODE)
    if name == "node-notready":
        return ("no eviction from the NotReady node while it lasted" if not r["evictionsFromHotDuring"]
                else "**evictions from the NotReady node**")
    return "evictions carried out while it lasted: %s" % ("none" if not carried else "some (see the JSON)")


def render(results, meta):
    out = [SECTION, "",
           "Produced by `tests/lab/faults.py` (`make lab-faults`, not part of `make test`: about five minutes). "
           "Each row is one run of the descheduler in Deployment mode (`--descheduling-interval %ds`, the watch "
           "cache, `EvictionsInBackground`, the policy `tests/lab/policies/faults.yaml`: %d evictions a cycle, "
           "%d a node) on a fresh cluster lab (`docs/lab.md`): %d KWOK nodes of %s CPUs, %d VMs of one CPU started "
           "on %s, KubeVirt's `parallelOutboundMigrationsPerNode` %d and `parallelMigrationsPerCluster` %d. The "
           "fault comes after the first cycle, lasts %d cycles or more, and the run goes on for %d cycles after "
           "it is lifted. The components are the real ones, but for virt-handler (the lab's stand-in, "
           "`tests/lab/handler.py`). This section is compared with each run, as the table above is; what varies "
           "from run to run (timings, request counts) is in `tests/lab/out/faults.json`, the descheduler's log "
           "of each run in `tests/lab/out/faults-NAME.log`."
           % (INTERVAL, LIMIT_TOTAL, LIMIT_NODE, NODES, NODE_CAPACITY["cpu"], VMS, HOT, PER_NODE, PER_CLUSTER,
              HOLD, AFTER), "",
           "| fault | injected | what the descheduler did | requests it sent | evictions / migrations | invariants |",
           "|---|---|---|---|---|---|"]
    for f in FAULTS:
        r = results.get(f["name"])
        if r is None:
            out.append("| %s | %s | not run | | | |" % (f["title"], f["injected"]))
            continue
        if r.get("error"):
            out.append("| %s | %s | **the run failed** | | | |" % (f["title"], f["injected"]))
            continue
        bad = [k for k in INVARIANTS if r["problems"][k]]
        reqs = requests_cell(f, r)
        phases = r["migrationsByPhase"]
        evm = ("evictions carried out %s; migrations in flight or pending %s; migrations: %s"
               % ("≤ %d a cycle, ≤ %d a node" % (LIMIT_TOTAL, LIMIT_NODE) if not r["problems"]["limits"]
                  else "**over a limit**",
                  "≤ %d a node, ≤ %d in all" % (PER_NODE, PER_CLUSTER) if not r["problems"]["limits"]
                  else "**over KubeVirt's limits**",
                  "all Succeeded" if set(phases) == {"Succeeded"} else "not all Succeeded"))
        inv = "held (%d/%d)" % (len(INVARIANTS), len(INVARIANTS)) if not bad else "**NOT held: %s**" % ", ".join(bad)
        out.append("| %s | %s | %s | %s | %s | %s |" % (f["title"], f["injected"], did(f, r), reqs, evm, inv))
    out += ["", "Components: %s; descheduler %s at commit `%s`." % (meta["components"], meta["version"],
                                                                     meta["commit"]), ""]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "descheduler"))
    ap.add_argument("--write", action="store_true", help="rewrite the section of docs/fault-matrix.md")
    ap.add_argument("--only", help="run only the faults whose name contains this (no comparison)")
    ap.add_argument("--keep", action="store_true", help="keep the labs' directories (printed)")
    ap.add_argument("--from-json", metavar="FILE",
                    help="run nothing: render the section from a record (tests/lab/out/faults.json)")
    a = ap.parse_args()
    if a.from_json:
        with open(a.from_json) as f:
            rec = json.load(f)
        return finish(a, rec["results"], rec["meta"])
    binary = os.path.abspath(a.binary)
    if not os.access(binary, os.X_OK):
        print("lab-faults: no binary at %s (make build)" % binary, file=sys.stderr)
        return 2
    os.makedirs(OUT, exist_ok=True)
    base = tempfile.mkdtemp(prefix="lab-faults.")
    results, t0 = {}, time.time()
    components = None
    try:
        for f in FAULTS:
            if a.only and a.only not in f["name"]:
                continue
            log("%s: %s" % (f["name"], f["title"]))
            try:
                r = run_fault(binary, f, base)
            except LabUnavailable:
                raise
            except Exception as e:   # the run itself failed: the row says so
                r = {"name": f["name"], "error": "%s: %s" % (type(e).__name__, e)}
                log("%s: the run failed: %s" % (f["name"], r["error"]))
            results[f["name"]] = r
            components = components or r.get("components")
            bad = {k: v for k, v in (r.get("problems") or {}).items() if v}
            log("%s: %s in %s s" % (f["name"], "error" if r.get("error") else "held" if not bad else
                                    "NOT held: %s" % json.dumps(bad), r.get("seconds")))
    except LabUnavailable as e:
        print("lab-faults: the lab cannot run here: %s" % e, file=sys.stderr)
        return 3
    finally:
        if not a.keep:
            shutil.rmtree(base, ignore_errors=True)
        else:
            log("kept %s" % base)
    comps = components or {}
    meta = {"commit": git_commit(), "version": binary_version(binary),
            "components": ", ".join("%s %s" % (n, v) for n, v in comps.items())}
    with open(os.path.join(OUT, "faults.json"), "w") as f:
        json.dump({"meta": meta, "seconds": round(time.time() - t0, 1), "results": results}, f, indent=1,
                  sort_keys=True)
    log("%d runs in %.0f s; tests/lab/out/faults.json" % (len(results), time.time() - t0))
    return finish(a, results, meta)


def finish(a, results, meta):
    """Compares the section rendered from the results with the committed one, or writes it."""
    failed = any(r.get("error") or any((r.get("problems") or {}).values()) for r in results.values())
    if a.only:
        return 1 if failed else 0
    section = render(results, meta)
    with open(DOC) as f:
        doc = f.read()
    head, _, rest = doc.partition(SECTION)
    # the section ends at the next level-2 heading (the soak's figures follow it)
    end = re.search(r"^## ", rest, re.M)
    tail = rest[end.start():] if end else ""
    committed = SECTION + rest[:end.start() if end else len(rest)] if rest else ""
    if a.write:
        with open(DOC, "w") as f:
            f.write(head.rstrip("\n") + "\n\n" + section + ("\n" + tail if tail else ""))
        log("wrote the section of %s" % DOC)
        return 1 if failed else 0

    def unpinned(s):   # the commit a section was written at is not compared
        return re.sub(r"at commit `[^`]*`", "at commit `…`", s)
    if unpinned(committed).rstrip("\n") != unpinned(section).rstrip("\n"):
        sys.stdout.writelines(difflib.unified_diff(committed.splitlines(True), section.splitlines(True),
                                                   "docs/fault-matrix.md (committed)", "this run"))
        print("lab-faults: the section of docs/fault-matrix.md differs from this run (refresh it with --write "
              "once every run holds)")
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
