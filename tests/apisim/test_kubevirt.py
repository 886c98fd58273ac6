"""KubeVirt emulation: eviction interception, evacuation, live migration, limits, failures.

Scenarios follow KubeVirt's webhook and controllers (docs/behaviour.md, KubeVirt).  Most
tests run with a long migration time and move the simulator's clock with
`/_sim/migrations/advance`, so they are deterministic and fast; one test lets
a short migration complete in real time.
"""

import os
import shutil
import sys
import tempfile
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import simfixtures  # noqa: E402
from simtest import SimProcess, write_snapshot  # noqa: E402
from test_watch import WatchStream  # noqa: E402

VMIS = "/apis/kubevirt.io/v1/namespaces/vms/virtualmachineinstances"
VMIMS = "/apis/kubevirt.io/v1/namespaces/vms/virtualmachineinstancemigrations"
KV = "/apis/kubevirt.io/v1/namespaces/kubevirt/kubevirts/kubevirt"
WEBHOOK = 'admission webhook "virt-launcher-eviction-interceptor.kubevirt.io" denied the request: '
IN_PROGRESS = "descheduler.alpha.kubernetes.io/eviction-in-progress"
EVICT_ONLY = "descheduler.alpha.kubernetes.io/request-evict-only"
RUNNING = ("Scheduling", "Scheduled", "PreparingTarget", "TargetReady", "Running")


def merge(sim, path, patch):
    code, _, body = sim.request("PATCH", path, patch, content_type="application/merge-patch+json")
    assert code == 200, (code, body)
    return body


def phases(sim, path=VMIMS):
    out = {}
    for m in sim.obj(path)["items"]:
        ph = m.get("status", {}).get("phase", "")
        out[ph] = out.get(ph, 0) + 1
    return out


class EvictionToMigration(unittest.TestCase):
    def setUp(self):
        self.sim = SimProcess(args=["--migration-seconds", "1000", "--backoff-seconds", "100"])

    def tearDown(self):
        log = self.sim.log()
        self.assertEqual(self.sim.stop(), 0)
        self.assertNotIn("Traceback", log, "controllers must not fail")

    def vmi(self, name):
        return self.sim.obj(VMIS + "/" + name)

    def vmims(self):
        return self.sim.obj(VMIMS)["items"]

    def advance(self, seconds):
        return self.sim.control("POST", "migrations/advance", {"seconds": seconds})

    def test_migratable_launcher_is_live_migrated(self):
        before = self.vmi("vm-a")
        pod = self.sim.launcher("vms", "vm-a")
        name = pod["metadata"]["name"]
        code, _, st = self.sim.evict("vms", name)
        self.assertEqual(code, 429)
        self.assertEqual(st["message"], WEBHOOK + 'Eviction triggered evacuation of VMI "vms/vm-a"')
        self.assertNotIn("reason", st, "a webhook denial carries no reason")
        self.assertEqual((st["status"], st["code"]), ("Failure", 429))
        vmi = self.vmi("vm-a")
        self.assertEqual(vmi["status"]["evacuationNodeName"], "worker-1")
        self.assertEqual(vmi["metadata"]["annotations"]["kubevirt.io/eviction-source"], "descheduler")
        self.sim.wait_for(lambda: self.sim.obj("/api/v1/namespaces/vms/pods/" + name)["metadata"]["annotations"]
                          .get(IN_PROGRESS) == "true", what="eviction-in-progress annotation")
        m = self.sim.wait_for(lambda: [x for x in self.vmims() if x.get("status", {}).get("phase") == "Running"],
                              what="a running migration")[0]
        self.assertTrue(m["metadata"]["name"].startswith("kubevirt-evacuation-"))
        self.assertEqual(m["metadata"]["annotations"], {"kubevirt.io/evacuationMigration": "worker-1"})
        self.assertEqual(m["metadata"]["labels"], {"kubevirt.io/vmi-name": "vm-a"})
        self.assertEqual(m["spec"], {"vmiName": "vm-a", "priority": "system-maintenance"})
        # while it migrates, a repeated request is told so
        code, _, st = self.sim.evict("vms", name)
        self.assertEqual((code, st["message"]),
                         (429, WEBHOOK + 'Evacuation in progress: Eviction triggered evacuation of VMI "vms/vm-a"'))
        target = m["status"]["migrationState"]["targetNode"]
        self.assertNotEqual(target, "worker-1")
        self.assertNotEqual(target, "cp-0", "the control-plane taint is not tolerated")

        self.assertEqual(self.advance(1000)["phases"], {"Succeeded": 1})
        vmi = self.vmi("vm-a")
        self.assertEqual(vmi["metadata"]["uid"], before["metadata"]["uid"])
        self.assertEqual(vmi["status"]["nodeName"], target)
        self.assertEqual(vmi["metadata"]["labels"]["kubevirt.io/nodeName"], target)
        self.assertNotIn("evacuationNodeName", vmi["status"])
        self.assertNotIn("kubevirt.io/eviction-source", vmi["metadata"]["annotations"])
        ms = vmi["status"]["migrationState"]
        self.assertEqual((ms["completed"], ms["sourceNode"], ms["targetNode"], ms["sourcePod"]),
                         (True, "worker-1", target, name))
        self.assertTrue(ms["endTimestamp"])
        old = self.sim.obj("/api/v1/namespaces/vms/pods/" + name)
        self.assertEqual(old["status"]["phase"], "Succeeded", "KubeVirt does not delete the source launcher")
        self.assertEqual(old["metadata"]["annotations"][IN_PROGRESS], "true", "KubeVirt leaves it on the source pod")
        new = self.sim.launcher("vms", "vm-a")
        self.assertEqual(new["spec"]["nodeName"], target)
        self.assertEqual(new["metadata"]["name"], ms["targetPod"])
        self.assertEqual(new["status"]["phase"], "Running")
        self.assertIn(EVICT_ONLY, new["metadata"]["annotations"])
        self.assertNotIn(IN_PROGRESS, new["metadata"]["annotations"])
        self.assertEqual(new["metadata"]["labels"]["kubevirt.io/migrationJobUID"], m["metadata"]["uid"])
        self.assertEqual(self.vmims()[0]["status"]["phase"], "Succeeded")
        notes = [e["message"] for e in self.sim.obj("/api/v1/namespaces/vms/events")["items"]]
        self.assertIn("The VirtualMachineInstance migrated to node %s." % target, notes)
        # the finished source pod is no longer protected: evicting it just deletes it
        code, _, st = self.sim.evict("vms", name)
        self.assertEqual((code, st["status"]), (201, "Success"))
        self.assertEqual(self.sim.get("/api/v1/namespaces/vms/pods/" + name)[0], 404)

    def test_usage_moves_with_the_vm(self):
        pod = self.sim.launcher("vms", "vm-c")
        self.sim.control("POST", "metrics", {"kind": "PodMetrics", "metadata": {"name": pod["metadata"]["name"],
                                                                                "namespace": "vms"},
                                             "containers": [{"name": "compute", "usage": {"cpu": "2500m",
                                                                                          "memory": "1Gi"}}]})
        self.sim.evict("vms", pod["metadata"]["name"])
        self.sim.wait_for(lambda: phases(self.sim).get("Running"), what="migration")
        self.advance(1000)
        new = self.sim.launcher("vms", "vm-c")
        pm = self.sim.obj("/apis/metrics.k8s.io/v1beta1/namespaces/vms/pods/" + new["metadata"]["name"])
        self.assertEqual(pm["containers"][0]["usage"]["cpu"], "2500m")
        node = self.sim.obj("/apis/metrics.k8s.io/v1beta1/nodes/" + new["spec"]["nodeName"])
        self.assertGreaterEqual(int(node["usage"]["cpu"][:-1]), 2500)
        self.assertTrue(new["status"]["podIP"])

    def test_eviction_from_another_client(self):
        pod = self.sim.launcher("vms", "vm-b")
        code, _, st = self.sim.evict("vms", pod["metadata"]["name"], descheduler=False)
        self.assertEqual(code, 429)
        self.assertNotIn("kubevirt.io/eviction-source", self.vmi("vm-b")["metadata"]["annotations"])
        m = self.sim.wait_for(self.vmims, what="a migration")[0]
        self.assertEqual(m["spec"]["priority"], "system-critical")

    def test_not_live_migratable(self):
        pod = self.sim.launcher("vms", "vm-rwo")
        code, _, st = self.sim.evict("vms", pod["metadata"]["name"])
        self.assertEqual((code, st["message"]),
                         (429, WEBHOOK + "VMI vm-rwo is configured with an eviction strategy but is not live-migratable"))
        self.advance(10)
        self.assertNotIn("evacuationNodeName", self.vmi("vm-rwo")["status"])
        self.assertEqual(self.vmims(), [])
        self.assertEqual(self.sim.launcher("vms", "vm-rwo")["metadata"]["name"], pod["metadata"]["name"])

    def test_strategy_none_and_if_possible_allow_eviction(self):
        for vm in ("vm-none", "vm-maybe"):
            pod = self.sim.launcher("vms", vm)
            code, _, st = self.sim.evict("vms", pod["metadata"]["name"])
            self.assertEqual((code, st), (201, {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                                "status": "Success", "code": 201}), vm)
            self.assertEqual(self.sim.get("/api/v1/namespaces/vms/pods/" + pod["metadata"]["name"])[0], 404)
        self.sim.wait_for(lambda: self.vmi("vm-none")["status"]["phase"] == "Failed", what="VMI without launcher")
        self.assertEqual(self.vmims(), [])

    def test_cluster_strategy_comes_from_the_kubevirt_cr(self):
        merge(self.sim, KV, {"spec": {"configuration": {"evictionStrategy": "None"}}})
        pod = self.sim.launcher("vms", "vm-b")
        self.assertEqual(self.sim.evict("vms", pod["metadata"]["name"])[0], 201)
        merge(self.sim, KV, {"spec": {"configuration": {"evictionStrategy": None}}})
        pod = self.sim.launcher("vms", "vm-c")
        self.assertEqual(self.sim.evict("vms", pod["metadata"]["name"])[0], 201, "KubeVirt's own default is None")
        # a VMI-level strategy wins over the cluster's
        merge(self.sim, VMIS + "/vm-d", {"spec": {"evictionStrategy": "LiveMigrate"}})
        pod = self.sim.launcher("vms", "vm-d")
        self.assertEqual(self.sim.evict("vms", pod["metadata"]["name"])[0], 429)

    def test_external_marks_without_migration_and_cancel_clears_annotation(self):
        merge(self.sim, VMIS + "/vm-d", {"spec": {"evictionStrategy": "External"}})
        pod = self.sim.launcher("vms", "vm-d")
        path = "/api/v1/namespaces/vms/pods/" + pod["metadata"]["name"]
        code, _, st = self.sim.evict("vms", pod["metadata"]["name"])
        self.assertEqual((code, st["message"]), (429, WEBHOOK + 'Eviction triggered evacuation of VMI "vms/vm-d"'))
        self.sim.wait_for(lambda: self.sim.obj(path)["metadata"]["annotations"].get(IN_PROGRESS) == "true",
                          what="eviction-in-progress")
        self.advance(10)
        self.assertEqual(self.vmims(), [], "External: KubeVirt only marks the VMI")
        # virtctl evacuate-cancel: test + remove /status/evacuationNodeName
        code, _, _ = self.sim.request("PATCH", VMIS + "/vm-d", [
            {"op": "test", "path": "/status/evacuationNodeName", "value": "worker-2"},
            {"op": "remove", "path": "/status/evacuationNodeName"}], content_type="application/json-patch+json")
        self.assertEqual(code, 200)
        self.sim.wait_for(lambda: IN_PROGRESS not in self.sim.obj(path)["metadata"]["annotations"],
                          what="annotation removed after cancel")

    def test_dry_run_marks_nothing(self):
        pod = self.sim.launcher("vms", "vm-a")
        code, _, st = self.sim.evict("vms", pod["metadata"]["name"], dry_run=True)
        self.assertEqual((code, st["message"]), (429, WEBHOOK + 'Eviction triggered evacuation of VMI "vms/vm-a"'))
        self.assertNotIn("evacuationNodeName", self.vmi("vm-a")["status"])
        self.assertEqual(self.vmims(), [])

    def test_target_pod_and_missing_vmi(self):
        src = self.sim.launcher("vms", "vm-d")
        for name, domain, node in (("virt-launcher-vm-d-zzzzz", "vm-d", "worker-3"),
                                   ("virt-launcher-ghost-zzzzz", "ghost", "worker-3")):
            pod = {"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"name": name, "labels": dict(src["metadata"]["labels"]),
                                "annotations": {"kubevirt.io/domain": domain}},
                   "spec": {"nodeName": node, "containers": [{"name": "compute", "image": "x"}]}}
            self.assertEqual(self.sim.request("POST", "/api/v1/namespaces/vms/pods", pod)[0], 201)
        code, _, st = self.sim.evict("vms", "virt-launcher-vm-d-zzzzz")
        self.assertEqual((code, st["message"]), (429, WEBHOOK + "Eviction request for target Pod"))
        code, _, st = self.sim.evict("vms", "virt-launcher-ghost-zzzzz")
        self.assertEqual((code, st["message"]), (429, WEBHOOK + 'kubevirt failed getting the vmi: '
                                                 'virtualmachineinstances.kubevirt.io "ghost" not found'))

    def test_failed_migration_keeps_vmi_marked_and_retries_after_backoff(self):
        self.sim.control("POST", "migrations/fail", {"vmi": "vms/vm-b", "count": 1})
        pod = self.sim.launcher("vms", "vm-b")
        self.assertEqual(self.sim.evict("vms", pod["metadata"]["name"])[0], 429)
        self.sim.wait_for(lambda: phases(self.sim).get("Running") == 1, what="first migration running")
        self.advance(1000)
        first = sorted(self.vmims(), key=lambda m: m["metadata"]["creationTimestamp"])[0]
        self.assertEqual(first["status"]["phase"], "Failed")
        self.assertTrue(first["status"]["migrationState"]["failed"])
        vmi = self.vmi("vm-b")
        self.assertEqual((vmi["status"]["nodeName"], vmi["status"]["evacuationNodeName"]), ("worker-1", "worker-1"))
        self.assertEqual(self.sim.obj("/api/v1/namespaces/vms/pods/" + pod["metadata"]["name"])["status"]["phase"],
                         "Running")
        self.assertEqual(phases(self.sim), {"Failed": 1, "Pending": 1}, "retry waits for KubeVirt's back-off")
        self.advance(50)
        self.assertEqual(phases(self.sim), {"Failed": 1, "Pending": 1})
        self.advance(60)
        self.assertEqual(phases(self.sim), {"Failed": 1, "Running": 1})
        self.advance(1000)
        self.assertEqual(phases(self.sim), {"Failed": 1, "Succeeded": 1})
        self.assertNotEqual(self.vmi("vm-b")["status"]["nodeName"], "worker-1")

    def test_failure_switch_by_vmi_annotation(self):
        merge(self.sim, VMIS + "/vm-c", {"metadata": {"annotations": {"apisim.kubevirt.io/fail-migration": "true"}}})
        pod = self.sim.launcher("vms", "vm-c")
        self.sim.evict("vms", pod["metadata"]["name"])
        self.sim.wait_for(lambda: phases(self.sim).get("Running") == 1, what="migration running")
        self.advance(1000)
        self.assertEqual(phases(self.sim), {"Failed": 1, "Pending": 1})
        failed = [m for m in self.vmims() if m["status"]["phase"] == "Failed"][0]
        target = failed["status"]["migrationState"]["targetPod"]
        self.assertEqual(self.sim.obj("/api/v1/namespaces/vms/pods/" + target)["status"]["phase"], "Failed")
        self.assertEqual(self.vmi("vm-c")["status"]["migrationState"]["failed"], True)

    def test_a_launcher_changed_after_an_idle_tick_is_looked_at_again(self):
        # the controllers skip VMIs they found idle until a write concerns them; a write to the
        # launcher alone must bring vm-a back: its request-evict-only annotation is restored
        pod = self.sim.wait_for(lambda: (lambda p: EVICT_ONLY in p["metadata"].get("annotations", {}) and p)(
            self.sim.launcher("vms", "vm-a")), what="request-evict-only on vm-a's launcher")
        path = "/api/v1/namespaces/vms/pods/" + pod["metadata"]["name"]
        self.sim.control("POST", "migrations/advance", {"seconds": 1})  # a tick has run since
        merge(self.sim, path, {"metadata": {"annotations": {EVICT_ONLY: None}}})
        self.sim.wait_for(lambda: EVICT_ONLY in self.sim.obj(path)["metadata"].get("annotations", {}),
                          what="request-evict-only restored")

    def test_drain_taint_evacuates_migratable_vmis(self):
        merge(self.sim, "/api/v1/nodes/worker-2", {"spec": {"taints": [{"key": "kubevirt.io/drain",
                                                                          "effect": "NoSchedule"}]}})
        self.sim.wait_for(lambda: len(self.vmims()) == 1, what="evacuation of the drained node")
        self.assertEqual(self.vmims()[0]["spec"]["vmiName"], "vm-d", "vm-rwo cannot migrate")
        self.advance(1000)
        self.assertEqual(self.vmi("vm-d")["status"]["nodeName"], "worker-3")

    def test_placement_honours_taints_and_capacity(self):
        merge(self.sim, "/api/v1/nodes/worker-2", {"spec": {"taints": [{"key": "dedicated", "value": "gpu",
                                                                          "effect": "NoSchedule"}]}})
        pod = self.sim.launcher("vms", "vm-a")
        self.sim.evict("vms", pod["metadata"]["name"])
        self.advance(1000)
        self.assertEqual(self.vmi("vm-a")["status"]["nodeName"], "worker-3")
        # fill worker-3 so vm-b fits nowhere: the target pod stays Pending, then the migration fails
        hog = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "hog"},
               "spec": {"nodeName": "worker-3", "containers": [{"name": "c", "image": "x", "resources": {
                   "requests": {"cpu": "15", "memory": "60Gi"}}}]}}
        self.assertEqual(self.sim.request("POST", "/api/v1/namespaces/default/pods", hog)[0], 201)
        pod = self.sim.launcher("vms", "vm-b")
        self.sim.evict("vms", pod["metadata"]["name"])
        m = self.sim.wait_for(lambda: [x for x in self.vmims() if x["spec"]["vmiName"] == "vm-b" and
                                       x.get("status", {}).get("phase") == "Scheduling"], what="Scheduling")[0]
        target = self.sim.obj("/api/v1/namespaces/vms/pods/" + m["status"]["migrationState"]["targetPod"])
        self.assertEqual(target["status"]["phase"], "Pending")
        self.assertNotIn("nodeName", target["spec"])
        self.advance(301)
        m = self.sim.obj(VMIMS + "/" + m["metadata"]["name"])
        self.assertEqual(m["status"]["phase"], "Failed")
        self.assertEqual(self.sim.get("/api/v1/namespaces/vms/pods/" + target["metadata"]["name"])[0], 404)

    def test_migration_completes_in_real_time(self):
        with SimProcess(args=["--migration-seconds", "0.3"]) as sim:
            pod = sim.launcher("vms", "vm-c")
            self.assertEqual(sim.evict("vms", pod["metadata"]["name"])[0], 429)
            sim.wait_for(lambda: sim.obj(VMIS + "/vm-c")["status"]["nodeName"] != "worker-1", timeout=10,
                         what="migration to finish")
            self.assertEqual(sim.obj("/api/v1/namespaces/vms/pods/" + pod["metadata"]["name"])["status"]["phase"],
                             "Succeeded")


class ConcurrencyLimits(unittest.TestCase):
    """Eight evictions at once must never run more than the configured migrations in parallel."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="apisim-kv-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def snapshot(self, placement, per_cluster=None, per_node=None):
        items = [simfixtures.namespace(n) for n in ("vms", "kubevirt")]
        items += [simfixtures.node("w%d" % i) for i in range(4)]
        kv = simfixtures.kubevirt_cr("LiveMigrate")
        if per_cluster is None:
            del kv["spec"]["configuration"]["migrations"]      # KubeVirt's defaults: 5 and 2
        else:
            kv["spec"]["configuration"]["migrations"].update(parallelMigrationsPerCluster=per_cluster,
                                                             parallelOutboundMigrationsPerNode=per_node)
        items.append(kv)
        for i, node in enumerate(placement):
            items += simfixtures.vm_with_launcher("vm%d" % i, "vms", node, guest="1Gi")
        return write_snapshot(items, tempfile.mkdtemp(dir=self.tmp))

    def evict_all_at_once(self, sim, n):
        pods = [sim.launcher("vms", "vm%d" % i)["metadata"]["name"] for i in range(n)]
        barrier = threading.Barrier(n)
        results = [None] * n

        def one(i):
            barrier.wait()
            results[i] = sim.evict("vms", pods[i])
        threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for code, _, st in results:
            self.assertEqual(code, 429)
            self.assertIn("Eviction triggered evacuation of VMI", st["message"])

    def max_running(self, events):
        """Largest number of migrations in a running phase at any point of the VMIM event stream."""
        state, peak = {}, 0
        for e in events:
            if e["type"] == "BOOKMARK":
                continue
            name = e["object"]["metadata"]["name"]
            state[name] = e["object"].get("status", {}).get("phase", "")
            if e["type"] == "DELETED":
                state.pop(name)
            peak = max(peak, sum(1 for p in state.values() if p in RUNNING))
        return peak

    def run_waves(self, sim, limit, waves):
        sim.wait_for(lambda: sum(phases(sim).values()) == 8 and "" not in phases(sim), what="8 migrations")
        seen = []
        for _ in range(waves):
            p = phases(sim)
            seen.append(p)
            self.assertLessEqual(sum(p.get(x, 0) for x in RUNNING), limit, p)
            sim.control("POST", "migrations/advance", {"seconds": 1000})
        self.assertEqual(phases(sim), {"Succeeded": 8})
        return seen

    def test_outbound_per_node_limit(self):
        with SimProcess(self.snapshot(["w0"] * 8, 5, 2), ["--migration-seconds", "1000"]) as sim:
            w = WatchStream(sim, VMIMS + "?watch=true")
            try:
                self.evict_all_at_once(sim, 8)
                seen = self.run_waves(sim, 2, 4)
                self.assertEqual(seen[0], {"Running": 2, "Pending": 6})
                self.assertEqual(seen[1], {"Succeeded": 2, "Running": 2, "Pending": 4})
                vmis = sim.obj(VMIS)["items"]
                self.assertTrue(all(v["status"]["nodeName"] != "w0" for v in vmis))
                self.assertTrue(all("evacuationNodeName" not in v["status"] for v in vmis))
                w.wait(10_000, timeout=1)
                self.assertEqual(self.max_running(w.events), 2)
            finally:
                w.close()

    def test_cluster_limit_with_kubevirt_defaults(self):
        with SimProcess(self.snapshot(["w0", "w0", "w1", "w1", "w2", "w2", "w3", "w3"]),
                        ["--migration-seconds", "1000"]) as sim:
            w = WatchStream(sim, VMIMS + "?watch=true")
            try:
                self.evict_all_at_once(sim, 8)
                seen = self.run_waves(sim, 5, 2)
                self.assertEqual(seen[0], {"Running": 5, "Pending": 3})
                w.wait(10_000, timeout=1)
                self.assertEqual(self.max_running(w.events), 5)
                per_node = {}
                for m in sim.obj(VMIMS)["items"]:
                    per_node.setdefault(m["status"]["migrationState"]["sourceNode"], []).append(m)
                self.assertEqual(sorted(len(v) for v in per_node.values()), [2, 2, 2, 2])
            finally:
                w.close()


if __name__ == "__main__":
    unittest.main()
