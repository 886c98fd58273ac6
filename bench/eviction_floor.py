#!/usr/bin/env python3
"""What a real kube-apiserver takes to answer a cycle's evictions: the floor of the evict phase.

A Deployment cycle's wall time is the binary's own work plus its eviction requests, sent one
after another as upstream sends them (each answer decides the next: limits, PDB refusals). The
benchmark's loop (bench/bench.py) measures them against the Python API simulator; this script
measures them against the real thing: etcd and kube-apiserver as the realapi tier runs them
(tests/realapi/realapi.py; kube-apiserver built once by tests/realapi/build.sh, which needs
Go), loaded with a generated cluster (bench/gen_cluster.py, no VMs), and --repeat one-shot
cycles of the binary with client rate limits out of the way. So that each cycle sends the same
number of evictions, the policy is RemovePodsViolatingNodeTaints with
maxNoOfPodsToEvictTotal --evictions (50, the benchmark's bound), and enough nodes are tainted
NoSchedule for every run to find that many pods to evict; the requests are what the
benchmark's LowNodeUtilization cycle sends (policy/v1 Evictions, one after another; the
answers' HTTP codes are printed).

The realapi harness's KubeVirt stand-in answers the eviction webhook in Python and takes most
of a second a call at this size; KubeVirt's own virt-api is not that slow, and without VMs no
eviction needs it, so its ValidatingWebhookConfiguration is deleted before the runs
(--keep-webhook keeps it, to see its cost).

Prints, per run: the evictions, the binary's evict phase and its time waiting on the requests
(the "Cycle timings" line's evict= and wait=), and the server's own time for each eviction
from its audit log (requestReceivedTimestamp to stageTimestamp of ResponseComplete): sum, and
min / median / max per eviction; then min / median over the runs. --json writes them.
"""
import argparse
import datetime
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from bench import LIVE_FLAGS, summary, timings_of  # noqa: E402

POLICY = """apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
maxNoOfPodsToEvictTotal: %d
profiles:
- name: floor
  pluginConfig:
  - name: DefaultEvictor
    args:
      evictLocalStoragePods: true
  - name: RemovePodsViolatingNodeTaints
  plugins:
    deschedule:
      enabled: [RemovePodsViolatingNodeTaints]
"""


def stamp(s):
    return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()


def evictions_in(audit_log, since):
    """Server seconds of each eviction request the audit log completed after `since`."""
    out = []
    with open(audit_log) as f:
        for line in f:
            e = json.loads(line)
            if (e.get("objectRef") or {}).get("subresource") != "eviction" or e.get("stage") != "ResponseComplete":
                continue
            received = stamp(e["requestReceivedTimestamp"])
            if received >= since:
                out.append({"seconds": stamp(e["stageTimestamp"]) - received,
                            "code": (e.get("responseStatus") or {}).get("code")})
    return out


def start_server(snapshot, work):
    kc = os.path.join(work, "kubeconfig")
    d = os.path.join(work, "cluster")
    err = open(os.path.join(work, "realapi.err"), "w")
    p = subprocess.Popen([sys.executable, os.path.join(ROOT, "tests", "realapi", "realapi.py"), "--snapshot", snapshot,
                          "--kubeconfig-out", kc, "--dir", d, "--migration-seconds", "3600"],
                         stdout=subprocess.PIPE, stderr=err, text=True)
    line = p.stdout.readline()
    if line.strip() != "ready":
        p.kill()
        raise RuntimeError("the real API server did not start; see %s" % err.name)
    return p, kc, d


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=60)
    ap.add_argument("--pods", type=int, default=1800)
    ap.add_argument("--evictions", type=int, default=50, help="evictions a cycle (maxNoOfPodsToEvictTotal)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "descheduler"))
    ap.add_argument("--keep-webhook", action="store_true",
                    help="leave the KubeVirt stand-in's eviction webhook in place")
    ap.add_argument("--out", default=os.path.join(HERE, "out"), help="where the cluster file goes")
    ap.add_argument("--json", help="write the results here")
    a = ap.parse_args()
    if not os.access(a.binary, os.X_OK):
        sys.exit("eviction_floor: %s is not an executable (build it first: cmake --build build)" % a.binary)
    os.makedirs(a.out, exist_ok=True)
    snapshot = os.path.join(a.out, "cluster-%d-%d-0.json" % (a.nodes, a.pods))
    if not os.path.exists(snapshot):
        subprocess.check_call([sys.executable, os.path.join(HERE, "gen_cluster.py"), "--nodes", str(a.nodes),
                               "--pods", str(a.pods), "--vms", "0", "--out", snapshot])
    work = tempfile.mkdtemp(prefix="eviction-floor-")
    server = None
    try:
        t0 = time.time()
        server, kc, d = start_server(snapshot, work)
        print("eviction_floor: etcd + kube-apiserver with %d nodes, %d pods, ready in %.0f s"
              % (a.nodes, a.pods, time.time() - t0), flush=True)
        if not a.keep_webhook:
            subprocess.check_call(["kubectl", "--kubeconfig", kc, "delete", "validatingwebhookconfiguration",
                                   "virt-api-validator"], stdout=subprocess.DEVNULL)
        policy = os.path.join(work, "policy.yaml")
        with open(policy, "w") as f:
            f.write(POLICY % a.evictions)
        flags = list(LIVE_FLAGS)
        flags[flags.index("--policy-config-file") + 1] = policy
        # enough tainted nodes for every run's evictions, a third more for PDB refusals
        nodes = [n.split("/", 1)[1] for n in
                 subprocess.check_output(["kubectl", "--kubeconfig", kc, "get", "nodes", "-o", "name"], text=True).split()]
        need = math.ceil(a.evictions * a.repeat * 4 / 3 * a.nodes / a.pods)
        if need > len(nodes):
            sys.exit("eviction_floor: %d runs of %d evictions need more pods than %d" % (a.repeat, a.evictions, a.pods))
        subprocess.check_call(["kubectl", "--kubeconfig", kc, "taint", "nodes"] + nodes[:need] +
                              ["eviction-floor=yes:NoSchedule"], stdout=subprocess.DEVNULL)
        runs = []
        for i in range(a.repeat):
            since = time.time()
            p = subprocess.run([a.binary, "--kubeconfig", kc] + flags,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=600)
            if p.returncode != 0:
                raise RuntimeError("run %d exited %d: %s" % (i + 1, p.returncode, p.stderr[-2000:]))
            t = {}
            for line in p.stderr.splitlines():
                t = timings_of(line) or t
            time.sleep(1.5)  # the audit log is written behind the answers
            ev = evictions_in(os.path.join(d, "audit.log"), since)
            secs = [e["seconds"] for e in ev]
            if len(secs) < a.evictions:
                raise RuntimeError("run %d sent %d evictions, not %d: the tainted nodes ran out of pods"
                                   % (i + 1, len(secs), a.evictions))
            r = {"evictions": len(ev), "codes": sorted({e["code"] for e in ev}), "evict": t.get("evict"),
                 "wait": t.get("wait"), "serverSum": sum(secs), "serverEach": dict(summary(secs), max=max(secs))}
            runs.append(r)
            print("run %d: %d evictions (HTTP %s); the binary's evict phase %.3f s, waiting on them %.3f s; "
                  "the server's own time %.3f s, per eviction %.1f / %.1f / %.1f ms (min / median / max)"
                  % (i + 1, r["evictions"], ",".join(str(c) for c in r["codes"]), r["evict"] or 0, r["wait"] or 0,
                     r["serverSum"], 1000 * r["serverEach"]["min"], 1000 * r["serverEach"]["median"],
                     1000 * r["serverEach"]["max"]), flush=True)
        each = [e for r in runs for e in r["serverEach"]["runs"]]
        out = {"nodes": a.nodes, "pods": a.pods, "webhook": a.keep_webhook, "runs": runs,
               "evict": summary([r["evict"] for r in runs]), "wait": summary([r["wait"] for r in runs]),
               "serverSum": summary([r["serverSum"] for r in runs]), "perEviction": summary(each)}
        print("min / median over %d runs: evict phase %.3f / %.3f s, the server's own time %.3f / %.3f s; "
              "per eviction (all runs) %.1f / %.1f ms"
              % (a.repeat, out["evict"]["min"], out["evict"]["median"], out["serverSum"]["min"],
                 out["serverSum"]["median"], 1000 * out["perEviction"]["min"], 1000 * out["perEviction"]["median"]))
        if a.json:
            with open(a.json, "w") as f:
                json.dump(out, f, indent=1)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=60)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
