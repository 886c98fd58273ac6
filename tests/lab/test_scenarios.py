"""The cluster lab's scenarios at their small size, as `make test` runs them (tests/lab/run.py):
the runbook's cluster (a), with the runbook's policy and with its targeted version, and VMs
that must not move (e), with this project's descheduler against the lab's real control plane
and KubeVirt's own controllers.

(a) asserts what the runbook promises an operator: each VM the descheduler moved went through
KubeVirt's evacuation (a `kubevirt-evacuation-*` migration created by virt-controller, Succeeded),
kept its VMI (same UID: no VM stopped), and runs on another node, the one the scheduler chose;
and the policy's target (no overutilized node) is reached within the scenario's cycle budget.
(e) asserts that no VM stops, and that only the VMs that can live-migrate were moved.
The page each run writes is opened in headless Chromium (test_report).

Skipped, saying why, where the lab's components cannot be built or run on this machine.
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import report  # noqa: E402
import scenario as scen  # noqa: E402
from cluster import LabUnavailable  # noqa: E402
from run import Runner  # noqa: E402

BINARY = os.environ.get("DESCHEDULER") or os.path.join(ROOT, "build", "descheduler")
RESULTS = {}


def run_small(name, targeted=False):
    key = (name, targeted)
    if key not in RESULTS:
        if not os.access(BINARY, os.X_OK):
            raise unittest.SkipTest("%s is not built (make build)" % BINARY)
        s = scen.load(name, small=True)
        out = tempfile.mkdtemp(prefix="lab-test-")
        try:
            RESULTS[key] = Runner(s, BINARY, "ours", out, targeted=targeted).run()
        except LabUnavailable as e:
            raise unittest.SkipTest("the lab cannot run here: %s" % e)
        finally:
            shutil.rmtree(out, ignore_errors=True)
    return RESULTS[key]


class Runbook(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.r = run_small("runbook")

    def test_the_run_completed(self):
        self.assertEqual(self.r["failures"], [])
        self.assertEqual(self.r["components"]["virt-controller"], "v1.6.0")
        self.assertEqual(self.r["components"]["virt-handler"], "stand-in")

    def test_moved_vms_went_through_kubevirts_evacuation(self):
        self.assertGreater(self.r["migrationsSucceeded"], 0, self.r)
        self.assertEqual(self.r["migrationsSucceeded"], self.r["migrations"], self.r["migrationNames"])
        for name in self.r["migrationNames"]:
            self.assertTrue(name.startswith("kubevirt-evacuation-"), name)
        moves = [m for ms in self.r["moves"].values() for m in ms]
        self.assertEqual(len(moves), self.r["migrationsSucceeded"])
        for m in moves:
            self.assertTrue(m["from"] and m["to"] and m["from"] != m["to"], m)
            # the scheduler chose a node of the new, empty workers
            self.assertTrue(m["from"].startswith("worker-a-") and m["to"].startswith("worker-b-"), m)

    def test_no_vm_stopped_and_each_kept_its_vmi(self):
        self.assertEqual(self.r["vmsStopped"], 0, self.r["vmsStoppedWhy"])

    def test_the_target_is_reached_within_the_budget(self):
        self.assertTrue(self.r["targetMet"], self.r["samples"][-1])
        self.assertIsNotNone(self.r["cyclesToConverge"])
        self.assertLess(self.r["imbalanceEnd"], self.r["imbalanceStart"])
        self.assertEqual(self.r["pingPongs"], 0)
        # one VM per cycle (the policy's maxNoOfPodsToEvictTotal), each an eviction request
        self.assertEqual(self.r["requests"].get("create pods/eviction"), self.r["migrations"])


class RunbookTargeted(unittest.TestCase):
    """The same cluster with deploy/policies/vm-rebalance-targeted.yaml: each VM is sent to the
    node the descheduler chose, through KubeVirt's own migration controller
    (spec.addedNodeSelector), and lands there."""

    @classmethod
    def setUpClass(cls):
        cls.r = run_small("runbook", targeted=True)

    def test_each_vm_lands_where_it_was_sent(self):
        self.assertEqual(self.r["failures"], [])
        self.assertGreater(self.r["migrationsSucceeded"], 0, self.r)
        self.assertEqual(self.r["requests"].get("create virtualmachineinstancemigrations"), self.r["migrations"])
        self.assertNotIn("create pods/eviction", self.r["requests"])
        self.assertEqual(sorted(self.r["migrationTargets"]), self.r["migrationNames"])
        for name, t in self.r["migrationTargets"].items():
            self.assertTrue(name.startswith("descheduler-move-"), name)
            self.assertEqual((t["phase"], t["landed"]), ("Succeeded", t["asked"]), name)
            self.assertTrue(t["asked"].startswith("worker-b-"), t)

    def test_no_vm_stopped_and_the_target_is_reached(self):
        self.assertEqual(self.r["vmsStopped"], 0, self.r["vmsStoppedWhy"])
        self.assertTrue(self.r["targetMet"], self.r["samples"][-1])
        self.assertEqual(self.r["pingPongs"], 0)


class Pinned(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.r = run_small("pinned")

    def test_no_vm_stopped(self):
        self.assertEqual(self.r["failures"], [])
        self.assertEqual(self.r["vmsStopped"], 0, self.r["vmsStoppedWhy"])

    def test_only_migratable_vms_moved(self):
        self.assertGreater(len(self.r["moves"]), 0)
        for key in self.r["moves"]:
            self.assertTrue(key.split("/")[1].startswith("movable-"), key)


class Interrupted(unittest.TestCase):
    """run.py stopped by SIGTERM (or SIGINT) once its lab runs: every process the lab started
    is gone, and so is its working directory."""

    def test_sigterm_and_sigint_leave_nothing(self):
        if not os.access(BINARY, os.X_OK):
            self.skipTest("%s is not built (make build)" % BINARY)
        for sig in (signal.SIGTERM, signal.SIGINT):
            with tempfile.TemporaryDirectory() as out:
                p = subprocess.Popen([sys.executable, os.path.join(HERE, "run.py"), "pinned", "--small",
                                      "--binary", BINARY, "--out", out],
                                     stderr=subprocess.PIPE, text=True)
                work = None
                for line in p.stderr:
                    m = re.search(r"kubeconfig (\S+)/lab/kubeconfig", line)
                    work = work or (m and m.group(1))
                    if "cycle 0:" in line:
                        break
                self.assertTrue(work, "the lab never became ready")
                pids = [l.split()[1] for l in subprocess.run(["ps", "-eo", "pid,args"], capture_output=True,
                                                              text=True).stdout.splitlines() if work in l]
                self.assertGreater(len(pids), 3, "the lab's processes")
                p.send_signal(sig)
                p.stderr.read()
                p.wait(60)
                left = [l for l in subprocess.run(["ps", "-eo", "pid,args"], capture_output=True,
                                                  text=True).stdout.splitlines() if work in l]
                self.assertEqual(left, [], "processes left after %s" % sig.name)
                self.assertFalse(os.path.exists(work), work)


class Report(unittest.TestCase):
    def test_report_in_chromium(self):
        chromium = shutil.which("chromium")
        if not chromium:
            self.skipTest("chromium is not installed (scripts/deps.sh test installs it)")
        r = run_small("runbook")
        with tempfile.TemporaryDirectory() as tmp:
            page = os.path.join(tmp, "runbook.html")
            with open(page, "w") as f:
                f.write(report.render(r))
            p = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                                "--no-first-run", "--disable-background-networking", "--disable-component-update",
                                "--disable-sync", "--user-data-dir=" + os.path.join(tmp, "profile"),
                                "--virtual-time-budget=3000", "--dump-dom", "file://" + page],
                               capture_output=True, text=True, timeout=120)
            dom = p.stdout
        self.assertIn("<table id=\"summary\">", dom)
        rows = dict(re.findall(r"<tr><th>([^<]*)</th><td[^>]*>([^<]*)</td></tr>", dom))
        self.assertEqual(rows["VMs stopped"], str(r["vmsStopped"]))
        self.assertEqual(rows["ping-pongs"], str(r["pingPongs"]))
        self.assertTrue(rows["migrations (succeeded / failed / pending)"].startswith("%d (" % r["migrations"]))
        self.assertEqual(dom.count("<svg"), 3, "three plots")
        # one point per sample on the imbalance plot, one bar per sample on the migrations plot
        self.assertEqual(dom.count('class="point"'), len(r["samples"]))
        self.assertEqual(dom.count('class="bar"'), len(r["samples"]))
        self.assertIn("cycles to converge", dom)


if __name__ == "__main__":
    unittest.main()
