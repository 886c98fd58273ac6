#!/usr/bin/env python3
"""The cluster lab's own test: a live migration goes through KubeVirt's real controllers.

One lab (tests/lab/cluster.py) with 4 KWOK nodes; every VM is created as a user would, and
each step is done by the component that does it in a real cluster: virt-controller creates the
launcher pod, kube-scheduler places it, KWOK runs it, the virt-handler stand-in reports the VMI
Running. Then:
- an Eviction of a LiveMigrate VMI's launcher (a VirtualMachineInstance, and a VirtualMachine
  with runStrategy Always) is answered 429 `Eviction triggered evacuation` by virt-api's
  webhook, virt-controller's evacuation controller creates a `kubevirt-evacuation-*` migration,
  it Succeeds, the VMI (same UID) runs on the node kube-scheduler chose for the target pod, and
  the old launcher has exited;
- an Eviction of a VMI with evictionStrategy None evicts the pod (201), no migration;
- a LiveMigrate VMI that is not live-migratable gets KubeVirt's denial, no migration;
- a migration with `spec.addedNodeSelector` lands on the chosen node.

Skips (unittest.SkipTest, with the reason) only when a component cannot be had on this machine:
not built (tests/lab/build.sh), no etcd. Run: python3 tests/lab/test_lab.py
"""

import os
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from cluster import Lab, LabUnavailable, vm_manifest, vmi_manifest  # noqa: E402
from labkube import ApiError  # noqa: E402

NS = "default"
VMIS = "/apis/kubevirt.io/v1/namespaces/%s/virtualmachineinstances" % NS
VMS = "/apis/kubevirt.io/v1/namespaces/%s/virtualmachines" % NS
VMIMS = "/apis/kubevirt.io/v1/namespaces/%s/virtualmachineinstancemigrations" % NS
PODS = "/api/v1/namespaces/%s/pods" % NS


class LabTest(unittest.TestCase):
    lab = None

    @classmethod
    def setUpClass(cls):
        cls.t0 = time.time()
        try:
            cls.lab = Lab(nodes=4, migration_seconds=3.0).start()
        except LabUnavailable as e:
            raise unittest.SkipTest("cluster lab unavailable: %s" % e)
        cls.started = time.time() - cls.t0
        print("\nlab: started in %.1f s %s" % (cls.started, cls.lab.timings), file=sys.stderr)

    @classmethod
    def tearDownClass(cls):
        if cls.lab is None:
            return
        pids = [c["pid"] for c in cls.lab.components.values() if c.get("pid")]
        pids += [p.pid for _, p in cls.lab.cluster.procs]
        cls.lab.stop()
        left = []
        for pid in pids:
            try:
                os.kill(pid, 0)
                left.append(pid)
            except ProcessLookupError:
                pass
        print("lab: whole test %.1f s" % (time.time() - cls.t0), file=sys.stderr)
        if left:
            raise AssertionError("processes left after stop(): %s" % left)

    def setUp(self):
        self.c = self.lab.client
        self.t = time.time()

    def tearDown(self):
        print("lab: %s %.1f s" % (self._testMethodName, time.time() - self.t), file=sys.stderr)

    # -- helpers ---------------------------------------------------------------------------

    def wait(self, fn, what, timeout=90):
        return self.lab.wait_for(fn, timeout, what)

    def vmi(self, name):
        return self.c.get("%s/%s" % (VMIS, name))

    def running_vmi(self, name):
        """Waits until the VMI runs with its launcher placed, running and ready; (vmi, pod)."""
        def ready():
            try:
                vmi = self.vmi(name)
            except ApiError:
                return None
            st = vmi.get("status") or {}
            if st.get("phase") != "Running":
                return None
            pod = self.launcher(vmi)
            return (vmi, pod) if pod is not None else None
        return self.wait(ready, "VMI %s Running with its launcher pod" % name)

    def launcher(self, vmi):
        """The VMI's launcher pod on the VMI's node, Running (after a migration: the target pod)."""
        pods = self.c.get(PODS, labelSelector="kubevirt.io/created-by=" + vmi["metadata"]["uid"])["items"]
        for p in pods:
            if (p["spec"].get("nodeName") == vmi["status"].get("nodeName")
                    and (p.get("status") or {}).get("phase") == "Running"
                    and not p["metadata"].get("deletionTimestamp")):
                return p
        return None

    def assert_placed_by_scheduler(self, pod):
        # spec.nodeName was set through a binding by kube-scheduler: the PodScheduled condition
        # and the default-scheduler's Scheduled event say so
        self.assertTrue(any(c["type"] == "PodScheduled" and c["status"] == "True"
                            for c in pod["status"].get("conditions") or []), pod["status"])
        self.assertEqual(pod["spec"].get("schedulerName"), "default-scheduler")
        evs = self.c.get("/api/v1/namespaces/%s/events" % NS,
                         fieldSelector="involvedObject.name=%s,reason=Scheduled" % pod["metadata"]["name"])
        self.assertTrue(evs["items"], "no Scheduled event for %s" % pod["metadata"]["name"])
        self.assertIn(pod["spec"]["nodeName"], evs["items"][0]["message"])

    def evict(self, pod):
        """POSTs a policy/v1 Eviction; (HTTP status, message)."""
        name = pod["metadata"]["name"]
        body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": NS}}
        try:
            self.c.create("%s/%s/eviction" % (PODS, name), body)
            return 201, ""
        except ApiError as e:
            return e.code, e.message

    def migrations_of(self, vmi_name):
        return [m for m in self.c.get(VMIMS)["items"] if m["spec"].get("vmiName") == vmi_name]

    def pod_gone(self, pod):
        """Deleted, or exited (a virt-launcher whose domain left ends Succeeded, as on a real node)."""
        try:
            p = self.c.get("%s/%s" % (PODS, pod["metadata"]["name"]))
        except ApiError as e:
            if e.code == 404:
                return True
            raise
        if p["metadata"]["uid"] != pod["metadata"]["uid"]:
            return True
        return (p.get("status") or {}).get("phase") in ("Succeeded", "Failed")

    def check_evacuation(self, name):
        vmi, pod = self.running_vmi(name)
        src = vmi["status"]["nodeName"]
        self.assertEqual(pod["spec"]["nodeName"], src)
        self.assert_placed_by_scheduler(pod)
        self.assertTrue(any(c["type"] == "LiveMigratable" and c["status"] == "True"
                            for c in vmi["status"].get("conditions") or []))
        # KubeVirt 1.6 makes no PodDisruptionBudget for a VMI: its disruption budget controller
        # only deletes those older releases made
        # (pkg/virt-controller/watch/drain/disruptionbudget/disruptionbudget.go); the eviction
        # webhook alone protects the launcher
        self.assertFalse([p for p in self.c.get("/apis/policy/v1/namespaces/%s/poddisruptionbudgets" % NS)["items"]
                          if p["metadata"]["name"].startswith("kubevirt-disruption-budget-")])

        code, msg = self.evict(pod)
        self.assertEqual(code, 429, msg)
        self.assertIn('Eviction triggered evacuation of VMI "%s/%s"' % (NS, name), msg)
        self.assertIn("virt-launcher-eviction-interceptor.kubevirt.io", msg)  # virt-api's webhook answered

        mig = self.wait(lambda: self.migrations_of(name), "virt-controller's evacuation migration")[0]
        self.assertTrue(mig["metadata"]["name"].startswith("kubevirt-evacuation-"), mig["metadata"])
        mig = self.wait(lambda: (lambda m: m if (m.get("status") or {}).get("phase") in ("Succeeded", "Failed") else None)(
            self.c.get("%s/%s" % (VMIMS, mig["metadata"]["name"]))), "migration %s final" % mig["metadata"]["name"])
        self.assertEqual(mig["status"]["phase"], "Succeeded", mig["status"])

        after = self.vmi(name)
        dst = after["status"]["nodeName"]
        self.assertNotEqual(dst, src)
        self.assertEqual(after["metadata"]["uid"], vmi["metadata"]["uid"])
        self.assertFalse(after["status"].get("evacuationNodeName"))
        self.assertEqual(after["status"]["migrationState"]["targetNode"], dst)
        self.wait(lambda: self.pod_gone(pod), "the old launcher pod gone")
        new_pod = self.wait(lambda: self.launcher(self.vmi(name)), "the new launcher pod")
        self.assertEqual(new_pod["spec"]["nodeName"], dst)
        self.assert_placed_by_scheduler(new_pod)
        return after

    # -- tests -----------------------------------------------------------------------------

    def test_1_vmi_eviction_live_migrates(self):
        self.c.create(VMIS, vmi_manifest("vmi-lm", eviction_strategy="LiveMigrate"))
        self.check_evacuation("vmi-lm")

    def test_2_vm_eviction_live_migrates(self):
        self.c.create(VMS, vm_manifest("vm-lm", eviction_strategy="LiveMigrate"))
        vm_uid = self.c.get("%s/%s" % (VMS, "vm-lm"))["metadata"]["uid"]
        vmi = self.wait(lambda: self.vmi("vm-lm"), "the VM's VMI (virt-controller)")
        self.assertEqual([r["uid"] for r in vmi["metadata"]["ownerReferences"]], [vm_uid])
        self.check_evacuation("vm-lm")
        vm = self.wait(lambda: (lambda v: v if (v.get("status") or {}).get("printableStatus") == "Running" else None)(
            self.c.get("%s/%s" % (VMS, "vm-lm"))), "the VM Running")
        self.assertTrue(vm["status"].get("ready"))

    def test_3_eviction_strategy_none_evicts(self):
        self.c.create(VMIS, vmi_manifest("vmi-none", eviction_strategy="None"))
        vmi, pod = self.running_vmi("vmi-none")
        code, msg = self.evict(pod)
        self.assertEqual(code, 201, msg)
        self.wait(lambda: self.pod_gone(pod), "the evicted launcher pod gone")
        self.assertEqual(self.migrations_of("vmi-none"), [])
        self.wait(lambda: (lambda v: v if (v.get("status") or {}).get("phase") in ("Failed", "Succeeded") else None)(
            self.vmi("vmi-none")), "the VMI stopped")
        self.assertEqual(self.migrations_of("vmi-none"), [])

    def test_4_non_migratable_denied(self):
        self.c.create(VMIS, vmi_manifest("vmi-pinned", eviction_strategy="LiveMigrate",
                                         non_migratable="DisksNotLiveMigratable"))
        vmi, pod = self.running_vmi("vmi-pinned")
        cond = [c for c in vmi["status"]["conditions"] if c["type"] == "LiveMigratable"][0]
        self.assertEqual((cond["status"], cond["reason"]), ("False", "DisksNotLiveMigratable"))
        code, msg = self.evict(pod)
        self.assertEqual(code, 429, msg)
        self.assertIn("VMI vmi-pinned is configured with an eviction strategy but is not live-migratable", msg)
        time.sleep(2)  # give the evacuation controller the chance to (wrongly) act
        self.assertEqual(self.migrations_of("vmi-pinned"), [])
        self.assertFalse(self.vmi("vmi-pinned")["status"].get("evacuationNodeName"))
        self.assertEqual(self.c.get("%s/%s" % (PODS, pod["metadata"]["name"]))["status"]["phase"], "Running")

    def test_5_targeted_migration(self):
        self.c.create(VMIS, vmi_manifest("vmi-target", eviction_strategy="LiveMigrate"))
        vmi, pod = self.running_vmi("vmi-target")
        src = vmi["status"]["nodeName"]
        dst = sorted(n for n in self.lab.nodes if n != src)[-1]
        mig = self.c.create(VMIMS, {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstanceMigration",
                                    "metadata": {"generateName": "lab-target-", "namespace": NS},
                                    "spec": {"vmiName": "vmi-target",
                                             "addedNodeSelector": {"kubernetes.io/hostname": dst}}})
        name = mig["metadata"]["name"]
        mig = self.wait(lambda: (lambda m: m if (m.get("status") or {}).get("phase") in ("Succeeded", "Failed") else None)(
            self.c.get("%s/%s" % (VMIMS, name))), "migration %s final" % name)
        self.assertEqual(mig["status"]["phase"], "Succeeded", mig["status"])
        after = self.vmi("vmi-target")
        self.assertEqual(after["status"]["nodeName"], dst)
        self.assertEqual(after["metadata"]["uid"], vmi["metadata"]["uid"])
        target_pod = self.c.get("%s/%s" % (PODS, after["status"]["migrationState"]["targetPod"]))
        self.assertEqual(target_pod["spec"]["nodeSelector"].get("kubernetes.io/hostname"), dst)
        self.wait(lambda: self.pod_gone(pod), "the old launcher pod gone")

    def test_6_status(self):
        st = self.lab.status()
        comps = st["components"]
        for name in ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok",
                     "virt-api", "virt-controller"):
            self.assertEqual(comps[name]["kind"], "real", name)
            self.assertTrue(comps[name].get("alive", True), name)
        self.assertEqual(comps["virt-handler"]["kind"], "stand-in")
        self.assertEqual(len(st["nodes"]), 4)

    def test_7_descheduler_identity_audited(self):
        # the identity for the descheduler under test reaches the audit log; the components' don't
        from cluster import DESCHEDULER_USER
        from kubeclient import Client
        cl = self.lab.cluster
        me = Client("127.0.0.1", cl.port, cl.certs["ca.crt"], cl.user_tokens[DESCHEDULER_USER])
        me.get(PODS)
        me.close()
        self.assertTrue(os.path.exists(self.lab.kubeconfig_for("descheduler")))

        def users():
            return {(e.get("user") or {}).get("username") for e in cl.audit_events(since_reset=False)}
        self.wait(lambda: DESCHEDULER_USER in users(), "the descheduler's request in the audit log", timeout=30)
        self.assertFalse(users() & {"system:kube-scheduler", "system:serviceaccount:kubevirt:kubevirt-controller",
                                    "system:serviceaccount:kubevirt:kubevirt-handler"})


if __name__ == "__main__":
    unittest.main(verbosity=2)
