"""The Eviction subresource for ordinary pods: PodDisruptionBudgets and kube-apiserver's answers.

The 429 body is compared field by field with what kube-apiserver sends
(pkg/registry/core/pod/storage/eviction.go), since the descheduler logs the
message and decides on the code.
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from simtest import SimProcess  # noqa: E402
from test_rest import PODS, new_pod  # noqa: E402
from test_watch import WatchStream  # noqa: E402

PDBS = "/apis/policy/v1/namespaces/shop/poddisruptionbudgets"


class Eviction(unittest.TestCase):
    def setUp(self):
        self.sim = SimProcess()

    def tearDown(self):
        self.assertEqual(self.sim.stop(), 0)

    def pods(self, app):
        return [p["metadata"]["name"] for p in self.sim.obj(PODS + "?labelSelector=app%3D" + app)["items"]]

    def test_pdb_violation_is_429_with_the_apiserver_body(self):
        name = self.pods("web")[0]
        code, headers, st = self.sim.evict("shop", name)
        self.assertEqual(code, 429)
        self.assertEqual(st, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                              "message": "Cannot evict pod as it would violate the pod's disruption budget.",
                              "reason": "TooManyRequests",
                              "details": {"causes": [{"reason": "DisruptionBudget",
                                                      "message": "The disruption budget web-pdb needs 3 healthy "
                                                                 "pods and has 3 currently"}]},
                              "code": 429})
        self.assertEqual(self.sim.get(PODS + "/" + name)[0], 200, "the pod stays")
        # the UID precondition is checked by the delete that ends an eviction, after the budget
        # (pkg/registry/core/pod/storage/eviction.go): a spent budget answers first
        code, _, st = self.sim.request("POST", PODS + "/%s/eviction" % name,
                                       {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name},
                                        "deleteOptions": {"preconditions": {"uid": "x"}}})
        self.assertEqual((code, st["reason"]), (429, "TooManyRequests"))

    def test_allowed_eviction_deletes_pod_and_spends_the_budget(self):
        first, second = self.pods("api")
        rv = self.sim.obj(PODS)["metadata"]["resourceVersion"]
        w = WatchStream(self.sim, PODS + "?watch=true&resourceVersion=" + rv)
        self.addCleanup(w.close)
        code, _, st = self.sim.evict("shop", first)
        self.assertEqual((code, st), (201, {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                            "status": "Success", "code": 201}))
        self.assertEqual(self.sim.get(PODS + "/" + first)[0], 404)
        code, _, st = self.sim.evict("shop", second)
        self.assertEqual(code, 429)
        self.assertEqual(st["details"]["causes"][0]["message"],
                         "The disruption budget api-pdb needs 1 healthy pods and has 1 currently")
        self.sim.wait_for(lambda: self.sim.obj(PDBS + "/api-pdb")["status"]["disruptionsAllowed"] == 0,
                          what="PDB status")
        # as with PodDisruptionConditions: the pod is marked DisruptionTarget, then deleted
        evs = w.wait(2)
        self.assertEqual([e["type"] for e in evs], ["MODIFIED", "DELETED"])
        cond = [c for c in evs[0]["object"]["status"]["conditions"] if c["type"] == "DisruptionTarget"][0]
        self.assertEqual((cond["status"], cond["reason"]), ("True", "EvictionByEvictionAPI"))

    def test_dry_run_checks_but_keeps_the_pod(self):
        name = self.pods("api")[0]
        code, _, st = self.sim.evict("shop", name, dry_run=True)
        self.assertEqual(code, 201)
        self.assertEqual(self.sim.get(PODS + "/" + name)[0], 200)
        code, _, st = self.sim.evict("shop", self.pods("web")[0], dry_run=True)
        self.assertEqual(code, 429)

    def test_pods_without_pdb_and_terminal_pods(self):
        self.sim.request("POST", PODS, new_pod("free", labels={"app": "free"}))
        self.assertEqual(self.sim.evict("shop", "free")[0], 201)
        # a pod that is not Running is deleted without consulting the PDB
        web = self.pods("web")[0]
        pod = self.sim.obj(PODS + "/" + web)
        pod["status"]["phase"] = "Succeeded"
        self.sim.request("PUT", PODS + "/" + web + "/status", pod)
        self.assertEqual(self.sim.evict("shop", web)[0], 201)

    def test_unready_pod_may_go_when_the_budget_is_met(self):
        # make 4 web pods (budget 3 needs 3): one extra, unready
        self.sim.request("POST", PODS, new_pod("web-extra", labels={"app": "web"}))
        pod = self.sim.obj(PODS + "/web-extra")
        for c in pod["status"]["conditions"]:
            if c["type"] == "Ready":
                c["status"] = "False"
        self.sim.request("PUT", PODS + "/web-extra/status", pod)
        self.assertEqual(self.sim.evict("shop", "web-extra")[0], 201)

    def test_two_pdbs_is_500(self):
        pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "second"},
               "spec": {"maxUnavailable": "50%", "selector": {"matchLabels": {"app": "api"}}}}
        self.assertEqual(self.sim.request("POST", PDBS, pdb)[0], 201)
        code, _, st = self.sim.evict("shop", self.pods("api")[0])
        self.assertEqual((code, st["message"]),
                         (500, "This pod has more than one PodDisruptionBudget, which the eviction subresource "
                               "does not support."))

    def test_pdb_validation(self):
        pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "both"},
               "spec": {"minAvailable": 1, "maxUnavailable": 1, "selector": {"matchLabels": {"app": "api"}}}}
        code, _, st = self.sim.request("POST", PDBS, pdb)
        self.assertEqual((code, st["reason"]), (422, "Invalid"))

    def test_bad_eviction_requests(self):
        code, _, st = self.sim.evict("shop", "nope")
        self.assertEqual((code, st["reason"], st["message"]), (404, "NotFound", 'pods "nope" not found'))
        name = self.pods("api")[0]
        path = "/api/v1/namespaces/shop/pods/%s/eviction" % name
        code, _, st = self.sim.request("POST", path, {"apiVersion": "policy/v1", "kind": "Eviction",
                                                      "metadata": {"name": "other"}})
        self.assertEqual((code, st["message"]), (400, "name in URL does not match name in Eviction object"))
        code, _, st = self.sim.request("POST", path, {"kind": "Pod"})
        self.assertEqual(code, 400)
        code, _, st = self.sim.request("POST", path, b"[1,2")
        self.assertEqual(code, 400)
        code, _, st = self.sim.request("POST", path, {"apiVersion": "policy/v1beta1", "kind": "Eviction",
                                                      "metadata": {"name": name},
                                                      "deleteOptions": {"preconditions": {"uid": "x"}}})
        self.assertEqual((code, st["reason"]), (409, "Conflict"))
        code, _, st = self.sim.request("GET", path)
        self.assertEqual(code, 405)


if __name__ == "__main__":
    unittest.main()
