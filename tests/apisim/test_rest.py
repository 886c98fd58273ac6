"""REST behaviour against a running simulator: discovery, CRUD, concurrency, selectors, paging, errors.

Each assertion is about something a real client depends on: the Status
`reason`/`code` client libraries classify, resourceVersion increasing on every
write, 409 on a stale update, pages that cover the list exactly once.
"""

import json
import os
import socket
import sys
import tempfile
import unittest
from urllib.parse import quote

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import simfixtures  # noqa: E402
from simtest import SimProcess, write_snapshot  # noqa: E402

PODS = "/api/v1/namespaces/shop/pods"


def new_pod(name, node="worker-1", labels=None, ns="shop"):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "labels": labels or {"app": "t"}},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "busybox",
                                                       "resources": {"requests": {"cpu": "10m"}}}]}}


class Discovery(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sim = SimProcess()

    @classmethod
    def tearDownClass(cls):
        cls.sim.stop()

    def test_core_and_groups(self):
        api = self.sim.obj("/api")
        self.assertEqual(api["kind"], "APIVersions")
        self.assertEqual(api["versions"], ["v1"])
        groups = {g["name"]: g for g in self.sim.obj("/apis")["groups"]}
        for g in ("apps", "batch", "policy", "scheduling.k8s.io", "coordination.k8s.io", "events.k8s.io",
                  "apiextensions.k8s.io", "metrics.k8s.io", "kubevirt.io", "hco.kubevirt.io"):
            self.assertIn(g, groups)
        self.assertEqual(groups["policy"]["preferredVersion"]["groupVersion"], "policy/v1")
        self.assertEqual(self.sim.obj("/apis/kubevirt.io")["kind"], "APIGroup")
        self.assertEqual(self.sim.obj("/version")["major"], "1")

    def test_resource_lists(self):
        core = {r["name"]: r for r in self.sim.obj("/api/v1")["resources"]}
        ev = core["pods/eviction"]
        self.assertEqual((ev["kind"], ev["group"], ev["version"], ev["verbs"]), ("Eviction", "policy", "v1", ["create"]))
        self.assertTrue(core["pods"]["namespaced"])
        self.assertFalse(core["nodes"]["namespaced"])
        self.assertIn("po", core["pods"]["shortNames"])
        kv = {r["name"]: r for r in self.sim.obj("/apis/kubevirt.io/v1")["resources"]}
        self.assertEqual(kv["virtualmachineinstances"]["shortNames"], ["vmi", "vmis"])
        self.assertEqual(kv["virtualmachineinstancemigrations"]["shortNames"][0], "vmim")
        self.assertNotIn("virtualmachineinstances/status", kv, "the VMI CRD has no status subresource")
        self.assertIn("virtualmachineinstancemigrations/status", kv)
        pol = {r["name"]: r for r in self.sim.obj("/apis/policy/v1")["resources"]}
        self.assertEqual(pol["poddisruptionbudgets"]["shortNames"], ["pdb"])
        metrics = {r["name"]: r for r in self.sim.obj("/apis/metrics.k8s.io/v1beta1")["resources"]}
        self.assertEqual(metrics["nodes"]["verbs"], ["get", "list"])

    def test_crds_published(self):
        crds = {c["metadata"]["name"]: c for c in
                self.sim.obj("/apis/apiextensions.k8s.io/v1/customresourcedefinitions")["items"]}
        vmi = crds["virtualmachineinstances.kubevirt.io"]
        self.assertEqual(vmi["spec"]["names"]["shortNames"], ["vmi", "vmis"])
        self.assertIn("hyperconvergeds.hco.kubevirt.io", crds)
        cols = [c["name"] for c in vmi["spec"]["versions"][0]["additionalPrinterColumns"]]
        self.assertIn("NodeName", cols)

    def test_unknown_paths_are_status_404(self):
        for path in ("/api/v2", "/apis/nope", "/apis/nope/v1/things", "/api/v1/widgets", "/foo",
                     "/api/v1/namespaces/shop/pods/x/y/z", "/api/v1/namespaces/shop/nodes"):
            code, _, body = self.sim.get(path)
            self.assertEqual(code, 404, path)
            self.assertEqual((body["kind"], body["status"], body["code"]), ("Status", "Failure", 404), path)


class Crud(unittest.TestCase):
    def setUp(self):
        self.sim = SimProcess()

    def tearDown(self):
        self.assertEqual(self.sim.stop(), 0)

    def test_get_and_not_found(self):
        node = self.sim.obj("/api/v1/nodes/worker-1")
        self.assertEqual(node["kind"], "Node")
        code, _, st = self.sim.get(PODS + "/nope")
        self.assertEqual(code, 404)
        self.assertEqual(st["reason"], "NotFound")
        self.assertEqual(st["message"], 'pods "nope" not found')
        self.assertEqual(st["details"], {"name": "nope", "kind": "pods"})
        code, _, st = self.sim.get("/apis/kubevirt.io/v1/namespaces/vms/virtualmachineinstances/nope")
        self.assertEqual(st["message"], 'virtualmachineinstances.kubevirt.io "nope" not found')
        self.assertEqual(st["details"]["group"], "kubevirt.io")

    def test_create_sets_metadata_and_resource_version_increases(self):
        before = int(self.sim.obj(PODS)["metadata"]["resourceVersion"])
        code, _, pod = self.sim.request("POST", PODS, new_pod("p1"))
        self.assertEqual(code, 201)
        md = pod["metadata"]
        self.assertTrue(md["uid"])
        self.assertRegex(md["creationTimestamp"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
        rv1 = int(md["resourceVersion"])
        self.assertGreater(rv1, before)
        self.assertEqual(pod["status"]["phase"], "Running", "a pod created on a node starts (no kubelet)")
        self.assertEqual(pod["spec"]["restartPolicy"], "Always")
        code, _, pod2 = self.sim.request("PATCH", PODS + "/p1", {"metadata": {"labels": {"x": "1"}}},
                                         content_type="application/merge-patch+json")
        self.assertEqual(code, 200)
        self.assertGreater(int(pod2["metadata"]["resourceVersion"]), rv1)
        code, _, st = self.sim.request("POST", PODS, new_pod("p1"))
        self.assertEqual((code, st["reason"]), (409, "AlreadyExists"))
        self.assertEqual(st["message"], 'pods "p1" already exists')

    def test_generate_name_and_validation(self):
        body = new_pod("")
        del body["metadata"]["name"]
        body["metadata"]["generateName"] = "gen-"
        code, _, pod = self.sim.request("POST", PODS, body)
        self.assertEqual(code, 201)
        self.assertRegex(pod["metadata"]["name"], r"^gen-[a-z0-9]{5}$")
        del body["metadata"]["generateName"]
        code, _, st = self.sim.request("POST", PODS, body)
        self.assertEqual((code, st["reason"]), (422, "Invalid"))
        code, _, st = self.sim.request("POST", PODS, new_pod("Bad_Name"))
        self.assertEqual(code, 422)
        code, _, st = self.sim.request("POST", "/api/v1/namespaces/nope/pods", new_pod("x", ns="nope"))
        self.assertEqual((code, st["message"]), (404, 'namespaces "nope" not found'))
        code, _, st = self.sim.request("POST", PODS, new_pod("x", ns="vms"))
        self.assertEqual((code, st["reason"]), (400, "BadRequest"))
        code, _, st = self.sim.request("POST", PODS, dict(new_pod("x"), kind="Node"))
        self.assertEqual(code, 400)
        code, _, st = self.sim.request("POST", PODS, b"{not json")
        self.assertEqual((code, st["reason"]), (400, "BadRequest"))
        code, _, st = self.sim.request("POST", PODS, "kind: Pod", content_type="application/yaml")
        self.assertEqual(code, 415)
        bad_pc = new_pod("x")
        bad_pc["spec"]["priorityClassName"] = "nope"
        code, _, st = self.sim.request("POST", PODS, bad_pc)
        self.assertEqual((code, st["reason"]), (403, "Forbidden"))
        good_pc = new_pod("y")
        good_pc["spec"]["priorityClassName"] = "workload-high"
        code, _, pod = self.sim.request("POST", PODS, good_pc)
        self.assertEqual(pod["spec"]["priority"], 100000)

    def test_update_conflict_and_status_subresource(self):
        self.sim.request("POST", PODS, new_pod("p1"))
        pod = self.sim.obj(PODS + "/p1")
        stale = json.loads(json.dumps(pod))
        pod["metadata"]["labels"]["v"] = "2"
        code, _, upd = self.sim.request("PUT", PODS + "/p1", pod)
        self.assertEqual(code, 200)
        stale["metadata"]["labels"]["v"] = "3"
        code, _, st = self.sim.request("PUT", PODS + "/p1", stale)
        self.assertEqual((code, st["reason"]), (409, "Conflict"))
        self.assertIn("the object has been modified", st["message"])
        # a no-op update keeps the resourceVersion
        code, _, same = self.sim.request("PUT", PODS + "/p1", upd)
        self.assertEqual(same["metadata"]["resourceVersion"], upd["metadata"]["resourceVersion"])
        # status changes through the main resource are ignored, through /status applied
        upd["status"]["phase"] = "Failed"
        code, _, r = self.sim.request("PUT", PODS + "/p1", upd)
        self.assertEqual(r["status"]["phase"], "Running")
        r["status"]["phase"] = "Failed"
        code, _, r = self.sim.request("PUT", PODS + "/p1/status", r)
        self.assertEqual((code, r["status"]["phase"]), (200, "Failed"))
        self.assertEqual(self.sim.obj(PODS + "/p1")["status"]["phase"], "Failed", "stored, not just echoed")
        code, _, st = self.sim.request("PUT", PODS + "/other", r)
        self.assertEqual(code, 400, "name in body must match the URL")

    def test_patch_types(self):
        self.sim.request("POST", PODS, new_pod("p1"))
        code, _, p = self.sim.request("PATCH", PODS + "/p1",
                                      [{"op": "add", "path": "/metadata/annotations", "value": {"a": "1"}}],
                                      content_type="application/json-patch+json")
        self.assertEqual((code, p["metadata"]["annotations"]), (200, {"a": "1"}))
        code, _, st = self.sim.request("PATCH", PODS + "/p1", [{"op": "test", "path": "/metadata/name", "value": "x"}],
                                       content_type="application/json-patch+json")
        self.assertEqual((code, st["reason"]), (422, "Invalid"))
        code, _, p = self.sim.request("PATCH", PODS + "/p1",
                                      {"spec": {"containers": [{"name": "c", "image": "busybox:2"}]}},
                                      content_type="application/strategic-merge-patch+json")
        self.assertEqual(p["spec"]["containers"][0]["image"], "busybox:2")
        self.assertEqual(p["spec"]["containers"][0]["resources"]["requests"]["cpu"], "10m", "merged by name")
        code, _, st = self.sim.request("PATCH", "/apis/kubevirt.io/v1/namespaces/vms/virtualmachineinstances/vm-a",
                                       {"metadata": {"labels": {"a": "b"}}},
                                       content_type="application/strategic-merge-patch+json")
        self.assertEqual((code, st["reason"]), (415, "UnsupportedMediaType"))
        code, _, st = self.sim.request("PATCH", PODS + "/p1", {"a": 1}, content_type="text/plain")
        self.assertEqual(code, 415)
        code, _, st = self.sim.request("PATCH", PODS + "/p1", {"metadata": {"resourceVersion": "1"}},
                                       content_type="application/merge-patch+json")
        self.assertEqual(code, 409, "a resourceVersion in a patch is a precondition")
        code, _, st = self.sim.request("PATCH", PODS + "/nope", {}, content_type="application/merge-patch+json")
        self.assertEqual(code, 404)

    def test_delete_preconditions_finalizers_and_gc(self):
        self.sim.request("POST", PODS, new_pod("p1"))
        code, _, st = self.sim.request("DELETE", PODS + "/p1", {"preconditions": {"uid": "wrong"}})
        self.assertEqual((code, st["reason"]), (409, "Conflict"))
        code, _, gone = self.sim.request("DELETE", PODS + "/p1")
        self.assertEqual((code, gone["metadata"]["name"]), (200, "p1"))
        self.assertEqual(self.sim.get(PODS + "/p1")[0], 404)
        cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fin", "finalizers": ["x/y"]}}
        self.sim.request("POST", "/api/v1/namespaces/shop/configmaps", cm)
        code, _, obj = self.sim.request("DELETE", "/api/v1/namespaces/shop/configmaps/fin")
        self.assertTrue(obj["metadata"]["deletionTimestamp"])
        self.sim.request("PATCH", "/api/v1/namespaces/shop/configmaps/fin", {"metadata": {"finalizers": None}},
                         content_type="application/merge-patch+json")
        self.assertEqual(self.sim.get("/api/v1/namespaces/shop/configmaps/fin")[0], 404)
        # deleting the ReplicaSet garbage-collects its pods (propagation Background)
        rs = self.sim.obj("/apis/apps/v1/namespaces/shop/replicasets")["items"]
        web = next(r for r in rs if r["metadata"]["name"].startswith("web-"))
        self.sim.request("DELETE", "/apis/apps/v1/namespaces/shop/replicasets/" + web["metadata"]["name"])
        left = self.sim.obj(PODS + "?labelSelector=app%3Dweb")["items"]
        self.assertEqual(left, [])

    def test_deletecollection_and_namespace_delete(self):
        for i in range(3):
            self.sim.request("POST", PODS, new_pod("dc%d" % i, labels={"dc": "yes"}))
        code, _, lst = self.sim.request("DELETE", PODS + "?labelSelector=dc%3Dyes")
        self.assertEqual((code, len(lst["items"])), (200, 3))
        self.assertEqual(self.sim.obj(PODS + "?labelSelector=dc")["items"], [])
        self.sim.request("DELETE", "/api/v1/namespaces/shop")
        self.assertEqual(self.sim.obj(PODS)["items"], [])
        self.assertEqual(self.sim.get("/apis/policy/v1/namespaces/shop/poddisruptionbudgets/web-pdb")[0], 404)

    def test_methods_and_bad_requests(self):
        code, _, st = self.sim.request("POST", PODS + "/p1", {})
        self.assertEqual((code, st["reason"]), (405, "MethodNotAllowed"))
        code, _, st = self.sim.request("PUT", "/apis/metrics.k8s.io/v1beta1/nodes/worker-1", {})
        self.assertEqual(code, 405)
        code, _, st = self.sim.request("POST", "/api", {})
        self.assertEqual(code, 405)
        code, _, st = self.sim.get(PODS + "?limit=abc")
        self.assertEqual(code, 400)
        code, _, st = self.sim.get(PODS, headers={"Accept": "application/vnd.kubernetes.protobuf"})
        self.assertEqual((code, st["reason"]), (406, "NotAcceptable"))
        # a raw garbage request line gets an HTTP error, and the server survives it
        for garbage in (b"BLAH /api HTTP/1.1\r\n\r\n", b"GET /api HTTP/9.9\r\n\r\n", b"\x00\x01\x02\r\n\r\n"):
            with socket.create_connection(("127.0.0.1", self.sim.port)) as s:
                s.sendall(garbage)
                reply = b""
                while True:
                    chunk = s.recv(4096)
                    if not chunk:
                        break
                    reply += chunk
                self.assertTrue(reply.startswith(b"HTTP/1."), reply)
                self.assertIn(b'"kind":"Status"', reply)
        self.assertEqual(self.sim.get("/api")[0], 200)
        self.assertNotIn("Traceback", self.sim.log())

    def test_events_k8s_io_shares_core_events(self):
        ev = {"apiVersion": "events.k8s.io/v1", "kind": "Event",
              "metadata": {"name": "p.17a", "namespace": "shop"},
              "eventTime": "2024-05-01T10:00:00.000000Z", "reportingController": "sigs.k8s.io.descheduler",
              "reportingInstance": "sigs.k8s.io.descheduler-host", "action": "Descheduled", "reason": "Descheduled",
              "type": "Normal", "note": "pod eviction from worker-1 node by sigs.k8s.io/descheduler",
              "regarding": {"kind": "Pod", "namespace": "shop", "name": "p"}}
        code, _, out = self.sim.request("POST", "/apis/events.k8s.io/v1/namespaces/shop/events", ev)
        self.assertEqual((code, out["apiVersion"], out["note"]), (201, "events.k8s.io/v1", ev["note"]))
        core = self.sim.obj("/api/v1/namespaces/shop/events/p.17a")
        self.assertEqual((core["message"], core["involvedObject"]["name"], core["reportingComponent"]),
                         (ev["note"], "p", "sigs.k8s.io.descheduler"))
        code, _, out = self.sim.request("PATCH", "/apis/events.k8s.io/v1/namespaces/shop/events/p.17a",
                                        {"series": {"count": 2, "lastObservedTime": "2024-05-01T10:01:00.000000Z"}},
                                        content_type="application/strategic-merge-patch+json")
        self.assertEqual((code, out["series"]["count"]), (200, 2))
        lst = self.sim.obj("/api/v1/namespaces/shop/events?fieldSelector=involvedObject.name%3Dp")
        self.assertEqual(len(lst["items"]), 1)

    def test_metrics_follow_pods(self):
        nodes = {n["metadata"]["name"]: n for n in self.sim.obj("/apis/metrics.k8s.io/v1beta1/nodes")["items"]}
        self.assertEqual(nodes["worker-3"]["kind"], "NodeMetrics")
        before = nodes["worker-3"]["usage"]["cpu"]
        self.sim.request("POST", PODS, new_pod("m1", node="worker-3"))
        after = self.sim.obj("/apis/metrics.k8s.io/v1beta1/nodes/worker-3")["usage"]["cpu"]
        self.assertEqual(int(after[:-1]) - int(before[:-1]), 10)
        pm = self.sim.obj("/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods/m1")
        self.assertEqual(pm["containers"][0]["usage"]["cpu"], "10m")
        self.sim.control("POST", "metrics", {"kind": "PodMetrics", "metadata": {"name": "m1", "namespace": "shop"},
                                             "containers": [{"name": "c", "usage": {"cpu": "700m", "memory": "1Gi"}}]})
        pm = self.sim.obj("/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods/m1")
        self.assertEqual(pm["containers"][0]["usage"], {"cpu": "700m", "memory": "1024Mi"})

    def test_pdb_status_is_maintained(self):
        pdb = self.sim.obj("/apis/policy/v1/namespaces/shop/poddisruptionbudgets/api-pdb")
        self.assertEqual((pdb["status"]["currentHealthy"], pdb["status"]["disruptionsAllowed"]), (2, 1))
        self.sim.request("POST", PODS, new_pod("api-extra", labels={"app": "api"}))
        self.sim.wait_for(lambda: self.sim.obj("/apis/policy/v1/namespaces/shop/poddisruptionbudgets/api-pdb")
                          ["status"]["disruptionsAllowed"] == 2, what="PDB status refresh")

    def test_table_output(self):
        code, headers, t = self.sim.get(PODS, headers={
            "Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"})
        self.assertEqual((code, t["kind"]), (200, "Table"))
        self.assertEqual([c["name"] for c in t["columnDefinitions"]][:5],
                         ["Name", "Ready", "Status", "Restarts", "Age"])
        self.assertEqual(t["rows"][0]["object"]["kind"], "PartialObjectMetadata")
        self.assertIn("as=Table", headers["Content-Type"])


class LessCommonPaths(unittest.TestCase):
    def setUp(self):
        self.sim = SimProcess()

    def tearDown(self):
        self.assertEqual(self.sim.stop(), 0)

    def test_crd_created_at_run_time_is_served(self):
        crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
               "metadata": {"name": "widgets.example.com"},
               "spec": {"group": "example.com", "scope": "Namespaced",
                        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                                  "shortNames": ["wd"]},
                        "versions": [{"name": "v1", "served": True, "storage": True,
                                      "schema": {"openAPIV3Schema": {"type": "object"}}}]}}
        code, _, out = self.sim.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?dryRun=All",
                                        crd)
        self.assertEqual(code, 201)
        self.assertNotIn("example.com", [g["name"] for g in self.sim.obj("/apis")["groups"]], "dry run")
        code, _, out = self.sim.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
        self.assertEqual(code, 201)
        self.assertEqual(out["status"]["conditions"][0]["type"], "Established")
        self.assertIn("example.com", [g["name"] for g in self.sim.obj("/apis")["groups"]])
        res = self.sim.obj("/apis/example.com/v1")["resources"]
        self.assertEqual(res[0]["shortNames"], ["wd"])
        w = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"size": 3}}
        self.assertEqual(self.sim.request("POST", "/apis/example.com/v1/namespaces/shop/widgets", w)[0], 201)
        self.assertIn("w1", self.sim.kubectl("get", "wd", "-n", "shop").stdout)
        self.sim.request("DELETE", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com")
        self.assertEqual(self.sim.get("/apis/example.com/v1/namespaces/shop/widgets")[0], 404)
        bad = dict(crd, metadata={"name": "wrong.name"})
        self.assertEqual(self.sim.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                                          bad)[0], 422)

    def test_apply_patch_creates_then_merges(self):
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa"}, "data": {"a": "1"}}
        code, _, out = self.sim.request("PATCH", "/api/v1/namespaces/shop/configmaps/ssa?fieldManager=t", body,
                                        content_type="application/apply-patch+yaml")
        self.assertEqual((code, out["data"]), (201, {"a": "1"}))
        body["data"] = {"b": "2"}
        code, _, out = self.sim.request("PATCH", "/api/v1/namespaces/shop/configmaps/ssa?fieldManager=t", body,
                                        content_type="application/apply-patch+yaml")
        self.assertEqual((code, out["data"]), (200, {"a": "1", "b": "2"}))

    def test_legacy_watch_path_and_partial_metadata(self):
        code, _, raw = self.sim.request("GET", "/api/v1/watch/namespaces/shop/pods?timeoutSeconds=1", raw=True)
        events = [json.loads(line) for line in raw.splitlines()]
        self.assertEqual((code, len(events), events[0]["type"]), (200, 5, "ADDED"))
        meta = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"
        code, _, lst = self.sim.get(PODS, headers={"Accept": meta})
        self.assertEqual((lst["kind"], lst["items"][0]["kind"]), ("PartialObjectMetadataList", "PartialObjectMetadata"))
        self.assertNotIn("spec", lst["items"][0])
        code, _, one = self.sim.get("/api/v1/nodes/worker-1", headers={
            "Accept": "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io"})
        self.assertEqual((one["kind"], one["metadata"]["name"]), ("PartialObjectMetadata", "worker-1"))


class SelectorsAndPaging(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="apisim-paging-")
        items = [simfixtures.namespace(n) for n in ("a", "b")]
        items += [simfixtures.node("n%d" % i) for i in range(10)]
        for i in range(1000):
            items.append(simfixtures.workload_pod("p%04d" % i, "ab"[i % 2], "n%d" % (i % 10),
                                                  {"app": "a%d" % (i % 4), "i": str(i)}))
        cls.sim = SimProcess(write_snapshot(items, cls.tmp), ["--watch-window", "50"])

    @classmethod
    def tearDownClass(cls):
        cls.sim.stop()

    def page_all(self, path, limit):
        names, cont, pages, rvs = [], "", 0, set()
        while True:
            sep = "&" if "?" in path else "?"
            lst = self.sim.obj("%s%slimit=%d%s" % (path, sep, limit, "&continue=" + quote(cont) if cont else ""))
            names += [p["metadata"]["name"] for p in lst["items"]]
            rvs.add(lst["metadata"]["resourceVersion"])
            pages += 1
            cont = lst["metadata"].get("continue")
            if not cont:
                return names, pages, rvs

    def test_pages_cover_list_once_in_order(self):
        full = [p["metadata"]["name"] for p in self.sim.obj("/api/v1/pods")["items"]]
        self.assertEqual(len(full), 1000)
        names, pages, rvs = self.page_all("/api/v1/pods", 64)
        self.assertEqual(names, full)
        self.assertEqual(pages, 16)
        self.assertEqual(len(rvs), 1, "every page reports the first page's resourceVersion")
        first = self.sim.obj("/api/v1/pods?limit=100")
        self.assertEqual(first["metadata"]["remainingItemCount"], 900)

    def test_selected_pages(self):
        names, _, _ = self.page_all("/api/v1/namespaces/a/pods?labelSelector=app%3Da2", 30)
        self.assertEqual(len(names), 250)
        names, _, _ = self.page_all("/api/v1/pods?fieldSelector=spec.nodeName%3Dn3", 7)
        self.assertEqual(len(names), 100)
        self.assertEqual(len(set(names)), 100)
        lst = self.sim.obj("/api/v1/pods?fieldSelector=spec.nodeName%3Dn3,metadata.namespace%3Db")
        self.assertEqual(len(lst["items"]), 100)
        lst = self.sim.obj("/api/v1/pods?fieldSelector=spec.nodeName%3Dn3,metadata.namespace%3Da")
        self.assertEqual(len(lst["items"]), 0, "n3 only hosts odd pods (namespace b)")
        lst = self.sim.obj("/api/v1/pods?fieldSelector=metadata.name%3Dp0007")
        self.assertEqual([p["metadata"]["name"] for p in lst["items"]], ["p0007"])
        lst = self.sim.obj("/api/v1/pods?fieldSelector=status.phase!%3DRunning")
        self.assertEqual(lst["items"], [])
        lst = self.sim.obj("/api/v1/pods?labelSelector=app+in+(a1,a3),i+notin+(1,3)")
        self.assertEqual(len(lst["items"]), 498)

    def test_selector_errors(self):
        code, _, st = self.sim.get("/api/v1/pods?fieldSelector=spec.foo%3Dx")
        self.assertEqual((code, st["message"]), (400, "field label not supported: spec.foo"))
        code, _, st = self.sim.get("/api/v1/pods?labelSelector=a%3D%3D%3Db")
        self.assertEqual(code, 400)
        code, _, st = self.sim.get("/api/v1/pods?limit=10&continue=garbage")
        self.assertEqual(code, 400)

    def test_malformed_continue_tokens_get_kube_apiservers_messages(self):
        # a real kube-apiserver 1.37's answers to the same tokens (tests/realapi/test_differences.py)
        prefix = "invalid continue token: continue key is not valid: "
        want = {"a=b": "illegal base64 data at input byte 1",
                "abcde": "illegal base64 data at input byte 4",
                "not-a-token": "invalid character '\\u009e' looking for beginning of value",
                "eyJ2IjoieCJ9": "server does not recognize this encoded version x"}
        for token, why in want.items():
            code, _, st = self.sim.get("/api/v1/pods?limit=10&continue=" + token)
            self.assertEqual((code, st["reason"], st["message"]), (400, "BadRequest", prefix + why), token)

    def test_any_version_list_ignores_the_limit(self):
        # resourceVersion=0 is served from kube-apiserver's watch cache: all items, no continue
        # (a real 1.37 server, tests/realapi/test_differences.py); without it the limit pages
        everything = self.sim.obj("/api/v1/pods")["items"]
        lst = self.sim.obj("/api/v1/pods?limit=10&resourceVersion=0")
        self.assertEqual(len(lst["items"]), len(everything))
        self.assertGreater(len(everything), 10)
        self.assertNotIn("continue", lst["metadata"])
        self.assertEqual(len(self.sim.obj("/api/v1/pods?limit=10")["items"]), 10)

    def test_continue_token_expires_after_compaction(self):
        first = self.sim.obj("/api/v1/pods?limit=10")
        for i in range(60):  # more writes than the 50-event watch window
            self.sim.request("PATCH", "/api/v1/namespaces/a/pods/p0000", {"metadata": {"labels": {"n": str(i)}}},
                             content_type="application/merge-patch+json")
        code, _, st = self.sim.get("/api/v1/pods?limit=10&continue=" + quote(first["metadata"]["continue"]))
        self.assertEqual((code, st["reason"]), (410, "Expired"))


if __name__ == "__main__":
    unittest.main()
