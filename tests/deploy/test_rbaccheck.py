"""The RBAC decision of tests/deploy/rbaccheck.py on hand-made cases, where the answer is
known from how kube-apiserver authorizes (no binary, no simulator)."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from rbaccheck import Rule, compare, parse_request, subject_rules  # noqa: E402


def req(key):
    verb, _, path = key.partition(" ")
    return parse_request(verb, path)


def sa_objects(cluster_rules=(), role_rules=(), role_ns="app", cluster_role_in_ns=None):
    objs = [{"kind": "ClusterRole", "metadata": {"name": "c"}, "rules": list(cluster_rules)},
            {"kind": "ClusterRoleBinding", "metadata": {"name": "c"}, "roleRef": {"kind": "ClusterRole", "name": "c"},
             "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": "app"}]},
            {"kind": "Role", "metadata": {"name": "r", "namespace": role_ns}, "rules": list(role_rules)},
            {"kind": "RoleBinding", "metadata": {"name": "r", "namespace": role_ns},
             "roleRef": {"kind": "Role", "name": "r"},
             "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": "app"}]}]
    if cluster_role_in_ns:
        objs.append({"kind": "RoleBinding", "metadata": {"name": "rc", "namespace": cluster_role_in_ns},
                     "roleRef": {"kind": "ClusterRole", "name": "c"},
                     "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": "app"}]})
    return objs


class Paths(unittest.TestCase):
    def test_resource_requests(self):
        cases = {
            "list /api/v1/pods": ("pods", "", None, None, None),
            "list /api/v1/namespaces/shop/pods": ("pods", "", None, "shop", None),
            "create /api/v1/namespaces/shop/pods/web-1/eviction": ("pods", "", "eviction", "shop", "web-1"),
            "get /apis/coordination.k8s.io/v1/namespaces/d/leases/x": ("leases", "coordination.k8s.io", None, "d", "x"),
            "watch /api/v1/watch/namespaces/shop/pods": ("pods", "", None, "shop", None),
            # the namespace object itself carries its name as namespace
            "get /api/v1/namespaces/shop": ("namespaces", "", None, "shop", "shop"),
            "update /api/v1/namespaces/shop/finalize": ("namespaces", "", "finalize", "shop", "shop"),
            "list /api/v1/namespaces": ("namespaces", "", None, None, None),
            "list /apis/kubevirt.io/v1/virtualmachineinstances": ("virtualmachineinstances", "kubevirt.io", None,
                                                                  None, None),
        }
        for key, want in cases.items():
            with self.subTest(key=key):
                r = req(key)
                self.assertEqual((r.resource, r.group, r.subresource, r.namespace, r.name), want)

    def test_non_resource_requests(self):
        for key in ("get /version", "get /api", "get /api/v1", "get /apis", "get /apis/policy",
                    "get /apis/policy/v1", "get /healthz", "get /openapi/v2"):
            with self.subTest(key=key):
                self.assertIsNone(req(key).resource)


class Matching(unittest.TestCase):
    def test_subresources_are_separate_resources(self):
        pods = Rule({"apiGroups": [""], "resources": ["pods"], "verbs": ["create"]}, "t")
        evict = Rule({"apiGroups": [""], "resources": ["pods/eviction"], "verbs": ["create"]}, "t")
        any_evict = Rule({"apiGroups": [""], "resources": ["*/eviction"], "verbs": ["create"]}, "t")
        e = req("create /api/v1/namespaces/a/pods/p/eviction")
        self.assertFalse(pods.allows(e))
        self.assertTrue(evict.allows(e))
        self.assertTrue(any_evict.allows(e))
        self.assertFalse(evict.allows(req("create /api/v1/namespaces/a/pods")))

    def test_groups_and_verbs(self):
        r = Rule({"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["create"]}, "t")
        self.assertTrue(r.allows(req("create /apis/events.k8s.io/v1/namespaces/a/events")))
        self.assertFalse(r.allows(req("create /api/v1/namespaces/a/events")))  # core events: another group
        self.assertFalse(r.allows(req("patch /apis/events.k8s.io/v1/namespaces/a/events/e")))

    def test_resource_names_never_allow_create_or_list(self):
        r = Rule({"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "resourceNames": ["l"],
                  "verbs": ["create", "get", "list"]}, "t")
        self.assertTrue(r.allows(req("get /apis/coordination.k8s.io/v1/namespaces/d/leases/l")))
        self.assertFalse(r.allows(req("get /apis/coordination.k8s.io/v1/namespaces/d/leases/other")))
        self.assertFalse(r.allows(req("create /apis/coordination.k8s.io/v1/namespaces/d/leases")))
        self.assertFalse(r.allows(req("list /apis/coordination.k8s.io/v1/namespaces/d/leases")))

    def test_scope_of_bindings(self):
        lease = {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get"]}
        urls = {"nonResourceURLs": ["/metrics"], "verbs": ["get"]}
        rules = subject_rules(sa_objects(cluster_rules=[urls], role_rules=[lease]), "app", "sa")
        allowed = lambda key: any(r.allows(req(key)) for r in rules)  # noqa: E731
        self.assertTrue(allowed("get /apis/coordination.k8s.io/v1/namespaces/app/leases/x"))
        self.assertFalse(allowed("get /apis/coordination.k8s.io/v1/namespaces/kube-system/leases/x"))
        self.assertTrue(allowed("get /metrics"))
        # a ClusterRole bound by a RoleBinding holds only in that namespace, and not for URLs
        rules = subject_rules(sa_objects(cluster_rules=[lease, urls], cluster_role_in_ns="app"), "app", "sa")
        rules = [r for r in rules if r.namespace == "app"]
        allowed = lambda key: any(r.allows(req(key)) for r in rules)  # noqa: E731
        self.assertTrue(allowed("get /apis/coordination.k8s.io/v1/namespaces/app/leases/x"))
        self.assertFalse(allowed("get /apis/coordination.k8s.io/v1/namespaces/other/leases/x"))
        self.assertFalse(allowed("get /metrics"))

    def test_other_subjects_get_nothing(self):
        self.assertEqual(subject_rules(sa_objects(cluster_rules=[{"apiGroups": [""], "resources": ["pods"],
                                                                  "verbs": ["list"]}]), "app", "other"), [])

    def test_binding_to_a_missing_role_is_an_error(self):
        objs = sa_objects()[:2]
        objs[0]["metadata"]["name"] = "renamed"
        with self.assertRaisesRegex(ValueError, "refers to ClusterRole c"):
            subject_rules(objs, "app", "sa")

    def test_malformed_rule_is_an_error(self):
        with self.assertRaisesRegex(ValueError, "verbs"):
            Rule({"apiGroups": [""], "resources": ["pods"]}, "t")
        with self.assertRaisesRegex(ValueError, "list of strings"):
            Rule({"apiGroups": "", "resources": ["pods"], "verbs": ["get"]}, "t")


class Compare(unittest.TestCase):
    RULES = [{"apiGroups": [""], "resources": ["pods", "nodes"], "verbs": ["list"]},
             {"apiGroups": [""], "resources": ["pods/eviction"], "verbs": ["create"]}]

    def compare(self, cluster_rules, runs):
        return compare({"i": (subject_rules(sa_objects(cluster_rules=cluster_rules), "app", "sa"), runs)})

    def test_exact_role(self):
        report = self.compare(self.RULES, {"run": {"get /version": 1, "get /apis": 1, "list /api/v1/pods": 2,
                                                   "list /api/v1/nodes": 1,
                                                   "create /api/v1/namespaces/a/pods/p/eviction": 1}})
        self.assertEqual(report, ([], []))

    def test_too_narrow_and_too_broad(self):
        report = self.compare(self.RULES, {"run": {"list /api/v1/pods": 1, "list /api/v1/namespaces": 1}})
        self.assertEqual(report.refused, [("run", "list /api/v1/namespaces")])
        self.assertEqual(report.unused, ["list nodes (ClusterRole c rule 1, cluster-wide)",
                                         "create pods/eviction (ClusterRole c rule 2, cluster-wide)"])

    def test_wildcards_are_always_too_broad(self):
        report = self.compare([{"apiGroups": [""], "resources": ["*"], "verbs": ["list"]}],
                              {"run": {"list /api/v1/pods": 1}})
        self.assertEqual(report.refused, [])
        self.assertEqual(len(report.unused), 1)
        self.assertIn("wildcard", report.unused[0])

    def test_a_shared_role_is_used_by_any_install(self):
        a = subject_rules(sa_objects(cluster_rules=self.RULES), "app", "sa")
        report = compare({"cron": (a, {"r1": {"list /api/v1/pods": 1, "list /api/v1/nodes": 1}}),
                          "deploy": (a, {"r2": {"create /api/v1/namespaces/a/pods/p/eviction": 1}})})
        self.assertEqual(report, ([], []))


if __name__ == "__main__":
    unittest.main()
