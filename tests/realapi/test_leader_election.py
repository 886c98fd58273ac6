"""Leader election on a real kube-apiserver: one leader evicting at a time, told from the audit log.

Replicas of the real binary ($DESCHEDULER, default build/descheduler) run in Deployment mode
(--descheduling-interval 1s) with --leader-elect and short lease settings against etcd + a real
kube-apiserver loaded with a cluster that gives every cycle evictions to make: one node tainted
`maintenance=true:NoSchedule` with many pods that do not tolerate it, and
RemovePodsViolatingNodeTaints evicting up to EVICTIONS_PER_CYCLE of them a cycle (the stand-in
kubelet of kvstandin.py finishes each deletion). Every replica process has a static token of
its own, so the server's audit log says which process sent each request: the Lease writes
(create/update of leases/descheduler that succeeded) and the evictions (create on
pods/eviction).

- Takeover: the leader is killed with SIGKILL (no release). The follower's first successful
  Lease write must come within LEASE_DURATION + 2 * RETRY_PERIOD + 1 s of the kill (its
  observation of the last renewal can lag that renewal by one retry period, and it polls every
  retry period; 1 s for a loaded machine) and no sooner than LEASE_DURATION after the killed
  leader's last renewal (a valid lease is never taken; CLOCK_SLACK for the requests' own
  duration). Its first eviction follows within INTERVAL + 3 s more (its first cycle lists the
  cluster).
- A frozen leader: the leader is stopped with SIGSTOP right after one of its evictions (in the
  middle of a cycle of several), for longer than the lease duration; the follower takes over
  and evicts; then the old leader gets SIGCONT. It must send no eviction after the takeover:
  it has to notice that it cannot have kept the lease before sending another request, then
  it stops ("Leader lost", exit 0) as upstream's descheduler does when it loses the lease.
- Never two leaders: from the audit log, the spans [first, last eviction] of the replicas do
  not overlap, and every eviction was received while the Lease named its sender, within
  LEASE_DURATION of that sender's last successful Lease write.

The figures (kill to the follower's Lease write, kill to its first eviction) are printed on a
`leader election:` line. `python3 tests/realapi/test_leader_election.py --measure --repeats 3`
runs the takeover and the frozen leader that many times on one server and prints
{"takeoverSecondsMedian", "firstEvictionSecondsMedian", "staleLeaderEvictions", "overlaps",
"repeats", ...} as JSON (measure() returns the same dict).
"""

import argparse
import datetime
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "apisim"))

import realapi  # noqa: E402
import simcerts  # noqa: E402

DESCHEDULER = os.environ.get("DESCHEDULER") or os.path.join(REPO, "build", "descheduler")

LEASE_DURATION = 4.0
RENEW_DEADLINE = 3.0
RETRY_PERIOD = 0.5
INTERVAL = 1.0
EVICTIONS_PER_CYCLE = 4
LEASE_NS, LEASE_NAME = "kube-system", "descheduler"
# takeover: the follower sees the last renewal up to one retry period after it was written and
# tries once every retry period; 1 s more for a loaded 2-core machine
TAKEOVER_BOUND = LEASE_DURATION + 2 * RETRY_PERIOD + 1.0
# first eviction: the new leader's first cycle (a list of the cluster, then the evictions)
FIRST_EVICTION_BOUND = TAKEOVER_BOUND + INTERVAL + 3.0
# the server's timestamps and ours come from the same clock; what separates a follower's read
# of a renewal from the renewal's audit record is the request's own duration
CLOCK_SLACK = 0.25

POLICY = """apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
maxNoOfPodsToEvictTotal: %d
profiles:
- name: taints
  pluginConfig:
  - name: RemovePodsViolatingNodeTaints
  plugins:
    deschedule:
      enabled: [RemovePodsViolatingNodeTaints]
""" % EVICTIONS_PER_CYCLE


def cannot_run():
    """Why this test cannot run on this machine, or None."""
    if not os.access(DESCHEDULER, os.X_OK):
        return "%s is not built (make build)" % DESCHEDULER
    if not shutil.which("etcd") and not os.path.exists("/usr/bin/etcd"):
        return "no etcd (Debian package etcd-server; scripts/deps.sh test installs it)"
    p = subprocess.run([os.path.join(HERE, "build.sh"), "--check"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        return "kube-apiserver is not built (tests/realapi/build.sh): " + p.stderr.strip()
    return None


def cluster_items(npods):
    """Three nodes, node-a tainted; npods pods on node-a that do not tolerate the taint."""
    def node(name, taints=()):
        return {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                "spec": {"taints": list(taints)},
                "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "2000"},
                           "capacity": {"cpu": "64", "memory": "256Gi", "pods": "2000"},
                           "conditions": [{"type": "Ready", "status": "True"}]}}

    def pod(i):
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "app-%04d" % i, "namespace": "apps", "labels": {"app": "app"},
                             "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "app",
                                                  "uid": "4b0c7a52-5f5e-4a51-9d53-000000000001",
                                                  "controller": True}]},
                "spec": {"nodeName": "node-a",
                         "containers": [{"name": "c", "image": "registry.example/app:1",
                                         "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]},
                "status": {"phase": "Running"}}

    items = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps"}},
             node("node-a", [{"key": "maintenance", "value": "true", "effect": "NoSchedule"}]),
             node("node-b"), node("node-c")]
    return items + [pod(i) for i in range(npods)]


def stamp(text):
    """An audit timestamp (RFC 3339, microseconds, UTC) as seconds since the epoch."""
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()


class Audit:
    """The server's audit log, read as it grows: Lease writes and evictions, by user."""

    def __init__(self, path):
        self.path = path
        self.offset = 0
        self.partial = b""
        self.lease_writes = []  # (received, completed, user, verb), successful ones only
        self.evictions = []     # (received, user, code, pod)

    def poll(self):
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return
        self.offset += len(data)
        lines = (self.partial + data).split(b"\n")
        self.partial = lines.pop()  # a line still being written
        for line in lines:
            if not line.strip():
                continue
            ev = json.loads(line)
            if ev.get("stage") != "ResponseComplete":
                continue
            ref = ev.get("objectRef") or {}
            user = (ev.get("user") or {}).get("username")
            code = (ev.get("responseStatus") or {}).get("code")
            received = stamp(ev["requestReceivedTimestamp"])
            if (ref.get("resource") == "leases" and ref.get("namespace") == LEASE_NS
                    and ev.get("verb") in ("create", "update") and code in (200, 201)
                    and (ref.get("name") in (None, "", LEASE_NAME))):
                self.lease_writes.append((received, stamp(ev["stageTimestamp"]), user, ev["verb"]))
            elif ref.get("resource") == "pods" and ref.get("subresource") == "eviction" and ev.get("verb") == "create":
                self.evictions.append((received, user, code, ref.get("name")))

    def evictions_by(self, user, after=0.0):
        self.poll()
        return [e for e in self.evictions if e[1] == user and e[0] > after]

    def lease_writes_by(self, user, after=0.0):
        self.poll()
        return [w for w in self.lease_writes if w[2] == user and w[0] > after]

    def wait(self, what, fn, timeout, step=0.02):
        """fn() until it is true (its value returned), or AssertionError after timeout s."""
        deadline = time.time() + timeout
        while True:
            out = fn()
            if out:
                return out
            if time.time() > deadline:
                raise AssertionError("%s: not within %.1f s" % (what, timeout))
            time.sleep(step)

    def holder_at(self, t):
        """The user whose successful Lease write was the last one received before t (the writes
        are compare-and-swaps on the resourceVersion: one after the other), and that write."""
        last = None
        for w in sorted(self.lease_writes):
            if w[0] >= t:
                break
            last = w
        return (last[2], last) if last else (None, None)

    def violations(self):
        """(overlaps, outside): pairs of replicas whose eviction spans overlap; evictions received
        while the Lease named another replica, or more than LEASE_DURATION after their sender's
        last successful Lease write."""
        self.poll()
        spans = {}
        for t, user, _, _ in self.evictions:
            lo, hi = spans.get(user, (t, t))
            spans[user] = (min(lo, t), max(hi, t))
        users = sorted(spans)
        overlaps = [(a, b) for i, a in enumerate(users) for b in users[i + 1:]
                    if spans[a][0] <= spans[b][1] and spans[b][0] <= spans[a][1]]
        outside = []
        for t, user, code, name in self.evictions:
            holder, write = self.holder_at(t)
            if holder != user:
                outside.append("%s evicted %s at %.3f while the Lease named %s" % (user, name, t, holder))
            else:
                renewed = max(w[1] for w in self.lease_writes if w[2] == user and w[0] < t)
                if t - renewed > LEASE_DURATION:
                    outside.append("%s evicted %s at %.3f, %.2f s after its last Lease write"
                                   % (user, name, t, t - renewed))
        return overlaps, outside


class Replica:
    """One descheduler process with --leader-elect, authenticated as a user of its own."""

    def __init__(self, election, user):
        self.user = user
        self.err_path = os.path.join(election.tmp, user + ".err")
        kc = os.path.join(election.tmp, user + ".kubeconfig")
        simcerts.write_kubeconfig(kc, election.cluster.kubeconfig(token=election.cluster.user_tokens[user]))
        with open(os.path.join(election.tmp, user + ".out"), "wb") as out, open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen(
                [DESCHEDULER, "--kubeconfig", kc, "--policy-config-file", election.policy,
                 "--descheduling-interval", "%ds" % INTERVAL, "--secure-port", "0", "--v", "3",
                 "--leader-elect", "--leader-elect-lease-duration", "%ds" % LEASE_DURATION,
                 "--leader-elect-renew-deadline", "%ds" % RENEW_DEADLINE,
                 "--leader-elect-retry-period", "%dms" % (RETRY_PERIOD * 1000),
                 "--leader-elect-resource-namespace", LEASE_NS, "--leader-elect-resource-name", LEASE_NAME],
                stdout=out, stderr=err, stdin=subprocess.DEVNULL)

    def log(self):
        with open(self.err_path, errors="replace") as f:
            return f.read()

    def wait_log(self, text, timeout):
        deadline = time.time() + timeout
        while text not in self.log():
            if self.proc.poll() is not None or time.time() > deadline:
                raise AssertionError("%s: no %r within %.0f s (exit status %s); its log ends:\n%s"
                                     % (self.user, text, timeout, self.proc.poll(), self.log()[-3000:]))
            time.sleep(0.05)

    def signal(self, sig):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)  # a frozen one cannot handle SIGTERM
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Election:
    """A real server for `repeats` rounds of takeover + frozen leader, and the replicas."""

    def __init__(self, repeats=1):
        self.tmp = tempfile.mkdtemp(prefix="realapi-leader-")
        self.users = ["replica-%d" % i for i in range(1 + 2 * repeats)]  # a leader, then two per round
        self.next_user = 0
        self.replicas = []
        with open(os.path.join(self.tmp, "policy.yaml"), "w") as f:
            f.write(POLICY)
        self.policy = os.path.join(self.tmp, "policy.yaml")
        snap = os.path.join(self.tmp, "cluster.json")
        # a round takes about 15 s, evicting at most EVICTIONS_PER_CYCLE pods a second: room for 25 s
        with open(snap, "w") as f:
            json.dump({"apiVersion": "v1", "kind": "List",
                       "items": cluster_items(40 + 25 * EVICTIONS_PER_CYCLE * repeats)}, f)
        self.cluster = realapi.Cluster(os.path.join(self.tmp, "cluster"),
                                       users={u: ["system:masters"] for u in self.users}, audited_users=self.users)
        os.makedirs(self.cluster.dir)
        try:
            self.cluster.start_etcd()
            self.cluster.start_apiserver(realapi.binary_path())
            self.cluster.create_crds()
            self.cluster.load(snap)
            self.cluster.start_standin()
        except BaseException:
            self.stop()
            raise
        self.audit = Audit(self.cluster.audit_log)

    def start(self):
        r = Replica(self, self.users[self.next_user])
        self.next_user += 1
        self.replicas.append(r)
        return r

    def stop(self):
        for r in self.replicas:
            r.stop()
        self.cluster.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def first_leader(self):
        leader = self.start()
        leader.wait_log('"Started leading"', 30)
        self.audit.wait("%s's first eviction" % leader.user, lambda: self.audit.evictions_by(leader.user), 15)
        return leader

    def follower(self):
        f = self.start()
        f.wait_log("Attempting to acquire leader lease", 30)
        return f

    def takeover(self, leader, follower=None):
        """Kills the leader (SIGKILL: no release); the new leader and the figures."""
        a = self.audit
        follower = follower or self.follower()
        time.sleep(2 * RETRY_PERIOD)  # the follower has read the lease its leader renews
        killed = time.time()
        leader.signal(signal.SIGKILL)
        leader.proc.wait(10)
        acquired = a.wait("%s takes the lease after %s was killed" % (follower.user, leader.user),
                          lambda: a.lease_writes_by(follower.user), TAKEOVER_BOUND + 10)[0]
        evicted = a.wait("%s's first eviction as leader" % follower.user,
                         lambda: a.evictions_by(follower.user), FIRST_EVICTION_BOUND + 10)[0]
        last_renewal = max(w[1] for w in a.lease_writes if w[2] == leader.user)
        follower.wait_log('"Started leading"', 5)
        return follower, {"takeover": acquired[0] - killed, "firstEviction": evicted[0] - killed,
                          "afterLastRenewal": acquired[0] - last_renewal}

    def freeze(self, leader):
        """Stops the leader with SIGSTOP right after one of its evictions, for longer than the
        lease lasts; once the follower has taken over and evicted, SIGCONT. The new leader, and
        the old one's evictions received after the takeover."""
        a = self.audit
        follower = self.follower()
        seen = len(a.evictions_by(leader.user))
        # right after an eviction: in the middle of a cycle of several
        a.wait("another eviction by %s" % leader.user, lambda: len(a.evictions_by(leader.user)) > seen,
               10, step=0.002)
        leader.signal(signal.SIGSTOP)
        stopped = time.time()
        acquired = a.wait("%s takes the lease from the frozen %s" % (follower.user, leader.user),
                          lambda: a.lease_writes_by(follower.user), TAKEOVER_BOUND + 10)[0]
        a.wait("%s's first eviction as leader" % follower.user, lambda: a.evictions_by(follower.user),
               FIRST_EVICTION_BOUND + 10)
        # frozen for at least the lease duration and a bit
        time.sleep(max(0.0, stopped + LEASE_DURATION + 1.0 - time.time()))
        leader.signal(signal.SIGCONT)
        # it finds the lease taken at its next renewal at the latest and stops
        try:
            status = leader.proc.wait(RENEW_DEADLINE + LEASE_DURATION + 5)
        except subprocess.TimeoutExpired:
            status = None
        time.sleep(1.0)  # what it might still send would be in the audit log by now
        stale = a.evictions_by(leader.user, after=acquired[0])
        log = leader.log()
        # whether the resumed leader stopped at a request of its cycle (the write gate) or its
        # renewer saw the lost lease first: either way it must send nothing; said, not checked
        refused = log.count("not sent: the leader lease")
        return follower, {"status": status, "stale": stale, "log": log, "refused": refused,
                          "frozen": time.time() - stopped}


def measure(repeats=3):
    """Takeover and frozen leader, `repeats` rounds on one server: the figures as a dict."""
    why = cannot_run()
    if why:
        return {"skipped": why, "repeats": 0}
    e = Election(repeats)
    try:
        takeovers, firsts, stale, refused = [], [], 0, 0
        leader = e.first_leader()
        for _ in range(repeats):
            leader, t = e.takeover(leader)
            takeovers.append(t["takeover"])
            firsts.append(t["firstEviction"])
            leader, f = e.freeze(leader)
            stale += len(f["stale"])
            refused += f["refused"]
        overlaps, outside = e.audit.violations()
        return {"takeoverSecondsMedian": round(statistics.median(takeovers), 3),
                "firstEvictionSecondsMedian": round(statistics.median(firsts), 3),
                "takeoverSeconds": [round(x, 3) for x in takeovers],
                "firstEvictionSeconds": [round(x, 3) for x in firsts],
                "staleLeaderEvictions": stale, "staleLeaderRequestsRefused": refused,
                "overlaps": len(overlaps), "evictionsOutsideLease": len(outside), "evictions": len(e.audit.evictions),
                "leaseDurationSeconds": LEASE_DURATION, "renewDeadlineSeconds": RENEW_DEADLINE,
                "retryPeriodSeconds": RETRY_PERIOD, "repeats": repeats}
    finally:
        e.stop()


class LeaderElectionOnRealServer(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        why = cannot_run()
        if why:
            raise unittest.SkipTest(why)
        cls.e = Election(1)

    @classmethod
    def tearDownClass(cls):
        cls.e.stop()

    def test_takeover_frozen_leader_and_one_leader_at_a_time(self):
        e, a = self.e, self.e.audit
        leader = e.first_leader()
        follower = e.follower()
        # while the leader lives, the follower neither writes the Lease nor evicts
        time.sleep(3 * INTERVAL)
        self.assertGreaterEqual(len(a.evictions_by(leader.user)), 2, "the leader evicts every cycle")
        self.assertEqual(a.lease_writes_by(follower.user), [], "the follower wrote the Lease")
        self.assertEqual(a.evictions_by(follower.user), [], "the follower evicted")
        self.assertNotIn('"Started leading"', follower.log())

        new, t = e.takeover(leader, follower)
        print("\nleader election: takeover %.2f s after SIGKILL (lease written), first eviction %.2f s "
              "after it (lease %gs, renew deadline %gs, retry %gs)"
              % (t["takeover"], t["firstEviction"], LEASE_DURATION, RENEW_DEADLINE, RETRY_PERIOD), flush=True)
        self.assertLessEqual(t["takeover"], TAKEOVER_BOUND)
        self.assertLessEqual(t["firstEviction"], FIRST_EVICTION_BOUND)
        # a lease still valid is never taken: the killed leader's last renewal lasted its duration
        self.assertGreaterEqual(t["afterLastRenewal"], LEASE_DURATION - CLOCK_SLACK)

        third, f = e.freeze(new)
        print("leader election: the leader frozen %.1f s; after SIGCONT it sent %d eviction(s) once "
              "another replica held the lease (%d refused before leaving)"
              % (f["frozen"], len(f["stale"]), f["refused"]), flush=True)
        self.assertEqual(f["stale"], [], "the resumed old leader evicted after the takeover:\n%s" % f["log"][-4000:])
        self.assertEqual(f["status"], 0, "the resumed old leader did not stop (status %s):\n%s"
                         % (f["status"], f["log"][-3000:]))
        self.assertIn('"Leader lost"', f["log"])
        # the new leader goes on evicting
        n = len(a.evictions_by(third.user))
        a.wait("%s evicts again" % third.user, lambda: len(a.evictions_by(third.user)) > n, 3 * INTERVAL + 2)

        overlaps, outside = a.violations()
        self.assertEqual(overlaps, [], "two replicas' eviction spans overlap")
        self.assertEqual(outside, [], "evictions outside the sender's lease")
        # exactly the three replicas that led evicted
        self.assertEqual(sorted({ev[1] for ev in a.evictions}), sorted([leader.user, new.user, third.user]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--measure", action="store_true", help="print the figures as JSON instead of testing")
    ap.add_argument("--repeats", type=int, default=3)
    args, rest = ap.parse_known_args()
    if args.measure:
        print(json.dumps(measure(args.repeats), sort_keys=True))
        return
    unittest.main(argv=[sys.argv[0]] + rest)


if __name__ == "__main__":
    main()
