"""The RBAC of deploy/ against the requests the binary really makes.

Each entry of RUNS renders a manifest directory with kubectl's kustomize, takes the command
line of one workload from it (deploy/deploylib.py), runs that against the API simulator
through a scenario, and records every request the binary made (`GET /_sim/requests`). Then
tests/deploy/rbaccheck.py decides, as kube-apiserver's RBAC authorizer would, whether the
roles bound to the workload's ServiceAccount allow each request, and whether each grant of
those roles was needed by at least one run that renders it. The test fails on either.

A new kind of run (a `check`, `verify`, `pause` or soft-taint subcommand with its own role)
is one more Run: its manifest directory, the workload (or explicit argv) and a scenario
function that drives it and asserts it did what it is for.
"""

import copy
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import deploylib as dl  # noqa: E402
import rbaccheck  # noqa: E402


class Run:
    """One way the binary runs in a cluster.

    manifests  directory under deploy/ that kubectl kustomize renders
    workload   "Kind/name" whose container gives the command line and ServiceAccount, or None
               with argv (["descheduler", subcommand, flags...]) and subject ("namespace/sa")
    scenario   function(ctx) driving the run; it must assert the run did its job
    snapshot   cluster the simulator starts with
    policy     a file replacing the rendered ConfigMap's policy.yaml, or None
    flags      {flag: value} set on the command line (timing only: intervals, lease periods)
    drop       flags removed from the command line
    requires   directories under deploy/ applied first (as their kustomizations tell users)
    prepare    function(sim) run before anything is applied (what the cluster already has)
    serves     whether the command serves HTTPS (then --secure-port=0 picks a free port)
    """

    def __init__(self, name, manifests, workload, scenario, snapshot=dl.APISIM_CLUSTER, policy=None,
                 flags=None, drop=(), argv=None, subject=None, requires=(), prepare=None, serves=True):
        self.name, self.manifests, self.workload, self.scenario = name, manifests, workload, scenario
        self.snapshot, self.policy, self.flags, self.drop = snapshot, policy, flags or {}, drop
        self.argv, self.subject, self.requires, self.prepare = argv, subject, requires, prepare
        self.serves = serves
        if (workload is None) != (argv is not None and subject is not None):
            raise ValueError("run %s: give a workload, or argv and subject" % name)


class Context:
    def __init__(self, test, run, sim, argv, tmp):
        self.test, self.run, self.sim, self.argv, self.tmp = test, run, sim, argv, tmp
        self.recorder = dl.Recorder(sim)
        self.processes = []
        self.prometheus_servers = []

    def once(self, argv=None):
        """One run to completion; returns its stderr (exit 0 asserted)."""
        self.recorder.start()
        code, err = dl.run_once(argv or self.argv)
        self.recorder.stop()
        self.test.assertEqual(code, 0, err[-3000:])
        return err

    def background(self, label, argv=None):
        p = dl.Process(argv or self.argv, self.tmp, label)
        self.processes.append(p)
        return p

    def prometheus(self):
        prom = dl.Prometheus(self.tmp)
        self.prometheus_servers.append(prom)
        return prom


# ---- scenarios ---------------------------------------------------------------------------

def one_shot(ctx):
    """The CronJob's command line as rendered: one cycle, exit 0."""
    err = ctx.once()
    ctx.test.assertIn('"Number of evictions/requests"', err)


def kubevirt_background(ctx):
    """The seed scenario: one live migration requested in background (and recorded on the VMI),
    the next run rebuilds its cache from the launcher's annotation and leaves the migrating VM
    alone, the migration completes, a third run runs clean."""
    err = ctx.once()
    ctx.test.assertIn('"Eviction in background assumed" pod="vms/virt-launcher-vm-alpha-4f551"', err)
    # KubeVirt's VMI controller marks the launcher after the webhook answered (at once in the
    # simulator, a moment later on a real API server)
    launcher = "/api/v1/namespaces/vms/pods/virt-launcher-vm-alpha-4f551"
    ctx.sim.wait_for(lambda: (ctx.sim.obj(launcher)["metadata"].get("annotations") or {})
                     .get("descheduler.alpha.kubernetes.io/eviction-in-progress") == "true",
                     what="the launcher's eviction-in-progress annotation")
    err = ctx.once()
    ctx.test.assertIn('"Eviction in background detected. Adding pod to the cache."', err)
    ctx.test.assertIn('rule="skipMigrating"', err)  # VMSafety: its migration is in flight
    ctx.sim.control("POST", "migrations/advance", {"seconds": 700})
    vmi = ctx.sim.obj("/apis/kubevirt.io/v1/namespaces/vms/virtualmachineinstances/vm-alpha")
    ctx.test.assertEqual(vmi["status"]["nodeName"], "worker-b")
    ctx.test.assertIn("vm-rebalance.descheduler.io/requests", vmi["metadata"]["annotations"])
    err = ctx.once()
    ctx.test.assertNotIn("Eviction in background already requested", err)


def kubevirt_targeted(ctx):
    """The targeted runbook policy (deploy/policies/vm-rebalance-targeted.yaml). First run: the
    crowded node has only just been found overutilized (overutilizedFor 90s): nothing moves, the
    time is kept on the node. Once it has been so for long enough (the annotation set back, as
    the next CronJob runs would find it): the VM's destination is chosen in the cycle and
    KubeVirt asked for a migration to it (a VirtualMachineInstanceMigration, no eviction), the
    move recorded on the VMI; the migration completes on the node asked for."""
    err = ctx.once()
    ctx.test.assertIn('"Node is overutilized, but not for long enough to give up pods"', err)
    node = "/api/v1/nodes/worker-a"
    since = (ctx.sim.obj(node)["metadata"].get("annotations") or {}).get("descheduler.alpha.kubernetes.io/overutilized-since")
    ctx.test.assertTrue(since, "the node's overutilized-since annotation")
    ctx.sim.request("PATCH", node, {"metadata": {"annotations": {
        "descheduler.alpha.kubernetes.io/overutilized-since": "2020-01-01T00:00:00Z"}}},
        content_type="application/merge-patch+json")
    err = ctx.once()
    ctx.test.assertIn('"Migration requested" pod="vms/virt-launcher-vm-alpha-4f551"', err)
    ctx.test.assertIn('to="worker-b"', err)
    sent = ctx.sim.control("GET", "requests")["byPath"]  # the same shape from the simulator and the audit log
    ctx.test.assertEqual([p for p in sent if p.endswith("/eviction")], [])
    ctx.test.assertTrue(any(p.endswith("/virtualmachineinstancemigrations") for p in sent), sent)
    vmims = ctx.sim.obj("/apis/kubevirt.io/v1/namespaces/vms/virtualmachineinstancemigrations")["items"]
    mine = [m for m in vmims if m["metadata"]["name"].startswith("descheduler-move-")]
    ctx.test.assertEqual(len(mine), 1, vmims)
    ctx.test.assertEqual(mine[0]["spec"]["addedNodeSelector"], {"kubernetes.io/hostname": "worker-b"})
    # KubeVirt's migration controller takes the migration up (at once in the simulator, on its
    # next pass beside a real API server); then its time passes
    vmim = "/apis/kubevirt.io/v1/namespaces/vms/virtualmachineinstancemigrations/" + mine[0]["metadata"]["name"]
    ctx.sim.wait_for(lambda: (ctx.sim.obj(vmim).get("status") or {}).get("phase") == "Running",
                     what="the migration running")
    ctx.sim.control("POST", "migrations/advance", {"seconds": 700})
    vmi = ctx.sim.obj("/apis/kubevirt.io/v1/namespaces/vms/virtualmachineinstances/vm-alpha")
    ctx.test.assertEqual(vmi["status"]["nodeName"], "worker-b")
    ctx.test.assertIn("vm-rebalance.descheduler.io/requests", vmi["metadata"]["annotations"])


def watches_recorded(ctx):
    """After a loop stops: a real API server writes a watch to its audit log when the watch ends,
    a moment after the process exits; wait until every kind the loop listed has its watch."""
    def done():
        keys = ctx.sim.control("GET", "requests")["byVerbAndPath"]
        lists = {k.split(" ", 1)[1] for k in keys if k.startswith("list ")}
        return all("watch " + path in keys for path in lists)
    ctx.sim.wait_for(done, timeout=20, what="the loop's watches in the request log")


def run_cycles(ctx, label, cycles, argv=None):
    """A loop in the background for `cycles` cycles, stopped; its requests recorded (the watches
    included) and its log returned, exit 0 asserted."""
    ctx.recorder.start()
    p = ctx.background(label, argv)
    p.wait_log('"Number of evictions/requests"', count=cycles)
    code = p.stop()
    watches_recorded(ctx)
    ctx.recorder.stop()
    log = p.log()
    ctx.test.assertEqual(code, 0, log[-3000:])
    return log


def loop_cycles(ctx):
    """The Deployment's loop without leader election, several cycles; a node tainted NoSchedule
    makes the default-safe policy evict one `api` pod (201) and meet the `web` PDB (429)."""
    ctx.sim.request("PATCH", "/api/v1/nodes/worker-2",
                    {"spec": {"taints": [{"key": "maintenance", "value": "x", "effect": "NoSchedule"}]}},
                    content_type="application/merge-patch+json")
    log = run_cycles(ctx, "loop", 3)
    ctx.test.assertIn('"Evicted pod" pod="shop/api-', log)
    ctx.test.assertIn('plugin="RemovePodsViolatingNodeTaints"', log)


def leader_handover(ctx):
    """Two replicas with the Deployment's leader-election flags: the first leads and runs cycles,
    the second waits; the first stops (releasing the Lease) and the second takes over."""
    ctx.recorder.start()
    a = ctx.background("replica-a")
    a.wait_log("Successfully acquired lease")
    a.wait_log('"Number of evictions/requests"')
    b = ctx.background("replica-b")
    b.wait_log("Attempting to acquire leader lease")
    lease = "/apis/coordination.k8s.io/v1/namespaces/descheduler/leases/descheduler"
    ctx.sim.wait_for(lambda: ctx.sim.obj(lease)["spec"]["holderIdentity"] != "", what="a holder")
    ctx.test.assertEqual(a.stop(), 0, a.log()[-3000:])
    b.wait_log("Successfully acquired lease")
    b.wait_log('"Number of evictions/requests"')
    ctx.test.assertEqual(b.stop(), 0, b.log()[-3000:])
    ctx.recorder.stop()
    ctx.test.assertNotIn('"Number of evictions/requests"', b.log().split("Successfully acquired lease")[0])


USAGE_CLUSTER = os.path.join(dl.REPO, "tests", "data", "usage", "cluster.json")
OPENSHIFT = os.path.join(dl.REPO, "tests", "data", "profile", "live")
OVER = "nodeutilization.descheduler.openshift.io/overutilized"
APPR = "nodeutilization.descheduler.openshift.io/appropriate"
# worker-1 hot, worker-2 in between, worker-3 cold: with deviation thresholds 0/10 around the
# average, worker-1 is overutilized (both soft taints), worker-2 appropriate, worker-3 neither
LOAD = {"worker-1": 1, "worker-2": 0.6, "worker-3": 0, "cp-1": 0}
SOFT_TAINTS = {"cp-1": [], "worker-1": [APPR, OVER], "worker-2": [APPR], "worker-3": []}


def soft_taints(sim):
    return {n["metadata"]["name"]: sorted(t["key"] for t in n["spec"].get("taints") or [] if t["key"] in (OVER, APPR))
            for n in sim.obj("/api/v1/nodes")["items"]}


def write(ctx, name, text):
    path = os.path.join(ctx.tmp, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def soft_taint_policy(ctx):
    """The soft-tainter's Deployment (deploy/soft-taint) in Automatic mode, one pass: its policy
    queries Prometheus with a token from a Secret and names a PriorityClass; the nodes get the
    soft taints their load calls for."""
    prom = ctx.prometheus()
    prom.set("test_node_load", LOAD)
    secret = write(ctx, "token.yaml", "apiVersion: v1\nkind: Secret\nmetadata: {name: prometheus-token, namespace: descheduler}\n"
                   "data: {prometheusAuthToken: dGVzdC10b2tlbg==}\n")
    ctx.sim.kubectl("apply", "-f", secret)
    policy = write(ctx, "policy.yaml", """apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
nodeSelector: kubevirt.io/schedulable=true
metricsProviders:
- source: Prometheus
  prometheus:
    url: %s
    authToken: {secretReference: {namespace: descheduler, name: prometheus-token}}
profiles:
- name: KubeVirtRelieveAndMigrate
  pluginConfig:
  - name: LowNodeUtilization
    args:
      metricsUtilization: {prometheus: {query: test_node_load}, source: Prometheus}
      targetThresholds: {MetricResource: 10}
      thresholds: {MetricResource: 0}
      useDeviationThresholds: true
  - name: DefaultEvictor
    args: {priorityThreshold: {name: kubevirt-cluster-critical}}
  plugins:
    balance: {enabled: [LowNodeUtilization]}
""" % prom.url)
    err = ctx.once(dl.set_flags(ctx.argv, values={"--policy-config-file": policy, "--mode": "Automatic"}) + ["--once"])
    ctx.test.assertIn('"The soft taint got added to the node"', err)
    ctx.test.assertEqual(soft_taints(ctx.sim), SOFT_TAINTS)


def openshift_objects(sim):
    """What an OpenShift cluster has before the KubeDescheduler's soft-tainter is installed: the
    operator's and the monitoring namespaces, the prometheus-k8s Route, the Scheduler."""
    sim.kubectl("apply", "-f", os.path.join(OPENSHIFT, "openshift-crds.yaml"))
    sim.wait_for(lambda: sim.kubectl("get", "kubedeschedulers,routes,schedulers", "-A", check=False).returncode == 0,
                 timeout=30, what="the OpenShift kinds served")
    sim.kubectl("apply", "-f", os.path.join(OPENSHIFT, "openshift-objects.yaml"))


KUBEDESCHEDULER_CR = """apiVersion: operator.openshift.io/v1
kind: KubeDescheduler
metadata: {name: cluster, namespace: openshift-kube-descheduler-operator}
spec:
  managementState: Managed
  mode: Automatic
  deschedulingIntervalSeconds: 1
  profiles: [KubeVirtRelieveAndMigrate]
  profileCustomizations: {devDeviationThresholds: AsymmetricLow, devActualUtilizationProfile: PrometheusCPUCombined}
"""


def soft_taint_kubedescheduler(ctx):
    """deploy/soft-taint-kubedescheduler, one pass: the policy rendered from the KubeDescheduler
    (Automatic, the KubeVirt profile's combined CPU query), the nodes tainted as their load calls
    for. Prometheus is given by URL (the Route's host is not reachable here): the Route is read
    all the same, as the rendering reads it."""
    prom = ctx.prometheus()
    prom.set("descheduler:combined_utilization_and_pressure:avg1m", LOAD)
    cr = write(ctx, "kubedescheduler.yaml", KUBEDESCHEDULER_CR)
    ctx.sim.kubectl("apply", "-f", cr)
    err = ctx.once(dl.set_flags(ctx.argv, values={"--prometheus-url": prom.url, "--psi": "present"}) + ["--once"])
    ctx.test.assertIn('"Using the policy rendered from the KubeDescheduler"', err)
    ctx.test.assertIn('"The soft taint got added to the node"', err)
    ctx.test.assertEqual(soft_taints(ctx.sim), SOFT_TAINTS)


# on worker-3, wants a node labelled disk=ssd (worker-2 is): RemovePodsViolatingNodeAffinity evicts it
PINNED_POD = """apiVersion: v1
kind: Pod
metadata:
  name: wants-ssd
  namespace: vms
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: wants-ssd, uid: 7d6c1a52-0000-4000-8000-000000000001}]
spec:
  nodeName: worker-3
  containers: [{name: app, image: app}]
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms: [{matchExpressions: [{key: disk, operator: In, values: [ssd]}]}]
"""


def kubedescheduler_cycles(ctx):
    """deploy/kubedescheduler: the main command with --kubedescheduler-ref, a few cycles of the
    policy rendered from the CR (Automatic; the KubeVirt profile on the combined CPU query, and
    AffinityAndTaints; a priority threshold by class name): the hot node's VMs are asked to
    migrate (launcher evictions KubeVirt turns into migrations, as many as the node limit), and
    a pod whose required node affinity its node no longer meets is evicted (an Event)."""
    prom = ctx.prometheus()
    prom.set("descheduler:combined_utilization_and_pressure:avg1m", LOAD)
    cr = KUBEDESCHEDULER_CR.replace("profiles: [KubeVirtRelieveAndMigrate]",
                                    "profiles: [AffinityAndTaints, KubeVirtRelieveAndMigrate]")
    cr = cr.replace("profileCustomizations: {", "profileCustomizations: {thresholdPriorityClassName: kubevirt-cluster-critical, ")
    ctx.sim.kubectl("apply", "-f", write(ctx, "kubedescheduler.yaml", cr))
    ctx.sim.kubectl("label", "node", "worker-2", "disk=ssd")
    ctx.sim.kubectl("apply", "-f", write(ctx, "pod.yaml", PINNED_POD))
    log = run_cycles(ctx, "kubedescheduler", 2,
                     dl.set_flags(ctx.argv, values={"--prometheus-url": prom.url, "--psi": "present"}))
    ctx.test.assertIn('"Using the policy rendered from the KubeDescheduler"', log)
    ctx.test.assertIn('"Evicted pod" pod="vms/wants-ssd"', log)
    ctx.test.assertIn('"Number of evictions/requests" totalEvicted=1 evictionRequests=2', log)
    migrating = [m["spec"]["vmiName"] for m in
                 ctx.sim.obj("/apis/kubevirt.io/v1/namespaces/vms/virtualmachineinstancemigrations")["items"]]
    ctx.test.assertEqual(sorted(migrating), ["vm-1a", "vm-1b"])  # both from the hot node, its limit 2


LEASE_TIMING = {"--descheduling-interval": "1s", "--leader-elect-lease-duration": "2s",
                "--leader-elect-renew-deadline": "1500ms", "--leader-elect-retry-period": "200ms"}

RUNS = [
    Run("one-shot", "cronjob", "CronJob/descheduler", one_shot),
    Run("kubevirt", "cronjob", "CronJob/descheduler", kubevirt_background, snapshot=dl.EXAMPLE_CLUSTER),
    Run("kubevirt-targeted", "cronjob", "CronJob/descheduler", kubevirt_targeted, snapshot=dl.EXAMPLE_CLUSTER,
        policy=os.path.join(dl.DEPLOY, "policies", "vm-rebalance-targeted.yaml")),
    Run("loop", "deployment", "Deployment/descheduler", loop_cycles,
        policy=os.path.join(dl.DEPLOY, "policies", "default-safe.yaml"),
        flags={"--descheduling-interval": "1s"}, drop=("--leader-elect",)),
    Run("leader-election", "deployment", "Deployment/descheduler", leader_handover, flags=LEASE_TIMING),
    Run("soft-taint", "soft-taint", "Deployment/descheduler-softtainter", soft_taint_policy, snapshot=USAGE_CLUSTER,
        requires=("base",), serves=False),
    Run("soft-taint-kubedescheduler", "soft-taint-kubedescheduler", "Deployment/descheduler-softtainter",
        soft_taint_kubedescheduler, snapshot=USAGE_CLUSTER, requires=("base",), prepare=openshift_objects,
        serves=False),
    Run("kubedescheduler", "kubedescheduler", "Deployment/descheduler", kubedescheduler_cycles,
        snapshot=USAGE_CLUSTER, prepare=openshift_objects),
]


# ---- the comparison ----------------------------------------------------------------------

def execute(test, run, tmp):
    """Runs one entry; returns (run, rendered objects, service account, recorded counts)."""
    objects = [o for d in run.requires for o in dl.render(os.path.join(dl.DEPLOY, d))]
    objects += dl.render(os.path.join(dl.DEPLOY, run.manifests))
    tmp = tempfile.mkdtemp(prefix=run.name + "-", dir=tmp)
    if run.workload:
        kind, name = run.workload.split("/")
        argv, sa = dl.workload_command(objects, dl.find(objects, kind, name), tmp)
    else:
        argv, sa = [dl.binary()] + list(run.argv[1:]), tuple(run.subject.split("/"))
    if run.policy:
        argv = dl.set_flags(argv, values={"--policy-config-file": run.policy})
    argv = dl.set_flags(argv, drop=run.drop, values=run.flags)
    with dl.server(run.snapshot, args=["--migration-seconds", "600"]) as sim:
        # installed as a user would (the ServiceMonitor kind needs the Prometheus Operator's CRD)
        sim.kubectl("apply", "-f", dl.SERVICEMONITOR_CRD)
        if run.prepare:
            run.prepare(sim)
        for d in run.requires + (run.manifests,):
            sim.kubectl("apply", "-k", os.path.join(dl.DEPLOY, d))
        # the simulator authorizes nothing (rbaccheck decides below); a real API server gets the
        # ServiceAccount's own token, so its RBAC authorizer judges every request as well
        kubeconfig = sim.service_account_kubeconfig(*sa) if getattr(sim, "authorizes", False) else sim.kubeconfig
        argv += ["--kubeconfig=" + kubeconfig] + (["--secure-port=0"] if run.serves else [])
        ctx = Context(test, run, sim, argv, tmp)
        try:
            run.scenario(ctx)
        finally:
            for p in ctx.processes:
                p.kill()
            for prom in ctx.prometheus_servers:
                prom.stop()
        test.assertNotIn("internal error", sim.log())
        if getattr(sim, "authorizes", False):
            test.assertEqual(sim.forbidden(), [], "run %s: requests the real RBAC authorizer refused" % run.name)
    return run, objects, sa, ctx.recorder.counts


class RbacMatchesRequests(unittest.TestCase):
    """Runs every entry once, then compares each manifest directory's roles with its runs."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="deploy-rbac-")
        checker = unittest.TestCase()  # assertions inside the scenarios
        try:
            cls.results = {run.name: execute(checker, run, cls.tmp) for run in RUNS}
        except BaseException:
            shutil.rmtree(cls.tmp, ignore_errors=True)  # tearDownClass does not run after a failed setUpClass
            raise

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def check(self, edits=None):
        """rbaccheck.compare over every manifest directory a run uses, after edits[dir](objects)."""
        installs = {}
        for manifests in sorted({r.manifests for r in RUNS}):
            mine = [r for r in self.results.values() if r[0].manifests == manifests]
            objects = copy.deepcopy(mine[0][1])
            (edits or {}).get(manifests, lambda o: None)(objects)
            rules = rbaccheck.subject_rules(objects, *mine[0][2])
            installs[manifests] = (rules, {r[0].name: r[3] for r in mine})
        return rbaccheck.compare(installs)

    def test_every_run_did_work(self):
        self.assertEqual(sorted(self.results), sorted(r.name for r in RUNS))
        for name, (_, _, _, counts) in self.results.items():
            self.assertTrue(any(k.startswith("list ") for k in counts), (name, counts))

    def test_roles_are_exactly_what_the_runs_need(self):
        report = self.check()
        self.assertEqual(report.refused, [], "requests the roles in deploy/ would refuse")
        self.assertEqual(report.unused, [], "grants in deploy/ that no run used")

    def test_what_the_runs_exercised(self):
        """The requests that justify the less obvious rules really happen."""
        allkeys = {k for r in self.results.values() for k in r[3]}
        self.assertTrue(any(k.startswith("create /api/v1/namespaces/") and k.endswith("/eviction") for k in allkeys))
        self.assertIn("get /apis/scheduling.k8s.io/v1/priorityclasses/system-cluster-critical",
                      self.results["loop"][3])
        leases = {k for k in self.results["leader-election"][3] if "/leases" in k}
        self.assertEqual({k.split()[0] for k in leases}, {"get", "create", "update"}, leases)
        self.assertTrue(any(k.startswith("create /apis/events.k8s.io/v1/namespaces/") for k in allkeys))
        self.assertIn("list /apis/kubevirt.io/v1/virtualmachineinstances", self.results["kubevirt"][3])
        self.assertTrue(any(k.startswith("create /api/v1/namespaces/vms/pods/virt-launcher-")
                            for k in self.results["kubevirt"][3]))
        for run in ("soft-taint", "soft-taint-kubedescheduler"):
            counts = self.results[run][3]
            self.assertIn("patch /api/v1/nodes/worker-1", counts, run)
            self.assertIn("get /api/v1/nodes/worker-1", counts, run)
        self.assertIn("get /api/v1/namespaces/descheduler/secrets/prometheus-token", self.results["soft-taint"][3])
        self.assertIn("get /apis/scheduling.k8s.io/v1/priorityclasses/kubevirt-cluster-critical",
                      self.results["soft-taint"][3])
        kd = self.results["soft-taint-kubedescheduler"][3]
        for key in ("get /apis/operator.openshift.io/v1/namespaces/openshift-kube-descheduler-operator/kubedeschedulers/cluster",
                    "get /apis/route.openshift.io/v1/namespaces/openshift-monitoring/routes/prometheus-k8s",
                    "get /apis/config.openshift.io/v1/schedulers/cluster", "list /api/v1/namespaces"):
            self.assertIn(key, kd)

    # -- the check itself fails on a wrong role (the real recorded requests, altered roles) --

    def test_too_narrow_a_role_is_caught(self):
        def no_eviction(objects):
            role = dl.find(objects, "ClusterRole", "descheduler")
            role["rules"] = [r for r in role["rules"] if "pods/eviction" not in r["resources"]]
        report = self.check({"cronjob": no_eviction})
        self.assertTrue(report.refused)
        self.assertTrue(all(k.startswith("create /api/v1/namespaces/") and k.endswith("/eviction")
                            for _, k in report.refused), report.refused)
        self.assertEqual(report.unused, [])

        def wrong_lease_name(objects):
            role = dl.find(objects, "Role", "descheduler-leader-election")
            role["rules"][1]["resourceNames"] = ["descheduler-other"]
        report = self.check({"deployment": wrong_lease_name})
        self.assertIn(("leader-election", "get /apis/coordination.k8s.io/v1/namespaces/descheduler/leases/descheduler"),
                      report.refused)
        self.assertTrue(any("resourceNames=['descheduler-other']" in u for u in report.unused), report.unused)

        def lease_role_elsewhere(objects):
            dl.find(objects, "RoleBinding", "descheduler-leader-election")["metadata"]["namespace"] = "kube-system"
            dl.find(objects, "Role", "descheduler-leader-election")["metadata"]["namespace"] = "kube-system"
        report = self.check({"deployment": lease_role_elsewhere})
        self.assertTrue(any("/leases" in k for _, k in report.refused), report.refused)

    def test_too_broad_a_role_is_caught(self):
        def extra(objects):
            role = dl.find(objects, "ClusterRole", "descheduler")
            role["rules"].append({"apiGroups": [""], "resources": ["pods"], "verbs": ["delete", "list"]})
            role["rules"].append({"apiGroups": ["apps"], "resources": ["*"], "verbs": ["get"]})
        report = self.check({"cronjob": extra})
        self.assertEqual(report.refused, [])
        self.assertTrue(any(u.startswith("delete pods (ClusterRole descheduler rule ") for u in report.unused),
                        report.unused)
        self.assertTrue(any(u.startswith("get apps/* ") and "wildcard" in u for u in report.unused), report.unused)
        # `list pods` of that rule is used (the first rule grants it too): only the extras are reported
        self.assertEqual(len(report.unused), 2, report.unused)

        def deletecollection(objects):
            role = dl.find(objects, "ClusterRole", "descheduler")
            (rule,) = [r for r in role["rules"] if "nodes" in r["resources"] and "list" in r["verbs"]]
            rule["verbs"].append("deletecollection")
        report = self.check({"deployment": deletecollection})
        self.assertTrue(report.unused)
        self.assertIn("deletecollection nodes", [u.split(" (")[0] for u in report.unused])
        self.assertTrue(all(u.startswith("deletecollection ") for u in report.unused), report.unused)


if __name__ == "__main__":
    unittest.main()


def install_md_rules(text):
    """{(group, resource, verb)} of the ClusterRole table in docs/install.md ("core" is "")."""
    sec = text[text.index("## 5. RBAC"):]
    rows = sec[sec.index("| verbs | API group |"):].split("\n\n")[0].splitlines()[2:]
    out = set()
    for row in rows:
        verbs, group, resources = [c.strip() for c in row.strip("|").split("|")][:3]
        group = "" if group == "core" else group
        for v in verbs.replace("`", "").split(","):
            for r in resources.split(","):
                out.add((group, r.strip(), v.strip()))
    return out


class RbacTableMatchesClusterRole(unittest.TestCase):
    """docs/install.md's table says exactly what deploy/base/clusterrole.yaml grants."""

    def test_table_is_the_cluster_role(self):
        import yaml
        with open(os.path.join(dl.DEPLOY, "base", "clusterrole.yaml")) as f:
            role = yaml.safe_load(f)
        granted = {(g, r, v) for rule in role["rules"] for g in rule["apiGroups"] for r in rule["resources"]
                   for v in rule["verbs"]}
        with open(os.path.join(dl.REPO, "docs", "install.md")) as f:
            documented = install_md_rules(f.read())
        self.assertEqual(sorted(documented - granted), [], "in docs/install.md's table, not granted")
        self.assertEqual(sorted(granted - documented), [], "granted, missing from docs/install.md's table")

    def test_a_missing_row_is_caught(self):
        with open(os.path.join(dl.REPO, "docs", "install.md")) as f:
            text = f.read()
        row = next(line for line in text.splitlines() if line.startswith("| `patch` | kubevirt.io |"))
        self.assertNotIn(("kubevirt.io", "virtualmachineinstances", "patch"),
                         install_md_rules(text.replace(row + "\n", "")))
