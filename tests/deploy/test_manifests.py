"""deploy/ as a user installs it: `kubectl apply -k` (Debian's kubectl 1.20 and its kustomize
v2.0.3) against the API simulator, then what the cluster holds, field by field; the policy
change and the rollback the install guide (docs/install.md) tells users to type.
"""

import os
import re
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import deploylib as dl  # noqa: E402

NS = "descheduler"
LABEL = {"app.kubernetes.io/name": "descheduler"}
CRONJOB_ARGS = ["--policy-config-file=/policy-dir/policy.yaml", "--feature-gates=EvictionsInBackground=true", "--v=3"]
POLICIES = os.path.join(dl.DEPLOY, "policies")


def binary_defaults():
    """{flag: default} from `descheduler --help`."""
    out = subprocess.run([dl.binary(), "--help"], stdout=subprocess.PIPE, text=True, check=True).stdout
    return dict(re.findall(r"--([a-z0-9-]+) \S+.*\(default ([^)]*)\)", out))


def binary_version():
    out = subprocess.run([dl.binary(), "version"], stdout=subprocess.PIPE, text=True, check=True).stdout
    return re.search(r"GitVersion:(\S+)", out).group(1)


def read(path):
    with open(path) as f:
        return f.read()


class Manifests(dl.KubectlCase):
    def get(self, path):
        return self.sim.obj(path)

    def assert_labelled(self, obj):
        self.assertEqual({k: v for k, v in obj["metadata"].get("labels", {}).items() if k in LABEL}, LABEL,
                         "%s %s" % (obj["kind"], obj["metadata"]["name"]))

    def assert_hardened(self, pod_spec):
        """The container runs as non-root on a read-only root with no capabilities."""
        self.assertEqual(pod_spec["serviceAccountName"], "descheduler")
        self.assertTrue(pod_spec["securityContext"]["runAsNonRoot"])
        (c,) = pod_spec["containers"]
        sc = c["securityContext"]
        self.assertEqual((sc["readOnlyRootFilesystem"], sc["allowPrivilegeEscalation"], sc["capabilities"]["drop"]),
                         (True, False, ["ALL"]))
        self.assertEqual(c["command"], ["/bin/descheduler"])
        self.assertEqual(c["image"], "localhost/descheduler:" + binary_version())
        self.assertTrue(c["resources"]["requests"]["cpu"] and c["resources"]["requests"]["memory"])
        self.assertTrue(c["resources"]["limits"]["memory"])
        self.assertEqual(c["volumeMounts"], [{"name": "policy-volume", "mountPath": "/policy-dir", "readOnly": True}])
        self.assertEqual(pod_spec["volumes"], [{"name": "policy-volume", "configMap": {"name": "descheduler"}}])
        # liveness: /healthz over HTTPS on the binary's default --secure-port (none is passed)
        defaults = binary_defaults()
        probe = c["livenessProbe"]["httpGet"]
        self.assertEqual((probe["path"], probe["scheme"], str(probe["port"])), ("/healthz", "HTTPS", defaults["secure-port"]))
        self.assertFalse(any(a.startswith("--secure-port") for a in c["args"]))
        self.assertEqual([p["containerPort"] for p in c["ports"]], [int(defaults["secure-port"])])
        return c

    def assert_policy_configmap(self, policy_file):
        cm = self.get("/api/v1/namespaces/descheduler/configmaps/descheduler")
        self.assert_labelled(cm)
        self.assertEqual(list(cm["data"]), ["policy.yaml"])
        self.assertEqual(cm["data"]["policy.yaml"], read(os.path.join(POLICIES, policy_file)))
        # the binary accepts what the cluster holds
        path = os.path.join(self.sim.tmp, "policy.yaml")
        with open(path, "w") as f:
            f.write(cm["data"]["policy.yaml"])
        p = subprocess.run([dl.binary(), "simulate", "--policy-config-file", path, "--snapshot", dl.APISIM_CLUSTER,
                            "--feature-gates", "EvictionsInBackground=true"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)

    def assert_rbac(self):
        self.assert_labelled(self.get("/api/v1/namespaces/descheduler/serviceaccounts/descheduler"))
        self.assert_labelled(self.get("/apis/rbac.authorization.k8s.io/v1/clusterroles/descheduler"))
        crb = self.get("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/descheduler")
        self.assertEqual(crb["roleRef"]["name"], "descheduler")
        self.assertEqual(crb["subjects"], [{"kind": "ServiceAccount", "name": "descheduler", "namespace": NS}])

    def test_cronjob(self):
        out = self.k("apply", "-k", os.path.join(dl.DEPLOY, "cronjob")).stdout
        self.assertEqual(sorted(out.split("\n")[:-1]), sorted([
            "namespace/descheduler created", "serviceaccount/descheduler created",
            "clusterrole.rbac.authorization.k8s.io/descheduler created",
            "clusterrolebinding.rbac.authorization.k8s.io/descheduler created",
            "configmap/descheduler created", "cronjob.batch/descheduler created"]))
        self.assert_labelled(self.get("/api/v1/namespaces/descheduler"))
        cj = self.get("/apis/batch/v1/namespaces/descheduler/cronjobs/descheduler")
        self.assert_labelled(cj)
        self.assertEqual((cj["spec"]["schedule"], cj["spec"]["concurrencyPolicy"]), ("*/2 * * * *", "Forbid"))
        pod = cj["spec"]["jobTemplate"]["spec"]["template"]["spec"]
        c = self.assert_hardened(pod)
        self.assertEqual(c["args"], CRONJOB_ARGS)
        self.assertEqual(pod["restartPolicy"], "Never")
        self.assert_policy_configmap("vm-rebalance.yaml")
        self.assert_rbac()
        # applying again changes nothing
        out = self.k("apply", "-k", os.path.join(dl.DEPLOY, "cronjob")).stdout
        self.assertEqual([line.split()[-1] for line in out.splitlines()], ["unchanged"] * 6, out)

        # changing the policy: docs/install.md's block, run as written (bash -e) with kubectl on
        # the PATH; the ConfigMap gets the new policy and keeps the label `check` finds it by
        block = re.search(r"<!-- policy-change: begin -->\n```sh\n(.*?)```\n<!-- policy-change: end -->",
                          read(os.path.join(dl.REPO, "docs", "install.md")), re.S).group(1)
        work = os.path.join(self.sim.tmp, "policy-change")
        os.makedirs(os.path.join(work, "bin"))
        os.symlink(os.path.join(POLICIES, "default-safe.yaml"), os.path.join(work, "my-policy.yaml"))
        os.symlink(dl.kubectl_path(), os.path.join(work, "bin", "kubectl"))
        env = dict(os.environ, KUBECONFIG=self.sim.kubeconfig, PATH=os.path.join(work, "bin") + ":" + os.environ["PATH"])
        p = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block], cwd=work, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("configmap/descheduler configured", p.stdout)
        cm = self.get("/api/v1/namespaces/descheduler/configmaps/descheduler")
        self.assertEqual(cm["data"]["policy.yaml"], read(os.path.join(POLICIES, "default-safe.yaml")))
        self.assert_labelled(cm)

        # rolling back: suspend the CronJob, and resume it
        self.k("patch", "cronjob", "descheduler", "-n", NS, "-p", '{"spec":{"suspend":true}}')
        self.assertTrue(self.get("/apis/batch/v1/namespaces/descheduler/cronjobs/descheduler")["spec"]["suspend"])
        self.assertIn("true", self.k("get", "cronjob", "descheduler", "-n", NS, "-o",
                                     "jsonpath={.spec.suspend}").stdout)
        self.k("patch", "cronjob", "descheduler", "-n", NS, "-p", '{"spec":{"suspend":false}}')
        self.assertFalse(self.get("/apis/batch/v1/namespaces/descheduler/cronjobs/descheduler")["spec"]["suspend"])

        # uninstalling: the namespace takes its objects; the cluster-wide ones go by label
        self.k("delete", "clusterrolebinding,clusterrole", "-l", "app.kubernetes.io/name=descheduler")
        self.k("delete", "namespace", NS)
        self.assertEqual(self.sim.get("/apis/batch/v1/namespaces/descheduler/cronjobs/descheduler")[0], 404)
        self.assertEqual(self.sim.get("/apis/rbac.authorization.k8s.io/v1/clusterroles/descheduler")[0], 404)

    def test_deployment(self):
        # without the Prometheus Operator, kubectl creates the rest and fails on the ServiceMonitor ...
        r = self.k("apply", "-k", os.path.join(dl.DEPLOY, "deployment"), check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn('no matches for kind "ServiceMonitor"', r.stderr)
        self.assertIn("deployment.apps/descheduler created", r.stdout)
        # ... which is exactly the variant without it, that applies cleanly
        out = self.k("apply", "-k", os.path.join(dl.DEPLOY, "deployment", "no-servicemonitor")).stdout
        self.assertEqual({line.split()[-1] for line in out.splitlines()}, {"unchanged"}, out)
        self.assertEqual(len(out.splitlines()), 9, out)
        # with the operator's CRD, the whole directory
        self.k("apply", "-f", dl.SERVICEMONITOR_CRD)
        out = self.k("apply", "-k", os.path.join(dl.DEPLOY, "deployment")).stdout
        self.assertIn("servicemonitor.monitoring.coreos.com/descheduler created", out)
        for line in ("role.rbac.authorization.k8s.io/descheduler-leader-election",
                     "rolebinding.rbac.authorization.k8s.io/descheduler-leader-election", "service/descheduler",
                     "deployment.apps/descheduler", "configmap/descheduler"):
            self.assertIn(line, out)

        d = self.get("/apis/apps/v1/namespaces/descheduler/deployments/descheduler")
        self.assert_labelled(d)
        self.assertEqual(d["spec"]["replicas"], 2)
        self.assertEqual(d["spec"]["selector"]["matchLabels"], LABEL)
        self.assertEqual(d["spec"]["template"]["metadata"]["labels"], LABEL)
        c = self.assert_hardened(d["spec"]["template"]["spec"])
        self.assertIn("--leader-elect", c["args"])
        self.assertIn("--leader-elect-resource-namespace=descheduler", c["args"])
        self.assertTrue(any(a.startswith("--descheduling-interval=") and a != "--descheduling-interval=0s"
                            for a in c["args"]), c["args"])
        self.assert_policy_configmap("vm-rebalance.yaml")
        self.assert_rbac()

        # the lease the replicas elect on is the one the Role names
        role = self.get("/apis/rbac.authorization.k8s.io/v1/namespaces/descheduler/roles/descheduler-leader-election")
        named = [r for r in role["rules"] if r.get("resourceNames")]
        self.assertEqual(named[0]["resourceNames"], [binary_defaults()["leader-elect-resource-name"]])
        rb = self.get("/apis/rbac.authorization.k8s.io/v1/namespaces/descheduler/rolebindings/descheduler-leader-election")
        self.assertEqual(rb["subjects"], [{"kind": "ServiceAccount", "name": "descheduler", "namespace": NS}])

        # /metrics: the Service targets the container's port, the ServiceMonitor the Service's
        svc = self.get("/api/v1/namespaces/descheduler/services/descheduler")
        self.assertEqual(svc["spec"]["selector"], LABEL)
        (port,) = svc["spec"]["ports"]
        self.assertEqual(port["targetPort"], c["ports"][0]["name"])
        sm = self.get("/apis/monitoring.coreos.com/v1/namespaces/descheduler/servicemonitors/descheduler")
        self.assertEqual(sm["spec"]["selector"]["matchLabels"], LABEL)
        self.assertTrue(set(LABEL.items()) <= set(svc["metadata"]["labels"].items()))
        self.assertEqual((sm["spec"]["endpoints"][0]["port"], sm["spec"]["endpoints"][0]["scheme"],
                          sm["spec"]["endpoints"][0]["path"]), (port["name"], "https", "/metrics"))

        out = self.k("apply", "-k", os.path.join(dl.DEPLOY, "deployment")).stdout
        self.assertEqual({line.split()[-1] for line in out.splitlines()}, {"unchanged"}, out)


class Sources(unittest.TestCase):
    """What needs no cluster: every directory renders, the copies agree."""

    def test_every_kustomization_renders_with_kubectl_1_20(self):
        dirs = sorted(os.path.dirname(os.path.join(root, f)) for root, _, files in os.walk(dl.DEPLOY)
                      for f in files if f == "kustomization.yaml")
        self.assertGreaterEqual(len(dirs), 5, dirs)
        for d in dirs:
            with self.subTest(directory=os.path.relpath(d, dl.REPO)):
                self.assertTrue(dl.render(d))

    def test_the_runbook_policy_is_the_example_the_seed_test_runs(self):
        self.assertEqual(read(os.path.join(POLICIES, "vm-rebalance.yaml")),
                         read(os.path.join(dl.REPO, "examples", "kubevirt-rebalance", "policy.yaml")))

    def test_the_openshift_policy_is_what_profile_render_prints(self):
        # examples/openshift-kubevirt's KubeDescheduler, rendered with its snapshot as the cluster
        ex = os.path.join("examples", "openshift-kubevirt")
        out = subprocess.run([dl.binary(), "profile", "render", "--kubedescheduler",
                              os.path.join(ex, "kubedescheduler.yaml"), "--snapshot",
                              os.path.join(ex, "cluster.json"), "-o", "yaml"],
                             capture_output=True, text=True, check=True, cwd=dl.REPO).stdout
        self.assertEqual(read(os.path.join(POLICIES, "openshift-kubevirt.yaml")), out)

    def test_every_policy_is_accepted_by_the_binary(self):
        for f in sorted(os.listdir(POLICIES)):
            if f == "kustomization.yaml" or not f.endswith(".yaml"):
                continue
            with self.subTest(policy=f), dl.SimProcess() as sim:
                # a live one-shot dry run: the policy loads (priorityThreshold.name resolves) and a cycle runs
                code, err = dl.run_once([dl.binary(), "--policy-config-file", os.path.join(POLICIES, f), "--dry-run",
                                         "--kubeconfig", sim.kubeconfig, "--secure-port=0",
                                         "--feature-gates=EvictionsInBackground=true", "--v=3"])
                self.assertEqual(code, 0, err)
                self.assertIn('"Number of evictions/requests"', err)


if __name__ == "__main__":
    unittest.main()
