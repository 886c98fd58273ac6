"""POST /_sim/churn: a known share of the pods changes, as watchers and lists see it, the same
way for the same seed; launcher pods are never replaced; bad requests get 400."""

import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import simfixtures as fx  # noqa: E402
from simtest import SimProcess, write_snapshot  # noqa: E402
from test_watch import WatchStream  # noqa: E402

APP_PODS = 60


def cluster():
    items = [fx.namespace("shop"), fx.namespace("vms")]
    items += [fx.node("worker-%d" % i) for i in range(3)]
    owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-5d8f9c7b6", "uid": fx.uid_for("rs", "web")}
    for i in range(APP_PODS):
        p = fx.workload_pod("web-5d8f9c7b6-%03d" % i, "shop", "worker-%d" % (i % 3), {"app": "web", "tier": "web", "pod-template-hash": "5d8f9c7b6"},
                            owner)
        p["metadata"]["generateName"] = "web-5d8f9c7b6-"
        items.append(p)
    for i in range(5):
        items += fx.vm_with_launcher("vm-%d" % i, "vms", "worker-%d" % (i % 3))
    return items


def pods_by_name(sim):
    return {p["metadata"]["name"]: p for p in sim.obj("/api/v1/pods")["items"]}


class ChurnTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="apisim-churn-")
        cls.snapshot = write_snapshot(cluster(), cls.dir)

    def test_changes_are_what_it_reports(self):
        with SimProcess(self.snapshot) as sim:
            before = pods_by_name(sim)
            rv = sim.obj("/api/v1/pods")["metadata"]["resourceVersion"]
            watch = WatchStream(sim, "/api/v1/pods?watch=1&resourceVersion=%s" % rv)
            rep = sim.control("POST", "churn", {"count": 30, "seed": 7})
            self.assertEqual(rep["changed"], 30)
            self.assertEqual(rep["pods"], len(before))
            self.assertEqual(sum(rep["changes"].values()), 30)
            replaced = rep["changes"]["replaced"]
            self.assertGreater(replaced, 0)
            after = pods_by_name(sim)
            self.assertEqual(len(after), len(before), "a replacement keeps the pod count")
            gone, new = set(before) - set(after), set(after) - set(before)
            self.assertEqual((len(gone), len(new)), (replaced, replaced))
            for name in new:
                p = after[name]
                self.assertTrue(name.startswith("web-5d8f9c7b6-"), name)
                self.assertIn(p["spec"]["nodeName"], ("worker-0", "worker-1", "worker-2"))
                self.assertNotIn(p["metadata"]["uid"], {q["metadata"]["uid"] for q in before.values()})
            for name in gone:
                self.assertFalse(name.startswith("virt-launcher-"), "launcher pods are never replaced")
            changed = {n for n in set(before) & set(after)
                       if after[n]["metadata"]["resourceVersion"] != before[n]["metadata"]["resourceVersion"]}
            self.assertEqual(len(changed), 30 - replaced)
            restarted = [n for n in changed if after[n]["status"]["containerStatuses"][0]["restartCount"]
                         == before[n]["status"]["containerStatuses"][0]["restartCount"] + 1]
            self.assertEqual(len(restarted), rep["changes"]["status"])
            succeeded = [n for n in changed if after[n]["status"]["phase"] == "Succeeded"]
            self.assertEqual(len(succeeded), rep["changes"]["phase"])
            events = watch.wait(30 + replaced)
            watch.close()
            types = [e["type"] for e in events]
            self.assertEqual((types.count("MODIFIED"), types.count("DELETED"), types.count("ADDED")),
                             (30 - replaced, replaced, replaced))
            self.assertEqual(sim.stop(), 0)

    def test_rollout_replaces_the_whole_replicaset(self):
        with SimProcess(self.snapshot) as sim:
            before = pods_by_name(sim)
            web = {n for n in before if n.startswith("web-")}
            old_uid = before[sorted(web)[0]]["metadata"]["ownerReferences"][0]["uid"]
            rep = sim.control("POST", "churn", {"count": 30, "seed": 7, "rollout": True})
            after = pods_by_name(sim)
            new = [after[n] for n in set(after) - set(before)]
            # one replacement rolls the ReplicaSet: every web pod replaced, once
            self.assertEqual(rep["changes"]["replaced"], len(web))
            self.assertEqual(len(new), len(web))
            self.assertFalse(web & set(after), "a pod of the old ReplicaSet is left")
            self.assertEqual(rep["changed"], sum(rep["changes"].values()))
            successors = set()
            for p in new:
                md = p["metadata"]
                ref = md["ownerReferences"][0]
                h = md["labels"]["pod-template-hash"]
                self.assertNotEqual(h, "5d8f9c7b6")
                self.assertEqual(ref["name"], "web-" + h)
                self.assertEqual(md["generateName"], "web-%s-" % h)
                self.assertTrue(md["name"].startswith(md["generateName"]), md["name"])
                self.assertNotEqual(ref["uid"], old_uid)
                successors.add((h, ref["uid"]))
            self.assertEqual(len(successors), 1, "one new ReplicaSet")
            self.assertEqual(len(after), len(before))
            code, _, data = sim.request("POST", "/_sim/churn", {"count": 1, "rollout": 1})
            self.assertEqual(code, 400)
            self.assertIn("rollout must be true or false", data["message"])

    def test_same_seed_same_changes(self):
        names = []
        for _ in range(2):
            with SimProcess(self.snapshot) as sim:
                rep = sim.control("POST", "churn", {"fraction": 0.25, "seed": 3})
                self.assertEqual(rep["changed"], round(rep["pods"] * 0.25))
                names.append((rep["changes"], sorted(pods_by_name(sim))))
        self.assertEqual(names[0], names[1])

    def test_bad_requests(self):
        with SimProcess(self.snapshot) as sim:
            for body in ({"fraction": 2}, {}, [1], {"count": -1}):
                code, _, data = sim.request("POST", "/_sim/churn", body)
                self.assertEqual(code, 400, body)
                self.assertIn("apisim control", data["message"])
            self.assertEqual(sim.control("POST", "churn", {"count": 0})["changed"], 0)


if __name__ == "__main__":
    unittest.main()
