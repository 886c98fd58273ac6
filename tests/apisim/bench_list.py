#!/usr/bin/env python3
"""Benchmark: a paged LIST of every pod in a large simulated cluster.

Builds a snapshot of N nodes x P pods per node (default 5,000 x 30 =
150,000 pods, shaped like ordinary ReplicaSet pods), starts the simulator on
it, then times what a client-go informer does at start-up: `GET
/api/v1/pods?limit=500` followed by `continue` pages until the end, over one
keep-alive connection.  Also times a per-node list (fieldSelector
spec.nodeName) and a label-selected list, and reports the simulator's memory
(VmRSS / VmHWM from /proc).  Runs 1-2 include the client's json.loads of
every page; run 3 only reads the bytes, i.e. server work plus transfer.  Prints one line per measurement.

Usage: python3 tests/apisim/bench_list.py [--nodes 5000] [--pods-per-node 30] [--limit 500] [--keep DIR]
"""

import argparse
import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from urllib.parse import quote

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import simfixtures  # noqa: E402
from simtest import free_port  # noqa: E402


def write_snapshot(path, nodes, per_node):
    """Stream the List to disk item by item, so the generator itself stays small."""
    with open(path, "w") as f:
        f.write('{"apiVersion":"v1","kind":"List","metadata":{},"items":[\n')
        first = True

        def emit(obj):
            nonlocal first
            if not first:
                f.write(",\n")
            f.write(json.dumps(obj, separators=(",", ":")))
            first = False
        for ns in ("default", "kube-system", "bench-a", "bench-b", "bench-c"):
            emit(simfixtures.namespace(ns))
        for n in range(nodes):
            emit(simfixtures.node("node-%05d" % n, cpu="64", memory="256Gi", pods="250"))
        owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "app-7d4b9c", "uid": simfixtures.uid_for("rs")}
        i = 0
        for n in range(nodes):
            for p in range(per_node):
                ns = ("bench-a", "bench-b", "bench-c")[i % 3]
                app = "app-%03d" % (i % 500)
                pod = simfixtures.workload_pod("%s-%07d" % (app, i), ns, "node-%05d" % n,
                                               {"app": app, "pod-template-hash": "7d4b9c", "tier": "t%d" % (i % 7)},
                                               owner, ip="10.%d.%d.%d" % (i >> 16 & 255, i >> 8 & 255, i & 255))
                pod["metadata"]["uid"] = simfixtures.uid_for("bench", str(i))
                emit(pod)
                i += 1
        f.write("\n]}\n")
    return i


def rss_kb(pid):
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                k, v = line.split(":", 1)
                out[k] = int(v.split()[0])
    return out


_CONTINUE = re.compile(rb'"continue":"([^"]*)"')


def paged_list(conn, path, limit, decode=True):
    """Follow `continue` to the end; decode=False only reads the bytes (server + transfer time)."""
    items = pages = 0
    nbytes = 0
    cont = ""
    while True:
        sep = "&" if "?" in path else "?"
        url = "%s%slimit=%d" % (path, sep, limit) + ("&continue=" + quote(cont) if cont else "")
        conn.request("GET", url, headers={"Accept": "application/json"})
        r = conn.getresponse()
        body = r.read()
        if r.status != 200:
            raise RuntimeError("GET %s -> %d %s" % (url, r.status, body[:200]))
        if decode:
            doc = json.loads(body)
            items += len(doc["items"])
            cont = doc["metadata"].get("continue", "")
        else:
            items += body.count(b'"kind":"Pod"')
            m = _CONTINUE.search(body, 0, 400)       # list metadata comes first
            cont = m.group(1).decode() if m else ""
        nbytes += len(body)
        pages += 1
        if not cont:
            return items, pages, nbytes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods-per-node", type=int, default=30)
    ap.add_argument("--limit", type=int, default=500)
    ap.add_argument("--keep", help="keep the generated snapshot in DIR")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="apisim-bench-")
    snap = os.path.join(a.keep or tmp, "bench-cluster.json")
    os.makedirs(os.path.dirname(snap), exist_ok=True)
    t = time.monotonic()
    npods = write_snapshot(snap, a.nodes, a.pods_per_node)
    print("generate: %d nodes, %d pods, %.1f MB snapshot in %.1fs"
          % (a.nodes, npods, os.path.getsize(snap) / 1e6, time.monotonic() - t), flush=True)
    port = free_port()
    t = time.monotonic()
    proc = subprocess.Popen([sys.executable, os.path.join(HERE, "apisim.py"), "--snapshot", snap, "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = proc.stdout.readline()
        if line.strip() != "ready":
            raise RuntimeError("simulator did not start: %r" % line)
        print("startup: ready after %.1fs, memory %s" % (time.monotonic() - t, rss_kb(proc.pid)), flush=True)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        for run, decode in ((1, True), (2, True), (3, False)):
            t = time.monotonic()
            items, pages, nbytes = paged_list(conn, "/api/v1/pods", a.limit, decode)
            dt = time.monotonic() - t
            print("paged list run %d (%s): %d pods in %d pages of %d, %.1f MB, %.2fs (%.0f pods/s)"
                  % (run, "client decodes JSON" if decode else "bytes only", items, pages, a.limit,
                     nbytes / 1e6, dt, items / dt), flush=True)
            if items != npods:
                raise RuntimeError("expected %d pods, listed %d" % (npods, items))
        t = time.monotonic()
        for n in range(0, a.nodes, max(1, a.nodes // 100)):
            paged_list(conn, "/api/v1/pods?fieldSelector=spec.nodeName%%3Dnode-%05d" % n, a.limit)
        dt = time.monotonic() - t
        print("per-node list (fieldSelector spec.nodeName): %.1f ms each" % (dt * 1000 / len(range(0, a.nodes, max(1, a.nodes // 100)))),
              flush=True)
        t = time.monotonic()
        items, pages, _ = paged_list(conn, "/api/v1/namespaces/bench-b/pods?labelSelector=tier%3Dt3", a.limit)
        print("label-selected list in one namespace: %d pods, %d pages, %.2fs" % (items, pages, time.monotonic() - t),
              flush=True)
        print("memory after lists: %s" % rss_kb(proc.pid), flush=True)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    print("simulator exit code %d" % proc.returncode)
    return 0


if __name__ == "__main__":
    sys.exit(main())
