"""The command line other tests rely on, the control endpoints, snapshots with every kind, demo-live.sh."""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import simfixtures  # noqa: E402
from simtest import APISIM, CLUSTER, HERE, SimProcess, free_port, write_snapshot  # noqa: E402


class CommandLine(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="apisim-cli-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run_sim(self, *args, timeout=20):
        return subprocess.run([sys.executable, APISIM] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, timeout=timeout)

    def test_ready_line_sigterm_and_state_out(self):
        port = free_port()
        state = os.path.join(self.tmp, "state.json")
        kc = os.path.join(self.tmp, "sub", "kubeconfig")
        p = subprocess.Popen([sys.executable, APISIM, "--snapshot", CLUSTER, "--port", str(port),
                              "--kubeconfig-out", kc, "--state-out", state],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(p.stdout.readline(), "ready\n")
        with open(kc) as f:
            self.assertIn('server: "http://127.0.0.1:%d"' % port, f.read())
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=10)
        self.assertEqual((p.returncode, out), (0, ""), err)
        with open(state) as f:
            dump = json.load(f)
        self.assertEqual(dump["kind"], "List")
        kinds = [i["kind"] for i in dump["items"]]
        self.assertEqual(kinds.count("Pod"), 13)
        self.assertIn("CustomResourceDefinition", kinds)

    def test_startup_errors(self):
        r = self.run_sim("--snapshot", os.path.join(self.tmp, "missing.json"), "--port", "0")
        self.assertEqual(r.returncode, 2)
        self.assertIn("cannot load snapshot", r.stderr)
        bad = os.path.join(self.tmp, "bad.json")
        with open(bad, "w") as f:
            f.write('{"kind":"List","items":[{"kind":')
        r = self.run_sim("--snapshot", bad, "--port", "0")
        self.assertEqual(r.returncode, 2)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            s.listen(1)
            r = self.run_sim("--snapshot", CLUSTER, "--port", str(s.getsockname()[1]))
        self.assertEqual(r.returncode, 3)
        self.assertIn("cannot listen", r.stderr)
        r = self.run_sim("--port", "1")
        self.assertEqual(r.returncode, 2, "argparse: --snapshot is required")

    def test_port_zero_picks_a_port(self):
        kc = os.path.join(self.tmp, "kc")
        p = subprocess.Popen([sys.executable, APISIM, "--snapshot", CLUSTER, "--port", "0", "--kubeconfig-out", kc],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            self.assertEqual(p.stdout.readline(), "ready\n")
            with open(kc) as f:
                self.assertRegex(f.read(), r'server: "http://127\.0\.0\.1:[1-9][0-9]*"')
        finally:
            p.terminate()
            p.wait(timeout=10)
            p.stdout.close()

    def test_snapshot_with_every_kind(self):
        v = simfixtures.vmi("vm-x", "vms", "worker-1")
        vmim = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstanceMigration",
                "metadata": {"name": "old-migration", "namespace": "vms"},
                "spec": {"vmiName": "vm-x"}, "status": {"phase": "Succeeded"}}
        items = [simfixtures.namespace("vms"), simfixtures.namespace("kubevirt"), simfixtures.node("worker-1"),
                 v, simfixtures.launcher_pod(v), simfixtures.virtual_machine(v), vmim,
                 simfixtures.kubevirt_cr(), simfixtures.hyperconverged(), simfixtures.priority_class("pc", 10),
                 simfixtures.pvc("disk", "vms"),
                 {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "vms"},
                  "spec": {"template": {"spec": {"containers": []}}}},
                 {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "cj", "namespace": "vms"},
                  "spec": {"schedule": "*/5 * * * *"}},
                 {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                  "metadata": {"name": "descheduler", "namespace": "kube-system"}, "spec": {"holderIdentity": "h"}},
                 {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e1", "namespace": "vms"},
                  "note": "hello", "regarding": {"kind": "Pod", "name": "p"}},
                 {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "vms"}},
                 {"apiVersion": "policy/v1beta1", "kind": "PodDisruptionBudget",
                  "metadata": {"name": "old-api", "namespace": "vms"}, "spec": {"minAvailable": 1}},
                 {"apiVersion": "metrics.k8s.io/v1beta1", "kind": "NodeMetrics", "metadata": {"name": "worker-1"},
                  "usage": {"cpu": "3", "memory": "5Gi"}},
                 {"apiVersion": "v1", "kind": "List", "items": [
                     {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "vms"},
                      "spec": {}}]},
                 {"apiVersion": "example.com/v1", "kind": "Unknown", "metadata": {"name": "u"}}]
        with SimProcess(write_snapshot(items, self.tmp)) as sim:
            for path in ("/apis/kubevirt.io/v1/namespaces/vms/virtualmachineinstancemigrations/old-migration",
                         "/apis/kubevirt.io/v1/namespaces/vms/virtualmachines/vm-x",
                         "/apis/kubevirt.io/v1/namespaces/kubevirt/kubevirts/kubevirt",
                         "/apis/hco.kubevirt.io/v1beta1/namespaces/kubevirt/hyperconvergeds/kubevirt-hyperconverged",
                         "/apis/batch/v1/namespaces/vms/jobs/j", "/apis/batch/v1/namespaces/vms/cronjobs/cj",
                         "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/descheduler",
                         "/api/v1/namespaces/vms/events/e1", "/apis/events.k8s.io/v1/namespaces/vms/events/e1",
                         "/apis/policy/v1/namespaces/vms/poddisruptionbudgets/old-api",
                         "/apis/apps/v1/namespaces/vms/deployments/d",
                         "/apis/scheduling.k8s.io/v1/priorityclasses/pc",
                         "/apis/scheduling.k8s.io/v1/priorityclasses/system-cluster-critical",
                         "/api/v1/namespaces/kube-system"):
                self.assertEqual(sim.get(path)[0], 200, path)
            self.assertEqual(sim.obj("/api/v1/namespaces/vms/events/e1")["message"], "hello")
            self.assertEqual(sim.obj("/apis/metrics.k8s.io/v1beta1/nodes/worker-1")["usage"],
                             {"cpu": "3000m", "memory": "5120Mi"})
            self.assertIn("skipping unsupported example.com/v1 Unknown", sim.log())

    def test_requests_are_counted_by_verb_and_path(self):
        with SimProcess() as sim:
            sim.control("DELETE", "requests")
            for _ in range(3):
                sim.get("/api/v1/namespaces/shop/pods")
            sim.get("/api/v1/namespaces/shop/pods?watch=true&timeoutSeconds=0")
            sim.request("POST", "/api/v1/namespaces/shop/configmaps",
                        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})
            sim.get("/api/v1/namespaces/shop/configmaps/x")
            rep = sim.control("GET", "requests")
            self.assertEqual(rep["byVerbAndPath"], {"list /api/v1/namespaces/shop/pods": 3,
                                                     "watch /api/v1/namespaces/shop/pods": 1,
                                                     "create /api/v1/namespaces/shop/configmaps": 1,
                                                     "get /api/v1/namespaces/shop/configmaps/x": 1})
            self.assertEqual(rep["byVerb"], {"list": 3, "watch": 1, "create": 1, "get": 1})
            self.assertEqual(rep["total"], 6)
            self.assertEqual(rep["byPath"]["/api/v1/namespaces/shop/pods"], 4)

    def test_state_dump_and_load(self):
        with SimProcess() as sim:
            code, headers, raw = sim.request("GET", "/_sim/state", raw=True)
            dump = json.loads(raw)
            self.assertEqual((code, dump["kind"], dump["apiVersion"]), (200, "List", "v1"))
            self.assertGreater(len(dump["items"]), 48)
            extra = {"apiVersion": "v1", "kind": "List", "items": [
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "loaded", "namespace": "shop"}}]}
            self.assertEqual(sim.control("POST", "load", extra)["loaded"], 1)
            self.assertEqual(sim.get("/api/v1/namespaces/shop/configmaps/loaded")[0], 200)
            self.assertEqual(sim.get("/_sim/nope")[0], 404)

    def test_demo_live_script(self):
        port = free_port()
        p = subprocess.Popen(["bash", os.path.join(HERE, "demo-live.sh"), CLUSTER, str(port)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            lines = []
            end = time.monotonic() + 30
            while time.monotonic() < end:
                line = p.stdout.readline()
                if not line:
                    break
                lines.append(line)
                if "Press Ctrl-C" in line:
                    break
            text = "".join(lines)
            self.assertIn("http://127.0.0.1:%d" % port, text)
            kc = next(w for w in text.split() if w.endswith("/kubeconfig"))
            with open(kc) as f:
                self.assertIn(str(port), f.read())
            with socket.create_connection(("127.0.0.1", port), timeout=5):
                pass
        finally:
            os.killpg(p.pid, signal.SIGINT)
            p.wait(timeout=15)
            p.stdout.close()
            p.stderr.close()
        self.assertFalse(os.path.exists(kc), "the temp dir is removed")
        with self.assertRaises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=2).close()


if __name__ == "__main__":
    unittest.main()
