"""Debian's real kubectl (1.20, package kubernetes-client) against the simulator.

kubectl exercises what hand-written requests would not: discovery and its
cache, server-side Table printing, the OpenAPI fetch before `apply`,
three-way strategic merge patches, `--watch` streams, and the Eviction API
through `kubectl drain`.  kubectl is taken from <repo>/.deps/bin/kubectl
(`scripts/deps.sh test` puts it there) or $KUBECTL.
"""

import json
import os
import subprocess
import sys
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from simtest import KubectlCase, kubectl_path  # noqa: E402
from test_rest import PODS, new_pod  # noqa: E402

DEPLOY = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: hello
  namespace: shop
  labels: {app: hello}
spec:
  replicas: 1
  selector:
    matchLabels: {app: hello}
  template:
    metadata:
      labels: {app: hello}
    spec:
      containers:
      - name: c
        image: nginx:%s
        env:
        - {name: A, value: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: hello-config
  namespace: shop
data:
  mode: "%s"
"""


INSTALL = """apiVersion: v1
kind: ServiceAccount
metadata: {name: app, namespace: shop}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: app}
rules:
- {apiGroups: [""], resources: [pods], verbs: [list]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: app}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: app}
subjects:
- {kind: ServiceAccount, name: app, namespace: shop}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: app, namespace: shop}
rules:
- {apiGroups: [coordination.k8s.io], resources: [leases], verbs: [get]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: app, namespace: shop}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: app
---
apiVersion: v1
kind: Service
metadata: {name: app, namespace: shop}
spec:
  selector: {app: app}
  ports:
  - {name: https, port: %d, targetPort: https}
"""

SERVICEMONITOR_CRD = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: servicemonitors.monitoring.coreos.com}
spec:
  group: monitoring.coreos.com
  names: {kind: ServiceMonitor, listKind: ServiceMonitorList, plural: servicemonitors, singular: servicemonitor}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
"""

SERVICEMONITOR = """apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: app, namespace: shop}
spec:
  selector: {matchLabels: {app: app}}
  endpoints:
  - {port: https, scheme: https}
"""


class Kubectl(KubectlCase):
    def test_version_reaches_the_server(self):
        out = self.k("version", "-o", "json").stdout
        self.assertEqual(json.loads(out)["serverVersion"]["gitVersion"], "v1.30.0-apisim")

    def test_get_json_and_tables(self):
        lst = json.loads(self.k("get", "nodes,pods", "-A", "-o", "json").stdout)
        kinds = [i["kind"] for i in lst["items"]]
        self.assertEqual((kinds.count("Node"), kinds.count("Pod")), (4, 13))
        out = self.k("get", "pods", "-A").stdout.splitlines()
        self.assertEqual(out[0].split(), ["NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE"])
        self.assertEqual(len(out), 14)
        self.assertTrue(any(line.startswith("shop ") and "Running" in line for line in out))
        out = self.k("get", "vmi", "-A").stdout.splitlines()
        self.assertEqual(out[0].split(), ["NAMESPACE", "NAME", "AGE", "PHASE", "IP", "NODENAME", "READY"])
        self.assertIn("worker-1", [line.split()[5] for line in out[1:] if line.split()[1] == "vm-a"])
        out = self.k("get", "pdb", "-n", "shop").stdout
        self.assertIn("ALLOWED DISRUPTIONS", out)
        out = self.k("get", "vmim", "-A").stdout + self.k("get", "vmim", "-A", check=False).stderr
        self.assertIn("No resources found", out)
        out = self.k("get", "crd").stdout
        self.assertIn("virtualmachineinstances.kubevirt.io", out)
        out = self.k("get", "nodes", "-o", "wide").stdout
        self.assertIn("INTERNAL-IP", out)

    def test_label_annotate_patch_delete(self):
        pod = self.sim.obj(PODS + "?labelSelector=app%3Dweb")["items"][0]["metadata"]["name"]
        self.k("label", "pod", pod, "-n", "shop", "tier=front")
        self.k("annotate", "vmi", "vm-a", "-n", "vms", "note=hello")
        self.k("patch", "node", "worker-3", "-p", '{"spec":{"unschedulable":true}}')
        self.k("patch", "vmi", "vm-b", "-n", "vms", "--type", "merge", "-p", '{"metadata":{"labels":{"x":"y"}}}')
        self.k("patch", "pod", pod, "-n", "shop", "--type", "json",
               "-p", '[{"op":"add","path":"/metadata/labels/j","value":"k"}]')
        p = self.sim.obj(PODS + "/" + pod)
        self.assertEqual((p["metadata"]["labels"]["tier"], p["metadata"]["labels"]["j"]), ("front", "k"))
        self.assertEqual(self.sim.obj("/apis/kubevirt.io/v1/namespaces/vms/virtualmachineinstances/vm-a")
                         ["metadata"]["annotations"]["note"], "hello")
        self.assertIn("SchedulingDisabled", self.k("get", "node", "worker-3").stdout)
        # kubectl's default strategic patch is refused for custom resources, as by a real apiserver
        r = self.k("patch", "vmi", "vm-b", "-n", "vms", "-p", '{"metadata":{"labels":{"x":"z"}}}', check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("UnsupportedMediaType", r.stderr)
        out = self.k("get", "pods", "-n", "shop", "-l", "tier=front", "-o", "name").stdout.split()
        self.assertEqual(out, ["pod/" + pod])
        self.k("delete", "pod", pod, "-n", "shop")
        self.assertEqual(self.sim.get(PODS + "/" + pod)[0], 404)
        r = self.k("get", "pod", pod, "-n", "shop", check=False)
        self.assertIn('pods "%s" not found' % pod, r.stderr)

    def test_apply_creates_then_updates(self):
        out = self.k("apply", "-f", "-", input=DEPLOY % ("1.25", "a")).stdout
        self.assertIn("deployment.apps/hello created", out)
        self.assertIn("configmap/hello-config created", out)
        out = self.k("apply", "-f", "-", input=DEPLOY % ("1.26", "b")).stdout
        self.assertIn("deployment.apps/hello configured", out)
        d = self.sim.obj("/apis/apps/v1/namespaces/shop/deployments/hello")
        self.assertEqual(d["spec"]["template"]["spec"]["containers"][0]["image"], "nginx:1.26")
        self.assertEqual(d["spec"]["template"]["spec"]["containers"][0]["env"], [{"name": "A", "value": "1"}])
        self.assertEqual(d["metadata"]["generation"], 2)
        self.assertIn("kubectl.kubernetes.io/last-applied-configuration", d["metadata"]["annotations"])
        self.assertEqual(self.sim.obj("/api/v1/namespaces/shop/configmaps/hello-config")["data"], {"mode": "b"})
        out = self.k("apply", "-f", "-", input=DEPLOY % ("1.26", "b")).stdout
        self.assertIn("deployment.apps/hello unchanged", out)

    def test_install_kinds_apply_and_print(self):
        """What an install applies: a ServiceAccount, RBAC objects, a Service, then a CRD's kind."""
        out = self.k("apply", "-f", "-", input=INSTALL % 8443).stdout
        for line in ("serviceaccount/app created", "clusterrole.rbac.authorization.k8s.io/app created",
                     "clusterrolebinding.rbac.authorization.k8s.io/app created",
                     "role.rbac.authorization.k8s.io/app created", "rolebinding.rbac.authorization.k8s.io/app created",
                     "service/app created"):
            self.assertIn(line, out)
        svc = self.sim.obj("/api/v1/namespaces/shop/services/app")
        self.assertEqual((svc["spec"]["type"], svc["spec"]["ports"][0]["protocol"],
                          svc["spec"]["ports"][0]["targetPort"]), ("ClusterIP", "TCP", "https"))
        self.assertTrue(svc["spec"]["clusterIP"].startswith("10.96."), svc["spec"])
        crb = self.sim.obj("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/app")
        self.assertEqual(crb["subjects"][0], {"kind": "ServiceAccount", "name": "app", "namespace": "shop"})
        # a second apply changing the Service port is a strategic merge on `ports` keyed by `port`
        out = self.k("apply", "-f", "-", input=INSTALL % 9443).stdout
        self.assertIn("service/app configured", out)
        svc2 = self.sim.obj("/api/v1/namespaces/shop/services/app")
        self.assertEqual([p["port"] for p in svc2["spec"]["ports"]], [9443])
        self.assertEqual(svc2["spec"]["clusterIP"], svc["spec"]["clusterIP"])
        self.assertIn("role.rbac.authorization.k8s.io/app unchanged", out)
        lines = self.k("get", "svc", "-n", "shop").stdout.splitlines()
        self.assertEqual(lines[0].split(), ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"])
        self.assertIn("9443/TCP", lines[1])
        self.assertIn("ClusterRole/app", self.k("get", "clusterrolebinding", "app").stdout)
        self.assertIn("app", self.k("get", "sa", "-n", "shop").stdout)
        # a binding's roleRef never changes; a missing one is refused
        r = self.k("apply", "-f", "-", input=INSTALL.replace("name: app\n---\napiVersion: v1\nkind: Service",
                                                                "name: other\n---\napiVersion: v1\nkind: Service")
                   % 9443, check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("cannot change roleRef", r.stderr)
        code, _, body = self.sim.request("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/shop/rolebindings",
                                         {"metadata": {"name": "bad"}, "subjects": []})
        self.assertEqual((code, body["reason"]), (422, "Invalid"))
        self.assertIn("roleRef", body["message"])
        # an operator's CRD (ServiceMonitor) installed first makes its kind appliable
        self.k("apply", "-f", "-", input=SERVICEMONITOR_CRD)
        out = self.k("apply", "-f", "-", input=SERVICEMONITOR).stdout
        self.assertIn("servicemonitor.monitoring.coreos.com/app created", out)
        sm = self.sim.obj("/apis/monitoring.coreos.com/v1/namespaces/shop/servicemonitors/app")
        self.assertEqual(sm["spec"]["endpoints"][0]["scheme"], "https")

    def test_watch_prints_events(self):
        proc = subprocess.Popen([kubectl_path(), "--kubeconfig", self.sim.kubeconfig, "--cache-dir",
                                 os.path.join(self.sim.tmp, "kcache"), "get", "pods", "-n", "shop", "--watch",
                                 "--output-watch-events", "-o", "json"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        chunks = []
        reader = threading.Thread(target=lambda: chunks.extend(iter(lambda: proc.stdout.read(1), "")), daemon=True)
        reader.start()

        def events():
            text, dec, out, i = "".join(chunks), json.JSONDecoder(), [], 0
            while True:
                while i < len(text) and text[i].isspace():
                    i += 1
                try:
                    obj, i = dec.raw_decode(text, i)
                except ValueError:
                    return out
                out.append(obj)
        try:
            self.sim.wait_for(lambda: len(events()) >= 5, timeout=15, what="initial pods")
            self.sim.request("POST", PODS, new_pod("watched"))
            self.sim.request("PATCH", PODS + "/watched", {"metadata": {"labels": {"a": "b"}}},
                             content_type="application/merge-patch+json")
            self.sim.request("DELETE", PODS + "/watched")
            self.sim.wait_for(lambda: len(events()) >= 8, timeout=15, what="watch events")
        finally:
            proc.terminate()
            proc.wait(timeout=10)
            proc.stdout.close()
            proc.stderr.close()
        evs = events()
        self.assertEqual([e["type"] for e in evs[:5]], ["ADDED"] * 5)
        self.assertEqual([(e["type"], e["object"]["metadata"]["name"]) for e in evs[5:8]],
                         [("ADDED", "watched"), ("MODIFIED", "watched"), ("DELETED", "watched")])
        self.assertEqual(evs[6]["object"]["metadata"]["labels"]["a"], "b")

    def test_drain_uses_the_eviction_api(self):
        out = self.k("drain", "cp-0", "--ignore-daemonsets", "--delete-emptydir-data", "--force",
                     "--timeout=30s").stdout
        self.assertIn("node/cp-0 cordoned", out)
        self.assertIn("evicted", out)
        self.assertEqual(self.sim.obj("/api/v1/namespaces/kube-system/pods")["items"], [])
        counts = self.sim.control("GET", "requests")["byVerbAndPath"]
        self.assertTrue(any(k.startswith("create /api/v1/namespaces/kube-system/pods/") and k.endswith("/eviction")
                            for k in counts), counts)

    def test_top_reads_metrics(self):
        out = self.k("top", "nodes").stdout
        self.assertIn("worker-1", out)
        self.assertIn("CPU(cores)", out)
        out = self.k("top", "pods", "-n", "vms").stdout
        self.assertIn("virt-launcher-vm-a", out)


if __name__ == "__main__":
    unittest.main()
