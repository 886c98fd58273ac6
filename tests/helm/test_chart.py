"""The Helm chart (deploy/helm/descheduler) against the kustomize bases it stands beside.

With Helm built from the Go module proxy (tests/helm/build.sh, once per machine):
- `helm lint` passes for each mode;
- `helm template` of the CronJob mode renders the runbook's CronJob (deploy/cronjob: the same
  spec, args with EvictionsInBackground and --v=3, the policy ConfigMap mounted), and the
  Deployment mode with its ServiceMonitor renders deploy/deployment's objects; the ClusterRole
  holds exactly the rules of deploy/base/clusterrole.yaml (which tests/deploy/test_rbac.py
  holds to the requests the binary makes);
- values.schema.json refuses bad values with a message naming the value;
- `helm install` on a real kube-apiserver (tests/realapi: etcd + kube-apiserver) creates the
  objects, and the command the installed CronJob's pod would run, with the policy as the
  installed ConfigMap holds it, runs one cycle against that server.
The objects are compared with what makes a release a release left out: the labels Helm adds
(app.kubernetes.io/instance and the chart's bookkeeping labels) and the comments.
"""

import copy
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "deploy"))

import deploylib as dl  # noqa: E402

CHART = os.path.join(REPO, "deploy", "helm", "descheduler")
HELM_ONLY_LABELS = ("app.kubernetes.io/instance", "app.kubernetes.io/version", "app.kubernetes.io/managed-by",
                    "helm.sh/chart")


def helm_binary():
    p = subprocess.run([os.path.join(HERE, "build.sh"), "--print"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode == 3:
        raise unittest.SkipTest("Helm cannot be built on this machine: " + p.stderr.strip().splitlines()[-1])
    if p.returncode != 0:
        raise RuntimeError("tests/helm/build.sh failed:\n" + p.stderr[-3000:])
    return p.stdout.strip().splitlines()[-1]


def strip_helm(obj):
    """The object without what only a Helm release adds (labels, in every labels and selector map)."""
    obj = copy.deepcopy(obj)

    def walk(x):
        if isinstance(x, dict):
            for k, v in list(x.items()):
                if k in ("labels", "matchLabels", "selector") and isinstance(v, dict):
                    for lbl in HELM_ONLY_LABELS:
                        v.pop(lbl, None)
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(obj)
    return obj


class Chart(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.helm = helm_binary()
        cls.tmp = tempfile.mkdtemp(prefix="helm-test-")
        cls.env = dict(os.environ, HELM_CACHE_HOME=os.path.join(cls.tmp, "cache"),
                       HELM_CONFIG_HOME=os.path.join(cls.tmp, "config"), HELM_DATA_HOME=os.path.join(cls.tmp, "data"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def run_helm(self, *args, check=True):
        p = subprocess.run([self.helm] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, env=self.env, timeout=300)
        if check and p.returncode != 0:
            self.fail("helm %s failed (%d):\n%s" % (" ".join(args), p.returncode, p.stderr))
        return p

    def template(self, *sets):
        args = ["template", "descheduler", CHART, "--namespace", "descheduler"]
        for s in sets:
            args += ["--set", s]
        return [o for o in dl.yaml.safe_load_all(self.run_helm(*args).stdout) if o]

    def test_lint(self):
        for sets in ([], ["kind=Deployment"], ["kind=Deployment", "serviceMonitor.enabled=true"],
                     ["softTainter.enabled=true"], self.KUBEDESCHEDULER + ["softTainter.enabled=true"]):
            args = ["lint", CHART, "--strict"]
            for s in sets:
                args += ["--set", s]
            self.run_helm(*args)

    def test_cronjob_mode_renders_the_runbook_cronjob(self):
        chart = self.template()
        kust = dl.render(os.path.join(dl.DEPLOY, "cronjob"))
        want, got = dl.find(kust, "CronJob", "descheduler"), dl.find(chart, "CronJob", "descheduler")
        self.assertEqual(strip_helm(got)["spec"], strip_helm(want)["spec"])
        args = dl.pod_template(got)["spec"]["containers"][0]["args"]
        self.assertIn("--feature-gates=EvictionsInBackground=true", args)
        self.assertIn("--v=3", args)
        self.assertEqual(dl.find(chart, "ConfigMap", "descheduler", "descheduler")["data"],
                         dl.find(kust, "ConfigMap", "descheduler", "descheduler")["data"])
        self.assertEqual(sorted(o["kind"] for o in chart),
                         sorted(o["kind"] for o in kust if o["kind"] != "Namespace"))

    def test_deployment_mode_renders_the_deployment_base(self):
        chart = self.template("kind=Deployment", "serviceMonitor.enabled=true")
        kust = dl.render(os.path.join(dl.DEPLOY, "deployment"))
        for kind, name in (("Deployment", "descheduler"), ("Service", "descheduler"),
                           ("ServiceMonitor", "descheduler")):
            self.assertEqual(strip_helm(dl.find(chart, kind, name))["spec"],
                             strip_helm(dl.find(kust, kind, name))["spec"], kind)
        self.assertEqual(dl.find(chart, "Role", "descheduler-leader-election")["rules"],
                         dl.find(kust, "Role", "descheduler-leader-election")["rules"])
        self.assertEqual(sorted(o["kind"] for o in chart),
                         sorted(o["kind"] for o in kust if o["kind"] != "Namespace"))

    def test_rbac_is_the_kustomize_bases(self):
        kust = dl.render(os.path.join(dl.DEPLOY, "base"))
        for sets in ([], ["kind=Deployment"]):
            chart = self.template(*sets)
            self.assertEqual(dl.find(chart, "ClusterRole", "descheduler")["rules"],
                             dl.find(kust, "ClusterRole", "descheduler")["rules"])
            self.assertEqual(dl.find(chart, "ClusterRoleBinding", "descheduler")["subjects"],
                             dl.find(kust, "ClusterRoleBinding", "descheduler")["subjects"])

    KUBEDESCHEDULER = ["kind=Deployment", "kubedeschedulerRef=openshift-kube-descheduler-operator/cluster",
                       "replicas=1", "leaderElection.enabled=false"]

    def test_kubedescheduler_mode_renders_the_kubedescheduler_base(self):
        chart = self.template(*self.KUBEDESCHEDULER)
        kust = dl.render(os.path.join(dl.DEPLOY, "kubedescheduler"))
        for kind, name in (("Deployment", "descheduler"), ("Service", "descheduler")):
            self.assertEqual(strip_helm(dl.find(chart, kind, name))["spec"],
                             strip_helm(dl.find(kust, kind, name))["spec"], kind)
        self.assertEqual(dl.find(chart, "ClusterRole", "descheduler")["rules"],
                         dl.find(kust, "ClusterRole", "descheduler-kubedescheduler")["rules"])
        for name, ns in (("descheduler-kubedescheduler", "openshift-kube-descheduler-operator"),
                         ("descheduler-prometheus-route", "openshift-monitoring")):
            self.assertEqual(dl.find(chart, "Role", name, ns)["rules"], dl.find(kust, "Role", name, ns)["rules"])
            self.assertEqual(dl.find(chart, "RoleBinding", name, ns)["subjects"],
                             dl.find(kust, "RoleBinding", name, ns)["subjects"])
        self.assertEqual(sorted(o["kind"] for o in chart),
                         sorted(o["kind"] for o in kust if o["kind"] != "Namespace"))
        # another CR: the Role follows the reference
        chart = self.template("kind=Deployment", "kubedeschedulerRef=ops/cluster")
        role = dl.find(chart, "Role", "descheduler-kubedescheduler", "ops")
        self.assertEqual(role["rules"][0]["resourceNames"], ["cluster"])

    def test_soft_tainter_is_the_kustomize_bases(self):
        def container(objects, name):
            c = copy.deepcopy(dl.pod_template(dl.find(objects, "Deployment", name))["spec"]["containers"][0])
            c.pop("image")
            return c
        for sets, base in (([], "soft-taint"), (self.KUBEDESCHEDULER, "soft-taint-kubedescheduler")):
            chart = self.template("softTainter.enabled=true", *sets)
            kust = dl.render(os.path.join(dl.DEPLOY, base))
            self.assertEqual(container(chart, "descheduler-softtainter"), container(kust, "descheduler-softtainter"), base)
            self.assertEqual(dl.find(chart, "ClusterRole", "descheduler-softtainter")["rules"],
                             dl.find(kust, "ClusterRole", "descheduler-softtainter")["rules"], base)
            roles = sorted(((o["metadata"]["namespace"], o["rules"]) for o in kust if o["kind"] == "Role"),
                           key=lambda r: r[0])
            mine = sorted(((o["metadata"]["namespace"], o["rules"]) for o in chart
                           if o["kind"] == "Role" and o["metadata"]["name"].startswith("descheduler-softtainter")),
                          key=lambda r: r[0])
            self.assertEqual(mine, roles, base)
            sa = dl.find(chart, "Deployment", "descheduler-softtainter")["spec"]["template"]["spec"]["serviceAccountName"]
            self.assertEqual(sa, "descheduler-softtainter")

    def test_policies_are_the_shipped_ones(self):
        for name in os.listdir(os.path.join(CHART, "policies")):
            with open(os.path.join(CHART, "policies", name)) as a, open(os.path.join(dl.DEPLOY, "policies", name)) as b:
                self.assertEqual(a.read(), b.read(), "deploy/helm/descheduler/policies/%s differs from deploy/policies" % name)
        chart = self.template("policyFile=vm-rebalance-targeted.yaml")
        self.assertIn("targetedMigration: true", dl.find(chart, "ConfigMap", "descheduler")["data"]["policy.yaml"])

    def test_bad_values_are_refused_by_name(self):
        base = ["template", "descheduler", CHART, "--namespace", "descheduler"]
        for sets, text in ((["kind=Job"], "kind"),
                           (["replicas=0"], "replicas"),
                           (["schedulle=x"], "schedulle"),
                           (["deschedulingInterval=5 minutes"], "deschedulingInterval"),
                           (["policyFile=mine.yaml"], "policyFile"),
                           (["kind=Deployment", "leaderElection.enabled=false"], "leaderElection.enabled"),
                           (["serviceMonitor.enabled=true"], "serviceMonitor.enabled"),
                           (["kind=Deployment", "kubedeschedulerRef=cluster"], "kubedeschedulerRef"),
                           (["kubedeschedulerRef=ops/cluster"], "kubedeschedulerRef: needs kind: Deployment"),
                           (["softTainter.mode=Auto"], "/softTainter/mode")):
            args = list(base)
            for s in sets:
                args += ["--set", s]
            p = self.run_helm(*args, check=False)
            self.assertNotEqual(p.returncode, 0, sets)
            self.assertIn(text, p.stderr, sets)

    def test_install_on_a_real_api_server(self):
        sys.path.insert(0, os.path.join(REPO, "tests", "realapi"))
        import realapi
        try:
            realapi.binary_path()
        except Exception as e:  # noqa: BLE001 - the tier's own reason
            self.skipTest("no kube-apiserver here: %s" % e)
        import realtest
        with realtest.RealServer(dl.EXAMPLE_CLUSTER) as srv:
            srv.kubectl("create", "namespace", "descheduler")
            self.run_helm("install", "descheduler", CHART, "--namespace", "descheduler",
                          "--kubeconfig", srv.kubeconfig, "--wait=false")
            status, _, cj = srv.request("GET", "/apis/batch/v1/namespaces/descheduler/cronjobs/descheduler")
            self.assertEqual(status, 200, cj)
            status, _, cm = srv.request("GET", "/api/v1/namespaces/descheduler/configmaps/descheduler")
            self.assertEqual(status, 200, cm)
            status, _, cr = srv.request("GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/descheduler")
            self.assertEqual(status, 200, cr)
            # the installed pod's command, with the installed policy, against this server as the
            # installed ServiceAccount: one cycle, exit 0, nothing refused
            argv, sa = dl.workload_command([cj, cm], cj, os.path.join(self.tmp, "policy"))
            kubeconfig = srv.service_account_kubeconfig(*sa)
            p = subprocess.run(argv + ["--kubeconfig=" + kubeconfig, "--secure-port=0"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr[-3000:])
            self.assertIn('"Number of evictions/requests"', p.stderr)
            self.assertEqual(srv.forbidden(), [])
            # the KubeDescheduler mode with its soft-tainter, as a second release: its Roles live
            # in the operator's and the monitoring namespaces
            for ns in ("openshift-kube-descheduler-operator", "openshift-monitoring"):
                srv.kubectl("create", "namespace", ns)
            sets = []
            for v in self.KUBEDESCHEDULER + ["softTainter.enabled=true"]:
                sets += ["--set", v]
            self.run_helm("install", "kd", CHART, "--namespace", "descheduler", "--kubeconfig", srv.kubeconfig,
                          "--wait=false", *sets)
            for path in ("/apis/apps/v1/namespaces/descheduler/deployments/kd-descheduler",
                         "/apis/apps/v1/namespaces/descheduler/deployments/kd-descheduler-softtainter",
                         "/apis/rbac.authorization.k8s.io/v1/namespaces/openshift-kube-descheduler-operator/roles/kd-descheduler-kubedescheduler",
                         "/apis/rbac.authorization.k8s.io/v1/namespaces/openshift-monitoring/roles/kd-descheduler-softtainter-prometheus-route"):
                status, _, obj = srv.request("GET", path)
                self.assertEqual(status, 200, (path, obj))
            status, _, _ = srv.request("GET", "/api/v1/namespaces/descheduler/configmaps/kd-descheduler")
            self.assertEqual(status, 404, "the KubeDescheduler mode has no policy ConfigMap")


if __name__ == "__main__":
    unittest.main()
