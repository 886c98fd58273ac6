#!/usr/bin/env python3
"""A long run of Deployment mode under churn, API faults and policy reloads (`make soak`).

The descheduler runs against the API simulator (tests/apisim) serving a generated cluster
(bench/gen_cluster.py: nodes, pods with owners and requests, virt-launchers with their VMIs):
  - a cycle every --interval seconds (2), the watch cache on, EvictionsInBackground on;
  - after every cycle the simulator changes --churn of the pods (1%: restarts, relabels,
    replacements; POST /_sim/churn);
  - random API faults at a low rate for the whole run (POST /_sim/faults, each rule applied to
    a seeded fraction of its requests): failed and reset LISTs, watches cut or expired (410),
    failed and slow evictions;
  - every --reload-every seconds (600) the policy file is replaced the way the kubelet updates
    a ConfigMap volume (a new directory, the ..data link swapped), alternating two valid
    policies with the same limits; every third reload is an invalid policy first, which must
    be refused while the last good one keeps running, followed by a valid one.
  - every --fault-every seconds (180) one more fault, in turn: a watch cut mid-stream, a watch
    ended by 410 Gone (its kind listed again), the list after it failing once;
The watch cache runs with --watch-cache-compact-bytes (--compact, 256 KiB by default here rather
than the binary's 16 MiB), so that its compaction, which bounds what its objects share, can
happen within the run. After every cycle it records the process's resident memory, open file
descriptors and threads (/proc) and the watch cache's bytes (the "Cycle timings" line: model=
in all; shared= of it what objects share; sharedTables= of that the two hash tables that find
the strings and copies, which the compaction threshold does not count). It fails when
  - a figure grows by more than 5% from minutes 10-15 (the median there; --baseline, --window)
    to the last 5 minutes (the median there), fds and threads rounded up to a whole one: the
    cache's objects (model minus shared: they follow the cluster), and the resident memory
    less what the cache's objects share (which grows by design until a compaction);
  - what compaction counts (shared minus sharedTables: the strings and copies) grows by more
    than the compaction threshold plus a margin (MARGIN_MB below) from its value at the first
    cycle or the first after a compaction (compaction did not bound it);
  - the tables grow beyond what doubling allows for that content (TABLES_WHY below);
  - a cycle's evictions plus requests in flight exceed the policy's maxNoOfPodsToEvictTotal;
  - an eviction or a request is logged in a cycle whose view of the cluster was incomplete (a
    read that failed, a watch cache not synced);
  - a reload is not seen, an invalid policy is not refused, or the process exits.
Writes OUT/soak.json (the verdict, the figures every minute, the counts) and prints a summary.

Usage: tests/soak/soak.py [--duration 2h] [--nodes 200 --pods 6000 --vms 600] [--out DIR]
"""
import argparse
import json
import math
import os
import platform
import queue
import re
import signal
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench"))

import bench  # noqa: E402  the simulator wrapper and /proc readers of the benchmarks

POLICY = """apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
maxNoOfPodsToEvictTotal: {limit}
maxNoOfPodsToEvictPerNode: 2
profiles:
- name: soak
  pluginConfig:
  - name: DefaultEvictor
    args:
      evictLocalStoragePods: true
      nodeFit: true
  - name: LowNodeUtilization
    args:
      thresholds: {{cpu: {low}, memory: {low}, pods: {low}}}
      targetThresholds: {{cpu: {high}, memory: {high}, pods: {high}}}
  - name: RemoveDuplicates
  plugins:
    balance:
      enabled: [LowNodeUtilization, RemoveDuplicates]
"""
LIMIT = 5
INVALID = "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nmaxNoOfPodsToEvictTotal: many\nprofiles: []\n"
FAULTS = [
    {"verb": "list", "status": 500, "fraction": 0.02, "seed": 1},
    {"verb": "list", "reset": True, "fraction": 0.01, "seed": 2},
    {"verb": "watch", "watchCut": 40, "fraction": 0.02, "seed": 3},
    {"verb": "watch", "watchExpire": 25, "fraction": 0.01, "seed": 4},
    {"method": "POST", "path": "/eviction$", "status": 500, "fraction": 0.02, "seed": 5},
    {"method": "POST", "path": "/eviction$", "latency": 0.5, "fraction": 0.02, "seed": 6},
]
# one of these, in turn, every --fault-every seconds (a watch is opened seldom, so a fraction
# of watch requests would almost never fire)
TIMED_FAULTS = [
    {"verb": "watch", "path": "^/api/v1/pods$", "watchCut": 5, "count": 1},
    {"verb": "watch", "path": "^/api/v1/nodes$", "watchExpire": 3, "count": 1},
    {"verb": "watch", "path": "^/api/v1/pods$", "watchExpire": 2, "count": 1},
    {"verb": "list", "path": "^/api/v1/pods$", "status": 500, "count": 1},
]
COUNTS = re.compile(r'"Number of evictions/requests" totalEvicted=(\d+) evictionRequests=(\d+)')
INCOMPLETE = ('"Failed to read the cluster state; nothing is evicted this cycle"',)
ACTS = ('"Evicted pod"', '"Eviction in background assumed"')
GROWTH = re.compile(r'"Compacting the watch cache.*growthBytes=(\d+)')
# what the shared content may hold beyond the threshold: the pump before a cycle compacts when
# the threshold is passed, but not while a kind waits for its list after a 410, so the cycle
# after that list may be past it by what came meanwhile (1% churn of 6,000 pods adds a few kB
# a cycle)
MARGIN_MB = 0.25
TABLES_WHY = ("a table doubles when its entries pass half its slots and shrinks only at a compaction, so at the "
              "base its entries fill at most half of it, and while they grow by a factor r it doubles at most "
              "ceil(log2 r) times; the entries are taken to grow as the content does (churn replaces objects with "
              "like ones)")


def tables_factor(content_base, bound):
    """How many times over the tables may grow while the content grows from content_base to bound."""
    return 2 ** max(0, math.ceil(math.log2(bound / content_base)))


def duration(text):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(s|m|h)", text)
    if not m:
        raise argparse.ArgumentTypeError("expected a duration such as 90s, 10m or 2h, got %r" % text)
    return float(m.group(1)) * {"s": 1, "m": 60, "h": 3600}[m.group(2)]


def proc_fds(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def proc_threads(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    return 0


class PolicyVolume:
    """A directory laid out as the kubelet lays out a ConfigMap volume."""

    def __init__(self, root):
        self.root = root
        self.generation = 0
        os.makedirs(root)

    def put(self, text):
        self.generation += 1
        new = "..%d_soak_%06d" % (int(time.time()), self.generation)
        os.makedirs(os.path.join(self.root, new))
        with open(os.path.join(self.root, new, "policy.yaml"), "w") as f:
            f.write(text)
        data = os.path.join(self.root, "..data")
        old = os.readlink(data) if os.path.islink(data) else None
        tmp = os.path.join(self.root, "..data_tmp")
        os.symlink(new, tmp)
        os.replace(tmp, data)
        link = os.path.join(self.root, "policy.yaml")
        if not os.path.islink(link):
            os.symlink("..data/policy.yaml", link)
        if old:
            import shutil
            shutil.rmtree(os.path.join(self.root, old), ignore_errors=True)
        return link


def growth_check(samples, key, start, t_base, t_end, window, whole):
    base = [s[key] for s in samples if t_base <= s["t"] - start < t_base + window]
    last = [s[key] for s in samples if s["t"] - start >= t_end - window]
    if not base or not last:
        return {"ok": False, "why": "too few samples"}
    b, l_ = statistics.median(base), statistics.median(last)
    allowed = b * 1.05
    if whole:
        allowed = math.ceil(allowed)
    return {"baseline": b, "last": l_, "allowed": allowed, "growthPct": (l_ - b) / b * 100 if b else None,
            "ok": l_ <= allowed}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=duration, default=duration("2h"))
    ap.add_argument("--interval", type=float, default=2.0)
    ap.add_argument("--churn", type=float, default=0.01)
    ap.add_argument("--reload-every", type=duration, default=duration("10m"))
    ap.add_argument("--fault-every", type=duration, default=duration("3m"))
    ap.add_argument("--compact", type=int, default=1 << 18,
                    help="--watch-cache-compact-bytes (256 KiB: a few compactions in 2 h at 1%% churn)")
    ap.add_argument("--nodes", type=int, default=200)
    ap.add_argument("--pods", type=int, default=6000)
    ap.add_argument("--vms", type=int, default=600)
    ap.add_argument("--binary", default=os.environ.get("DESCHEDULER") or os.path.join(ROOT, "build", "descheduler"))
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "soak", "out"))
    ap.add_argument("--baseline", type=duration, default=duration("10m"),
                    help="where the baseline window starts (growth is measured from there)")
    ap.add_argument("--window", type=duration, default=duration("5m"), help="the baseline's and the end's window")
    a = ap.parse_args()
    if a.duration < a.baseline + 2 * a.window:
        ap.error("--duration must be at least --baseline + 2 x --window (%gs)" % (a.baseline + 2 * a.window))
    # the tree's commit when the run starts (a run takes hours; the tree may move meanwhile)
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True).stdout.strip()
    os.makedirs(a.out, exist_ok=True)
    work = os.path.join(a.out, "work")
    if os.path.exists(work):
        import shutil
        shutil.rmtree(work)
    os.makedirs(work)
    snapshot = os.path.join(work, "cluster.json")
    subprocess.check_call([sys.executable, os.path.join(ROOT, "bench", "gen_cluster.py"), "--nodes", str(a.nodes),
                           "--pods", str(a.pods), "--vms", str(a.vms), "--out", snapshot])
    sim = bench.Sim(snapshot, work)
    for rule in FAULTS:
        sim.call("POST", "faults", rule)
    vol = PolicyVolume(os.path.join(work, "policy"))
    policies = [POLICY.format(limit=LIMIT, low=20, high=50), POLICY.format(limit=LIMIT, low=25, high=55)]
    path = vol.put(policies[0])
    log_path = os.path.join(work, "descheduler.log")
    argv = [a.binary, "--kubeconfig", sim.kubeconfig, "--policy-config-file", path, "--descheduling-interval",
            "%gs" % a.interval, "--feature-gates", "EvictionsInBackground=true", "--secure-port", "0",
            "--client-connection-qps", "1000", "--client-connection-burst", "1000", "--v", "3",
            "--watch-cache-compact-bytes", str(a.compact)]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines = queue.Queue()

    def drain():
        with open(log_path, "w") as f:
            for line in proc.stderr:
                f.write(line)
                lines.put(line)
        lines.put(None)

    threading.Thread(target=drain, daemon=True).start()
    start = time.monotonic()
    samples, problems = [], []
    counts = {"cycles": 0, "incompleteCycles": 0, "evicted": 0, "churned": 0, "reloads": 0, "compactions": 0,
              "timedFaults": 0, "maxSharedMB": 0.0, "maxContentGrowthMB": 0.0, "maxTablesMB": 0.0,
              "compactionGrowthBytes": [],
              "reloadsSeen": 0, "invalidPolicies": 0, "refusals": 0, "maxInCycle": 0}
    acted = None  # the last eviction or request line of the cycle so far
    next_reload = start + a.reload_every
    next_fault = start + a.fault_every
    base = None  # (content MB, tables MB) at the first cycle or the first after a compaction
    flagged = set()
    reload_no = 0
    pending_valid = None
    last_minute = -1
    minutes = []
    try:
        while time.monotonic() - start < a.duration:
            try:
                line = lines.get(timeout=60)
            except queue.Empty:
                problems.append("no log line for 60 s at %.0f s" % (time.monotonic() - start))
                break
            if line is None:
                problems.append("the descheduler exited (status %s) at %.0f s" % (proc.wait(), time.monotonic() - start))
                break
            # a cycle ends with its timings line, or, when its view was incomplete, with the line
            # saying so: no eviction or request may come before that line in the same cycle
            if any(k in line for k in ACTS):
                acted = line
            if any(k in line for k in INCOMPLETE):
                counts["incompleteCycles"] += 1
                if acted:
                    problems.append("an eviction in a cycle whose view was incomplete: " + acted.strip()[:300])
                acted = None
            if '"The policy file changed; the new policy is used from this cycle"' in line:
                counts["reloadsSeen"] += 1
            if '"The changed policy is refused; the last good policy keeps running"' in line:
                counts["refusals"] += 1
            if '"Compacted the watch cache"' in line:
                counts["compactions"] += 1
                base = None
            m = GROWTH.search(line)
            if m:
                counts["compactionGrowthBytes"].append(int(m.group(1)))
            m = COUNTS.search(line)
            if m:
                evicted, requests = int(m.group(1)), int(m.group(2))
                counts["maxInCycle"] = max(counts["maxInCycle"], evicted + requests)
                if evicted + requests > LIMIT:
                    problems.append("cycle %d: %d evicted + %d requests > maxNoOfPodsToEvictTotal %d"
                                    % (counts["cycles"] + 1, evicted, requests, LIMIT))
                counts["evicted"] += evicted
            t = bench.timings_of(line)
            if t is None:
                continue
            # a cycle ended (its timings line): record, churn, maybe reload
            counts["cycles"] += 1
            acted = None
            now = time.monotonic()
            st = bench.proc_status(proc.pid)
            shared = t.get("shared", 0) / 1048576.0
            tables = t.get("sharedTables", 0) / 1048576.0
            content = shared - tables
            s = {"t": now, "rss": st.get("VmRSS", 0) / 1024.0, "fds": proc_fds(proc.pid),
                 "threads": proc_threads(proc.pid), "cacheMB": t.get("model", 0) / 1048576.0,
                 "sharedMB": shared, "tablesMB": tables, "objectsMB": t.get("model", 0) / 1048576.0 - shared}
            s["rssLessShared"] = s["rss"] - shared
            counts["maxSharedMB"] = max(counts["maxSharedMB"], shared)
            counts["maxTablesMB"] = max(counts["maxTablesMB"], tables)
            if shared > 0 and "sharedTables" not in t:
                problems.append("the timings line has no sharedTables= (a binary older than the soak)")
                break
            if base is None and shared > 0:
                base = (content, tables)
            if base is not None:
                grown = content - base[0]
                counts["maxContentGrowthMB"] = max(counts["maxContentGrowthMB"], grown)
                if grown > a.compact / 1048576.0 + MARGIN_MB and "content" not in flagged:
                    flagged.add("content")  # once: the cycles after it say no more
                    problems.append("cycle %d: the watch cache's shared content grew %.3f MB (from %.3f) without a "
                                    "compaction, beyond the threshold %.3f MB + %.2f"
                                    % (counts["cycles"], grown, base[0], a.compact / 1048576.0, MARGIN_MB))
                factor = tables_factor(base[0], base[0] + a.compact / 1048576.0 + MARGIN_MB)
                if tables > base[1] * factor and "tables" not in flagged:
                    flagged.add("tables")
                    problems.append("cycle %d: the watch cache's tables reached %.3f MB, beyond %d x %.3f MB (%s)"
                                    % (counts["cycles"], tables, factor, base[1], TABLES_WHY))
            samples.append(s)
            minute = int((now - start) // 60)
            if minute != last_minute:
                last_minute = minute
                minutes.append({"minute": minute, "rssMB": round(s["rss"], 2), "fds": s["fds"],
                                "threads": s["threads"], "watchCacheMB": round(s["cacheMB"], 3),
                                "sharedMB": round(shared, 3), "tablesMB": round(tables, 3),
                                "cycles": counts["cycles"]})
                print("soak: %3d min  rss %.1f MB  fds %d  threads %d  cache %.2f MB (shared %.2f, of it tables "
                      "%.2f)  cycles %d  compactions %d  problems %d"
                      % (minute, s["rss"], s["fds"], s["threads"], s["cacheMB"], shared, tables, counts["cycles"],
                         counts["compactions"], len(problems)), flush=True)
            counts["churned"] += sim.call("POST", "churn", {"fraction": a.churn})["changed"]
            if now >= next_fault:
                sim.call("POST", "faults", TIMED_FAULTS[counts["timedFaults"] % len(TIMED_FAULTS)])
                counts["timedFaults"] += 1
                next_fault += a.fault_every
            if pending_valid is not None and now >= pending_valid[0]:
                vol.put(pending_valid[1])
                counts["reloads"] += 1
                pending_valid = None
            if now >= next_reload:
                reload_no += 1
                next_reload += a.reload_every
                text = policies[reload_no % 2]
                if reload_no % 3 == 0:
                    vol.put(INVALID)
                    counts["invalidPolicies"] += 1
                    pending_valid = (now + 30, text)  # fixed half a minute later
                else:
                    vol.put(text)
                    counts["reloads"] += 1
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
        c = sim.call("GET", "requests")
        fired = sim.call("GET", "faults").get("fired")
        sim.stop()
    # the last reload may not have been seen before the end: allow it
    if counts["reloadsSeen"] < counts["reloads"] - 1:
        problems.append("%d reloads made, %d seen" % (counts["reloads"], counts["reloadsSeen"]))
    if counts["refusals"] < counts["invalidPolicies"]:
        problems.append("%d invalid policies put, %d refused" % (counts["invalidPolicies"], counts["refusals"]))
    if code != 0:
        problems.append("exit status %d after SIGTERM" % code)
    span = samples[-1]["t"] - start if samples else 0
    growth = {}
    for key, whole in (("rssLessShared", False), ("fds", True), ("threads", True), ("objectsMB", False)):
        growth[key] = growth_check(samples, key, start, a.baseline, span, a.window, whole)
        if not growth[key]["ok"]:
            problems.append("%s grew beyond 5%%: %s" % (key, growth[key]))
    result = {"ok": not problems, "problems": problems, "commit": commit,
              "machine": "%s, %d cores" % (platform.node(), os.cpu_count() or 0),
              "settings": {"duration": a.duration, "interval": a.interval, "churn": a.churn,
                           "reloadEvery": a.reload_every, "nodes": a.nodes, "pods": a.pods, "vms": a.vms,
                           "faults": FAULTS, "timedFaults": TIMED_FAULTS, "faultEvery": a.fault_every,
                           "compactBytes": a.compact, "limit": LIMIT,
                           "stand-in": "tests/apisim (the API simulator)"},
              "counts": counts, "requests": {"total": c.get("total"), "byVerb": c.get("byVerb")}, "faultsFired": fired,
              "growth": growth, "minutes": minutes}
    with open(os.path.join(a.out, "soak.json"), "w") as f:
        json.dump(result, f, indent=1)
    print("soak: %s after %.0f min, %d cycles (%d with an incomplete view), %d evicted, %d pods churned, "
          "%d reloads (%d seen), %d invalid policies (%d refused); the API server was the simulator"
          % ("PASS" if result["ok"] else "FAIL", span / 60, counts["cycles"], counts["incompleteCycles"],
             counts["evicted"], counts["churned"], counts["reloads"], counts["reloadsSeen"],
             counts["invalidPolicies"], counts["refusals"]))
    g = counts["compactionGrowthBytes"]
    print("soak: watch cache shared content grew at most %.3f MB between compactions (threshold %.3f MB); tables at "
          "most %.3f MB; %d compactions%s"
          % (counts["maxContentGrowthMB"], a.compact / 1048576.0, counts["maxTablesMB"], counts["compactions"],
             ", growthBytes %d-%d" % (min(g), max(g)) if g else ""))
    for key, g in growth.items():
        if "baseline" in g:
            print("soak: %-8s baseline %.3f, at the end %.3f (%+.2f%%)" % (key, g["baseline"], g["last"],
                                                                         g["growthPct"] or 0))
    for p in problems:
        print("soak: problem: " + p)
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
