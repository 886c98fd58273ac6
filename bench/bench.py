#!/usr/bin/env python3
"""The descheduler's benchmark (`make bench`, bench/run.sh): what a cycle costs at cluster scale.

For each size (nodes:pods:vms) it generates the cluster once (bench/gen_cluster.py, fixed seed,
bench/out/cluster-<nodes>-<pods>-<vms>.json, made again when the generator changes), then
measures, --repeat times each:
  simulate  `descheduler simulate` on the file;
  floor     curl fetching the same LIST pages a live cycle reads (limit=500, one keep-alive
            connection): what the transfer alone costs, the floor of any client;
  oneshot   one live cycle (--descheduling-interval 0) against tests/apisim serving the file
            (given pbenc, tests/apisim/pbenc/, when it can be built here: pod LISTs asking for
            application/vnd.kubernetes.protobuf are then answered in it; one line says which
            encoding pods are served in and why; --pod-json keeps them JSON);
  loop      Deployment mode: --cycles cycles, the simulator changing --churn of the pods
            (POST /_sim/churn) after each cycle ends; with --churn-rollout a replacement
            rolls the pod's whole ReplicaSet to a new one, as a rolling update does (values
            never seen before come, the old ones go); --loop-flags adds flags to the
            binary's command line.
The policy is bench/policy-lnu.yaml (LowNodeUtilization + RemoveDuplicates, at most 50
evictions a cycle). The client rate limiter is set out of the way (--client-connection-qps and
-burst 10000) so that it is not what is measured.

Figures: wall, CPU (user+sys) and peak RSS from GNU time (loop: /proc between cycles); the
phases from the binary's own "Cycle timings" line (V3: list, fetch, decode, decide, evict,
total, the model's bytes per pod, and the resident memory at the cycle's end; in the loop
also "shared", the bytes the watch cache's objects share, which its compactions free;
docs/performance.md); LIST and WATCH requests per cycle and evictions from the
simulator's request counts (GET /_sim/requests); "server evict": the seconds the simulator
spent answering the cycle's pod reads (a binary before 2026-12-04 read each pod again before
its eviction; this one sends none: serverRead is 0) and eviction requests, from its request
journal (GET /_sim/journal; the JSON adds serverEvent, the Events', sent beside the cycle),
and "total-server": the cycle without them, the part that is the
binary's; "total-wait": the cycle without its requests as the binary itself timed them
(the line's wait=), which also leaves out the time a request queued in a busy simulator
before its journal saw it. Each figure is printed as min/median over the repeats;
ratios compare sizes of the same run. Prints a table, then writes the JSON
(bench/out/results.json unless --json says otherwise).

Runs on the state the simulator has: each live run evicts up to 50 pods, so later repeats see
a cluster a few dozen pods apart from the first (0.3% at the smallest size).
"""
import argparse
import hashlib
import json
import os
import queue
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
APISIM = os.path.join(ROOT, "tests", "apisim", "apisim.py")
PBENC_BUILD = os.path.join(ROOT, "tests", "apisim", "pbenc", "build.sh")
POLICY = os.path.join(HERE, "policy-lnu.yaml")
SIZES = "500:15000:2000,2000:60000:8000,5000:150000:20000"
# what a live cycle lists (src/kube/cluster.c), with the KubeVirt kinds the simulator serves
LISTS = ["/api/v1/nodes", "/api/v1/pods", "/api/v1/namespaces", "/apis/policy/v1/poddisruptionbudgets",
         "/apis/scheduling.k8s.io/v1/priorityclasses", "/api/v1/persistentvolumeclaims",
         "/apis/kubevirt.io/v1/virtualmachineinstances", "/apis/kubevirt.io/v1/virtualmachineinstancemigrations",
         "/apis/kubevirt.io/v1/kubevirts"]
LIVE_FLAGS = ["--secure-port", "0", "--policy-config-file", POLICY, "--feature-gates", "EvictionsInBackground=true",
              "--client-connection-qps", "10000", "--client-connection-burst", "10000", "--v", "3"]
ONE_POD = re.compile(r"^/api/v1/namespaces/[^/]+/pods/[^/]+$")
TIMINGS = re.compile(r'"Cycle timings"(.*)$')
FIELD = re.compile(r'(\w+)=("[^"]*"|\S+)')


def log(msg):
    print("bench: " + msg, file=sys.stderr, flush=True)


def timings_of(line):
    """The fields of a "Cycle timings" line, or None."""
    m = TIMINGS.search(line)
    if not m:
        return None
    return {k: float(v) for k, v in FIELD.findall(m.group(1))}


def gnu_time(cmd, stdout, stderr, env=None):
    """Runs cmd under GNU time: (exit code, wall s, cpu s, peak RSS MB)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        rc = subprocess.call(["/usr/bin/time", "-f", "%e %U %S %M", "-o", tf.name] + cmd,
                             stdout=stdout, stderr=stderr, env=env)
        wall, user, sys_, rss = tf.read().split()[-4:]
    return rc, float(wall), float(user) + float(sys_), int(rss) / 1024.0


def summary(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"min": min(values), "median": statistics.median(values), "runs": values}


class Sim:
    """tests/apisim serving one snapshot over plain HTTP on a free port."""

    def __init__(self, snapshot, workdir, pbenc=None):
        self.kubeconfig = os.path.join(workdir, "kubeconfig")
        self.err = open(os.path.join(workdir, "apisim.log"), "w")
        t = time.monotonic()
        self.proc = subprocess.Popen([sys.executable, APISIM, "--snapshot", snapshot, "--port", "0",
                                      "--kubeconfig-out", self.kubeconfig, "--migration-seconds", "3600"]
                                     + (["--protobuf-encoder", pbenc] if pbenc else []),
                                     stdout=subprocess.PIPE, stderr=self.err, text=True)
        line = self.proc.stdout.readline()
        if line.strip() != "ready":
            raise RuntimeError("the simulator did not start; see %s" % self.err.name)
        self.startup = time.monotonic() - t
        self.journal_seq = 0
        self.last_eviction_parts = {}
        with open(self.kubeconfig) as f:
            self.url = re.search(r"server:\s*\"?([^\"\s]+)", f.read()).group(1)

    def call(self, method, what, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + "/_sim/" + what, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=600) as r:
            return json.loads(r.read())

    def take_counts(self):
        """Request counts since the last call (then reset): LIST, WATCH, evictions, all."""
        c = self.call("GET", "requests")
        self.call("DELETE", "requests")
        verbs = c.get("byVerb", {})
        evictions = sum(n for k, n in c.get("byVerbAndPath", {}).items() if k.endswith("/eviction"))
        return {"list": verbs.get("list", 0), "watch": verbs.get("watch", 0), "evictions": evictions,
                "total": c.get("total", 0)}

    def take_eviction_time(self):
        """Seconds the simulator spent answering the pod reads (GET of one pod: the re-check
        before an eviction, which binaries before 2026-12-04 sent) and eviction requests it
        served since the last call, from its request journal (each request's end minus its
        start): the part of an eviction phase that is the server's, which no client can go below. The Events' share is kept apart
        (last_eviction_parts["event"]): they are sent in the background, beside the cycle."""
        items = self.call("GET", "journal")["items"]
        parts = {"read": 0.0, "eviction": 0.0, "event": 0.0}
        for e in items:
            if e["seq"] <= self.journal_seq:
                continue
            kind = None
            if e["method"] == "POST" and e["path"].endswith("/eviction"):
                kind = "eviction"
            elif e["method"] == "POST" and e["path"].endswith("/events"):
                kind = "event"
            elif e["method"] == "GET" and ONE_POD.match(e["path"]):
                kind = "read"
            if kind:
                parts[kind] += e["end"] - e["t"]
        if items:
            self.journal_seq = max(self.journal_seq, items[-1]["seq"])
        self.last_eviction_parts = parts
        return parts["read"] + parts["eviction"]

    def rss_mb(self):
        return proc_status(self.proc.pid).get("VmRSS", 0) / 1024.0

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()
        self.err.close()


def protobuf_encoder(a):
    """(pbenc path or None, the line saying how the simulator serves pods): with pbenc
    (tests/apisim/pbenc/build.sh, once per machine) pod LISTs asking for
    application/vnd.kubernetes.protobuf get kube-apiserver's protobuf, so a live cycle whose
    client asks for it is measured on that path; without Go it stays JSON, saying why."""
    if a.pod_json:
        return None, "the simulator serves pods in JSON only (--pod-json)"
    p = subprocess.run([PBENC_BUILD, "--print"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    why = " ".join(p.stderr.split())
    if p.returncode == 0:
        path = p.stdout.strip()
        return path, ("the simulator serves pods in protobuf to a client asking for "
                      "application/vnd.kubernetes.protobuf (pbenc: %s), JSON otherwise" % path)
    if p.returncode == 3:
        return None, "the simulator serves pods in JSON only: pbenc cannot be built here (%s)" % why
    return None, "the simulator serves pods in JSON only: the build of pbenc failed (%s)" % why


def proc_status(pid):
    out = {}
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("VmRSS", "VmHWM"):
                    out[k] = int(v.split()[0])
    except OSError:
        pass
    return out


def proc_cpu(pid):
    """user+sys seconds of a running process."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tick


def page_urls(sim):
    """The URLs of every LIST page a live cycle reads, in order (continue tokens resolved)."""
    urls = []
    for path in LISTS:
        cont = ""
        while True:
            url = sim.url + path + "?limit=500" + ("&continue=" + urllib.parse.quote(cont, safe="") if cont else "")
            try:
                with urllib.request.urlopen(url, timeout=600) as r:
                    head = r.read(4096)
                    r.read()
            except urllib.error.HTTPError as e:
                if e.code == 404:
                    break  # not served
                raise
            urls.append(url)
            m = re.search(rb'"continue":"([^"]*)"', head)
            cont = m.group(1).decode() if m else ""
            if not cont:
                break
    return urls


def floor(sim, urls, protobuf):
    """Wall seconds and bytes of curl fetching urls over one connection, with the Accept header
    the descheduler sends for pods when the simulator serves protobuf (other kinds stay JSON)."""
    cmd = ["curl", "-s", "-w", "%{size_download}\n"]
    if protobuf:
        cmd += ["-H", "Accept: application/vnd.kubernetes.protobuf,application/json"]
    for u in urls:
        cmd += ["-o", "/dev/null", u]
    t = time.monotonic()
    out = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=True).stdout
    return time.monotonic() - t, sum(int(x) for x in out.split())


def run_simulate(binary, snapshot, workdir):
    err_path = os.path.join(workdir, "simulate.err")
    with open(os.path.join(workdir, "plan.json"), "w") as out, open(err_path, "w") as err:
        rc, wall, cpu, rss = gnu_time([binary, "simulate", "--policy-config-file", POLICY, "--snapshot", snapshot,
                                       "--feature-gates", "EvictionsInBackground=true", "--v", "3", "-o", "json"],
                                      out, err)
    if rc != 0:
        raise RuntimeError("simulate failed (exit %d); see %s" % (rc, err_path))
    with open(os.path.join(workdir, "plan.json")) as f:
        planned = len(json.load(f)["evictions"])
    t = last_timings(err_path)
    return {"wall": wall, "cpu": cpu, "rss": rss, "decode": t.get("decode"), "decide": t.get("decide"),
            "planned": planned, "bytesPerPod": per_pod(t)}


def per_pod(t):
    """The model's bytes over its pods, from the timings line (None from a binary without them)."""
    return t["model"] / t["pods"] if t.get("model") and t.get("pods") else None


def last_timings(path):
    t = {}
    with open(path, errors="replace") as f:
        for line in f:
            t = timings_of(line) or t
    return t


def server_parts(sim):
    """The last take_eviction_time split by request: serverRead, serverEviction, serverEvent."""
    return {"server" + k[0].upper() + k[1:]: v for k, v in sim.last_eviction_parts.items()}


def run_oneshot(binary, sim, workdir):
    sim.take_counts()
    sim.take_eviction_time()
    err_path = os.path.join(workdir, "oneshot.err")
    with open(err_path, "w") as err:
        rc, wall, cpu, rss = gnu_time([binary, "--kubeconfig", sim.kubeconfig] + LIVE_FLAGS, subprocess.DEVNULL, err)
    if rc != 0:
        raise RuntimeError("the one-shot cycle failed (exit %d); see %s" % (rc, err_path))
    t = last_timings(err_path)
    c = sim.take_counts()
    r = {"wall": wall, "cpu": cpu, "rss": rss, "lists": c["list"], "watches": c["watch"], "evictions": c["evictions"],
         "bytesPerPod": per_pod(t), "evictServer": sim.take_eviction_time(), **server_parts(sim)}
    for k in ("list", "fetch", "decode", "decide", "evict", "total"):
        r[k] = t.get(k)
    return r


def run_loop(binary, sim, workdir, cycles, churn, interval, rollout=False, extra=()):
    """Deployment mode: per-cycle figures, churn after each cycle.

    The binary's stderr is drained by a thread of its own into the log file: a churn request
    takes the simulator seconds at 150,000 pods, and a log pipe left unread meanwhile would
    block the binary's logging and count as its time."""
    sim.take_counts()
    sim.take_eviction_time()
    err_path = os.path.join(workdir, "loop.err")
    proc = subprocess.Popen([binary, "--kubeconfig", sim.kubeconfig, "--descheduling-interval", "%gs" % interval]
                            + LIVE_FLAGS + list(extra), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    ends = queue.Queue()

    def drain():
        with open(err_path, "w") as err:
            for line in proc.stderr:
                err.write(line)
                t = timings_of(line)
                if t is not None:
                    ends.put(t)
        ends.put(None)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    per_cycle, churned = [], []
    cpu_before = 0.0
    deadline = time.monotonic() + cycles * (interval + 600)  # a hung binary must not hang the bench
    try:
        while len(per_cycle) < cycles:
            try:
                t = ends.get(timeout=max(1.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            if t is None:
                break
            cpu = proc_cpu(proc.pid)
            c = sim.take_counts()
            per_cycle.append({"total": t.get("total"), "list": t.get("list"), "fetch": t.get("fetch"),
                              "decode": t.get("decode"), "decide": t.get("decide"), "evict": t.get("evict"),
                              "wait": t.get("wait"), "cpu": cpu - cpu_before, "rss": t.get("rss", 0) / 1048576.0,
                              "shared": t.get("shared", 0) / 1048576.0,
                              "lists": c["list"], "watches": c["watch"], "evictions": c["evictions"],
                              "evictServer": sim.take_eviction_time(), **server_parts(sim)})
            cyc = per_cycle[-1]
            cyc["own"] = cyc["total"] - cyc["evictServer"] if cyc["total"] is not None else None
            # the same, the requests timed by the binary itself: their queueing in a busy
            # simulator, which its journal does not see, is left out too
            cyc["ownClient"] = cyc["total"] - cyc["wait"] if None not in (cyc["total"], cyc["wait"]) else None
            cpu_before = cpu
            if len(per_cycle) >= cycles:
                break
            rep = sim.call("POST", "churn", {"fraction": churn, "rollout": rollout})
            churned.append(rep["changed"])
        peak = proc_status(proc.pid).get("VmHWM", 0) / 1024.0
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        reader.join(timeout=60)
    if len(per_cycle) < cycles:
        raise RuntimeError("Deployment mode ran %d of %d cycles; see %s" % (len(per_cycle), cycles, err_path))
    return {"cycles": per_cycle, "peakRss": peak, "churned": churned}


def size_label(n, p):
    return "%s/%s" % (human(n), human(p))


def human(n):
    return "%dk" % (n // 1000) if n >= 1000 and n % 1000 == 0 else str(n)


def fmt(s, key="median", scale=1.0, digits=2):
    if s is None:
        return "-"
    return "%.*f/%.*f" % (digits, s["min"] * scale, digits, s[key] * scale)


def bench_size(a, n, p, v):
    name = "cluster-%d-%d-%d.json" % (n, p, v)
    snap = os.path.join(a.out, name)
    res = {"nodes": n, "pods": p, "vms": v, "snapshot": os.path.relpath(snap, ROOT)}
    # a file made by another version of the generator is made again (its hash beside it)
    with open(os.path.join(HERE, "gen_cluster.py"), "rb") as f:
        gen = hashlib.sha256(f.read()).hexdigest()[:16]
    stamp = snap + ".gen"
    if os.path.exists(snap) and (not os.path.exists(stamp) or open(stamp).read().strip() != gen):
        os.remove(snap)
    if not os.path.exists(snap):
        log("generating %s" % name)
        t = time.monotonic()
        tmp = snap + ".tmp"
        subprocess.run([sys.executable, os.path.join(HERE, "gen_cluster.py"), "--nodes", str(n), "--pods", str(p),
                        "--vms", str(v), "--out", tmp], check=True)
        os.rename(tmp, snap)
        with open(stamp, "w") as f:
            f.write(gen + "\n")
        res["generateSeconds"] = time.monotonic() - t
    res["snapshotMB"] = os.path.getsize(snap) / 1e6
    work = tempfile.mkdtemp(prefix="bench-%d-" % p, dir=a.out)
    try:
        def repeated(what, run):
            runs = []
            for i in range(a.repeat):
                log("%s %s %d/%d" % (size_label(n, p), what, i + 1, a.repeat))
                runs.append(run())
            return {k: summary([r[k] for r in runs]) for k in runs[0]}

        if "simulate" in a.only:
            res["simulate"] = repeated("simulate", lambda: run_simulate(a.binary, snap, work))
        if not ({"floor", "oneshot", "loop"} & set(a.only)):
            return res
        log("%s starting the simulator" % size_label(n, p))
        sim = Sim(snap, work, a.pbenc)
        res["simulatorStartSeconds"] = sim.startup
        res["simulatorPodEncoding"] = "protobuf" if a.pbenc else "json"
        try:
            if "floor" in a.only:
                urls = page_urls(sim)
                runs = [floor(sim, urls, bool(a.pbenc)) for _ in range(a.repeat)]
                res["floor"] = {"curl": summary([r[0] for r in runs]), "pages": len(urls), "bytes": runs[0][1]}
            oneshot_wall = None
            if "oneshot" in a.only:
                res["oneshot"] = repeated("one-shot cycle", lambda: run_oneshot(a.binary, sim, work))
                oneshot_wall = res["oneshot"]["wall"]["median"]
            if "loop" in a.only:
                interval = a.interval or max(2.0, round(2 * (oneshot_wall or 5.0) + 1))
                runs = []
                for i in range(a.repeat):
                    log("%s Deployment mode, %d cycles every %gs, run %d/%d" % (size_label(n, p), a.cycles, interval,
                                                                               i + 1, a.repeat))
                    runs.append(run_loop(a.binary, sim, work, a.cycles, a.churn, interval, a.churn_rollout,
                                         shlex.split(a.loop_flags)))
                res["loop"] = loop_summary(runs, interval, a.churn)
            res["simulatorRssMB"] = sim.rss_mb()
        finally:
            sim.stop()
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    return res


def loop_summary(runs, interval, churn):
    """Per cycle index: min/median over the runs; 'later' = cycles after the first, pooled."""
    out = {"interval": interval, "churnFraction": churn, "churned": runs[0]["churned"],
           "peakRss": summary([r["peakRss"] for r in runs]), "perCycle": []}
    keys = list(runs[0]["cycles"][0])
    for i in range(len(runs[0]["cycles"])):
        out["perCycle"].append({k: summary([r["cycles"][i][k] for r in runs]) for k in keys})
    later = [c for r in runs for c in r["cycles"][1:]]
    if later:
        out["later"] = {k: summary([c[k] for c in later]) for k in keys}
    # memory that stays: from the end of the second cycle (the first one's start-up is behind) to the last
    cyc = runs[0]["cycles"]
    first, last = cyc[1 if len(cyc) >= 3 else 0]["rss"], cyc[-1]["rss"]
    out["rssGrowth"] = (last - first) / first if first else None
    return out


def per_pod_text(s):
    b = s.get("bytesPerPod")
    return "%.0f" % b["median"] if b else "-"


def print_table(results, a):
    w = sys.stdout.write
    w("\nFigures are min/median over %d runs; seconds, MB.\n" % a.repeat)
    if "simulate" in a.only:
        w("\n(a) simulate on the file\n")
        w("%-10s %8s %13s %13s %13s %13s %13s %8s %9s\n" % ("size", "file MB", "wall", "cpu", "peak RSS", "decode",
                                                           "decide", "planned", "B/pod"))
        for r in results:
            s = r.get("simulate")
            if s:
                w("%-10s %8.0f %13s %13s %13s %13s %13s %8d %9s\n" % (
                    size_label(r["nodes"], r["pods"]), r["snapshotMB"], fmt(s["wall"]), fmt(s["cpu"]),
                    fmt(s["rss"], digits=0), fmt(s["decode"]), fmt(s["decide"]), s["planned"]["median"],
                    per_pod_text(s)))
    if "oneshot" in a.only or "floor" in a.only:
        w("\n(b) one live cycle against tests/apisim (floor: curl of the same LIST pages, pods in %s)\n"
          % ("protobuf" if a.pbenc else "JSON"))
        w("%s\n" % a.pod_encoding)
        w("%-10s %13s %13s %13s %13s %13s %13s %13s %13s %13s %6s %6s %11s %6s\n" % (
            "size", "wall", "cpu", "peak RSS", "list", "fetch", "decode", "decide", "evict", "server evict", "LISTs",
            "evicts", "curl floor", "B/pod"))
        for r in results:
            s, f = r.get("oneshot"), r.get("floor")
            if s:
                w("%-10s %13s %13s %13s %13s %13s %13s %13s %13s %13s %6d %6d %11s %6s\n" % (
                    size_label(r["nodes"], r["pods"]), fmt(s["wall"]), fmt(s["cpu"]), fmt(s["rss"], digits=0),
                    fmt(s["list"]), fmt(s["fetch"]), fmt(s["decode"]), fmt(s["decide"]), fmt(s["evict"]),
                    fmt(s.get("evictServer")), s["lists"]["median"], s["evictions"]["median"], fmt(f["curl"]) if f else "-", per_pod_text(s)))
            elif f:
                w("%-10s curl floor %s (%d pages, %.0f MB)\n" % (size_label(r["nodes"], r["pods"]), fmt(f["curl"]),
                                                                f["pages"], f["bytes"] / 1e6))
    if "loop" in a.only:
        w("\n(c) Deployment mode: per cycle (churn between cycles)\n")
        w("%-10s %5s %13s %13s %13s %13s %13s %13s %13s %13s %13s %6s %7s %9s %11s\n" % (
            "size", "cycle", "total", "cpu", "list", "decode", "decide", "evict", "server evict", "total-server",
            "total-wait", "LISTs", "WATCHes", "RSS", "shared MB"))
        for r in results:
            lp = r.get("loop")
            if not lp:
                continue
            for i, c in enumerate(lp["perCycle"]):
                w("%-10s %5d %13s %13s %13s %13s %13s %13s %13s %13s %13s %6d %7d %9s %11s\n" % (
                    size_label(r["nodes"], r["pods"]) if i == 0 else "", i + 1, fmt(c["total"]), fmt(c["cpu"]),
                    fmt(c["list"]), fmt(c["decode"]), fmt(c["decide"]), fmt(c["evict"]), fmt(c.get("evictServer")),
                    fmt(c.get("own")), fmt(c.get("ownClient")), c["lists"]["median"],
                    c["watches"]["median"], fmt(c["rss"], digits=0), fmt(c.get("shared"))))
            w("%-10s %5s peak RSS %s MB, RSS growth from cycle 2 to the last %+.1f%%, interval %gs, %s pods churned "
              "per cycle\n" % ("", "", fmt(lp["peakRss"], digits=0), 100 * (lp["rssGrowth"] or 0), lp["interval"],
                               lp["churned"][0] if lp["churned"] else 0))
    if len(results) >= 2:
        lo, hi = results[0], results[-1]
        w("\nscale %s -> %s (pods x%.0f): " % (size_label(lo["nodes"], lo["pods"]), size_label(hi["nodes"], hi["pods"]),
                                             hi["pods"] / lo["pods"]))
        parts = []
        for sec, key in (("simulate", "wall"), ("simulate", "rss"), ("oneshot", "wall"), ("oneshot", "cpu"),
                         ("oneshot", "rss")):
            if lo.get(sec) and hi.get(sec) and lo[sec][key]["median"]:
                parts.append("%s %s x%.1f" % (sec, key, hi[sec][key]["median"] / lo[sec][key]["median"]))
        w(", ".join(parts) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default=SIZES, help="comma-separated NODES:PODS:VMS (default %(default)s)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each measurement (default 3)")
    ap.add_argument("--cycles", type=int, default=5, help="Deployment-mode cycles per run (default 5)")
    ap.add_argument("--churn", type=float, default=0.01, help="share of the pods changed between cycles (0.01)")
    ap.add_argument("--churn-rollout", action="store_true",
                    help="a churn replacement rolls the pod's whole ReplicaSet to a new one (new label values and owners)")
    ap.add_argument("--loop-flags", default="", help="more flags for the binary in Deployment mode (one string)")
    ap.add_argument("--interval", type=float, default=0,
                    help="Deployment-mode interval in seconds (default: 2x the one-shot wall + 1, at least 2)")
    ap.add_argument("--only", default="simulate,floor,oneshot,loop",
                    help="comma-separated subset of simulate,floor,oneshot,loop")
    ap.add_argument("--binary", default=os.environ.get("DESCHEDULER", os.path.join(ROOT, "build", "descheduler")))
    ap.add_argument("--out", default=os.path.join(HERE, "out"), help="where clusters and results go")
    ap.add_argument("--json", help="write the results here (default OUT/results.json; - = stdout)")
    ap.add_argument("--keep", action="store_true", help="keep each run's logs under OUT/bench-*")
    ap.add_argument("--pod-json", action="store_true",
                    help="do not give the simulator pbenc: pods in JSON even to a client asking for protobuf")
    a = ap.parse_args()
    a.only = [x for x in a.only.split(",") if x]
    bad = set(a.only) - {"simulate", "floor", "oneshot", "loop"}
    if bad or a.repeat < 1 or a.cycles < 1:
        ap.error("bad --only (%s), --repeat or --cycles" % ",".join(sorted(bad)))
    if not os.access(a.binary, os.X_OK):
        ap.error("no descheduler binary at %s: run make build (or set DESCHEDULER)" % a.binary)
    if not os.access("/usr/bin/time", os.X_OK):
        ap.error("GNU time is missing: apt-get install time (scripts/deps.sh bench)")
    os.makedirs(a.out, exist_ok=True)
    sizes = []
    for s in a.sizes.split(","):
        try:
            n, p, v = (int(x) for x in s.split(":"))
        except ValueError:
            ap.error("--sizes: expected NODES:PODS:VMS, got %r" % s)
        sizes.append((n, p, v))
    a.pbenc, a.pod_encoding = None, "no simulator started"
    if {"floor", "oneshot", "loop"} & set(a.only):
        a.pbenc, a.pod_encoding = protobuf_encoder(a)
        log(a.pod_encoding)
    started = time.monotonic()
    results = []
    for n, p, v in sizes:
        t = time.monotonic()
        r = bench_size(a, n, p, v)
        r["benchSeconds"] = time.monotonic() - t
        results.append(r)
    print_table(results, a)
    doc = {"binary": os.path.relpath(a.binary, ROOT) if a.binary.startswith(ROOT) else a.binary,
           "repeat": a.repeat, "cycles": a.cycles, "churn": a.churn, "churnRollout": a.churn_rollout,
           "loopFlags": a.loop_flags, "cpus": os.cpu_count(), "podEncoding": a.pod_encoding,
           "seconds": time.monotonic() - started, "sizes": results}
    text = json.dumps(doc, indent=1, sort_keys=True)
    if a.json == "-":
        print(text)
    else:
        path = a.json or os.path.join(a.out, "results.json")
        with open(path, "w") as f:
            f.write(text + "\n")
        print("\nJSON: %s (%.0f s in all)" % (os.path.relpath(path), doc["seconds"]))


if __name__ == "__main__":
    main()
