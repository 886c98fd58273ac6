#!/usr/bin/env python3
"""Runs one scenario of the cluster lab with a descheduler and records what its moves achieve.

    python3 tests/lab/run.py SCENARIO [--binary PATH [--targeted] | --upstream] [--cycles N]
        [--small] [--out DIR] [--keep]

SCENARIO is a name under tests/lab/scenarios/ (runbook, openshift, skewed, pingpong, pinned) or
a file. The lab (cluster.py: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, KWOK,
KubeVirt's virt-api and virt-controller, the virt-handler stand-in; with `prometheus: true` also
exporter.py and a real Prometheus with the shipped recording rules) is started, the scenario's
nodes and workloads are created, and the descheduler runs:

- `cadence: cronjob`: one one-shot run per cycle (as the runbook's CronJob); before the next,
  the lab waits until no migration is in flight (at most `settle`), and where the policy reads
  Prometheus until the rules' one-minute averages have seen the moves;
- `cadence: deployment`: one process with `--descheduling-interval` = `interval`, sampled once
  per interval.

It stops after `cycles` cycles (or --cycles) or once two cycles in a row sent no eviction and
created no migration. Each cycle records: node utilization (requests, and the load the nodes
really carry when the scenario has one), the imbalance of the scenario's metric over the cycle
nodes (max - min and standard deviation; over- and underutilized counts by the policy's
LowNodeUtilization thresholds), migrations started / succeeded / failed / pending (from the
VirtualMachineInstanceMigrations), VMs stopped (a VM whose VMI left Running or was replaced:
must stay 0), ping-pongs (a VM moved back to a node it left within `pingPongWindow` cycles; 0:
the whole run), and the API requests the descheduler sent (the API server's audit log, by the
descheduler's own identity). The record is written to OUT/NAME-WHO.json and a self-contained
page OUT/NAME-WHO.html (report.py), the descheduler's log to OUT/NAME-WHO.log, WHO being `ours`, `ours-targeted` (with --targeted: ours with
the scenario's `targetedPolicy`, this descheduler's targeted moves on) or `upstream`. Exit status: 0 when the run completed (whether or not it
converged: the record says), 1 when the lab or the descheduler failed, 2 for a bad scenario or
flag, 3 when the lab cannot run on this machine (a component cannot be built here; it says which).
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import scenario as scen  # noqa: E402
from cluster import Lab, LabUnavailable, vm_manifest  # noqa: E402
from exporter import Exporter, LoadModel, Placement, imbalance, parse_quantity  # noqa: E402
import prom  # noqa: E402
import report  # noqa: E402
from simtest import free_port  # noqa: E402  (tests/apisim, on the path through cluster.py)

DESCHEDULER_USER = "system:serviceaccount:kube-system:descheduler"
OUT = os.path.join(HERE, "out")
VMIM_PATH = "/apis/kubevirt.io/v1/virtualmachineinstancemigrations"
VMI_PATH = "/apis/kubevirt.io/v1/virtualmachineinstances"
VM_PATH = "/apis/kubevirt.io/v1/virtualmachines"
FINAL = ("Succeeded", "Failed")


def log(msg):
    print("lab: " + msg, file=sys.stderr, flush=True)


# VMSafety's durations and its defaults (plugins/vmsafety.c)
VMSAFETY_DURATIONS = {"cooldown": 1800, "maxCooldown": 8 * 3600, "cooldownWindow": 24 * 3600, "overutilizedFor": 0}


def fmt_seconds(s):
    return ("%.1fs" % s).replace(".0s", "s")


def compress_vmsafety(pol, scale):
    """A CronJob scenario's runs come labInterval apart, not interval: the time VMSafety's rules
    measure is compressed alike (every profile's cooldowns and overutilizedFor, defaults
    included), so they span the same number of runs as in a cluster. Returns what was done."""
    changed = []
    for prof in pol.get("profiles") or []:
        cfgs = prof.setdefault("pluginConfig", [])
        vs = next((c for c in cfgs if c.get("name") == "VMSafety"), None)
        if vs is None:
            vs = {"name": "VMSafety", "args": {}}
            cfgs.append(vs)
        args = vs.setdefault("args", {}) or {}
        vs["args"] = args
        for field, default in VMSAFETY_DURATIONS.items():
            given = args.get(field)
            secs = scen.seconds(given) if isinstance(given, str) and scen.DURATION.match(given) else default
            if secs:
                args[field] = fmt_seconds(secs * scale)
                changed.append("%s %s" % (field, args[field]))
    return "VMSafety's durations scaled by %.3f to the lab's cadence: %s" % (scale, ", ".join(sorted(set(changed))))


def log_cycle(smp):
    r = smp["requests"]
    log("cycle %d: imbalance %.3f, over %s, under %s; migrations created %d; the descheduler sent %d "
        "requests (%d evictions, %d migrations)" % (
            smp["cycle"], smp["imbalance"], smp["overutilized"], smp["underutilized"], smp["migrations"]["created"],
            sum(r.values()), r.get("create pods/eviction", 0), r.get("create virtualmachineinstancemigrations", 0)))


def upstream_binary():
    p = subprocess.run([os.path.join(ROOT, "bench", "upstream.sh"), "--print"], capture_output=True, text=True)
    if p.returncode != 0:
        raise LabUnavailable("upstream's descheduler cannot be built here: " + p.stderr.strip().splitlines()[-1]
                             if p.stderr.strip() else "bench/upstream.sh failed")
    return p.stdout.strip().splitlines()[-1]


def binary_version(binary):
    p = subprocess.run([binary, "version"], capture_output=True, text=True)
    out = (p.stdout or p.stderr).strip()
    m = re.search(r'(v[0-9][^\s",}]*)', out)
    return m.group(1) if m else out.splitlines()[0] if out else "unknown"


# -- the policy's view of utilization -----------------------------------------------------------

def lnu_args(policy):
    """The LowNodeUtilization args of the first profile that enables it, or None."""
    for prof in policy.get("profiles") or []:
        enabled = ((prof.get("plugins") or {}).get("balance") or {}).get("enabled") or []
        if "LowNodeUtilization" not in enabled:
            continue
        for pc in prof.get("pluginConfig") or []:
            if pc.get("name") == "LowNodeUtilization":
                return pc.get("args") or {}
        return {}
    return None


def selector_matches(selector, labels):
    """A label selector in its string form (the policy's nodeSelector): k=v, k!=v, k, !k."""
    if not selector:
        return True
    for term in selector.split(","):
        term = term.strip()
        if "!=" in term:
            k, v = term.split("!=", 1)
            if labels.get(k.strip()) == v.strip():
                return False
        elif "=" in term:
            k, v = term.split("=", 1)
            if labels.get(k.strip().rstrip("=")) != v.strip().lstrip("="):
                return False
        elif term.startswith("!"):
            if term[1:] in labels:
                return False
        elif term not in labels:
            return False
    return True


class Recorder:
    """What the cluster looks like at each cycle, and what happened in between."""

    def __init__(self, lab, s, policy, exporter, audit_user):
        self.lab, self.s, self.policy, self.exporter = lab, s, policy, exporter
        self.audit_user = audit_user
        self.audit_offset = 0
        self.vm_uids = {}       # VM key -> VMI UID when the cycles began
        self.stopped = {}       # VM key -> why (first seen)
        self.moves = {}         # VM key -> [(cycle, from, to, migration)]
        self.seen_migrations = set()
        self.migration_count_start = 0
        args = lnu_args(policy) or {}
        self.lnu = args
        self.deviation = bool(args.get("useDeviationThresholds"))
        self.prometheus_metric = bool((args.get("metricsUtilization") or {}).get("prometheus")
                                      or (args.get("metricsUtilization") or {}).get("source") == "Prometheus")

    # -- snapshot of the cluster
    def read(self):
        c = self.lab.client
        nodes = c.list_all("/api/v1/nodes")[0]
        pods = c.list_all("/api/v1/pods")[0]
        vmis = c.list_all(VMI_PATH)[0]
        vmims = c.list_all(VMIM_PATH)[0]
        return nodes, pods, vmis, vmims

    def cycle_nodes(self, nodes):
        sel = self.policy.get("nodeSelector") or ""
        out = []
        for n in nodes:
            labels = n["metadata"].get("labels") or {}
            ready = any(x.get("type") == "Ready" and x.get("status") == "True"
                        for x in (n.get("status") or {}).get("conditions") or [])
            if ready and selector_matches(sel, labels):
                out.append(n)
        return out

    def baseline(self):
        nodes, pods, vmis, vmims = self.read()
        for v in vmis:
            self.vm_uids[self._vm_key(v)] = v["metadata"]["uid"]
        self.seen_migrations = {m["metadata"]["uid"] for m in vmims}
        self.audit_offset = self._audit_size()

    @staticmethod
    def _vm_key(v):
        return "%s/%s" % (v["metadata"]["namespace"], v["metadata"]["name"])

    def _audit_size(self):
        path = self.lab.cluster.audit_log
        return os.path.getsize(path) if os.path.exists(path) else 0

    def requests_since(self):
        """{"VERB RESOURCE": count} the descheduler sent since the last call (audit log)."""
        path = self.lab.cluster.audit_log
        counts = {}
        if not os.path.exists(path):
            return counts
        with open(path, "rb") as f:
            f.seek(self.audit_offset)
            data = f.read()
        end = data.rfind(b"\n") + 1
        self.audit_offset += end
        for line in data[:end].splitlines():
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            if (ev.get("user") or {}).get("username") != self.audit_user:
                continue
            ref = ev.get("objectRef") or {}
            res = ref.get("resource", ev.get("requestURI", "?").split("?")[0])
            if ref.get("subresource"):
                res += "/" + ref["subresource"]
            k = "%s %s" % (ev.get("verb"), res)
            counts[k] = counts.get(k, 0) + 1
        return counts

    def sample(self, cycle, requests):
        nodes, pods, vmis, vmims = self.read()
        cyc = self.cycle_nodes(nodes)
        names = [n["metadata"]["name"] for n in cyc]
        alloc = {n["metadata"]["name"]: {r: parse_quantity((n["status"].get("allocatable") or {}).get(r, "0"))
                                         for r in ("cpu", "memory", "pods")} for n in nodes}
        req = {n: {"cpu": 0.0, "memory": 0.0, "pods": 0.0} for n in alloc}
        for p in pods:
            node = (p.get("spec") or {}).get("nodeName")
            phase = (p.get("status") or {}).get("phase")
            if not node or node not in req or phase in ("Succeeded", "Failed"):
                continue
            req[node]["pods"] += 1
            for ctr in (p["spec"].get("containers") or []):
                r = (ctr.get("resources") or {}).get("requests") or {}
                req[node]["cpu"] += parse_quantity(r.get("cpu", "0"))
                req[node]["memory"] += parse_quantity(r.get("memory", "0"))
        requests_pct = {n: {r: (100.0 * req[n][r] / alloc[n][r] if alloc[n][r] else 0.0) for r in req[n]} for n in req}
        actual = self.exporter.ground_truth() if self.exporter else None
        resource = self.s["resource"]
        if self.s["metric"] == "actual" and actual:
            metric = {n: 100.0 * actual[n][resource] for n in names if n in actual}
        else:
            metric = {n: requests_pct[n][resource] for n in names}
        spread, std = imbalance([v / 100.0 for v in metric.values()])
        over, under = self._classify(names, requests_pct, metric)

        # migrations
        phases = {}
        for m in vmims:
            ph = (m.get("status") or {}).get("phase") or "Pending"
            phases[ph] = phases.get(ph, 0) + 1
        new = [m for m in vmims if m["metadata"]["uid"] not in self.seen_migrations]
        succeeded_now = 0
        for m in vmims:
            st = m.get("status") or {}
            uid = m["metadata"]["uid"]
            if st.get("phase") == "Succeeded" and ("done", uid) not in self.seen_migrations:
                self.seen_migrations.add(("done", uid))
                ms = st.get("migrationState") or {}
                key = "%s/%s" % (m["metadata"]["namespace"], m["spec"].get("vmiName"))
                self.moves.setdefault(key, []).append(
                    (cycle, ms.get("sourceNode"), ms.get("targetNode"), m["metadata"]["name"]))
                succeeded_now += 1
        for m in new:
            self.seen_migrations.add(m["metadata"]["uid"])

        # VMs that stopped (or were replaced: a new VMI of a VirtualMachine has a new UID)
        running = {self._vm_key(v): v for v in vmis}
        for key, uid in self.vm_uids.items():
            if key in self.stopped:
                continue
            v = running.get(key)
            if v is None:
                self.stopped[key] = "its VMI is gone (cycle %d)" % cycle
            elif v["metadata"]["uid"] != uid:
                self.stopped[key] = "its VMI was replaced by a new one (cycle %d): the VM restarted" % cycle
            elif (v.get("status") or {}).get("phase") != "Running":
                self.stopped[key] = "its VMI is %s (cycle %d)" % ((v.get("status") or {}).get("phase"), cycle)
        vm_nodes = {self._vm_key(v): (v.get("status") or {}).get("nodeName") for v in vmis}
        return {
            "cycle": cycle, "time": time.time(),
            "cycleNodes": len(names),
            "imbalance": round(spread, 4), "stddev": round(std, 4),
            "overutilized": over, "underutilized": under,
            "metric": {n: round(v, 2) for n, v in sorted(metric.items())},
            "requestsPct": {n: {r: round(v, 2) for r, v in requests_pct[n].items()} for n in sorted(names)},
            "actualPct": ({n: {"cpu": round(100 * actual[n]["cpu"], 2), "memory": round(100 * actual[n]["memory"], 2)}
                           for n in sorted(names) if n in actual} if actual else None),
            "migrations": {"created": len(new), "succeededSinceLast": succeeded_now, "byPhase": phases},
            "vmsStopped": len(self.stopped),
            "requests": requests,
            "vmNodes": vm_nodes,
        }

    def _classify(self, names, requests_pct, metric):
        """Over- and underutilized node counts by the policy's LowNodeUtilization thresholds."""
        th, tt = self.lnu.get("thresholds") or {}, self.lnu.get("targetThresholds") or {}
        if not th and not tt:
            return None, None
        if "MetricResource" in th or "MetricResource" in tt:
            vals = {n: {"MetricResource": metric.get(n, 0.0)} for n in names}
        else:
            vals = {n: requests_pct[n] for n in names}
        if self.deviation and names:
            mean = {r: sum(vals[n].get(r, 0.0) for n in names) / len(names) for r in set(th) | set(tt)}
            low = {r: mean[r] - float(th.get(r, 0)) for r in th}
            high = {r: mean[r] + float(tt.get(r, 0)) for r in tt}
        else:
            low = {r: float(v) for r, v in th.items()}
            high = {r: float(v) for r, v in tt.items()}
        over = sum(1 for n in names if any(vals[n].get(r, 0.0) > high[r] for r in high))
        under = sum(1 for n in names if low and all(vals[n].get(r, 0.0) < low[r] for r in low))
        return over, under

    def ping_pongs(self):
        """Moves that brought a VM back to a node it had left within the window (in cycles)."""
        window = self.s["pingPongWindow"] or 10 ** 9
        count, examples = 0, []
        for key, moves in self.moves.items():
            left = []  # (cycle, node)
            for cycle, src, dst, name in moves:
                if any(node == dst and cycle - c <= window for c, node in left):
                    count += 1
                    if len(examples) < 10:
                        examples.append("%s back to %s (%s, cycle %d)" % (key, dst, name, cycle))
                left.append((cycle, src))
        return count, examples


def drop_plugin(pol, name):
    """Removes a plugin from every profile of a policy (its config and every extension point);
    whether it was there."""
    found = False
    for prof in pol.get("profiles") or []:
        cfg = prof.get("pluginConfig") or []
        kept = [c for c in cfg if c.get("name") != name]
        found |= len(kept) != len(cfg)
        prof["pluginConfig"] = kept
        for point in (prof.get("plugins") or {}).values():
            for key in ("enabled", "disabled"):
                if name in (point.get(key) or []):
                    point[key] = [p for p in point[key] if p != name]
                    found = True
    return found


class Runner:
    def __init__(self, s, binary, who, out, cycles=None, keep=False, targeted=False):
        self.s, self.binary, self.who, self.out = s, binary, who, out
        self.targeted = targeted
        self.cycles = cycles or s["cycles"]
        self.keep = keep
        self.lab = None
        self.exporter = None
        self.placement = None
        self.prometheus = None
        self.proc = None
        self.work = None

    # -- the cluster
    def build_cluster(self):
        s = self.s
        kv = s["kubevirt"]
        self.lab = Lab(nodes=0, migration_seconds=kv["migrationSeconds"],
                       parallel_migrations_per_cluster=kv["parallelMigrationsPerCluster"],
                       parallel_outbound_migrations_per_node=kv["parallelOutboundMigrationsPerNode"],
                       workdir=os.path.join(self.work, "lab"), log=log)
        self.lab.start()
        c = self.lab.client
        self.pools = {}
        for pool in s["nodes"]:
            names = ["%s-%02d" % (pool["pool"], i + 1) for i in range(pool["count"])]
            cap = {"cpu": pool["cpu"], "memory": pool["memory"], "pods": str(pool["pods"])}
            labels = dict(pool["labels"], **{"lab.descheduler.io/pool": pool["pool"]})
            self.lab.add_nodes(names, capacity=cap, labels=labels, wait=True, timeout=300)
            if pool["taints"]:
                for n in names:
                    c.merge_patch("/api/v1/nodes/" + n, {"spec": {"taints": pool["taints"]}})
            self.pools[pool["pool"]] = names
        self.node_info = {}
        for pool in s["nodes"]:
            for n in self.pools[pool["pool"]]:
                self.node_info[n] = {"cpu": parse_quantity(pool["cpu"]), "memory": parse_quantity(pool["memory"]),
                                     "worker": "node-role.kubernetes.io/worker" in pool["labels"]
                                     or not pool["labels"]}
        for ns in sorted({g["namespace"] for g in s["vms"] + s["pods"]}):
            try:
                c.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
            except Exception as e:  # already there
                if "AlreadyExists" not in str(e) and "409" not in str(e):
                    raise
        self.lab.wait_for(lambda: all(self._exists("/api/v1/namespaces/%s/serviceaccounts/default" % g["namespace"])
                                      for g in s["vms"] + s["pods"]), 60, "the namespaces' default ServiceAccounts")

    def _exists(self, path):
        try:
            self.lab.client.get(path)
            return True
        except Exception:
            return False

    def _cordon_all_but(self, pool):
        keep = set(self.pools.get(pool, [])) if pool else set(self.node_info)
        for n in self.node_info:
            self.lab.client.merge_patch("/api/v1/nodes/" + n, {"spec": {"unschedulable": n not in keep}})

    def create_workloads(self):
        """VMs (VirtualMachines, runStrategy Always) and ordinary pods (Deployments), group by
        group in file order; a group with `createOn: POOL` is created while only that pool is
        schedulable, which is how the scenarios start skewed (new, empty nodes join a busy
        cluster). Every node is schedulable again before the first cycle."""
        s = self.s
        self.loads = LoadModel(s["seed"])
        c = self.lab.client
        total_vms = 0
        for g in s["vms"] + s["pods"]:
            is_vm = g in s["vms"]
            self._cordon_all_but(g.get("createOn"))
            created = []
            for i in range(g["count"]):
                name = "%s-%03d" % (g["name"], i + 1)
                if is_vm:
                    reason = None
                    if not g["migratable"]:
                        reason = "HostDeviceNotLiveMigratable: the lab's VM has a host device"
                    if g["localStorage"]:
                        reason = "DisksNotLiveMigratable: cannot migrate VMI: PVC is not shared, live migration requires that all PVCs must be shared (using ReadWriteMany access mode)"
                    strategy = None if g["evictionStrategy"] == "None" else g["evictionStrategy"]
                    vm = vm_manifest(name, g["namespace"], memory=g["memory"], cpu=g["cpu"],
                                     eviction_strategy=strategy, non_migratable=reason,
                                     labels={"lab.descheduler.io/group": g["name"]},
                                     node_selector=g["nodeSelector"] or None)
                    if g["evictionStrategy"] == "None":
                        vm["spec"]["template"]["spec"]["evictionStrategy"] = "None"
                    if g["tolerations"]:
                        vm["spec"]["template"]["spec"]["tolerations"] = g["tolerations"]
                    c.create("/apis/kubevirt.io/v1/namespaces/%s/virtualmachines" % g["namespace"], vm)
                    self.loads.add("%s/%s" % (g["namespace"], name), g["cpu"], g["memory"], g["load"])
                    total_vms += 1
                else:
                    self.loads.add("%s/%s" % (g["namespace"], name), g["cpu"], g["memory"], g["load"])
                    c.create("/api/v1/namespaces/%s/pods" % g["namespace"], self._pod(g, name))
                created.append(name)
            self._wait_group(g, is_vm)
        self._cordon_all_but(None)
        self.total_vms = total_vms

    def _pod(self, g, name):
        # a bare pod with a ReplicaSet-like owner is what the descheduler evicts; the lab's
        # ordinary pods belong to a ReplicaSet so that DefaultEvictor treats them as upstream does
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": g["namespace"], "labels": {"lab.descheduler.io/group": g["name"]}},
                "spec": {"containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10",
                                         "resources": {"requests": {"cpu": g["cpu"], "memory": g["memory"]}}}],
                         "nodeSelector": g["nodeSelector"] or None,
                         "terminationGracePeriodSeconds": 0}}

    def _wait_group(self, g, is_vm, timeout=None):
        c = self.lab.client
        want = g["count"]
        timeout = timeout or 120 + want * 0.5
        sel = "lab.descheduler.io/group=" + g["name"]

        def ready():
            if is_vm:
                items = c.list_all("/apis/kubevirt.io/v1/namespaces/%s/virtualmachineinstances" % g["namespace"],
                                   labelSelector=sel)[0]
                return sum(1 for v in items if (v.get("status") or {}).get("phase") == "Running") >= want
            items = c.list_all("/api/v1/namespaces/%s/pods" % g["namespace"], labelSelector=sel)[0]
            return sum(1 for p in items if (p.get("status") or {}).get("phase") == "Running") >= want
        self.lab.wait_for(ready, timeout, "%d %s of group %s running" % (want, "VMs" if is_vm else "pods", g["name"]),
                          interval=1.0)

    # -- the descheduler
    def descheduler_kubeconfig(self):
        return self.lab.kubeconfig_for("descheduler")

    def policy_files(self):
        """(the policy file the descheduler runs, extra args, the policy as a dict for the
        recorder). A KubeDescheduler scenario runs ours with --kubedescheduler and upstream with
        the policy ours renders from the same CR (upstream has no such flag)."""
        s = self.s
        prom_url = self.prometheus.url if self.prometheus else None
        if s["kubedescheduler"]:
            cr = os.path.join(ROOT, s["kubedescheduler"])
            ours = os.path.join(ROOT, "build", "descheduler") if self.who == "upstream" else self.binary
            # the facts the rendering reads (namespaces, nodes, the Scheduler) come from the
            # lab's cluster, read as its admin: not the descheduler's requests; the lab has no
            # Route, its Prometheus is given by URL (as to ours below)
            p = subprocess.run([ours, "profile", "render", "--kubedescheduler", cr, "--kubeconfig",
                                self.lab.kubeconfig, "-o", "yaml"] + (["--prometheus-url", prom_url] if prom_url else []),
                               capture_output=True, text=True)
            if p.returncode != 0:
                raise RuntimeError("profile render of %s failed: %s" % (s["kubedescheduler"], p.stderr.strip()))
            docs = [d for d in yaml.safe_load_all(p.stdout) if d]
            pol = next(d for d in docs if d.get("kind") == "DeschedulerPolicy")
            self._set_prometheus(pol, prom_url)
            note = " (rendered by profile render)"
            if self.who == "upstream" and drop_plugin(pol, "KubevirtMigrationAware"):
                note = (" (rendered by profile render, without KubevirtMigrationAware: OpenShift's "
                        "descheduler adds that plugin, upstream v0.36.0 refuses a policy that names it)")
            path = os.path.join(self.work, "policy.yaml")
            with open(path, "w") as f:
                yaml.safe_dump(pol, f)
            if self.who == "ours":
                extra = ["--kubedescheduler", cr] + (["--prometheus-url", prom_url] if prom_url else [])
                return None, extra, pol, s["kubedescheduler"]
            return path, [], pol, s["kubedescheduler"] + note
        src = s["policy"]
        self.time_note = None
        if self.who == "upstream" and s["upstreamPolicy"]:
            src = s["upstreamPolicy"]
        elif self.targeted:
            if not s["targetedPolicy"]:
                raise scen.ScenarioError("%s: targetedPolicy: --targeted needs one" % s["file"])
            src = s["targetedPolicy"]
        with open(os.path.join(ROOT, src)) as f:
            pol = yaml.safe_load(f)
        self._set_prometheus(pol, prom_url)
        if self.who != "upstream" and s["cadence"] == "cronjob":
            self.time_note = compress_vmsafety(pol, scen.seconds(s["labInterval"]) / scen.seconds(s["interval"]))
            src += " (%s)" % self.time_note
        path = os.path.join(self.work, "policy.yaml")
        with open(path, "w") as f:
            yaml.safe_dump(pol, f)
        return path, [], pol, src

    @staticmethod
    def _set_prometheus(pol, url):
        """The policy's Prometheus provider points at the lab's Prometheus (no token: it checks
        none)."""
        for mp in pol.get("metricsProviders") or []:
            if mp.get("source") == "Prometheus" and url:
                mp.setdefault("prometheus", {})["url"] = url
                mp["prometheus"].pop("authToken", None)

    def args(self, policy_path, extra, interval):
        a = ["--kubeconfig", self.descheduler_kubeconfig(), "--v=3", "--secure-port=0",
             "--feature-gates=" + self.s["featureGates"], "--descheduling-interval=%s" % interval]
        if policy_path:
            a += ["--policy-config-file", policy_path]
        return a + extra

    def command(self, args):
        """(argv, env) of the descheduler. Upstream's builds a Prometheus client only with a
        token: a Secret's (read by a controller in the background, so a one-shot cycle starts
        before the client exists) or, in a pod, the service account's, with the in-cluster CA
        (/var/run/secrets/kubernetes.io/serviceaccount/{token,ca.crt}), even for a plain-http
        URL. So upstream runs as if in a pod: KUBERNETES_SERVICE_HOST/PORT set (its --kubeconfig
        still wins for the API) and that directory holding the lab's CA and a token, bound in a
        mount namespace of its own (unshare), so nothing of the machine changes. Ours needs no
        token outside a pod."""
        argv = [self.binary] + args
        if self.who != "upstream" or not self.prometheus:
            return argv, None
        sa = os.path.join(self.work, "serviceaccount")
        os.makedirs(sa, exist_ok=True)
        shutil.copy(self.lab.pki["ca.crt"], os.path.join(sa, "ca.crt"))
        with open(os.path.join(sa, "token"), "w") as f:
            f.write("lab-token")
        target = "/var/run/secrets/kubernetes.io/serviceaccount"
        os.makedirs(target, exist_ok=True)
        env = dict(os.environ, KUBERNETES_SERVICE_HOST="127.0.0.1", KUBERNETES_SERVICE_PORT=str(self.lab.cluster.port))
        return ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                'mount --bind "$0" %s && exec "$@"' % target, sa] + argv, env

    def run_once(self, policy_path, extra, cycle):
        logf = os.path.join(self.work, "descheduler-cycle-%02d.log" % cycle)
        with open(logf, "wb") as f:
            argv, env = self.command(self.args(policy_path, extra, "0s"))
            p = subprocess.run(argv, env=env, stdout=f, stderr=subprocess.STDOUT, timeout=600)
        return p.returncode, logf

    def wait_migrations(self, deadline):
        """Until no migration is in flight and every migrated VM's old launcher has exited (the
        kubelet reports it Succeeded): what a CronJob's two minutes leave behind, so that the
        next cycle, and the sample, see the cluster as it has settled."""
        c = self.lab.client
        while time.time() < deadline:
            vmims = c.list_all(VMIM_PATH)[0]
            if all((m.get("status") or {}).get("phase") in FINAL for m in vmims):
                vmis = c.list_all(VMI_PATH)[0]
                running = sum(1 for v in vmis if (v.get("status") or {}).get("phase") == "Running")
                pods = c.list_all("/api/v1/pods", labelSelector="kubevirt.io=virt-launcher",
                                  fieldSelector="status.phase=Running")[0]
                if len(pods) <= running:
                    return True
            time.sleep(1)
        return False

    # -- the run
    def run(self):
        s = self.s
        self.work = tempfile.mkdtemp(prefix="lab-%s-%s." % (s["name"], self.who))
        t0 = time.time()
        try:
            self.build_cluster()
            self.create_workloads()
            if s["prometheus"]:
                self.placement = Placement(self.lab.client, log=log).start()
                self.exporter = Exporter(self.loads, self.placement, self.node_info)
                eport = self.exporter.serve()
                self.prometheus = prom.Prometheus(self.work, eport, free_port(), spawn=self.lab.cluster._spawn).start()
                log("prometheus %s scraping the exporter; waiting for the recording rules' first minute" % self.prometheus.url)
                self.prometheus.wait_series("descheduler:nodeutilization:cpu:avg1m", len(self.node_info), 180)
                time.sleep(65)  # a full [1m] window of the placement the cycles start from
            elif self.s["metric"] == "actual":
                raise scen.ScenarioError("%s: metric: actual needs prometheus: true" % s["file"])
            policy_path, extra, pol, policy_name = self.policy_files()
            rec = Recorder(self.lab, s, pol, self.exporter, DESCHEDULER_USER)
            rec.baseline()
            setup_s = time.time() - t0
            samples = [rec.sample(0, {})]
            log_cycle(samples[0])
            quiet = 0
            converged_at = None
            failures = []
            if s["cadence"] == "deployment":
                samples, failures, converged_at = self._run_deployment(policy_path, extra, rec, samples)
            else:
                for cycle in range(1, self.cycles + 1):
                    began = time.time()
                    rc, logf = self.run_once(policy_path, extra, cycle)
                    if rc != 0:
                        failures.append("cycle %d: the descheduler exited %d (log %s)" % (cycle, rc, logf))
                    self.wait_migrations(time.time() + scen.seconds(s["settle"]))
                    if self.prometheus and rec.prometheus_metric:
                        time.sleep(70)  # the moves reach the rules' one-minute averages
                    # the CronJob's schedule, compressed: the next run starts labInterval after this one
                    time.sleep(max(0.0, began + scen.seconds(s["labInterval"]) - time.time()))
                    smp = rec.sample(cycle, rec.requests_since())
                    samples.append(smp)
                    acted = self._acted(smp)
                    log_cycle(smp)
                    quiet = 0 if acted else quiet + 1
                    if quiet >= 2:
                        converged_at = cycle - 2
                        break
            result = self._result(s, rec, samples, converged_at, failures, policy_name, setup_s)
            return result
        finally:
            self.stop()

    def _acted(self, smp):
        r = smp["requests"]
        evictions = sum(v for k, v in r.items() if k == "create pods/eviction")
        migrations = sum(v for k, v in r.items() if k == "create virtualmachineinstancemigrations")
        return evictions + migrations + smp["migrations"]["created"] > 0

    def _run_deployment(self, policy_path, extra, rec, samples):
        s = self.s
        interval = scen.seconds(s["interval"])
        logf = os.path.join(self.work, "descheduler.log")
        failures = []
        quiet, converged_at = 0, None
        with open(logf, "wb") as f:
            argv, env = self.command(self.args(policy_path, extra, s["interval"]))
            self.proc = subprocess.Popen(argv, env=env, stdout=f, stderr=subprocess.STDOUT, start_new_session=True)
            start = time.time()
            for cycle in range(1, self.cycles + 1):
                time.sleep(max(0.0, start + cycle * interval - time.time()))
                if self.proc.poll() is not None:
                    failures.append("the descheduler exited %d before cycle %d (log %s)" % (self.proc.returncode, cycle, logf))
                    break
                smp = rec.sample(cycle, rec.requests_since())
                samples.append(smp)
                log_cycle(smp)
                quiet = 0 if self._acted(smp) else quiet + 1
                if quiet >= 2:
                    converged_at = cycle - 2
                    break
        return samples, failures, converged_at

    def _result(self, s, rec, samples, converged_at, failures, policy_name, setup_s):
        totals = {}
        for smp in samples:
            for k, v in smp["requests"].items():
                totals[k] = totals.get(k, 0) + v
        c = self.lab.client
        vmims = c.list_all(VMIM_PATH)[0]
        by_phase = {}
        for m in vmims:
            ph = (m.get("status") or {}).get("phase") or "Pending"
            by_phase[ph] = by_phase.get(ph, 0) + 1
        pp, pp_examples = rec.ping_pongs()
        final = samples[-1]
        target = s["target"]
        below = ((target["imbalance"] is None or final["imbalance"] <= target["imbalance"]) and
                 (target["overutilized"] is None or (final["overutilized"] or 0) <= target["overutilized"]))
        return {
            "scenario": s["name"], "who": self.who + ("-targeted" if self.targeted else ""), "binary": self.binary, "version": binary_version(self.binary),
            "policy": policy_name, "cadence": s["cadence"], "interval": s["interval"],
            "labInterval": s["labInterval"] if s["cadence"] == "cronjob" else s["interval"],
            "metricLabel": ("%s requests, %% of allocatable" % s["resource"] if s["metric"] == "requests"
                            else "actual %s utilization, %% (the load the nodes carry)" % s["resource"]),
            "cycles": len(samples) - 1,
            "cyclesToConverge": converged_at,
            "converged": converged_at is not None,
            "target": target,
            "targetMet": below,
            "migrations": sum(by_phase.values()),
            "migrationsSucceeded": by_phase.get("Succeeded", 0),
            "migrationsFailed": by_phase.get("Failed", 0),
            "migrationsPending": sum(v for k, v in by_phase.items() if k not in FINAL),
            "pingPongs": pp, "pingPongExamples": pp_examples,
            "moves": {k: [{"cycle": c, "from": f, "to": to, "migration": name} for c, f, to, name in v]
                      for k, v in sorted(rec.moves.items())},
            "migrationNames": sorted(m["metadata"]["name"] for m in vmims),
            # targeted moves: the node asked for (spec.addedNodeSelector) and where the VM landed
            "migrationTargets": {
                m["metadata"]["name"]: {
                    "asked": ((m.get("spec") or {}).get("addedNodeSelector") or {}).get("kubernetes.io/hostname"),
                    "landed": ((m.get("status") or {}).get("migrationState") or {}).get("targetNode"),
                    "phase": (m.get("status") or {}).get("phase")}
                for m in vmims if (m.get("spec") or {}).get("addedNodeSelector")},
            "vmsStopped": len(rec.stopped), "vmsStoppedWhy": dict(sorted(rec.stopped.items())[:20]),
            "imbalanceStart": samples[0]["imbalance"], "imbalanceEnd": final["imbalance"],
            "requests": dict(sorted(totals.items())),
            "failures": failures,
            "setupSeconds": round(setup_s, 1),
            "components": self.components(),
            "samples": [{k: v for k, v in smp.items() if k != "vmNodes"} for smp in samples],
        }

    def components(self):
        st = self.lab.status()["components"]
        out = {}
        for name, c in st.items():
            out[name] = c.get("version") if c.get("kind") == "real" else "stand-in"
        out["prometheus"] = prom.version() if self.prometheus else "not used"
        return out

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        if self.placement:
            self.placement.stop()
        if self.exporter:
            self.exporter.stop()
        if self.lab is not None:
            self.lab.stop()
        if self.work:
            try:
                self.keep_logs()
            except OSError as e:  # a log not kept must not stop the cleanup
                print("lab: the descheduler's log was not kept: %s" % e, file=sys.stderr)
        if self.work and not self.keep:
            shutil.rmtree(self.work, ignore_errors=True)

    def keep_logs(self):
        """The descheduler's own log (every cycle's, in order) beside the record, as
        OUT/NAME-WHO.log: why it moved what it moved, or nothing."""
        logs = sorted(f for f in os.listdir(self.work) if f.startswith("descheduler") and f.endswith(".log"))
        if not logs:
            return
        os.makedirs(self.out, exist_ok=True)
        who = self.who + ("-targeted" if self.targeted else "")
        with open(os.path.join(self.out, "%s-%s.log" % (self.s["name"], who)), "wb") as out:
            for name in logs:
                out.write(("==> %s <==\n" % name).encode())
                with open(os.path.join(self.work, name), "rb") as f:
                    shutil.copyfileobj(f, out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scenario")
    who = ap.add_mutually_exclusive_group()
    who.add_argument("--binary", help="the descheduler to run (default build/descheduler)")
    who.add_argument("--upstream", action="store_true", help="run upstream's descheduler (bench/upstream.sh builds it)")
    ap.add_argument("--targeted", action="store_true",
                    help="ours with the scenario's targetedPolicy (targeted moves on)")
    ap.add_argument("--cycles", type=int, help="the cycle budget (default: the scenario's)")
    ap.add_argument("--small", action="store_true", help="the scenario's small size (make test)")
    ap.add_argument("--out", default=OUT, help="where NAME-WHO.json and .html go (default tests/lab/out)")
    ap.add_argument("--keep", action="store_true", help="keep the lab's working directory (logs)")
    a = ap.parse_args()
    try:
        s = scen.load(a.scenario, small=a.small)
    except scen.ScenarioError as e:
        print("run.py: %s" % e, file=sys.stderr)
        return 2
    if a.cycles is not None and a.cycles < 1:
        print("run.py: --cycles: expected 1 or more, got %d" % a.cycles, file=sys.stderr)
        return 2
    try:
        if a.upstream:
            binary, who = upstream_binary(), "upstream"
        else:
            binary, who = os.path.abspath(a.binary or os.path.join(ROOT, "build", "descheduler")), "ours"
            if not os.access(binary, os.X_OK):
                print("run.py: --binary: %s is not an executable (make build)" % binary, file=sys.stderr)
                return 2
        if a.targeted and a.upstream:
            print("run.py: --targeted: upstream's descheduler has no targeted moves", file=sys.stderr)
            return 2
        runner = Runner(s, binary, who, a.out, a.cycles, a.keep, a.targeted)
        who = who + ("-targeted" if a.targeted else "")
        # SIGTERM/SIGINT: stop everything the lab started, then exit
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
        result = runner.run()
    except LabUnavailable as e:
        print("run.py: the lab cannot run here: %s" % e, file=sys.stderr)
        return 3
    except scen.ScenarioError as e:
        print("run.py: %s" % e, file=sys.stderr)
        return 2
    os.makedirs(a.out, exist_ok=True)
    base = os.path.join(a.out, "%s-%s" % (s["name"], who))
    with open(base + ".json", "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
    with open(base + ".html", "w") as f:
        f.write(report.render(result))
    print("%s (%s): cycles %d, converged %s, migrations %d (%d succeeded), ping-pongs %d, VMs stopped %d, "
          "imbalance %.3f -> %.3f, target %s; %s.json" % (
              s["name"], who, result["cycles"], result["cyclesToConverge"], result["migrations"],
              result["migrationsSucceeded"], result["pingPongs"], result["vmsStopped"], result["imbalanceStart"],
              result["imbalanceEnd"], "met" if result["targetMet"] else "not met", base))
    return 1 if result["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
