"""What only a real kube-apiserver can check: its RBAC authorizer, its paging, etcd compaction.

Each test class starts its own etcd + kube-apiserver + KubeVirt stand-in (realtest.RealServer)
and runs the real binary ($DESCHEDULER, default build/descheduler) against it:

- RefusedByRealRbac: the shipped ClusterRole with its pods/eviction rule removed; the real
  authorizer refuses the evictions (403, seen in the audit log), the binary says so and goes
  on, and tests/deploy/rbaccheck.py, given the same requests and the narrowed role, refuses
  exactly the same ones: the simulator-side checker agrees with the real thing;
- PagedLists: 1,100 pods are read in pages of 500 with the server's continue tokens, in
  protobuf, every pod reaches the cycle;
- ProtobufPages: pods with every field the decoders read (src/decode/pbschema.c), one of them
  being deleted, listed in pages of 2 both in JSON and in protobuf: tests/tools/pbcompare finds
  the same trees and the same decoded pods in each pair of pages, and a cycle lists them in
  protobuf;
- LoopAcrossCompactions: loop mode (1 s interval, listing every cycle: --watch-cache=false)
  while the cluster changes between cycles and etcd is compacted each time (older
  resourceVersions and continue tokens get 410); every cycle's decisions follow the cluster as
  it is then;
- WatchCacheAcrossCompactions: the same on the watch cache, against a kube-apiserver whose own
  watch cache is off (--watch-cache=false: watches are served by etcd, as the apiserver's cache
  would after falling behind), so that a watch opened again after a compaction gets 410 from
  the real server; the descheduler lists those kinds again and its decisions still follow the
  cluster. Its evictions carry the pod's UID as a precondition, and the server refuses an
  eviction whose UID precondition is another pod's (409).
"""

import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "deploy"))

import deploylib as dl  # noqa: E402
import rbaccheck  # noqa: E402
import realtest  # noqa: E402

TAINT_POLICY = """apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
profiles:
- name: taints
  pluginConfig:
  - name: RemovePodsViolatingNodeTaints
  plugins:
    deschedule:
      enabled: [RemovePodsViolatingNodeTaints]
"""


def node(name):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "2000"},
                       "capacity": {"cpu": "64", "memory": "256Gi", "pods": "2000"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def pod(name, node_name, ns="apps", tolerate=False):
    spec = {"nodeName": node_name, "containers": [{"name": "c", "image": "registry.example/app:1",
                                                   "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]}
    if tolerate:
        spec["tolerations"] = [{"key": "maintenance", "operator": "Exists", "effect": "NoSchedule"}]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "labels": {"app": name.rsplit("-", 1)[0]},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs",
                                              "uid": "4b0c7a52-5f5e-4a51-9d53-000000000001", "controller": True}]},
            "spec": spec}


def snapshot(items, tmp):
    path = os.path.join(tmp, "cluster.json")
    with open(path, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f)
    return path


def write_policy(tmp):
    path = os.path.join(tmp, "policy.yaml")
    with open(path, "w") as f:
        f.write(TAINT_POLICY)
    return path


def protobuf_items():
    """Pods and nodes with every field the Pod and Node schemas of src/decode/pbschema.c name, valid for a
    real server."""
    ns = lambda n: {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}}
    web = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "web-1", "namespace": "shop", "generateName": "web-",
                        "labels": {"app": "web", "tier": "front", "empty": "", "pod-template-hash": "abc"},
                        "annotations": {"descheduler.alpha.kubernetes.io/evict": "true", "kubernetes.io/config.source": "api",
                                        "note": "a \"quoted\" \\ text\nnext line, välue ✓"},
                        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-abc",
                                             "uid": "22222222-2222-2222-2222-222222222222", "controller": True, "blockOwnerDeletion": True},
                                            {"apiVersion": "v1", "kind": "ConfigMap", "name": "x",
                                             "uid": "33333333-3333-3333-3333-333333333333", "controller": False}],
                        "finalizers": ["example.com/keep"]},
           "spec": {"nodeName": "node-a", "nodeSelector": {"disk": "ssd"},
                    "volumes": [{"name": "scratch", "emptyDir": {}}, {"name": "host", "hostPath": {"path": "/var/log", "type": "Directory"}},
                                {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-1", "readOnly": True}},
                                {"name": "mem", "emptyDir": {"medium": "Memory", "sizeLimit": "64Mi"}}],
                    "initContainers": [{"name": "setup", "image": "busybox:1", "resources": {"requests": {"cpu": "50m", "memory": "32Mi"}}},
                                       {"name": "proxy", "image": "envoy:1", "restartPolicy": "Always",
                                        "resources": {"requests": {"cpu": "100m"}, "limits": {"cpu": "200m"}}}],
                    "containers": [{"name": "web", "image": "nginx:1.27", "command": ["nginx"], "env": [{"name": "A", "value": "b"}],
                                    "ports": [{"containerPort": 80}],
                                    "resources": {"requests": {"cpu": "1500m", "memory": "1Gi", "ephemeral-storage": "2G", "example.com/dongle": "1"},
                                                  "limits": {"cpu": "2", "memory": "1Gi", "example.com/dongle": "1"}}},
                                   {"name": "sidecar", "image": "side:1"}],
                    "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "web", "effect": "NoSchedule"}, {"operator": "Exists"},
                                    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}],
                    "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                                     {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}, {"key": "gpu", "operator": "DoesNotExist"}]},
                                     {"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["node-z"]}]}]},
                                  "preferredDuringSchedulingIgnoredDuringExecution": [
                                      {"weight": 20, "preference": {"matchExpressions": [{"key": "rack", "operator": "Gt", "values": ["3"]}]}}]},
                                 "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "zone"}]},
                                 "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                                     {"labelSelector": {"matchLabels": {"app": "web"}, "matchExpressions": [
                                         {"key": "tier", "operator": "NotIn", "values": ["back"]}, {"key": "canary", "operator": "DoesNotExist"}]},
                                      "namespaces": ["shop", "other"], "topologyKey": "kubernetes.io/hostname"}],
                                     "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 5, "podAffinityTerm": {"topologyKey": "zone"}}]}},
                    "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                                                   "labelSelector": {"matchLabels": {"app": "web"}}, "minDomains": 2,
                                                   "nodeAffinityPolicy": "Ignore", "nodeTaintsPolicy": "Honor", "matchLabelKeys": ["pod-template-hash"]},
                                                  {"maxSkew": 3, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway"}],
                    "resourceClaims": [{"name": "gpu", "resourceClaimName": "gpu-claim"}]},
           "status": {"phase": "Running", "podIP": "10.0.0.5", "hostIP": "192.168.1.10", "startTime": "2026-01-02T03:04:10Z",
                      "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-02T03:05:00Z"},
                                     {"type": "DisruptionTarget", "status": "False", "reason": "EvictionByEvictionAPI", "message": "x",
                                      "lastTransitionTime": "1999-12-31T23:59:59Z"}],
                      "initContainerStatuses": [{"name": "setup", "ready": True, "restartCount": 0, "image": "busybox:1", "imageID": "",
                                                 "state": {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": "2026-01-02T03:04:06Z"}}},
                                                {"name": "proxy", "ready": True, "restartCount": 2, "image": "envoy:1", "imageID": "",
                                                 "state": {"running": {"startedAt": "2026-01-02T03:04:07Z"}}}],
                      "containerStatuses": [{"name": "web", "ready": False, "restartCount": 17, "image": "nginx:1.27", "imageID": "",
                                             "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off"}},
                                             "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}},
                                            {"name": "sidecar", "ready": False, "restartCount": 1, "image": "side:1", "imageID": "",
                                             "state": {"terminated": {"exitCode": -1, "signal": 9}}}]}}
    bare = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bare", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "pause"}]}}
    launcher = {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "virt-launcher-vm-1-abcde", "namespace": "kube-system",
                             "labels": {"kubevirt.io": "virt-launcher"},
                             "annotations": {"kubevirt.io/domain": "vm-1", "kubernetes.io/config.mirror": "abc",
                                             "descheduler.alpha.kubernetes.io/prefer-no-eviction": ""},
                             "ownerReferences": [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance", "name": "vm-1",
                                                  "uid": "66666666-6666-6666-6666-666666666666", "controller": True},
                                                 {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "ds",
                                                  "uid": "77777777-7777-7777-7777-777777777777"}]},
                "spec": {"nodeName": "node-b", "priorityClassName": "system-node-critical",
                         "containers": [{"name": "compute", "image": "virt-launcher:1",
                                         "resources": {"requests": {"cpu": "0.5", "memory": "1.5Gi", "devices.kubevirt.io/kvm": "1"},
                                                       "limits": {"cpu": "0.5", "memory": "1.5Gi", "devices.kubevirt.io/kvm": "1"}}}],
                         "affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                             {"weight": 1, "preference": {"matchExpressions": [{"key": "a", "operator": "Exists"}]}}]}},
                         "tolerations": [{"key": "k", "value": "", "effect": ""}]},
                "status": {"phase": "Failed", "reason": "Evicted", "message": "The node was low on resource: memory.",
                           "startTime": "2025-06-30T12:00:01Z"}}
    cordoned = {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": "node-c", "labels": {"kubernetes.io/hostname": "node-c", "empty": ""},
                             "annotations": {"descheduler.alpha.kubernetes.io/overutilized-since": "2026-01-02T03:04:05Z",
                                             "note": "välue ✓"}},
                "spec": {"unschedulable": True, "podCIDR": "10.1.0.0/24", "providerID": "kwok://node-c",
                         "taints": [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule",
                                     "timeAdded": "2026-01-02T03:04:05Z"},
                                    {"key": "dedicated", "value": "vms", "effect": "NoExecute"},
                                    {"key": "soft", "value": "", "effect": "PreferNoSchedule"}]},
                "status": {"capacity": {"cpu": "64", "memory": "256Gi", "pods": "110", "hugepages-2Mi": "0",
                                        "devices.kubevirt.io/kvm": "1k", "ephemeral-storage": "1T"},
                           "allocatable": {"cpu": "63500m", "memory": "250Gi", "pods": "110", "hugepages-2Mi": "0",
                                           "devices.kubevirt.io/kvm": "1k", "ephemeral-storage": "900G"},
                           "conditions": [{"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory",
                                           "lastHeartbeatTime": "2026-01-02T03:04:05Z", "lastTransitionTime": "1999-12-31T23:59:59Z"},
                                          {"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown",
                                           "message": "Kubelet stopped posting node status."}],
                           "addresses": [{"type": "InternalIP", "address": "192.168.1.13"}],
                           "nodeInfo": {"kubeletVersion": "v1.37.0", "architecture": "amd64", "operatingSystem": "linux",
                                        "machineID": "", "systemUUID": "", "bootID": "", "kernelVersion": "",
                                        "osImage": "", "containerRuntimeVersion": "", "kubeProxyVersion": ""},
                           "images": [{"names": ["registry.example/app:1"], "sizeBytes": 12345678}]}}
    bare_node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-d"}}
    return [ns("shop"), web, bare, launcher, cordoned, bare_node, node("node-e")]


class OwnCluster(unittest.TestCase):
    """A real API server for the class, loaded with cls.items(), started with APISERVER_ARGS."""

    APISERVER_ARGS = ()

    @classmethod
    def items(cls):
        raise NotImplementedError

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="realapi-%s-" % cls.__name__)
        cls.sim = realtest.RealServer(snapshot(cls.items(), cls.tmp), apiserver_args=cls.APISERVER_ARGS)

    @classmethod
    def tearDownClass(cls):
        cls.sim.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)


def run(argv, timeout=120):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    return p.returncode, p.stderr


class RefusedByRealRbac(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sim = realtest.RealServer(dl.EXAMPLE_CLUSTER, ["--migration-seconds", "600"])
        cls.tmp = tempfile.mkdtemp(prefix="realapi-rbac-")

    @classmethod
    def tearDownClass(cls):
        cls.sim.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_a_role_without_evictions_is_refused_and_rbaccheck_agrees(self):
        objects = dl.render(os.path.join(dl.DEPLOY, "cronjob"))
        narrowed = copy.deepcopy(objects)
        role = dl.find(narrowed, "ClusterRole", "descheduler")
        role["rules"] = [r for r in role["rules"] if "pods/eviction" not in r["resources"]]
        self.assertLess(len(role["rules"]), len(dl.find(objects, "ClusterRole", "descheduler")["rules"]))
        self.sim.kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": narrowed}))
        argv, sa = dl.workload_command(narrowed, dl.find(narrowed, "CronJob", "descheduler"), self.tmp)
        argv += ["--kubeconfig=" + self.sim.service_account_kubeconfig(*sa), "--secure-port=0"]
        self.sim.control("DELETE", "requests")
        code, err = run(argv)
        self.assertEqual(code, 0, err[-3000:])  # a refused eviction is a failed eviction, not a failed run
        refused = self.sim.forbidden()
        self.assertTrue(refused, "the real authorizer refused nothing")
        self.assertTrue(all(k.startswith("create /api/v1/namespaces/") and k.endswith("/eviction") for k in refused),
                        refused)
        self.assertIn('cannot create resource \\"pods/eviction\\" in API group \\"\\"', err)
        self.assertIn('"Number of evictions/requests" totalEvicted=0 evictionRequests=0', err)
        # the same requests through the simulator-side checker, with the same narrowed role
        counts = self.sim.control("GET", "requests")["byVerbAndPath"]
        rules = rbaccheck.subject_rules(narrowed, *sa)
        report = rbaccheck.compare({"cronjob": (rules, {"narrowed": counts})})
        self.assertEqual(sorted(k for _, k in report.refused), sorted(set(refused)))


class PagedLists(OwnCluster):
    PODS = 1100

    @classmethod
    def items(cls):
        return [node("n1"), node("n2")] + [pod("app%d-%04d" % (i % 7, i), "n1" if i % 3 else "n2")
                                           for i in range(cls.PODS)]

    def test_every_pod_arrives_through_the_pages(self):
        policy = write_policy(self.tmp)
        record = os.path.join(self.tmp, "decisions.jsonl")
        self.sim.control("DELETE", "requests")
        code, err = run([dl.binary(), "--kubeconfig", self.sim.kubeconfig, "--secure-port", "0",
                         "--policy-config-file", policy, "--decisions-file", record, "--v", "4",
                         "--list-page-size", "500"])
        self.assertEqual(code, 0, err[-3000:])
        pages = [e["requestURI"] for e in self.sim.events()
                 if e.get("verb") == "list" and e["requestURI"].split("?")[0] == "/api/v1/pods"]
        self.assertEqual(len(pages), 3, pages)
        self.assertIn('"Listed objects" kind="Pod" count=1100 pages=3 encoding="protobuf"', err)
        self.assertTrue(all("limit=500" in p for p in pages), pages)
        self.assertEqual(sum("continue=" in p for p in pages), 2, pages)
        # the cycle's decision record has an outcome for every pod: all 1,100 arrived
        with open(record) as f:
            (cycle,) = [json.loads(line) for line in f]
        self.assertEqual(sum(cycle["decisions"]["outcomes"].values()), self.PODS, cycle["decisions"]["outcomes"])


class ProtobufPages(OwnCluster):
    @classmethod
    def items(cls):
        return protobuf_items()

    def compare_pages(self, kind, path):
        """Lists path in pages of 2 as JSON and as protobuf; tests/tools/pbcompare compares each pair.
        Returns the number of pages."""
        pbcompare = os.path.join(os.path.dirname(dl.binary()), "tests", "pbcompare")
        self.assertTrue(os.access(pbcompare, os.X_OK), "tests/tools/pbcompare is not built at " + pbcompare)
        pages, tokens = 0, {"json": None, "pb": None}
        while True:
            files = {}
            for enc, accept in (("json", "application/json"), ("pb", "application/vnd.kubernetes.protobuf")):
                query = {"limit": "2"}
                if tokens[enc]:
                    query["continue"] = tokens[enc]
                body = self.sim.admin.request("GET", path, query=query, raw=True, accept=accept)
                if enc == "pb":
                    self.assertTrue(body.startswith(b"k8s\x00"), body[:40])
                files[enc] = os.path.join(self.tmp, "%s-page%d.%s" % (kind, pages, enc))
                with open(files[enc], "wb") as f:
                    f.write(body)
                if enc == "json":
                    tokens["json"] = json.loads(body)["metadata"].get("continue")
            pages += 1
            p = subprocess.run([pbcompare, "--kind", kind, files["json"], files["pb"]], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
            self.assertEqual(p.returncode, 0, p.stdout)
            self.assertIn(" %s objects: the protobuf and JSON pages give the same trees and the same objects" % kind,
                          p.stdout)
            # pbcompare compared the continue tokens too: the JSON one goes on for both
            tokens["pb"] = tokens["json"]
            if not tokens["json"]:
                break
        return pages

    def test_protobuf_pages_read_as_the_json_ones(self):
        # a pod being deleted: its finalizer keeps it, with a deletionTimestamp
        self.sim.admin.request("DELETE", "/api/v1/namespaces/shop/pods/web-1")
        self.assertEqual(self.compare_pages("Pod", "/api/v1/pods"), 2)
        # three nodes in pages of two
        self.assertEqual(self.compare_pages("Node", "/api/v1/nodes"), 2)
        policy = write_policy(self.tmp)
        code, err = run([dl.binary(), "--kubeconfig", self.sim.kubeconfig, "--secure-port", "0", "--dry-run",
                         "--policy-config-file", policy, "--v", "4"])
        self.assertEqual(code, 0, err[-3000:])
        self.assertIn('"Listed objects" kind="Pod" count=3 pages=1 encoding="protobuf"', err)
        self.assertIn('"Listed objects" kind="Node" count=3 pages=1 encoding="protobuf"', err)

    def test_a_refused_pod_list_says_why(self):
        # the server answers a request that accepted protobuf with a protobuf Status: its message
        # reaches the log line as a JSON Status's does
        objects = [{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "nodes-only", "namespace": "default"}},
                   {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "nodes-only"},
                    "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]}]},
                   {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                    "metadata": {"name": "nodes-only"},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "nodes-only"},
                    "subjects": [{"kind": "ServiceAccount", "name": "nodes-only", "namespace": "default"}]}]
        self.sim.kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
        kubeconfig = self.sim.service_account_kubeconfig("default", "nodes-only")
        code, err = run([dl.binary(), "--kubeconfig", kubeconfig, "--secure-port", "0", "--dry-run",
                         "--policy-config-file", write_policy(self.tmp), "--v", "4"])
        self.assertNotEqual(code, 0, err[-3000:])
        self.assertIn('"Listed objects" kind="Node"', err)
        self.assertIn('HTTP 403: pods is forbidden: User \\"system:serviceaccount:default:nodes-only\\" cannot list '
                      'resource \\"pods\\" in API group \\"\\" at the cluster scope', err)


class LoopAcrossCompactions(OwnCluster):
    FLAGS = ["--watch-cache=false"]

    def extra_checks(self, log):
        self.assertNotIn("Listed for the watch cache", log)

    @classmethod
    def items(cls):
        return [node("n1"), node("n2"), pod("keep-0", "n1", tolerate=True), pod("web-0", "n1"), pod("web-1", "n2")]

    def test_decisions_follow_the_cluster_across_compactions(self):
        policy = write_policy(self.tmp)
        sim = self.sim
        p = dl.Process([dl.binary(), "--kubeconfig", sim.kubeconfig, "--secure-port", "0",
                        "--policy-config-file", policy, "--descheduling-interval", "1s", "--v", "3"] + self.FLAGS,
                       self.tmp, "loop")
        try:
            cycles = lambda: p.log().count('"Number of evictions/requests"')  # noqa: E731
            p.wait_log('"Number of evictions/requests" totalEvicted=0', timeout=30)
            # 1. taint n1: the next cycles evict web-0 (it does not tolerate), never keep-0
            sim.request("PATCH", "/api/v1/nodes/n1",
                        {"spec": {"taints": [{"key": "maintenance", "value": "x", "effect": "NoSchedule"}]}},
                        content_type="application/merge-patch+json")
            first = sim.compact()
            p.wait_log('"Evicted pod" pod="apps/web-0"', timeout=30)
            sim.wait_for(lambda: sim.get("/api/v1/namespaces/apps/pods/web-0")[0] == 404, timeout=15,
                         what="web-0 gone")
            # 2. a new pod on the tainted node, then compaction: it is evicted too
            sim.request("POST", "/api/v1/namespaces/apps/pods", pod("web-2", "n1"))
            second = sim.compact()
            self.assertGreater(second, first)
            p.wait_log('"Evicted pod" pod="apps/web-2"', timeout=30)
            # 3. the taint goes, a new pod arrives, compaction: nothing more is evicted
            sim.request("PATCH", "/api/v1/nodes/n1", {"spec": {"taints": None}},
                        content_type="application/merge-patch+json")
            sim.wait_for(lambda: sim.get("/api/v1/namespaces/apps/pods/web-2")[0] == 404, timeout=15,
                         what="web-2 gone")
            sim.request("POST", "/api/v1/namespaces/apps/pods", pod("web-3", "n1"))
            sim.compact()
            start = cycles()
            sim.wait_for(lambda: cycles() >= start + 3, timeout=30, what="three more cycles")
            code = p.stop()
        finally:
            p.kill()
        log = p.log()
        self.assertEqual(code, 0, log[-3000:])
        self.assertNotIn('pod="apps/keep-0"', "\n".join(l for l in log.splitlines() if '"Evicted pod"' in l))
        self.assertNotIn('"Evicted pod" pod="apps/web-1"', log)
        self.assertNotIn('"Evicted pod" pod="apps/web-3"', log)
        self.assertEqual(log.count('"Evicted pod" pod="apps/web-0"'), 1)
        self.assertEqual(log.count('"Evicted pod" pod="apps/web-2"'), 1)
        self.assertEqual(sim.get("/api/v1/namespaces/apps/pods/web-3")[0], 200)
        self.assertEqual(sim.get("/api/v1/namespaces/apps/pods/keep-0")[0], 200)
        # compaction really happened: etcd no longer has the revisions from before
        code, body = sim.cluster.etcd_range_at(first - 1)
        self.assertNotEqual(code, 200, body)
        self.assertIn("required revision has been compacted", json.dumps(body))
        self.extra_checks(log)


class WatchCacheAcrossCompactions(LoopAcrossCompactions):
    APISERVER_ARGS = ["--watch-cache=false"]
    # watches served by etcd send no bookmarks: a quiet one is opened again after 2 s, from its
    # last resourceVersion, which a compaction in between has removed
    FLAGS = ["--watch-stall-timeout", "2s"]

    def extra_checks(self, log):
        self.assertIn('"Listed for the watch cache" kind="Pod" reason="start"', log)
        expired = [l for l in log.splitlines() if '"Listed for the watch cache"' in l and 'reason="expired"' in l]
        self.assertTrue(expired, "no kind was listed again after a compaction:\n" + log[-3000:])
        self.assertIn('"The watch cannot go on; listing again"', log)
        self.assertNotIn("the watch cache is not synced", log)
        # its evictions carried the pod's UID as a precondition (src/kube/watch.c), which this
        # server accepted: web-0 and web-2 were evicted

    def test_the_server_refuses_an_eviction_for_another_uid(self):
        """What the check before each eviction relies on: the real eviction subresource refuses
        deleteOptions.preconditions.uid that is not the pod's (409), and takes the right one."""
        sim = self.sim
        code, _, created = sim.request("POST", "/api/v1/namespaces/apps/pods", pod("uid-0", "n2"))
        self.assertEqual(code, 201, created)
        path = "/api/v1/namespaces/apps/pods/uid-0/eviction"

        def evict(uid):
            return sim.request("POST", path, {"apiVersion": "policy/v1", "kind": "Eviction",
                                              "metadata": {"name": "uid-0", "namespace": "apps"},
                                              "deleteOptions": {"preconditions": {"uid": uid}}})

        code, _, body = evict("00000000-0000-4000-8000-000000000000")
        self.assertEqual(code, 409, body)
        self.assertIn("the UID in the precondition (00000000-0000-4000-8000-000000000000) does not match the UID "
                      "in record (%s)" % created["metadata"]["uid"], json.dumps(body))
        self.assertEqual(sim.get("/api/v1/namespaces/apps/pods/uid-0")[0], 200)
        code, _, body = evict(created["metadata"]["uid"])
        self.assertEqual(code, 201, body)
        sim.wait_for(lambda: sim.get("/api/v1/namespaces/apps/pods/uid-0")[0] == 404, timeout=15, what="uid-0 gone")


if __name__ == "__main__":
    unittest.main()
