"""In-process tests of the simulator's algorithms: patches, selectors, quantities, snapshot parsing.

These run without a server, so they pin the semantics that the HTTP tests
only exercise indirectly (JSON patch v4 quirks, strategic-merge directives).
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import apisim  # noqa: E402
import simfixtures  # noqa: E402
from simpatch import PatchError, json_patch, merge_patch, strategic_merge_patch  # noqa: E402
from simstore import match_labels, parse_label_selector, selector_from_object  # noqa: E402
from simutil import ApiError, bytes_of, human_duration, milli  # noqa: E402


class MergePatch(unittest.TestCase):
    def test_rfc7386(self):
        doc = {"a": {"b": 1, "c": 2}, "l": [1, 2], "k": "v"}
        out = merge_patch(doc, {"a": {"b": None, "d": 3}, "l": [3], "k": None})
        self.assertEqual(out, {"a": {"c": 2, "d": 3}, "l": [3]})
        self.assertEqual(doc["a"]["b"], 1, "input must not be mutated")


class JsonPatch(unittest.TestCase):
    def test_ops(self):
        doc = {"metadata": {"annotations": {"x": "1"}}, "items": [1, 2]}
        out = json_patch(doc, [
            {"op": "add", "path": "/metadata/annotations/kubevirt.io~1eviction-source", "value": "descheduler"},
            {"op": "replace", "path": "/items/0", "value": 9},
            {"op": "add", "path": "/items/-", "value": 3},
            {"op": "move", "from": "/metadata/annotations/x", "path": "/moved"},
            {"op": "copy", "from": "/moved", "path": "/copied"},
            {"op": "test", "path": "/copied", "value": "1"},
        ])
        self.assertEqual(out["metadata"]["annotations"], {"kubevirt.io/eviction-source": "descheduler"})
        self.assertEqual(out["items"], [9, 2, 3])
        self.assertEqual((out["moved"], out["copied"]), ("1", "1"))

    def test_replace_missing_map_key_adds_like_json_patch_v4(self):
        out = json_patch({"metadata": {"annotations": {}}},
                         [{"op": "replace", "path": "/metadata/annotations/a", "value": "b"}])
        self.assertEqual(out["metadata"]["annotations"], {"a": "b"})

    def test_failures(self):
        for ops in ([{"op": "remove", "path": "/nope"}],
                    [{"op": "test", "path": "/a", "value": 2}],
                    [{"op": "add", "path": "/x/y", "value": 1}],
                    [{"op": "replace", "path": "/l/5", "value": 1}],
                    [{"op": "frobnicate", "path": "/a"}],
                    {"op": "add"}):
            with self.assertRaises(PatchError, msg=str(ops)):
                json_patch({"a": 1, "l": []}, ops)


class StrategicMergePatch(unittest.TestCase):
    POD = {"metadata": {"labels": {"a": "1"}, "finalizers": ["f1"]},
           "spec": {"containers": [{"name": "c1", "image": "i1", "env": [{"name": "A", "value": "1"}]},
                                   {"name": "c2", "image": "i2"}],
                    "tolerations": [{"key": "t1"}]}}

    def test_lists_merge_by_key(self):
        out = strategic_merge_patch(self.POD, {"spec": {"containers": [
            {"name": "c1", "env": [{"name": "B", "value": "2"}]}, {"name": "c3", "image": "i3"}]}})
        names = [c["name"] for c in out["spec"]["containers"]]
        self.assertEqual(names, ["c1", "c2", "c3"])
        self.assertEqual(out["spec"]["containers"][0]["image"], "i1")
        self.assertEqual([e["name"] for e in out["spec"]["containers"][0]["env"]], ["A", "B"])

    def test_atomic_list_and_primitive_set(self):
        out = strategic_merge_patch(self.POD, {"spec": {"tolerations": [{"key": "t2"}]},
                                               "metadata": {"finalizers": ["f2"]}})
        self.assertEqual(out["spec"]["tolerations"], [{"key": "t2"}])
        self.assertEqual(out["metadata"]["finalizers"], ["f1", "f2"])

    def test_directives(self):
        out = strategic_merge_patch(self.POD, {
            "spec": {"containers": [{"name": "c2", "$patch": "delete"}],
                     "$setElementOrder/containers": [{"name": "c1"}]},
            "metadata": {"labels": {"$patch": "replace", "b": "2"},
                         "$deleteFromPrimitiveList/finalizers": ["f1"]}})
        self.assertEqual([c["name"] for c in out["spec"]["containers"]], ["c1"])
        self.assertEqual(out["metadata"]["labels"], {"b": "2"})
        self.assertEqual(out["metadata"]["finalizers"], [])

    def test_null_deletes(self):
        out = strategic_merge_patch(self.POD, {"metadata": {"labels": {"a": None}}})
        self.assertEqual(out["metadata"]["labels"], {})


class Selectors(unittest.TestCase):
    LABELS = {"app": "web", "tier": "front", "n": "5"}

    def check(self, sel, expected):
        self.assertEqual(match_labels(parse_label_selector(sel), self.LABELS), expected, sel)

    def test_label_selector_grammar(self):
        self.check("app=web", True)
        self.check("app==web,tier=front", True)
        self.check("app!=web", False)
        self.check("app in (web, api)", True)
        self.check("app notin (web)", False)
        self.check("tier", True)
        self.check("!tier", False)
        self.check("!missing", True)
        self.check("n>4,n<6", True)
        self.check("", True)

    def test_bad_selectors_are_400(self):
        for bad in ("app=web,", "a b c", "app in (w", "k=v v", "n>x"):
            with self.assertRaises(ApiError, msg=bad) as cm:
                parse_label_selector(bad)
            self.assertEqual(cm.exception.code, 400)

    def test_label_selector_object(self):
        reqs = selector_from_object({"matchLabels": {"app": "web"},
                                     "matchExpressions": [{"key": "tier", "operator": "In", "values": ["front"]}]})
        self.assertTrue(match_labels(reqs, self.LABELS))
        self.assertIsNone(selector_from_object(None))


class Quantities(unittest.TestCase):
    def test_parse(self):
        self.assertEqual(milli("100m"), 100)
        self.assertEqual(milli("2"), 2000)
        self.assertEqual(milli("0.5"), 500)
        self.assertEqual(bytes_of("801Mi"), 801 * 1024 * 1024)
        self.assertEqual(bytes_of("1G"), 10 ** 9)
        self.assertEqual(bytes_of("50M"), 50 * 10 ** 6)
        self.assertEqual(bytes_of("1e3"), 1000)

    def test_kubevirt_overhead(self):
        # KubeVirt's GetMemoryOverhead: 512Mi/1 vCPU -> 289Mi, 1Gi -> 290Mi
        self.assertEqual(simfixtures.memory_overhead_mi(512, 1), 289)
        self.assertEqual(simfixtures.memory_overhead_mi(1024, 1), 290)

    def test_human_duration(self):
        self.assertEqual(human_duration(5), "5s")
        self.assertEqual(human_duration(150), "2m30s")
        self.assertEqual(human_duration(3600 * 5 + 60 * 7), "5h7m")
        self.assertEqual(human_duration(86400 * 3 + 3600 * 2), "3d2h")


class SnapshotParsing(unittest.TestCase):
    def test_items_streamed_and_single_object(self):
        text = ' { "kind" : "List", "apiVersion":"v1", "items" : [ {"kind":"A"} , {"kind":"B"} ] , "metadata":{} }'
        self.assertEqual([o["kind"] for o in apisim.iter_snapshot(text)], ["A", "B"])
        self.assertEqual([o["kind"] for o in apisim.iter_snapshot('{"kind":"Pod"}')], ["Pod"])
        with self.assertRaises(ValueError):
            list(apisim.iter_snapshot("[1]"))

    def test_launcher_pod_shape(self):
        v = simfixtures.vmi("vm-x", "ns", "n1", guest="512Mi")
        p = simfixtures.launcher_pod(v)
        md = p["metadata"]
        self.assertEqual(md["labels"]["kubevirt.io"], "virt-launcher")
        self.assertEqual(md["labels"]["kubevirt.io/created-by"], v["metadata"]["uid"])
        self.assertEqual(md["annotations"]["kubevirt.io/domain"], "vm-x")
        self.assertEqual(md["annotations"]["descheduler.alpha.kubernetes.io/request-evict-only"], "")
        self.assertEqual(md["ownerReferences"][0]["kind"], "VirtualMachineInstance")
        req = p["spec"]["containers"][0]["resources"]["requests"]
        self.assertEqual((req["cpu"], req["memory"]), ("100m", "801Mi"))
        self.assertTrue(all("emptyDir" in vol for vol in p["spec"]["volumes"]))


if __name__ == "__main__":
    unittest.main()
