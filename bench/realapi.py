#!/usr/bin/env python3
"""`make bench-realapi`: this descheduler and upstream's side by side against a real kube-apiserver.

For each size, tests/lab/scale.py starts etcd + kube-apiserver loaded with bench/gen_cluster.py's
cluster (server-side apply, the lab's KWOK having moved every pod to Running, then stopped: from
then on the only clients are the descheduler under test and this script). Each descheduler runs
with a static token of its own, so the API server's audit log tells its requests apart. Runs
alternate between the two binaries; the same policy (bench/policy-lnu.yaml: LowNodeUtilization
+ RemoveDuplicates, at most 50 evictions a cycle), EvictionsInBackground on, --v 3, the client
rate limit lifted on both (qps/burst 1000) so the figures are work, not throttling. There is no
KubeVirt here: an eviction deletes its pod gracefully and, with no kubelet, the pod stays
Terminating; after every run this script puts the evicted pods back as they were (same name,
node and spec, Running), so every run starts from the same cluster.

  (a) one-shot: one cycle (interval 0, the CronJob's way): wall, CPU and peak RSS of the process
      (GNU time); the API server's CPU (its process accounting, less its idle rate), the bytes
      its Go runtime allocated and its garbage collections, and the bytes it answered by verb
      and resource (its /metrics: response sizes of GET/LIST and watch events) while it ran.
      A collection marks the server's whole heap (gigabytes at 150,000 pods), so its CPU over
      one run moves by seconds with whether one fell inside it; the allocations do not, and
      the collections' work over time is in proportion to them.
  (b) Deployment mode: --cycles cycles every --interval seconds, 1% of the pods changed each
      interval by this script (a container restart, a relabel, or a replacement by a new pod of
      the same name): per-cycle time (from the cycle's first and last log lines, which both
      write: "Resetting pod evictor counters" ... "Number of evictions/requests"), the process's
      RSS after each cycle, LIST requests (and watch-lists, `sendInitialEvents=true`) after the
      start-up sync, and the API server's CPU and allocations per steady cycle less what the
      churn alone costs it (measured before, without a descheduler). The start-up sync is the
      time from start to the end of the first cycle: the server's CPU, allocations and bytes.
  (c) the server's side of both: requests by verb and resource from its audit log, per user.
  (d) an API server restart in a Deployment run: kube-apiserver killed and started again mid-way;
      the seconds from the server ready again until the descheduler has re-opened every list
      and watch it had, the requests it sent in that time, LISTs after the restart, and evictions
      that could only come from a stale view: sent after the restart before it had re-synced,
      or answered 404/409 (the pod gone or replaced).
  (e) leader election (ours; tests/realapi/test_leader_election.py --measure) when present.

Writes bench/out/realapi.json (`{"sizes": {"N:P": {"ours": S, "upstream": S, ...}}}`, S with
oneshot, deployment, startup, restart as docs/performance.md describes) and prints a table of medians and the
ratios upstream/ours.

  python3 bench/realapi.py [--sizes "500:15000 2000:60000"] [--repeats 3] [--cycles 20]
"""

import argparse
import json
import os
import platform
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))
sys.path.insert(0, os.path.join(ROOT, "tests", "realapi"))
sys.path.insert(0, os.path.join(ROOT, "tests", "apisim"))
sys.path.insert(0, HERE)

import bench  # noqa: E402  (gnu_time, proc_status, proc_cpu)
from kubeclient import ApiError  # noqa: E402

POLICY = os.path.join(HERE, "policy-lnu.yaml")
USERS = {"ours": "bench-ours", "upstream": "bench-upstream"}
KLOG_TIME = re.compile(r"^[IWEF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d\.\d+)")
# unquoted: upstream writes this line with Infof, ours as a structured message
CYCLE_START = "Resetting pod evictor counters"
CYCLE_END = '"Number of evictions/requests"'


def log(msg):
    print("bench-realapi: " + msg, file=sys.stderr, flush=True)


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def klog_seconds(line):
    """A klog line's header time in seconds, for differences within a run (the month and day
    count, so a run across midnight still subtracts right)."""
    m = KLOG_TIME.match(line)
    if not m:
        return None
    mo, d, h, mi, s = m.groups()
    return ((int(mo) * 31 + int(d)) * 24 + int(h)) * 3600 + int(mi) * 60 + float(s)


# ---------- the API server's side ----------

METRIC = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? ([^ ]+)')
LABEL = re.compile(r'(\w+)="([^"]*)"')


class ServerSide:
    """What the API server spends: CPU from its process accounting, bytes from its /metrics."""

    def __init__(self, sc):
        self.sc = sc

    def cpu(self):
        return bench.proc_cpu(self.sc.apiserver_pid())

    def read_metrics(self):
        """From its /metrics: the response bytes of reads (GET, LIST) plus the bytes of the watch
        events it sent, by "VERB resource" ("WATCH-EVENTS kind" for the events); the bytes its Go
        runtime has allocated so far and the garbage collections it has run."""
        sent, alloc, gcs = {}, 0.0, 0.0
        for line in self.sc.apiserver_metrics().splitlines():
            m = METRIC.match(line)
            if not m:
                continue
            name, labels, value = m.group(1), dict(LABEL.findall(m.group(2) or "")), m.group(3)
            if name == "apiserver_response_sizes_sum" and labels.get("verb") in ("GET", "LIST"):
                key = "%s %s" % (labels["verb"], labels.get("resource", ""))
            elif name == "apiserver_watch_events_sizes_sum":
                key = "WATCH-EVENTS %s" % labels.get("kind", labels.get("resource", ""))
            else:
                if name == "go_memstats_alloc_bytes_total":
                    alloc = float(value)
                elif name == "go_gc_duration_seconds_count":
                    gcs = float(value)
                continue
            sent[key] = sent.get(key, 0.0) + float(value)
        return sent, alloc, gcs

    def snapshot(self):
        """Its CPU before and after reading its /metrics (rendering them is work of its own,
        left out of every interval: delta counts from one snapshot's "after" to the next's
        "before")."""
        t, before = time.time(), self.cpu()
        sent, alloc, gcs = self.read_metrics()
        return {"t": t, "cpu": before, "cpuAfter": self.cpu(), "bytes": sum(sent.values()), "byResource": sent,
                "alloc": alloc, "gcs": gcs}

    @staticmethod
    def delta(a, b):
        """What the server did between two snapshots. Its garbage collector's work comes in lumps
        (a collection marks the whole heap: gigabytes at 150,000 pods) that fall in one interval
        or the next, so CPU is uneven from run to run; the bytes its Go runtime allocated meanwhile
        are not, and are what its collections will cost (their work is in proportion)."""
        by = {k: v - a["byResource"].get(k, 0.0) for k, v in b["byResource"].items()}
        return {"seconds": b["t"] - a["t"], "cpu": b["cpu"] - a["cpuAfter"], "bytes": b["bytes"] - a["bytes"],
                "bytesByResource": {k: round(v) for k, v in by.items() if v >= 1},
                "allocMB": (b["alloc"] - a["alloc"]) / 1e6, "gcs": int(b["gcs"] - a["gcs"])}


def audit_requests(events, user, since=None, until=None):
    """{"verb resource[/subresource]": count} of one user's completed requests in [since, until)
    (epoch seconds of the request's receipt)."""
    out = {}
    for ev in events:
        if (ev.get("user") or {}).get("username") != user or ev.get("stage") != "ResponseComplete":
            continue
        t = audit_time(ev, "requestReceivedTimestamp")
        if (since is not None and t < since) or (until is not None and t >= until):
            continue
        ref = ev.get("objectRef")
        if ref:
            key = "%s %s%s" % (ev.get("verb"), ref.get("resource"), "/" + ref["subresource"] if ref.get("subresource") else "")
        else:  # discovery, /version
            key = "%s %s" % (ev.get("verb"), ev.get("requestURI", "").split("?")[0])
        out[key] = out.get(key, 0) + 1
    return out


def audit_log(sc, since=None):
    """Every event of the API server's audit log (every stage: a watch shows when it started
    streaming in ResponseStarted), received at or after `since` (epoch seconds)."""
    out = []
    with open(sc.cluster.audit_log) as f:
        for line in f:
            try:
                ev = json.loads(line)
            except ValueError:
                continue  # a line being written
            if since is None or audit_time(ev, "requestReceivedTimestamp") >= since:
                out.append(ev)
    return out


def audit_time(ev, field):
    from datetime import datetime
    return datetime.strptime(ev[field].replace("Z", "+0000"), "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()


def lists(events, since=None):
    """How many lists the events hold, received at or after `since`: LISTs answered (the first
    page of each: the pages of one list are one list) and watch-lists (watches that start with
    the current state, `sendInitialEvents=true`, once streaming)."""
    n = 0
    for ev in events:
        if since is not None and audit_time(ev, "requestReceivedTimestamp") < since:
            continue
        q = urllib.parse.parse_qs(urllib.parse.urlsplit(ev.get("requestURI", "")).query)
        if ev.get("verb") == "list" and ev.get("stage") == "ResponseComplete" and "continue" not in q:
            n += 1
        elif ev.get("verb") == "watch" and ev.get("stage") == "ResponseStarted" and q.get("sendInitialEvents") == ["true"]:
            n += 1
    return n


# ---------- the cluster between runs ----------

SERVER_SET = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields",
              "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink")


def recreate(client, pod):
    """The pod again, as it was (name, node, spec), Running; from the object a DELETE returned."""
    md = pod["metadata"]
    for k in SERVER_SET:
        md.pop(k, None)
    status = pod.pop("status", None)
    path = "/api/v1/namespaces/%s/pods" % md["namespace"]
    out = client.create(path, pod)
    if status:
        out["status"] = status
        client.put("%s/%s/status" % (path, md["name"]), out)


def force_delete(client, ns, name):
    """Deletes a pod now (grace 0); returns the object as it was, or None when it is gone."""
    try:
        return client.request("DELETE", "/api/v1/namespaces/%s/pods/%s" % (ns, name),
                              body={"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0})
    except ApiError as e:
        if e.code == 404:
            return None
        raise


def restore_evicted(sc, user, since):
    """Puts back every pod the user evicted since `since`: it is Terminating (no kubelet)."""
    n = 0
    for ev in audit_log(sc, since):
        ref = ev.get("objectRef") or {}
        if ((ev.get("user") or {}).get("username") != user or ev.get("stage") != "ResponseComplete"
                or ref.get("subresource") != "eviction" or (ev.get("responseStatus") or {}).get("code") != 201):
            continue
        pod = force_delete(sc.cluster.client, ref["namespace"], ref["name"])
        if pod is not None:
            recreate(sc.cluster.client, pod)
            n += 1
    return n


class PDBs:
    """The PodDisruptionBudgets' status as the disruption controller of kube-controller-manager
    (not run here) would write it: observed, one disruption allowed. Without it every eviction
    of a covered pod answers 429 "still being processed" with Retry-After 10, which both
    clients retry ten times; and an eviction uses up the budget for good. Written at the start
    and after every run, so each run meets the same budgets."""

    def __init__(self, client):
        self.client = client
        self.items = []
        for pdb in client.get("/apis/policy/v1/poddisruptionbudgets")["items"]:
            md = pdb["metadata"]
            sel = ",".join("%s=%s" % kv for kv in sorted(pdb["spec"]["selector"]["matchLabels"].items()))
            pods = client.get("/api/v1/namespaces/%s/pods" % md["namespace"], query={"labelSelector": sel})["items"]
            self.items.append((md["namespace"], md["name"], len(pods)))

    def reset(self):
        for ns, name, n in self.items:
            path = "/apis/policy/v1/namespaces/%s/poddisruptionbudgets/%s" % (ns, name)
            pdb = self.client.get(path)
            pdb["status"] = {"observedGeneration": pdb["metadata"].get("generation", 1), "disruptionsAllowed": 1,
                             "currentHealthy": n, "desiredHealthy": max(0, n - 1), "expectedPods": n,
                             "conditions": [{"type": "DisruptionAllowed", "status": "True", "reason": "SufficientPods",
                                             "message": "", "observedGeneration": pdb["metadata"].get("generation", 1),
                                             "lastTransitionTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}]}
            self.client.put(path + "/status", pdb)


class Churn:
    """1% of the pods changed every `interval` seconds, in a thread: 40% a container restart
    (status), 40% a relabel, 20% replaced by a new pod of the same name (new UID). The same
    seed gives the same sequence of pods."""

    def __init__(self, sc, pods, interval, fraction, seed):
        self.sc, self.pods, self.interval = sc, pods, interval
        self.per_round = max(1, int(len(pods) * fraction))
        self.rng = random.Random(seed)
        self.stop_evt = threading.Event()
        self.rounds = self.changes = 0
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.errors = []

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.stop_evt.set()
        self.thread.join()

    def _one(self, ns, name, kind, mark):
        c = self.sc.cluster.client
        path = "/api/v1/namespaces/%s/pods/%s" % (ns, name)
        if kind == "restart":
            pod = c.get(path)
            for cs in (pod.get("status") or {}).get("containerStatuses") or []:
                cs["restartCount"] = int(cs.get("restartCount") or 0) + 1
            c.put(path + "/status", pod)
        elif kind == "relabel":
            c.request("PATCH", path, body={"metadata": {"labels": {"bench-churn": mark}}},
                      content_type="application/merge-patch+json")
        else:
            pod = force_delete(c, ns, name)
            if pod is not None:
                recreate(c, pod)

    def _run(self):
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(max_workers=6) as pool:
            while not self.stop_evt.is_set():
                t0 = time.time()
                self.rounds += 1
                picks = self.rng.sample(self.pods, self.per_round)
                jobs = []
                for ns, name in picks:
                    r = self.rng.random()
                    kind = "restart" if r < 0.4 else "relabel" if r < 0.8 else "replace"
                    jobs.append(pool.submit(self._one, ns, name, kind, str(self.rounds)))
                for j in jobs:
                    try:
                        j.result()
                        self.changes += 1
                    except (ApiError, OSError) as e:
                        self.errors.append(str(e))
                self.stop_evt.wait(max(0.0, self.interval - (time.time() - t0)))


def pod_names(sc):
    """Every pod's namespace and name, read in pages as metadata only."""
    out, cont = [], ""
    while True:
        q = {"limit": "5000"}
        if cont:
            q["continue"] = cont
        page = sc.cluster.client.request(
            "GET", "/api/v1/pods", query=q,
            accept="application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1")
        out += [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in page["items"]]
        cont = (page.get("metadata") or {}).get("continue")
        if not cont:
            return out


# ---------- the runs ----------

class Runner:
    def __init__(self, a, sc, binaries, workdir):
        self.a, self.sc, self.binaries, self.workdir = a, sc, binaries, workdir
        self.server = ServerSide(sc)
        self.pdbs = PDBs(sc.cluster.client)
        self.pdbs.reset()
        self.kubeconfigs = {}
        for who, user in USERS.items():
            path = os.path.join(workdir, "kubeconfig-" + who)
            with open(path, "w") as f:
                f.write(sc.cluster.kubeconfig(token=sc.cluster.user_tokens[user]))
            self.kubeconfigs[who] = path

    def argv(self, who, interval):
        return [self.binaries[who], "--kubeconfig", self.kubeconfigs[who], "--policy-config-file", POLICY,
                "--feature-gates", "EvictionsInBackground=true", "--v", "3",
                "--client-connection-qps", "1000", "--client-connection-burst", "1000",
                "--secure-port", "0",
                "--descheduling-interval", "%gs" % interval]

    def idle_rate(self, seconds=10.0, settle=180.0):
        """The server's CPU, bytes and allocations a second with no client but this script. Just
        after it starts (its watch cache filled, its first collections of a heap of gigabytes) it
        is still busy for a minute or more: windows of `seconds` are measured until one's CPU rate
        is within 20% of the one before (or below 0.02 s/s), at most `settle` seconds; that
        window is the idle rate, taken off every run's figures for the run's length."""
        t_end = time.time() + settle
        prev = None
        while True:
            a = self.server.snapshot()
            time.sleep(seconds)
            d = ServerSide.delta(a, self.server.snapshot())
            rate = (d["cpu"] / d["seconds"], d["bytes"] / d["seconds"], d["allocMB"] / d["seconds"])
            if rate[0] < 0.02 or (prev is not None and abs(rate[0] - prev[0]) <= 0.2 * prev[0]) or time.time() > t_end:
                return rate
            log("API server not idle yet: %.3f CPU s/s" % rate[0])
            prev = rate

    def oneshot(self, who, idle):
        user = USERS[who]
        err = os.path.join(self.workdir, "%s-oneshot.err" % who)
        t0 = time.time()
        a = self.server.snapshot()
        with open(err, "w") as e:
            rc, wall, cpu, rss = bench.gnu_time(self.argv(who, 0), subprocess.DEVNULL, e)
        b = self.server.snapshot()
        if rc != 0:
            raise RuntimeError("%s one-shot exited with %d; see %s" % (who, rc, err))
        d = ServerSide.delta(a, b)
        reqs = audit_requests(audit_log(self.sc, t0), user)
        restored = restore_evicted(self.sc, user, t0)
        self.pdbs.reset()
        log("%s one-shot: wall %.2f s, CPU %.2f s, RSS %.0f MB; API server CPU %.2f s (%d GCs), %.0f MB allocated, "
            "%.1f MB sent; %d evictions put back"
            % (who, wall, cpu, rss, d["cpu"] - idle[0] * d["seconds"], d["gcs"], d["allocMB"] - idle[2] * d["seconds"],
               d["bytes"] / 1e6, restored))
        return {"wall": wall, "cpu": cpu, "rssMB": rss, "apiserverCpu": d["cpu"] - idle[0] * d["seconds"],
                "apiserverCpuRaw": d["cpu"], "apiserverAllocMBRaw": d["allocMB"], "seconds": d["seconds"],
                "bytes": d["bytes"] - idle[1] * d["seconds"], "bytesByResource": d["bytesByResource"],
                "apiserverAllocMB": d["allocMB"] - idle[2] * d["seconds"], "apiserverGcs": d["gcs"],
                "requests": reqs, "evicted": restored}

    def deployment(self, who, pods, churn_cost, restart_after=None):
        """One Deployment-mode run; with restart_after=K, kube-apiserver is restarted once cycle K
        has ended, half an interval later, so the next cycle starts around the restart."""
        a_, user, interval = self.a, USERS[who], self.a.interval
        err = os.path.join(self.workdir, "%s-deploy%s.err" % (who, "-restart" if restart_after else ""))
        cycles_wanted = a_.cycles if restart_after is None else restart_after + a_.restart_cycles
        t_start = time.time()
        s0 = self.server.snapshot()
        ef = open(err, "w")
        p = subprocess.Popen(self.argv(who, interval), stdout=subprocess.DEVNULL, stderr=ef)
        cycles = []          # (start, end) klog seconds
        samples = []         # per cycle end: server snapshot, RSS MB, wall time
        churn = None
        restart = {}
        restart_at = None
        started = None
        pos = 0
        deadline = time.time() + a_.deployment_timeout
        try:
            with open(err) as rf:
                while len(cycles) < cycles_wanted or (restart_after is not None and (
                        "ready" not in restart or time.time() < restart["ready"] + a_.restart_watch)):
                    if p.poll() is not None:
                        raise RuntimeError("%s exited with %d in Deployment mode; see %s" % (who, p.returncode, err))
                    if "error" in restart:
                        raise RuntimeError(restart["error"])
                    if time.time() > deadline:
                        raise RuntimeError("%s: %d of %d cycles in %d s; see %s"
                                           % (who, len(cycles), cycles_wanted, a_.deployment_timeout, err))
                    rf.seek(pos)
                    chunk = rf.read()
                    if not chunk.endswith("\n"):
                        chunk = chunk[:chunk.rfind("\n") + 1]
                    pos += len(chunk.encode())
                    for line in chunk.splitlines():
                        if CYCLE_START in line:
                            started = klog_seconds(line)
                        elif CYCLE_END in line and started is not None:
                            cycles.append((started, klog_seconds(line)))
                            started = None
                            # the server is read at the end of the first cycle and of the last
                            # (a restart run: the first only; the server may be down later, and
                            # then is a new process)
                            last = restart_after is None and len(cycles) == cycles_wanted
                            samples.append({"server": self.server.snapshot() if len(cycles) == 1 or last else None,
                                            "rssMB": bench.proc_status(p.pid).get("VmRSS", 0) / 1024.0,
                                            "t": time.time()})
                            if len(cycles) == 1:
                                churn = Churn(self.sc, pods, interval, a_.churn, a_.seed).start()
                            if restart_after is not None and len(cycles) == restart_after:
                                restart_at = time.time() + interval / 2.0
                    # on this thread: the server it starts again dies with the thread that
                    # started it (the lab's processes ask for PR_SET_PDEATHSIG, which follows
                    # the thread), and this one lasts the whole run
                    if restart_at is not None and "killed" not in restart and time.time() >= restart_at:
                        self._restart(restart)
                    time.sleep(0.1)
        finally:
            if churn:
                churn.stop()
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            ef.close()
        t_end = time.time()
        mine = [ev for ev in audit_log(self.sc, t_start) if (ev.get("user") or {}).get("username") == user]
        sync_end = samples[0]["t"]
        durations = [e - s for s, e in cycles]
        out = {"cycles": len(cycles), "cycleSeconds": durations,
               "cycleMedian": median(durations[1:]), "firstCycle": durations[0],
               "rssMB": [round(s["rssMB"], 1) for s in samples]}
        startup = ServerSide.delta(s0, samples[0]["server"])
        out["startup"] = {"seconds": sync_end - t_start, "apiserverCpu": startup["cpu"],
                          "bytes": startup["bytes"], "bytesByResource": startup["bytesByResource"],
                          "apiserverAllocMB": startup["allocMB"], "apiserverGcs": startup["gcs"],
                          "requests": audit_requests(mine, user, until=sync_end)}
        if restart_after is None:
            steady = ServerSide.delta(samples[0]["server"], samples[-1]["server"])
            n = len(samples) - 1
            out["listsAfterSync"] = lists(mine, since=sync_end)
            out["apiserverCpuPerCycle"] = (steady["cpu"] - churn_cost["cpu"] * steady["seconds"]) / n
            out["apiserverBytesPerCycle"] = (steady["bytes"] - churn_cost["bytes"] * steady["seconds"]) / n
            out["apiserverAllocMBPerCycle"] = (steady["allocMB"] - churn_cost["allocMB"] * steady["seconds"]) / n
            out["apiserverGcs"] = steady["gcs"]
            out["rssGrowthPct"] = 100.0 * (samples[-1]["rssMB"] - samples[1]["rssMB"]) / samples[1]["rssMB"]
            out["steadyRequests"] = audit_requests(mine, user, since=sync_end)
            out["churn"] = {"rounds": churn.rounds if churn else 0, "changes": churn.changes if churn else 0,
                            "errors": len(churn.errors) if churn else 0}
            if churn and churn.errors:
                log("churn errors (%d), first: %s" % (len(churn.errors), churn.errors[0]))
        else:
            out["restart"] = self._restart_figures(restart, mine, user, t_end)
        out["evicted"] = restore_evicted(self.sc, user, t_start)
        self.pdbs.reset()
        return out

    def _restart(self, into):
        into["killed"] = time.time()
        try:
            into["startSeconds"] = self.sc.restart_apiserver(down_seconds=self.a.down_seconds)
            into["ready"] = time.time()
        except Exception as e:  # the run ends and says so
            into["error"] = "restarting kube-apiserver: %s" % e

    def _restart_figures(self, restart, mine, user, t_end):
        if "ready" not in restart:
            return {"recovered": False, "why": "the restart did not finish"}
        killed, ready = restart["killed"], restart["ready"]
        before = [ev for ev in mine if audit_time(ev, "requestReceivedTimestamp") < killed]
        # from the kill on: the new server takes requests before its /readyz says ok
        after = [ev for ev in mine if audit_time(ev, "requestReceivedTimestamp") >= killed]
        # the kinds it read before: each must be read again (a watch re-opened, or a list)
        kinds = sorted({(ev.get("objectRef") or {}).get("resource") for ev in before
                        if ev.get("verb") in ("list", "watch")})
        reopened = {}
        for ev in after:
            res = (ev.get("objectRef") or {}).get("resource")
            if ev.get("verb") in ("list", "watch") and res in kinds and res not in reopened:
                # a list counts when answered 200, a watch when the server started streaming it
                # (a watch refused, "429 storage is (re)initializing" while the server fills
                # its cache, has no ResponseStarted stage)
                code = (ev.get("responseStatus") or {}).get("code")
                if (ev.get("verb") == "list" and ev.get("stage") == "ResponseComplete" and code == 200) or \
                        (ev.get("verb") == "watch" and ev.get("stage") == "ResponseStarted" and code in (None, 200)):
                    reopened[res] = audit_time(ev, "stageTimestamp")
        recovered = set(kinds) <= set(reopened)
        synced_at = max(reopened.values()) if recovered and reopened else None
        evictions = [ev for ev in after if (ev.get("objectRef") or {}).get("subresource") == "eviction"
                     and ev.get("stage") == "ResponseComplete"]
        early = [ev for ev in evictions if synced_at is None or audit_time(ev, "requestReceivedTimestamp") < synced_at]
        gone = [ev for ev in evictions if (ev.get("responseStatus") or {}).get("code") in (404, 409)]
        # secondsToSync is from the server's /readyz ok: below 0 when every kind was open again
        # before the server said it was ready
        return {"recovered": recovered, "secondsToSync": (synced_at - ready) if synced_at else None,
                "secondsToSyncFromKill": (synced_at - killed) if synced_at else None,
                "kindsToReopen": kinds, "kindsReopened": sorted(reopened),
                "listsAfterRestart": lists(after),
                "requestsToRecover": audit_requests(after, user, until=synced_at or t_end),
                "staleEvictions": len({id(e) for e in early + gone}),
                "evictionsBeforeSync": len(early), "evictionsOfGonePods": len(gone),
                "apiserverDownSeconds": ready - killed}


def churn_cost(runner, pods, seconds):
    """The API server's CPU and bytes a second for the churn alone, no descheduler running."""
    a = runner.a
    churn = Churn(runner.sc, pods, a.interval, a.churn, a.seed + 1000).start()
    s0 = runner.server.snapshot()
    time.sleep(seconds)
    d = ServerSide.delta(s0, runner.server.snapshot())
    churn.stop()
    log("churn alone: %d changes in %.0f s, API server CPU %.3f s/s, %.1f MB allocated/s"
        % (churn.changes, d["seconds"], d["cpu"] / d["seconds"], d["allocMB"] / d["seconds"]))
    return {"cpu": d["cpu"] / d["seconds"], "bytes": d["bytes"] / d["seconds"], "allocMB": d["allocMB"] / d["seconds"],
            "changes": churn.changes}


def summarize(runs):
    """The interface's S from the runs of one binary at one size."""
    one, dep, rst = runs["oneshot"], runs["deployment"], runs["restart"]
    s = {}
    if one:
        s["oneshot"] = {"wallMedian": median([r["wall"] for r in one]), "wallMin": min(r["wall"] for r in one),
                        "cpuMedian": median([r["cpu"] for r in one]), "cpuMin": min(r["cpu"] for r in one),
                        "rssMedianMB": median([r["rssMB"] for r in one]), "rssMinMB": min(r["rssMB"] for r in one),
                        "apiserverCpuMedian": median([r["apiserverCpu"] for r in one]),
                        "apiserverAllocMBMedian": median([r["apiserverAllocMB"] for r in one]),
                        "bytesMedian": median([r["bytes"] for r in one]), "runs": one}
    if dep:
        s["deployment"] = {"cycleMedian": median([r["cycleMedian"] for r in dep]),
                           "listsAfterSync": max(r["listsAfterSync"] for r in dep),
                           "apiserverCpuPerCycle": median([r["apiserverCpuPerCycle"] for r in dep]),
                           "apiserverBytesPerCycle": median([r["apiserverBytesPerCycle"] for r in dep]),
                           "apiserverAllocMBPerCycle": median([r["apiserverAllocMBPerCycle"] for r in dep]),
                           "rssGrowthPct": median([r["rssGrowthPct"] for r in dep]), "runs": dep}
        s["startup"] = {"apiserverCpu": median([r["startup"]["apiserverCpu"] for r in dep]),
                        "bytes": median([r["startup"]["bytes"] for r in dep]),
                        "apiserverAllocMB": median([r["startup"]["apiserverAllocMB"] for r in dep]),
                        "seconds": median([r["startup"]["seconds"] for r in dep])}
    if rst:
        r = rst[-1]["restart"]
        s["restart"] = {k: r.get(k) for k in ("recovered", "secondsToSync", "secondsToSyncFromKill",
                                              "listsAfterRestart", "staleEvictions",
                                              "evictionsBeforeSync", "evictionsOfGonePods", "requestsToRecover",
                                              "apiserverDownSeconds", "kindsToReopen", "kindsReopened")}
    return s


def ratio(u, o):
    return round(u / o, 2) if u is not None and o not in (None, 0) else None


def ratios(ours, up):
    out = {}
    for part, keys in (("oneshot", ("wallMedian", "cpuMedian", "rssMedianMB", "apiserverCpuMedian",
                                    "apiserverAllocMBMedian", "bytesMedian")),
                       ("deployment", ("cycleMedian", "apiserverCpuPerCycle", "apiserverAllocMBPerCycle",
                                       "apiserverBytesPerCycle")),
                       ("startup", ("apiserverCpu", "apiserverAllocMB", "bytes"))):
        for k in keys:
            if part in ours and part in up:
                out["%s.%s" % (part, k)] = ratio(up[part].get(k), ours[part].get(k))
    return out


def machine():
    mem = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                mem = int(line.split()[1]) // 1024
    osr = ""
    try:
        with open("/etc/os-release") as f:
            osr = dict(l.rstrip("\n").split("=", 1) for l in f if "=" in l).get("PRETTY_NAME", "").strip('"')
    except OSError:
        pass
    return {"cpus": os.cpu_count(), "memMB": mem, "os": osr, "kernel": platform.release()}


def commit():
    try:
        c = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout.strip()
        return c + ("-dirty" if dirty else "")
    except OSError:
        return "unknown"


def fmt(v, digits=2):
    if v is None:
        return "-"
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, float) and abs(v) >= 1e6:
        return "%.1f MB" % (v / 1e6)
    return ("%." + str(digits) + "f") % v if isinstance(v, float) else str(v)


def print_table(result):
    for size, r in result["sizes"].items():
        print("\n%s nodes:pods (load: %s)" % (size, r.get("load", {}).get("source", "?")))
        rows = [("one-shot wall s (median)", "oneshot", "wallMedian"), ("one-shot CPU s", "oneshot", "cpuMedian"),
                ("one-shot peak RSS MB", "oneshot", "rssMedianMB"),
                ("one-shot API server CPU s", "oneshot", "apiserverCpuMedian"),
                ("one-shot API server allocated MB", "oneshot", "apiserverAllocMBMedian"),
                ("one-shot API server bytes", "oneshot", "bytesMedian"),
                ("start-up sync: API server CPU s", "startup", "apiserverCpu"),
                ("start-up sync: API server alloc MB", "startup", "apiserverAllocMB"),
                ("start-up sync: API server bytes", "startup", "bytes"),
                ("Deployment cycle s (median)", "deployment", "cycleMedian"),
                ("Deployment LISTs after sync", "deployment", "listsAfterSync"),
                ("Deployment API server CPU s/cycle", "deployment", "apiserverCpuPerCycle"),
                ("Deployment API server alloc MB/cycle", "deployment", "apiserverAllocMBPerCycle"),
                ("Deployment API server bytes/cycle", "deployment", "apiserverBytesPerCycle"),
                ("Deployment RSS growth %", "deployment", "rssGrowthPct"),
                ("restart: recovered", "restart", "recovered"), ("restart: s to sync", "restart", "secondsToSync"),
                ("restart: LISTs after", "restart", "listsAfterRestart"),
                ("restart: stale evictions", "restart", "staleEvictions")]
        print("%-36s %14s %14s %8s" % ("", "ours", "upstream", "up/ours"))
        for label, part, key in rows:
            o = (r["ours"].get(part) or {}).get(key)
            u = (r["upstream"].get(part) or {}).get(key)
            rt = ratio(u, o) if isinstance(o, (int, float)) and not isinstance(o, bool) else None
            print("%-36s %14s %14s %8s" % (label, fmt(o), fmt(u), fmt(rt)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--sizes", default=os.environ.get("SIZES") or "500:15000",
                    help='"NODES:PODS ..." (VMs: 2 in 15 pods; default $SIZES or 500:15000)')
    ap.add_argument("--repeats", type=int, default=3, help="one-shot runs of each binary per size (default 3)")
    ap.add_argument("--deployment-repeats", type=int, default=1, help="Deployment-mode runs of each (default 1)")
    ap.add_argument("--cycles", type=int, default=20, help="Deployment-mode cycles (default 20)")
    ap.add_argument("--interval", type=float, default=0,
                    help="Deployment-mode interval, s (default: 20 s per 150,000 pods, at least 5)")
    ap.add_argument("--churn", type=float, default=0.01, help="share of the pods changed each interval (0.01)")
    ap.add_argument("--restart-after", type=int, default=3,
                    help="the API server is restarted after this many cycles of a restart run (3)")
    ap.add_argument("--restart-cycles", type=int, default=4, help="cycles after the API server restart (4)")
    ap.add_argument("--down-seconds", type=float, default=3.0, help="the API server stays down this long (3)")
    ap.add_argument("--restart-watch", type=float, default=60.0,
                    help="a restart run goes on at least this long after the server is back, s (60)")
    ap.add_argument("--deployment-timeout", type=int, default=3600)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=8, help="loader threads (tests/lab/scale.py)")
    ap.add_argument("--only", default="oneshot,deployment,restart,leader")
    ap.add_argument("--out", default=os.path.join(HERE, "out", "realapi.json"))
    ap.add_argument("--binary", default=os.environ.get("DESCHEDULER") or os.path.join(ROOT, "build", "descheduler"))
    a = ap.parse_args()
    only = set(a.only.split(","))
    unknown = only - {"oneshot", "deployment", "restart", "leader"}
    if unknown:
        ap.error("--only: unknown part(s) %s (expected a comma-separated subset of oneshot,deployment,restart,leader)"
                 % ",".join(sorted(unknown)))
    if a.restart_after < 1 or a.restart_cycles < 1 or a.cycles < 2:
        ap.error("--restart-after and --restart-cycles must be at least 1, --cycles at least 2")

    up = subprocess.run([os.path.join(HERE, "upstream.sh"), "--print"], stdout=subprocess.PIPE, text=True)
    if up.returncode == 3:
        print("bench-realapi: NOT RUN: upstream's descheduler cannot be built on this machine (above)")
        return 3
    if up.returncode != 0:
        print("bench-realapi: NOT RUN: bench/upstream.sh failed (exit %d)" % up.returncode)
        return up.returncode
    binaries = {"ours": os.path.abspath(a.binary), "upstream": up.stdout.strip().splitlines()[-1]}
    if not os.access(binaries["ours"], os.X_OK):
        print("bench-realapi: build first (make build): %s is missing" % binaries["ours"], file=sys.stderr)
        return 1
    import scale  # tests/lab/scale.py: after the checks above, so a missing build says so first

    result = {"machine": machine(), "commit": commit(), "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "upstream": os.path.basename(os.path.dirname(binaries["upstream"])), "sizes": {},
              "method": "tests/lab/scale.py: real etcd + kube-apiserver, no KubeVirt, KWOK stopped after the load; "
                        "figures of the API server are its process CPU and /metrics less its idle or churn-only rate"}
    def save():
        # after every phase: a run stopped half-way keeps what it measured ("partial")
        os.makedirs(os.path.dirname(a.out), exist_ok=True)
        with open(a.out, "w") as f:
            json.dump(result, f, indent=1, sort_keys=True)

    def record(size, runs, sc, idle, interval, cost, partial):
        entry = {"ours": summarize(runs["ours"]), "upstream": summarize(runs["upstream"]),
                 "load": sc.load_stats, "apiserverIdleCpuPerSecond": idle[0],
                 "interval": interval, "cycles": a.cycles, "churn": a.churn}
        if cost:
            entry["churnAlone"] = cost
        entry["ratios"] = ratios(entry["ours"], entry["upstream"])
        if partial:
            entry["partial"] = True
        result["sizes"][size] = entry
        save()

    user_interval = a.interval
    for size in a.sizes.split():
        nodes, pods = (int(x) for x in size.split(":")[:2])
        vms = int(size.split(":")[2]) if size.count(":") == 2 else pods * 2 // 15
        workdir = tempfile.mkdtemp(prefix="bench-realapi-")
        log("%s: starting the cluster (%d nodes, %d pods, %d VMs)" % (size, nodes, pods, vms))
        sc = scale.ScaleCluster(nodes, pods, vms, seed=a.seed, workdir=os.path.join(workdir, "cluster"),
                                workers=a.workers, users={u: ["system:masters"] for u in USERS.values()},
                                audited_users=tuple(USERS.values()))
        try:
            sc.start()
            runner = Runner(a, sc, binaries, workdir)
            idle = runner.idle_rate()
            log("API server idle: %.3f CPU s/s, %.0f bytes/s, %.1f MB allocated/s" % idle)
            runs = {who: {"oneshot": [], "deployment": [], "restart": []} for who in USERS}
            order = ["ours", "upstream"]
            # both binaries' steady cycles at 150,000 pods take a few seconds on this machine
            interval = a.interval = user_interval if user_interval > 0 else max(5.0, round(20.0 * pods / 150000))
            cost = None
            if "oneshot" in only:
                for r in range(a.repeats):
                    for who in (order if r % 2 == 0 else order[::-1]):
                        runs[who]["oneshot"].append(runner.oneshot(who, idle))
                record(size, runs, sc, idle, interval, cost, True)
            if "deployment" in only or "restart" in only:
                names = pod_names(sc)
                cost = churn_cost(runner, names, max(30.0, 3 * a.interval))
            if "deployment" in only:
                for r in range(a.deployment_repeats):
                    for who in (order if r % 2 == 0 else order[::-1]):
                        d = runner.deployment(who, names, cost)
                        log("%s Deployment: %d cycles, median %.2f s, LISTs after sync %d, API server %.3f CPU s/cycle "
                            "(%d GCs), %.0f MB allocated/cycle"
                            % (who, d["cycles"], d["cycleMedian"], d["listsAfterSync"], d["apiserverCpuPerCycle"],
                               d["apiserverGcs"], d["apiserverAllocMBPerCycle"]))
                        runs[who]["deployment"].append(d)
                        record(size, runs, sc, idle, interval, cost, True)
            if "restart" in only:
                for who in order:
                    d = runner.deployment(who, names, cost, restart_after=a.restart_after)
                    log("%s restart: %s" % (who, json.dumps(d["restart"])))
                    runs[who]["restart"].append(d)
                    record(size, runs, sc, idle, interval, cost, True)
            record(size, runs, sc, idle, interval, cost, False)
        finally:
            sc.stop()
        subprocess.run(["rm", "-rf", workdir])
    if "leader" in only:
        t = os.path.join(ROOT, "tests", "realapi", "test_leader_election.py")
        if os.path.exists(t):
            p = subprocess.run([sys.executable, t, "--measure", "--repeats", "3"], stdout=subprocess.PIPE, text=True,
                               env=dict(os.environ, DESCHEDULER=binaries["ours"]))
            result["leaderElection"] = json.loads(p.stdout) if p.returncode == 0 else {"error": "exit %d" % p.returncode}
    save()
    print_table(result)
    print("\nwritten: %s (commit %s)" % (a.out, result["commit"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
