#!/usr/bin/env python3
"""The fault matrix: the live descheduler against the API simulator while it fails on purpose.

Every fault of the table below is injected into a one-shot run (`--descheduling-interval 0`,
as a CronJob runs it), into a run that loops every second for at least three cycles listing
the cluster every cycle (`--watch-cache=false`), and into the same loop on the watch cache
(Deployment mode's default: list once, then watch), each time against a fresh simulator
(tests/apisim) holding the same small cluster: two overloaded nodes, two empty ones,
ordinary ReplicaSet pods and two live-migratable KubeVirt VMs, with a policy
(LowNodeUtilization, EvictionsInBackground on) that would evict more pods than its limits
allow (maxNoOfPodsToEvictTotal 3, maxNoOfPodsToEvictPerNode 2). One row runs the watch cache
with `--watch-cache-compact-bytes 1`, so that a compaction lists every kind again, and fails
one of those lists. The simulator records every
request it served (GET /_sim/journal): what it answered, what the fault did, whether a list
page carried a continue token. After each run six invariants are checked, server-side where
the server knows:

  crash     the process neither crashed nor died of a signal; a one-shot run exits 0, or 1
            where it is meant to give up; a loop ends with 0 on SIGTERM
  input     every eviction carried its pod's UID as a precondition
            (deleteOptions.preconditions.uid), and none reached the server unless, after
            the last failed list request (one not retried successfully), every kind the
            cycle reads had been listed completely again: all pages answered 200 and whole
            (journal). On the watch cache: unless every kind was synced, i.e. listed completely, and since its
            last failure (a failed list, a watch refused, a watch that ended in 410, the
            server restarting) listed completely again or, for a refused watch or a
            restart, watched again with a 200
  limits    per cycle (a cycle starts with its first nodes page; on the watch cache, which
            sends no list per cycle, at the time its log says "Resetting pod evictor
            counters"), the evictions the server carried out (201, or KubeVirt's 429
            "Eviction triggered evacuation") stay within the policy's total and per-node
            limits (journal)
  log       the failure is named by the expected line(s), as many times as it happened, and
            no other error line appears
  recovery  a later cycle completes (a loop: at least three cycles in all and one after the
            last failure; a one-shot run: exit 0, or the next run exits 0)
  account   what the descheduler logged matches what the server did: one "Evicted pod" per
            201 it received, one "Eviction in background assumed" per KubeVirt 429

The table it prints is docs/fault-matrix.md up to the section "Control-plane faults (cluster
lab)", which is tests/lab/faults.py's and left as it is; the run fails when the table differs
from the committed one (a cell not held, a row added), and --write refreshes that part.

Usage: tests/faults/fault_matrix.py [--binary build/descheduler] [--write] [--only NAME]
       [--keep DIR]
Python 3 standard library only. Takes about three minutes, most of it the 20-second
outages.
"""

import argparse
import difflib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SIM_PY = os.path.join(ROOT, "tests", "apisim", "apisim.py")
DOC = os.path.join(ROOT, "docs", "fault-matrix.md")
# the last section of DOC is tests/lab/faults.py's (real components, make lab-faults): this script
# neither compares nor rewrites it
LAB_SECTION = "## Control-plane faults (cluster lab)"

LIMIT_TOTAL, LIMIT_NODE = 3, 2
CLIENT_TIMEOUT = 2.0     # --client-connection-timeout
PAGE = 3                 # --list-page-size: the pods take several pages
OUTAGE = 20.0            # seconds the API server is away
BACKGROUND_TEXT = "Eviction triggered evacuation"
LISTS = ["/api/v1/nodes", "/api/v1/pods", "/api/v1/namespaces", "/apis/policy/v1/poddisruptionbudgets",
         "/apis/scheduling.k8s.io/v1/priorityclasses", "/api/v1/persistentvolumeclaims",
         "/apis/kubevirt.io/v1/virtualmachineinstances",
         "/apis/kubevirt.io/v1/virtualmachineinstancemigrations", "/apis/kubevirt.io/v1/kubevirts"]

POLICY = """apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
maxNoOfPodsToEvictTotal: %d
maxNoOfPodsToEvictPerNode: %d
profiles:
- name: rebalance
  pluginConfig:
  - name: DefaultEvictor
    args:
      evictLocalStoragePods: true
  - name: LowNodeUtilization
    args:
      thresholds: {cpu: 20, memory: 20, pods: 20}
      targetThresholds: {cpu: 50, memory: 50, pods: 50}
  plugins:
    balance:
      enabled: [LowNodeUtilization]
""" % (LIMIT_TOTAL, LIMIT_NODE)


# ---------------------------------------------------------------------------------------------
# the cluster

def cluster():
    """A v1 List: n1 and n2 overloaded (ReplicaSet pods, two VMs on n1), n3 and n4 empty."""
    items = []
    for n in ("n1", "n2", "n3", "n4"):
        items.append({"apiVersion": "v1", "kind": "Node",
                      "metadata": {"name": n, "labels": {"kubernetes.io/hostname": n}},
                      "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"},
                                 "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"},
                                 "conditions": [{"type": "Ready", "status": "True"}]}})
    for ns in ("apps", "vms", "kubevirt"):
        items.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    owner = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-6d4b9",
              "uid": "0b7d64a0-1f7e-4d3c-9a55-6f1d1c2b9e01", "controller": True}]
    for node, count in (("n1", 7), ("n2", 6)):
        for i in range(count):
            items.append({"apiVersion": "v1", "kind": "Pod",
                          "metadata": {"name": "web-%s-%d" % (node, i), "namespace": "apps",
                                       "labels": {"app": "web"}, "ownerReferences": owner},
                          "spec": {"nodeName": node, "containers": [
                              {"name": "c", "image": "web:1",
                               "resources": {"requests": {"cpu": "400m", "memory": "1Gi"}}}]},
                          "status": {"phase": "Running"}})
    items.append({"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
                  "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
                  "spec": {"configuration": {"evictionStrategy": "LiveMigrate"}},
                  "status": {"phase": "Deployed"}})
    for vm in ("vm-a", "vm-b"):
        vmi_uid = "5f0c1a1e-0000-4000-8000-%012d" % (1 if vm == "vm-a" else 2)
        items.append({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
                      "metadata": {"name": vm, "namespace": "vms", "uid": vmi_uid,
                                   "labels": {"kubevirt.io/nodeName": "n1"}},
                      "spec": {"domain": {"devices": {}}, "evictionStrategy": "LiveMigrate"},
                      "status": {"phase": "Running", "nodeName": "n1",
                                 "conditions": [{"type": "Ready", "status": "True"},
                                                {"type": "LiveMigratable", "status": "True"}]}})
        items.append({"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": "virt-launcher-%s-x1" % vm, "namespace": "vms",
                                   "labels": {"kubevirt.io": "virt-launcher", "kubevirt.io/created-by": vmi_uid},
                                   "annotations": {"kubevirt.io/domain": vm,
                                                   "descheduler.alpha.kubernetes.io/request-evict-only": ""},
                                   "ownerReferences": [{"apiVersion": "kubevirt.io/v1",
                                                        "kind": "VirtualMachineInstance", "name": vm,
                                                        "uid": vmi_uid, "controller": True}]},
                      "spec": {"nodeName": "n1", "containers": [
                          {"name": "compute", "image": "virt-launcher:1",
                           "resources": {"requests": {"cpu": "200m", "memory": "2Gi"}}}],
                          "volumes": [{"name": "private", "emptyDir": {}}]},
                      "status": {"phase": "Running"}})
    return {"apiVersion": "v1", "kind": "List", "items": items}


def pod_nodes(lst):
    return {"%s/%s" % (o["metadata"]["namespace"], o["metadata"]["name"]): o["spec"]["nodeName"]
            for o in lst["items"] if o["kind"] == "Pod"}


# ---------------------------------------------------------------------------------------------
# the faults: what is injected, and how the descheduler must name it

E = re.escape
LIMIT_LINE = re.compile(r'^E.*"Error evicting pod" err="maximum number of evicted pods per (node|a descheduling cycle) '
                        r'reached"')
READ_FAILED = r'^E.*"Failed to read the cluster state; nothing is evicted this cycle" err="failed to list '
EVICT_ERROR = r'^E.*"Error evicting pod" err='
PLUGIN_SAYS = r'^E.*"eviction failed" err="the pod could not be evicted" plugin="LowNodeUtilization"'
WATCH_LIST_FAILED = r'^E.*"Failed to list for the watch cache; it is not synced until a list succeeds" err="failed to list '
NOT_SYNCED = r'^E.*"Failed to read the cluster state; nothing is evicted this cycle" err="the watch cache is not synced: '
# a first page asks for any version the server's watch cache holds (src/kube/pager.c)
FIRST_PAGE = r'limit=3&resourceVersion=1&resourceVersionMatch=NotOlderThan'
STALE_REFUSED = (EVICT_ERROR + r'"pod not found when evicting \\"[^"]*\\": (pods \\"[^"]*\\" not found|not sent: the pod '
                 r'no longer exists \(its watch said so after the cycle read it\))"')
# the leader's write gate (src/cli/cmd_run.c) refuses an eviction once the lease may have passed on
LEASE_GATED = (EVICT_ERROR + r'"Post \\"http://127\.0\.0\.1:\d+/api/v1/namespaces/[^"]*/eviction\\": not sent: the '
               r'leader lease was last renewed [0-9.]+s ago, longer than the renew deadline [0-9.]+s: another '
               r'replica may hold it"')
# a watch that failed, or must list again, after the cycle took its view stops the cycle's
# evictions that follow (src/kube/watch.c, recheck_evict); whether the fault lands while a cycle
# evicts is a matter of timing, so these rows allow any number of them, each with its plugin line
VIEW_LOST = (EVICT_ERROR + r'"not sent: the watch of pods (has failed|must be listed again) since the cycle read '
             r'the cluster \([^"]*\); what changed meanwhile is not known, the next cycle decides again"')
PLURAL = {p: p.rsplit("/", 1)[1] for p in LISTS}
MODES = ("oneshot", "loop", "watch")


def on_cache(expect):
    """A failed list as the watch cache names it: once when its list fails, and in the cycle(s)
    that find the cache not synced until the list is made again a second later."""
    out = []
    for rx, low, high in expect:
        if rx.startswith(READ_FAILED):
            tail = rx[len(READ_FAILED):]
            plural = PLURAL[next(p for p in LISTS if tail.startswith(p.replace(".", "\\.")) or tail.startswith(p))]
            out.append((WATCH_LIST_FAILED + tail, low, high))
            out.append((NOT_SYNCED + plural + ": listing failed: failed to list " + tail, 1, 2))
        else:
            out.append((rx, low, high))
    return out


def stale_cache_refusal(expect):
    """On the watch cache a cycle that starts right after a slow one (a fault made it longer than
    the interval) can decide before the DELETED event of a pod the previous cycle evicted has
    arrived; the event, if it comes while the cycle runs, stops the request, or the API server
    answers 404. That refusal may appear once (with the plugin's line for it); the journal
    checks still require every eviction sent to carry the pod's UID as a precondition."""
    out, says = [], False
    for rx, low, high in expect:
        if rx == STALE_REFUSED:
            return expect
        if rx == PLUGIN_SAYS:
            says = True
            high = None if high is None else high + 1
        out.append((rx, low, high))
    out.append((STALE_REFUSED, 0, 1))
    if not says:
        out.append((PLUGIN_SAYS, 0, 1))
    return out


def row(name, rules, expect, oneshot=True, loop=True, when="start", special=None, oneshot_exit=0,
        oneshot_expect=None, watch=True, watch_expect=None):
    """expect: [(regex, low, high)] lines that must appear low..high times (high None: any);
    watch_expect: the same for the loop on the watch cache (default: expect, failed lists as the
    cache names them); a stale cache's refused eviction is allowed once in either case."""
    named = watch_expect if watch_expect is not None else on_cache(expect)
    return {"name": name, "rules": rules, "expect": expect, "oneshot": oneshot, "loop": loop,
            "when": when, "special": special, "oneshot_exit": oneshot_exit,
            "oneshot_expect": oneshot_expect, "watch": watch,
            "watch_named": named, "watch_expect": stale_cache_refusal(named)}


ROWS = [
    row("LIST answers 500", [{"verb": "list", "path": "^/api/v1/pods$", "status": 500,
                              "message": "etcdserver: request timed out", "count": 1}],
        [(READ_FAILED + E('/api/v1/pods: HTTP 500: etcdserver: request timed out"'), 1, 1)]),
    row("LIST answers 503", [{"verb": "list", "path": "^/api/v1/nodes$", "status": 503,
                              "message": "the server is currently unable to handle the request", "count": 1}],
        [(READ_FAILED + E('/api/v1/nodes: HTTP 503: the server is currently unable to handle the request"'), 1, 1)]),
    row("LIST answers 429 with Retry-After (twice)",
        [{"verb": "list", "path": "^/api/v1/pods$", "status": 429, "retryAfter": 1, "count": 2}],
        [(r'^I.*Got a Retry-After 1s response for attempt [12] to http://127\.0\.0\.1:\d+/api/v1/pods\?limit=3', 2, 2)]),
    row("a truncated page", [{"verb": "list", "path": "^/api/v1/pods$", "query": "continue=",
                              "truncate": 200, "count": 1}],
        [(READ_FAILED + r'/api/v1/pods: Get \\"http://127\.0\.0\.1:\d+/api/v1/pods\?limit=3&continue=[^"]*\\": '
                        r'unexpected EOF \(transfer closed with \d+ bytes remaining to read\)"', 1, 1)]),
    row("a continue token expires (410) mid-list",
        [{"verb": "list", "path": "^/api/v1/pods$", "query": "continue=", "status": 410, "reason": "Expired",
          "message": "The provided continue parameter is too old to display a consistent list result. "
                     "You can start a new list without the continue parameter.", "count": 1}],
        [(r'^W.*"A paged list expired while it was read; reading the cluster again from the start" '
          r'err="failed to list /api/v1/pods: HTTP 410: The provided continue parameter is too old', 1, 1)],
        watch_expect=[(r'^W.*"A paged list expired while it was read; listing again from the start" kind="Pod" '
                       r'err="HTTP 410: The provided continue parameter is too old', 1, 1)]),
    row("eviction POST answers 500 (twice)",
        [{"method": "POST", "path": "/eviction$", "status": 500, "message": "Internal error occurred: etcd down",
          "count": 2}],
        [(EVICT_ERROR + E('"Internal error occurred: etcd down"'), 2, 2), (PLUGIN_SAYS, 2, 2)]),
    row("eviction POST slower than the client timeout",
        [{"method": "POST", "path": "/eviction$", "latency": CLIENT_TIMEOUT + 1.5, "count": 1}],
        [(EVICT_ERROR + r'"Post \\"http://127\.0\.0\.1:\d+/api/v1/namespaces/[^"]*/eviction\\": net/http: request '
                        r'canceled \(Client\.Timeout exceeded while awaiting headers\) \(the request may have been '
                        r'carried out: it counts against the eviction limits\)"', 1, 1), (PLUGIN_SAYS, 1, 1)],
        # the server carries the late eviction out after the client gave up: when the next cycle
        # begins before the pod's deletion reaches the watch cache, the check before its
        # eviction finds it gone and sends nothing
        watch_expect=[(EVICT_ERROR + r'"Post \\"http://127\.0\.0\.1:\d+/api/v1/namespaces/[^"]*/eviction\\": net/http: '
                       r'request canceled \(Client\.Timeout exceeded while awaiting headers\) \(the request may have '
                       r'been carried out: it counts against the eviction limits\)"', 1, 1),
                      (STALE_REFUSED, 0, 1), (PLUGIN_SAYS, 1, 2)]),
    row("eviction POST answers 429 without KubeVirt's text",
        [{"method": "POST", "path": "/eviction$", "status": 429, "message": "Too many requests, please try again later.",
          "count": 2}],
        [(EVICT_ERROR + r'"error when evicting pod \(ignoring\) \\"[^"]*\\": Too many requests, please try again '
                        r'later\."', 2, 2), (PLUGIN_SAYS, 2, 2)]),
    row("connection reset in the middle of a LIST response",
        [{"verb": "list", "path": "^/api/v1/pods$", "truncate": 300, "reset": True, "count": 1}],
        [(READ_FAILED + r'/api/v1/pods: Get \\"http://127\.0\.0\.1:\d+/api/v1/pods\?' + FIRST_PAGE + r'\\": (read tcp '
                        r'127\.0\.0\.1:\d+->127\.0\.0\.1:\d+: read: connection reset by peer|unexpected EOF[^"]*)"', 1, 1)]),
    row("a LIST response slower than the client timeout",
        [{"verb": "list", "path": "^/api/v1/nodes$", "latency": CLIENT_TIMEOUT + 1.5, "count": 1}],
        [(READ_FAILED + r'/api/v1/nodes: Get \\"http://127\.0\.0\.1:\d+/api/v1/nodes\?' + FIRST_PAGE + r'\\": net/http: request '
                        r'canceled \(Client\.Timeout exceeded while awaiting headers\)"', 1, 1)]),
    row("Lease API fails while leading (shorter than the renew deadline)",
        [{"method": "PUT", "path": "/leases/descheduler$", "status": 500, "message": "etcdserver: leader changed",
          "count": 3}],
        [(r'^E.*"Failed to renew the leader lease" err="PUT /apis/coordination\.k8s\.io/v1/namespaces/kube-system/'
          r'leases/descheduler: HTTP 500: etcdserver: leader changed"', 3, 3)],
        oneshot=False, when="after-first-cycle", special="lease"),
    row("Lease API fails while leading (longer than the renew deadline)",
        [{"method": "PUT", "path": "/leases/descheduler$", "status": 500, "message": "etcdserver: leader changed"}],
        [(r'^E.*"Failed to renew the leader lease" err="PUT /apis/coordination\.k8s\.io/v1/namespaces/kube-system/'
          r'leases/descheduler: HTTP 500: etcdserver: leader changed"', 3, None),
         (r'^I.*"Leader lost"', 1, 1),
         # a cycle under way when the renew deadline passes has its evictions held back
         (LEASE_GATED, 0, None), (PLUGIN_SAYS, 0, None)],
        oneshot=False, when="after-first-cycle", special="lease-lost"),
    row("API server away for 20 s, then back with the same state", [],
        [(READ_FAILED + r'/api/v1/nodes: Get \\"http://127\.0\.0\.1:\d+/api/v1/nodes\?' + FIRST_PAGE + r'\\": dial tcp '
                        r'127\.0\.0\.1:\d+: connect: connection refused"', 10, None)],
        special="outage", oneshot_exit=1,
        oneshot_expect=[(r'^E.*"failed to run descheduler server" err="Get \\"http://127\.0\.0\.1:\d+/version\\": '
                         r'dial tcp 127\.0\.0\.1:\d+: connect: connection refused"', 1, 1)],
        watch_expect=[(r'^E.*"Watch failed; retrying" err="Get \\"http://127\.0\.0\.1:\d+/[^"]*watch=true\\": dial tcp '
                       r'127\.0\.0\.1:\d+: connect: connection refused"', len(LISTS), None),
                      (r'^E.*"Watch stream broke; opening it again"', 0, None),
                      (NOT_SYNCED + r'.*watch failed: Get \\"http://127\.0\.0\.1:\d+/.*connection refused"', 10, None),
                      (r'^I.*"The watch cannot go on; listing again" kind="[A-Za-z]*" why="too old resource version',
                       len(LISTS), len(LISTS))]),
    # the watch cache's own faults (a one-shot run and the listing loop open no watch)
    row("a watch ends with 410 Gone (an ERROR event)",
        [{"verb": "watch", "path": "^/api/v1/pods$", "watchExpire": 1, "count": 1}], [],
        oneshot=False, loop=False,
        watch_expect=[(r'^I.*"The watch cannot go on; listing again" kind="Pod" why="apisim injected fault: the watch '
                       r'expired"', 1, 1),
                      (r'^I.*"Listed for the watch cache" kind="Pod" reason="expired"', 1, 1),
                      (VIEW_LOST, 0, None), (PLUGIN_SAYS, 0, None)]),
    row("a watch stream is cut after an event",
        [{"verb": "watch", "path": "^/api/v1/pods$", "watchCut": 1, "count": 1}], [],
        oneshot=False, loop=False,
        watch_expect=[(r'^E.*"Watch stream broke; opening it again" err=.* kind="Pod"', 1, 1)]),
    row("watch events repeated and out of order",
        [{"verb": "watch", "path": "^/api/v1/pods$", "watchDuplicate": True, "watchReorder": True, "count": 1}], [],
        oneshot=False, loop=False,
        watch_expect=[(r'^I.*"Ignoring a watch event" kind="Pod" type="[A-Z]*" object="[^"]*" name="[^"]*" '
                       r'why="repeated"', 1, None)]),
    row("a watch refused (503) three times after a cut",
        [{"verb": "watch", "path": "^/api/v1/pods$", "watchCut": 1, "count": 1},
         {"verb": "watch", "path": "^/api/v1/pods$", "status": 503, "count": 3}], [],
        oneshot=False, loop=False,
        watch_expect=[(r'^E.*"Watch stream broke; opening it again" err=.* kind="Pod"', 1, 1),
                      (r'^E.*"Watch failed; retrying" err="HTTP 503: apisim injected fault: HTTP 503" kind="Pod"', 3, 3),
                      (NOT_SYNCED + E('pods: watch failed: HTTP 503: apisim injected fault: HTTP 503"'), 1, None),
                      (VIEW_LOST, 0, None), (PLUGIN_SAYS, 0, None)]),
    # --watch-cache-compact-bytes 1: the changes the first cycle's evictions bring start a
    # compaction (every kind listed again into fresh tables, cycles waiting meanwhile); the
    # compaction's list of the pods fails (the start's first page passes: skip 1)
    row("LIST answers 500 while the watch cache compacts",
        [{"verb": "list", "path": "^/api/v1/pods$", "query": "^limit=3&resourceVersion=", "skip": 1, "status": 500,
          "message": "etcdserver: request timed out", "count": 1}], [],
        oneshot=False, loop=False, special="compact",
        watch_expect=[(r'^I.*"Compacting the watch cache: every kind is listed again"', 1, None),
                      (WATCH_LIST_FAILED + E('/api/v1/pods: HTTP 500: etcdserver: request timed out"'), 1, 1),
                      (NOT_SYNCED + E('pods: listing failed: failed to list /api/v1/pods: HTTP 500: '
                                      'etcdserver: request timed out"'), 1, 2),
                      (r'^I.*"Compacted the watch cache"', 1, None)]),
]

ONESHOT_NA = "n/a: leader election needs `--descheduling-interval` (upstream refuses it for one-shot runs)"
WATCH_NA = "n/a: opens no watch"


# ---------------------------------------------------------------------------------------------
# processes

def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Sim:
    def __init__(self, workdir, snapshot, port):
        self.dir, self.port = workdir, port
        self.kubeconfig = os.path.join(workdir, "kubeconfig")
        self.state = os.path.join(workdir, "state.json")
        self.proc = None
        self.journal_saved = []
        self.start(snapshot)

    def start(self, snapshot):
        log = open(os.path.join(self.dir, "sim.log"), "a")
        self.proc = subprocess.Popen(
            [sys.executable, SIM_PY, "--snapshot", snapshot, "--port", str(self.port), "--migration-seconds", "2",
             "--kubeconfig-out", self.kubeconfig, "--state-out", self.state],
            stdout=subprocess.PIPE, stderr=log, text=True)
        log.close()
        line = self.proc.stdout.readline()
        if line.strip() != "ready":
            raise RuntimeError("the simulator did not start (see %s/sim.log)" % self.dir)

    def ctl(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request("http://127.0.0.1:%d/_sim/%s" % (self.port, path), data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read())

    def settled_journal(self, watches=True):
        """The journal once no request is being served (a slow answer is still recorded; a watch
        is recorded when it ends, within a second of its client going). watches=False: the open
        watches are not waited for (the server is about to stop while its client still runs)."""
        end = time.monotonic() + 30
        while True:
            j = self.ctl("GET", "journal")
            busy = j["inFlight"] - (0 if watches else j.get("inFlightWatches", 0))
            if busy <= 0 or time.monotonic() > end:
                return j["items"]
            time.sleep(0.1)

    def journal(self):
        """The whole journal; call it once the descheduler has stopped."""
        return self.journal_saved + (self.settled_journal() if self.proc else [])

    def stop(self):
        """SIGTERM: the simulator writes its state to state.json and exits."""
        if not self.proc:
            return
        self.journal_saved += self.settled_journal(watches=False)
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=15)
        self.proc = None
        # what the server knew is gone with it: a watch cache must read again
        self.journal_saved.append({"method": "RESTART", "path": "", "query": "", "status": 0,
                                   "outcome": "restart", "fault": None, "t": time.time(), "end": time.time()})

    def restart(self):
        self.start(self.state)

    def close(self):
        if self.proc:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


class Run:
    """The descheduler, stderr to a file."""

    def __init__(self, binary, sim, workdir, name, mode, extra=()):
        self.err_path = os.path.join(workdir, name + ".err")
        args = [binary, "--kubeconfig", sim.kubeconfig, "--policy-config-file", os.path.join(workdir, "policy.yaml"),
                "--feature-gates", "EvictionsInBackground=true", "--secure-port", "0", "--v", "4",
                "--client-connection-qps", "200", "--client-connection-burst", "200",
                "--client-connection-timeout", "%gs" % CLIENT_TIMEOUT, "--list-page-size", str(PAGE),
                "--descheduling-interval", "0" if mode == "oneshot" else "1s"] + list(extra)
        if mode == "loop":
            args.append("--watch-cache=false")
        self.err = open(self.err_path, "w")
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=self.err)

    def text(self):
        with open(self.err_path, errors="replace") as f:
            return f.read()

    def cycles(self):
        t = self.text()
        return t.count('"Number of evictions/requests"') + t.count('"Failed to read the cluster state')

    def successes(self):
        return self.text().count('"Number of evictions/requests"')

    def wait_cycles(self, n, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end and self.proc.poll() is None and self.cycles() < n:
            time.sleep(0.05)
        return self.cycles() >= n

    def wait(self, timeout):
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return "hung"
        finally:
            self.err.close()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.wait(15)


# ---------------------------------------------------------------------------------------------
# invariants

def list_kind(e):
    return e["path"] if e["method"] == "GET" and e["path"] in LISTS and "limit=" in (e.get("query") or "") else None


def is_eviction(e):
    return e["method"] == "POST" and e["path"].endswith("/eviction")


def late(e):
    """The client had given up on this request before the server answered."""
    m = re.search(r"latency=([0-9.]+)", e.get("fault") or "")
    return bool(m) and float(m.group(1)) >= CLIENT_TIMEOUT


def failed(e):
    fault = e.get("fault") or ""
    return e["status"] != 200 or e["outcome"] != "sent" or late(e) or "truncate" in fault or "reset" in fault


def accepted(e):
    """The server carried the eviction out (or KubeVirt took it as a migration request)."""
    return e["status"] == 201 or (e["status"] == 429 and BACKGROUND_TEXT in (e.get("message") or ""))


def arrival_order(journal):
    """The journal in the order the requests arrived (t).  The simulator journals a request after
    its answer is sent, so the journal's own order is the order they ended: the eviction a list
    page allowed, or the retry of a failed list, can be journalled before that page or failure."""
    return sorted(journal, key=lambda e: e.get("t", 0))


def check_input(journal):
    """Every eviction follows complete lists of every kind made after the last unrecovered failure,
    and carries its pod's UID as a precondition."""
    problems = []
    complete = {k: False for k in LISTS}
    running = {}
    journal = arrival_order(journal)
    for i, e in enumerate(journal):
        kind = list_kind(e)
        if kind:
            if failed(e):
                # a request retried at once (429/5xx with Retry-After) is not a failed read when
                # one of its retries succeeds
                url = (e["method"], e["path"], e["query"])
                recovered = False
                for x in journal[i + 1:]:
                    if not (list_kind(x) or is_eviction(x)):
                        continue
                    if (x["method"], x["path"], x["query"]) != url:
                        break
                    if not failed(x):
                        recovered = True
                        break
                if not recovered:
                    complete = {k: False for k in LISTS}
                    running = {}
                continue
            first = "continue=" not in e["query"]
            if first:
                running[kind] = True
            if running.get(kind) and e.get("continue") is False:
                complete[kind] = True
                running[kind] = False
        elif is_eviction(e):
            missing = [k for k in LISTS if not complete[k]]
            if missing:
                problems.append("eviction %s sent after an incomplete read (%s)" % (e["path"], ", ".join(missing)))
            if not e.get("preconditionUid"):
                problems.append("eviction %s sent without its pod's UID as a precondition" % e["path"])
    return problems


def klog_time(line):
    """Epoch seconds of a klog line ("I1202 03:53:37.835997 ..."), local time, this year."""
    m = re.match(r"^[IWEF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d+)", line)
    if not m:
        return None
    mon, day, hh, mm, ss, frac = m.groups()
    t = time.mktime((time.localtime().tm_year, int(mon), int(day), int(hh), int(mm), int(ss), 0, 0, -1))
    return t + float("0." + frac)


def watch_kind(e):
    q = e.get("query") or ""
    if e["method"] == "GET" and e["path"] in LISTS and ("watch=true" in q or "watch=1" in q):
        return e["path"]
    return None


def check_input_watch(journal, cycle_starts):
    """On the watch cache: every eviction carries its pod's UID as a precondition, and every
    kind was synced when its cycle began (what happens to a watch during the cycle does not
    change what the cycle decided; the precondition, and the events that came meanwhile, are
    what catch a change)."""
    journal = arrival_order(journal)
    events = [(t, -1, "cycle", None, None) for t in cycle_starts if t is not None]  # (time, order, what, kind, entry)
    # a watch that ended in 410 is recorded when the server is done with it, which may be after
    # the client has begun to list again: it expired at the latest when that list began
    list_starts = {}
    for e in journal:
        kind = list_kind(e)
        if kind and "continue=" not in e["query"]:
            list_starts.setdefault(kind, []).append(e["t"])
    for i, e in enumerate(journal):
        if e["method"] == "RESTART":
            events.append((e["t"], 0, "restart", None, e))
            continue
        kind = list_kind(e)
        if kind and "watch=" not in (e.get("query") or ""):
            events.append((e["t"], 1, "list", kind, (i, e)))
            continue
        kind = watch_kind(e)
        if kind:
            events.append((e["t"], 1, "watch-open" if e["status"] == 200 else "watch-refused", kind, e))
            if e["outcome"] == "expired":
                when = min([e.get("end") or e["t"]] + [t for t in list_starts.get(kind, []) if t > e["t"]])
                events.append((when, 0.5, "watch-expired", kind, e))
            continue
        if is_eviction(e):
            events.append((e["t"], 2, "evict", None, e))
    events.sort(key=lambda x: (x[0], x[1]))
    state = {k: "unlisted" for k in LISTS}  # unlisted | synced | needs-list | needs-watch
    running = {}
    problems = []
    at_cycle_start = []
    for t, _, what, kind, x in events:
        if what == "cycle":
            at_cycle_start = [PLURAL[k] + " " + v for k, v in state.items() if v != "synced"]
        elif what == "restart":
            for k in LISTS:
                if state[k] == "synced":
                    state[k] = "needs-watch"
        elif what == "list":
            i, e = x
            if failed(e):
                url = (e["method"], e["path"], e["query"])
                recovered = any(not failed(y) for y in journal[i + 1:]
                                if (y["method"], y["path"], y["query"]) == url)
                if not recovered:
                    state[kind] = "needs-list" if state[kind] != "unlisted" else "unlisted"
                    running[kind] = False
                continue
            if "continue=" not in e["query"]:
                running[kind] = True
            if running.get(kind) and e.get("continue") is False:
                state[kind] = "synced"
                running[kind] = False
        elif what == "watch-open":
            if state[kind] == "needs-watch":
                state[kind] = "synced"
        elif what == "watch-refused":
            if state[kind] == "synced":
                state[kind] = "needs-watch"
        elif what == "watch-expired":
            if state[kind] != "unlisted":
                state[kind] = "needs-list"
        elif what == "evict":
            if at_cycle_start:
                problems.append("eviction %s sent in a cycle that began with the cache not synced (%s)"
                                % (x["path"], ", ".join(at_cycle_start)))
            if not x.get("preconditionUid"):
                problems.append("eviction %s sent without its pod's UID as a precondition" % x["path"])
    return problems


def check_limits(journal, nodes_of, cycle_starts=None):
    problems = []
    cycle, per_node, total, n = 0, {}, 0, 0
    starts = sorted(t for t in (cycle_starts or []) if t is not None)
    if cycle_starts is not None:
        journal = sorted(journal, key=lambda e: e["t"])
    for e in journal:
        if cycle_starts is None and list_kind(e) == "/api/v1/nodes" and "continue=" not in e["query"]:
            cycle, per_node, total = cycle + 1, {}, 0
        while starts and e["t"] >= starts[0]:
            starts.pop(0)
            cycle, per_node, total = cycle + 1, {}, 0
        if is_eviction(e) and accepted(e):
            n += 1
            parts = e["path"].split("/")
            node = nodes_of.get("%s/%s" % (parts[4], parts[6]), "?")
            total += 1
            per_node[node] = per_node.get(node, 0) + 1
            if total > LIMIT_TOTAL:
                problems.append("cycle %d: %d evictions carried out (limit %d)" % (cycle, total, LIMIT_TOTAL))
            if node != "?" and per_node[node] > LIMIT_NODE:
                problems.append("cycle %d: %d evictions from %s (limit %d)" % (cycle, per_node[node], node, LIMIT_NODE))
    return problems, n


def check_log(text, expect):
    problems = []
    lines = text.splitlines()
    for rx, low, high in expect:
        n = sum(1 for ln in lines if re.search(rx, ln))
        if n < low or (high is not None and n > high):
            problems.append("%d lines match %s (expected %s)" % (n, rx, low if high == low else
                                                                  "%d..%s" % (low, high if high is not None else "")))
    for ln in lines:
        if LIMIT_LINE.search(ln):
            continue  # a limit reached is logged as an error, as upstream does
        if ln.startswith("E") and not any(re.search(rx, ln) for rx, _, _ in expect):
            problems.append("unexpected error line: " + ln[:300])
    for bad in ("AddressSanitizer", "runtime error:", "Segmentation fault", "double free", "Aborted"):
        if bad in text:
            problems.append("the log shows " + bad)
    return problems


def check_account(text, journal):
    sent201 = sum(1 for e in journal if is_eviction(e) and e["status"] == 201 and not late(e))
    sent_bg = sum(1 for e in journal if is_eviction(e) and e["status"] == 429 and not late(e)
                  and BACKGROUND_TEXT in (e.get("message") or ""))
    evicted = len(re.findall(r'"Evicted pod" pod=', text))
    assumed = len(re.findall(r'"Eviction in background assumed"', text))
    problems = []
    if evicted != sent201:
        problems.append("%d \"Evicted pod\" lines, %d evictions answered 201" % (evicted, sent201))
    if assumed != sent_bg:
        problems.append("%d background evictions assumed, %d KubeVirt 429 answers" % (assumed, sent_bg))
    return problems


def self_test():
    """The server-side checks must be able to fail: synthetic journals they have to reject."""
    def lst(path, query, status=200, cont=False, **kw):
        return dict({"method": "GET", "path": path, "query": query, "status": status, "outcome": "sent",
                     "fault": None, "continue": cont}, **kw)

    def read(fail_at=None, retried=False):
        out = []
        for p in LISTS:
            if p == fail_at:
                out.append(lst(p, "limit=3", 200, True))
                out.append(lst(p, "limit=3&continue=x", 500, fault="status=500"))
                if retried:
                    out.append(lst(p, "limit=3&continue=x", 200, False))
                continue
            out.append(lst(p, "limit=3"))
        return out

    ev = {"method": "POST", "path": "/api/v1/namespaces/apps/pods/web-n1-0/eviction", "query": "", "status": 201,
          "outcome": "sent", "fault": None, "preconditionUid": "0f4b6c1e-0000-4000-8000-000000000001"}
    assert check_input(read() + [ev]) == [], "a complete read was refused"
    assert check_input(read() + [dict(ev, preconditionUid="")]), "an eviction without its UID precondition was not seen"
    assert check_input(read("/api/v1/pods") + [ev]), "an eviction after a failed page was not seen"
    assert check_input(read("/api/v1/pods", retried=True) + [ev]) == [], "a retried page was refused"
    assert check_input(read("/api/v1/pods") + read() + [ev]) == [], "a later complete read was refused"
    trunc = read()
    trunc[1] = dict(trunc[1], fault="truncate=200", outcome="truncated")
    assert check_input(trunc + [ev]), "a truncated page was taken as read"
    evs = [dict(ev, path="/api/v1/namespaces/apps/pods/web-n%d-%d/eviction" % (1 + i % 2, i)) for i in range(4)]
    nodes = {"apps/web-n%d-%d" % (1 + i % 2, i): "n%d" % (1 + i % 2) for i in range(4)}
    assert check_limits(read() + evs[:3], nodes)[0] == [], "three evictions refused"
    assert check_limits(read() + evs, nodes)[0], "four evictions in a cycle not seen"
    assert check_limits(read() + evs[:2] + read() + evs[2:], nodes)[0] == [], "two cycles taken as one"
    three_on_n1 = [dict(ev, path="/api/v1/namespaces/apps/pods/web-n1-%d/eviction" % i) for i in range(3)]
    assert check_limits(read() + three_on_n1, {"apps/web-n1-%d" % i: "n1" for i in range(3)})[0], \
        "three on one node not seen"
    bg = dict(ev, status=429, message="admission webhook denied the request: " + BACKGROUND_TEXT + " of VMI")
    assert check_limits(read() + evs[:3] + [bg], nodes)[0], "a KubeVirt 429 not counted"
    assert check_account('"Evicted pod" pod="a"', [ev, ev]), "an unaccounted 201 not seen"
    # the watch cache
    def timed(entries, t0=100.0):
        return [dict(e, t=t0 + i, end=t0 + i + 0.5) for i, e in enumerate(entries)]

    def watch(p, status=200, outcome="sent", fault=None):
        return {"method": "GET", "path": p, "query": "allowWatchBookmarks=true&resourceVersion=5&watch=true",
                "status": status, "outcome": outcome, "fault": fault}

    uev = ev
    opened = read() + [watch(p) for p in LISTS]

    def cycle_then(entries, tail):
        """entries, a cycle start, then tail; the cycle starts between them"""
        j = timed(entries + tail)
        return j, [100.0 + len(entries) - 0.5]

    assert check_input_watch(*cycle_then(opened, [uev])) == [], "a synced cache was refused"
    assert check_input_watch(*cycle_then(opened, [dict(ev, preconditionUid="")])), \
        "an eviction without its UID precondition was not seen"
    assert check_input_watch(*cycle_then(read("/api/v1/pods"), [uev])), "an incomplete first list was not seen"
    refused = opened + [watch("/api/v1/pods", 503, fault="status=503")]
    assert check_input_watch(*cycle_then(refused, [uev])), "a cycle begun while a watch was refused was not seen"
    assert check_input_watch(*cycle_then(refused + [watch("/api/v1/pods")], [uev])) == [], \
        "a watch open again refused"
    assert check_input_watch(*cycle_then(opened, [watch("/api/v1/pods", 503, fault="status=503"), uev])) == [], \
        "a watch refused after the cycle began was taken against it"
    expired = opened[:-1] + [watch(LISTS[-1], outcome="expired", fault="watchExpire=1")]
    assert check_input_watch(*cycle_then(expired + [watch(LISTS[-1])], [uev])), "an expired watch not needing a list"
    restart = {"method": "RESTART", "path": "", "query": "", "status": 0, "outcome": "restart", "fault": None}
    assert check_input_watch(*cycle_then(opened + [restart], [uev])), "a cycle right after a restart was not seen"
    assert check_limits(timed(evs), nodes, [0.0]) != ([], 4), "four evictions in one cycle (by the log) not seen"
    assert check_limits(timed(evs), nodes, [0.0, 102.0])[0] == [], "two cycles (by the log) taken as one"


# ---------------------------------------------------------------------------------------------
# one cell

def run_cell(binary, r, mode, base, nodes_of):
    """Runs one fault in one mode; returns {invariant: [problems]} and the evictions carried out."""
    work = tempfile.mkdtemp(prefix="%s-%s-" % (mode, re.sub(r"[^a-z0-9]+", "-", r["name"].lower())[:40]), dir=base)
    with open(os.path.join(work, "policy.yaml"), "w") as f:
        f.write(POLICY)
    snap = os.path.join(base, "cluster.json")
    sim = Sim(work, snap, free_port())
    res = {k: [] for k in ("crash", "input", "limits", "log", "recovery", "account")}
    texts = []
    try:
        expect = r["oneshot_expect"] if mode == "oneshot" and r["oneshot_expect"] else \
            r["watch_expect"] if mode == "watch" else r["expect"]
        if r["when"] == "start" and r["rules"]:
            sim.ctl("POST", "faults", r["rules"])
        if mode == "oneshot":
            if r["special"] == "outage":
                sim.stop()
                down = time.monotonic()
                first = Run(binary, sim, work, "run1", mode)
                rc = first.wait(60)
                texts.append(first.text())
                time.sleep(max(0.0, OUTAGE - (time.monotonic() - down)))
                sim.restart()
                second = Run(binary, sim, work, "run2", mode)
                rc2 = second.wait(60)
                texts.append(second.text())
                if rc not in (r["oneshot_exit"],):
                    res["crash"].append("exit %s, expected %s" % (rc, r["oneshot_exit"]))
                if rc2 != 0:
                    res["recovery"].append("the next run after the outage exited %s" % rc2)
            else:
                run = Run(binary, sim, work, "run", mode)
                rc = run.wait(60)
                texts.append(run.text())
                if rc != r["oneshot_exit"]:
                    (res["crash"] if not isinstance(rc, int) or rc < 0 else res["recovery"]).append(
                        "exit %s, expected %s" % (rc, r["oneshot_exit"]))
                if '"Number of evictions/requests"' not in texts[-1]:
                    res["recovery"].append("no cycle completed")
        else:
            extra = []
            if r["special"] in ("lease", "lease-lost"):
                extra = ["--leader-elect", "--leader-elect-lease-duration", "4s", "--leader-elect-renew-deadline",
                         "3s", "--leader-elect-retry-period", "500ms"]
            if r["special"] == "compact":
                extra = ["--watch-cache-compact-bytes", "1"]
            run = Run(binary, sim, work, "run", mode, extra)
            if r["when"] == "after-first-cycle" or r["special"] == "outage":
                if not run.wait_cycles(1, 30):
                    res["recovery"].append("the first cycle did not complete")
            if r["when"] == "after-first-cycle":
                sim.ctl("POST", "faults", r["rules"])
            if r["special"] == "outage":
                sim.stop()
                time.sleep(OUTAGE)
                sim.restart()
                before = run.successes()
                end = time.monotonic() + 30
                while time.monotonic() < end and run.successes() < before + 2 and run.proc.poll() is None:
                    time.sleep(0.05)
            if r["special"] == "lease-lost":
                rc = run.wait(30)
                texts.append(run.text())
                if rc != 0:
                    res["crash"].append("the leader that lost its lease exited %s, expected 0" % rc)
                lost_at = next((e["t"] for e in sim.journal() if e["method"] == "PUT" and e["status"] == 500), None)
                late_evictions = [e for e in sim.journal() if is_eviction(e) and lost_at and e["t"] > lost_at + 3.0]
                if late_evictions:
                    res["input"].append("%d evictions sent after the lease was lost" % len(late_evictions))
                # recovery: a new process takes the lease over once it expires and completes a cycle
                sim.ctl("DELETE", "faults")
                nxt = Run(binary, sim, work, "run2", mode, extra)
                ok = nxt.wait_cycles(1, 30)
                rc2 = nxt.stop()
                texts.append(nxt.text())
                if not ok or rc2 != 0:
                    res["recovery"].append("a new leader did not complete a cycle (exit %s)" % rc2)
            else:
                need = 3 + (1 if r["when"] == "start" else 0)
                run.wait_cycles(max(need, run.cycles() + 1), 60)
                # a cycle must also complete after the last failure named (a watch that comes
                # back after a backoff takes a few seconds)
                end = time.monotonic() + 30
                while time.monotonic() < end and run.proc.poll() is None:
                    lines = run.text().splitlines()
                    lf = max((i for i, ln in enumerate(lines) if any(re.search(rx, ln) for rx, _, _ in expect)),
                             default=-1)
                    if any('"Number of evictions/requests"' in ln for ln in lines[lf + 1:]):
                        break
                    time.sleep(0.1)
                t = run.text()
                last_fail = max((i for i, ln in enumerate(t.splitlines())
                                 if any(re.search(rx, ln) for rx, _, _ in expect)), default=-1)
                later_ok = any('"Number of evictions/requests"' in ln for ln in t.splitlines()[last_fail + 1:])
                alive = run.proc.poll() is None
                rc = run.stop()
                texts.append(run.text())
                if not alive:
                    res["crash"].append("the loop ended by itself (exit %s)" % rc)
                elif rc != 0:
                    res["crash"].append("exit %s on SIGTERM" % rc)
                if run.cycles() < 3:
                    res["recovery"].append("only %d cycles" % run.cycles())
                if not later_ok:
                    res["recovery"].append("no cycle completed after the last failure")
        journal = sim.journal()
        text = "\n".join(texts)
        if mode == "watch":
            starts = [klog_time(ln) for ln in text.splitlines() if "Resetting pod evictor counters" in ln]
            res["input"] += check_input_watch(journal, starts)
            lim, carried = check_limits(journal, nodes_of, starts)
        else:
            res["input"] += check_input(journal)
            lim, carried = check_limits(journal, nodes_of)
        res["limits"] += lim
        res["log"] += check_log(text, expect)
        res["account"] += check_account(text, journal)
        with open(os.path.join(work, "journal.json"), "w") as f:
            json.dump(journal, f, indent=1)
        return res, carried, work
    finally:
        sim.close()


# ---------------------------------------------------------------------------------------------
# the table

def render(results):
    out = ["# Fault matrix", "",
           "Produced by `tests/faults/fault_matrix.py` (run by `make test` as the \"fault matrix\" suite, which fails",
           "when this file differs from what the run produced; `tests/faults/fault_matrix.py --write` refreshes it).",
           "Each cell is one run of the real binary against a fresh API simulator (`tests/apisim`) into which the",
           "fault is injected; \"held\" means all six invariants below held. The simulator is not shared between",
           "cells: each cell starts from the same cluster, so each has evictions for the limits to cap (a start",
           "takes about half a second). One-shot runs use",
           "`--descheduling-interval 0`; loop runs use `--descheduling-interval 1s` and last at least three cycles,",
           "listing the cluster every cycle (`--watch-cache=false`) or on the watch cache (Deployment mode's default:",
           "list once, then watch; `src/kube/watch.h`).",
           "All runs use `--client-connection-timeout %gs` and `--list-page-size %d`, so the pods take several pages." %
           (CLIENT_TIMEOUT, PAGE),
           "The last section, \"Control-plane faults (cluster lab)\", is about real components failing (kube-apiserver,",
           "etcd, KubeVirt's virt-controller and virt-api, a node's kubelet) in the cluster lab:",
           "`tests/lab/faults.py` (`make lab-faults`) writes and checks it; this script leaves it as it is.", "",
           "| fault | one-shot (`--descheduling-interval 0`) | loop, listing every cycle (`--watch-cache=false`) "
           "| loop on the watch cache |",
           "|---|---|---|---|"]
    for r in ROWS:
        cells = []
        for mode in MODES:
            res = results.get((r["name"], mode))
            if res is None:
                cells.append(ONESHOT_NA if mode == "oneshot" and not r["oneshot"] and r["loop"] else
                             WATCH_NA if not r[mode] else "not run")
                continue
            bad = [k for k, v in res.items() if v]
            cells.append("held (6/6)" if not bad else "**NOT held: %s**" % ", ".join(bad))
        out.append("| %s | %s | %s | %s |" % (r["name"], cells[0], cells[1], cells[2]))
    out += ["", "## Invariants", "",
            "| invariant | checked how |", "|---|---|",
            "| crash | no signal, no sanitizer text; one-shot exit 0 (1 where the run is meant to give up); a loop "
            "exits 0 on SIGTERM, or by itself with 0 when it lost its lease |",
            "| input | server-side, from the simulator's request journal: every eviction carried its pod's UID as a "
            "precondition (`deleteOptions.preconditions.uid`), and no eviction request arrived unless every "
            "kind the cycle reads (%d lists) had been listed completely, every page 200 and whole, after the last "
            "failed list request that was not retried successfully; on the watch cache, unless every kind was "
            "listed completely and, since its last failure (a failed list, a refused watch, a watch ended by 410, "
            "the server restarting), listed again or (refused watch, restart) watched again with a 200 |" % len(LISTS),
            "| limits | server-side: per cycle (on the watch cache, which lists nothing per cycle, cycles start at "
            "the log's \"Resetting pod evictor counters\" times), evictions carried out (201, or KubeVirt's 429 \"%s\") ≤ "
            "`maxNoOfPodsToEvictTotal` (%d) and per node ≤ `maxNoOfPodsToEvictPerNode` (%d); an eviction whose "
            "answer never arrived counts, since the server may have carried it out |"
            % (BACKGROUND_TEXT, LIMIT_TOTAL, LIMIT_NODE),
            "| log | the failure is named by the line(s) below, once per occurrence, and no other error line "
            "appears; on the watch cache one eviction refused because the pod is already gone (a cycle began "
            "before the cache saw the deletion of a pod the previous cycle evicted) is allowed in every row |",
            "| recovery | a loop completes a cycle after the last failure and at least three in all; a one-shot "
            "run exits 0, or (the outage) the next run, started once the API server is back, exits 0 |",
            "| account | the descheduler's \"Evicted pod\" lines equal the 201 answers it received, its \"Eviction "
            "in background assumed\" lines the KubeVirt 429 answers |",
            "", "## The faults and the lines that name them", "",
            "| fault | injected | expected line (regular expression) |", "|---|---|---|"]
    for r in ROWS:
        inj = "; ".join(json.dumps(x, separators=(", ", ": ")) for x in r["rules"]) or \
            "simulator stopped (SIGTERM, `--state-out`), restarted %gs later on the same port from that state" % OUTAGE
        if r["when"] == "after-first-cycle":
            inj += " (after the first cycle)"
        if r["special"] == "compact":
            inj += " (with `--watch-cache-compact-bytes 1`: the first cycle's changes start a compaction)"
        lines = "<br>".join("`%s`" % rx.replace("|", "\\|") for rx, _, _ in r["expect"])
        if r["watch"] and r["watch_named"] != r["expect"]:
            lines += ("<br>" if lines else "") + "watch cache: " + "<br>".join(
                "`%s`" % rx.replace("|", "\\|") for rx, _, _ in r["watch_named"])
        if r["oneshot_expect"]:
            lines += "<br>one-shot: " + "<br>".join("`%s`" % rx.replace("|", "\\|") for rx, _, _ in r["oneshot_expect"])
        out.append("| %s | %s | %s |" % (r["name"], inj.replace("|", "\\|"), lines))
    out += ["", "Decisions these runs pin down (see README.md, \"Differences from upstream\"):", "",
            "- A failed read evicts nothing in that cycle; a one-shot run retries after 1, 2 and 4 s, a loop waits for "
            "its next cycle.",
            "- An expired continue token (410) makes the cycle read the cluster again from the start, once, as "
            "client-go's pager falls back to a full list.",
            "- An eviction request that got no answer (timeout, reset) counts against the limits: the server may "
            "have carried it out.",
            "- A one-shot run that cannot reach the API server at start exits 1 at once; the next run recovers.",
            "- On the watch cache a kind whose list or watch failed makes every cycle evict nothing until it is listed "
            "or watched again; a watch that ends is opened again from its resourceVersion; 410 lists that kind "
            "again; every eviction carries its pod's UID as a precondition. A compaction's lists count as any other: "
            "while one has failed, cycles evict nothing.",
            ""]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "descheduler"))
    ap.add_argument("--write", action="store_true", help="write docs/fault-matrix.md instead of comparing")
    ap.add_argument("--only", help="run only the rows whose name contains this text (no comparison)")
    ap.add_argument("--keep", help="keep the runs' files in this directory")
    a = ap.parse_args()
    binary = os.path.abspath(a.binary)
    if not os.access(binary, os.X_OK):
        print("fault matrix: no binary at %s" % binary, file=sys.stderr)
        return 2
    self_test()
    base = a.keep or tempfile.mkdtemp(prefix="fault-matrix-")
    os.makedirs(base, exist_ok=True)
    lst = cluster()
    with open(os.path.join(base, "cluster.json"), "w") as f:
        json.dump(lst, f)
    nodes_of = pod_nodes(lst)
    results, failed_any, t0 = {}, False, time.monotonic()
    for r in ROWS:
        if a.only and a.only not in r["name"]:
            continue
        for mode in MODES:
            if not r[mode]:
                continue
            t = time.monotonic()
            res, carried, work = run_cell(binary, r, mode, base, nodes_of)
            results[(r["name"], mode)] = res
            bad = {k: v for k, v in res.items() if v}
            print("%-4s %-62s %-7s %5.1fs  %d evictions carried out%s" % (
                "FAIL" if bad else "ok", r["name"], mode, time.monotonic() - t, carried,
                "" if not bad else "  (%s)" % work))
            for k, v in bad.items():
                for p in v:
                    print("       %s: %s" % (k, p))
            failed_any |= bool(bad)
    print("fault matrix: %d cells in %.0fs" % (len(results), time.monotonic() - t0))
    table = render(results)
    if a.only:
        return 1 if failed_any else 0
    try:
        with open(DOC) as f:
            committed, sep, lab_part = f.read().partition(LAB_SECTION)
    except OSError:
        committed, sep, lab_part = "", "", ""
    if sep:   # a blank line between this script's part and the lab's section
        committed = committed[:-1] if committed.endswith("\n\n") else committed
    if a.write:
        with open(DOC, "w") as f:
            f.write(table + ("\n" + sep + lab_part if sep else ""))
        print("wrote %s" % DOC)
        return 1 if failed_any else 0
    if committed != table:
        sys.stdout.writelines(difflib.unified_diff(committed.splitlines(True), table.splitlines(True),
                                                   "docs/fault-matrix.md (committed)", "this run"))
        print("fault matrix: docs/fault-matrix.md differs from this run (refresh it with --write once every "
              "cell holds)")
        return 1
    if not a.keep:
        subprocess.run(["rm", "-rf", base])
    return 1 if failed_any else 0


if __name__ == "__main__":
    sys.exit(main())
