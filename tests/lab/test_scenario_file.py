"""Scenario files (tests/lab/scenario.py): every shipped scenario loads at both sizes, and a bad
file is refused before anything starts, with one message naming the file, the field and what was
expected. No lab is started: this runs anywhere (make check)."""

import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import scenario as scen  # noqa: E402

GOOD = """description: d
cadence: cronjob
nodes: [{pool: w, count: 2}]
vms: [{name: vm, count: 3}]
policy: deploy/policies/vm-rebalance.yaml
target: {overutilized: 0}
"""


class ScenarioFiles(unittest.TestCase):
    def load_text(self, text):
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
            f.write(text)
        self.path = f.name
        try:
            return scen.load(f.name)
        finally:
            os.unlink(f.name)

    def refused(self, text, *parts):
        with self.assertRaises(scen.ScenarioError) as cm:
            self.load_text(text)
        msg = str(cm.exception)
        self.assertTrue(msg.startswith(self.path + ": "), msg)  # the file first
        for p in parts:
            self.assertIn(p, msg)
        return msg

    def test_shipped_scenarios_load(self):
        names = sorted(f[:-5] for f in os.listdir(scen.SCENARIOS) if f.endswith(".yaml"))
        self.assertEqual(names, ["openshift", "pingpong", "pinned", "runbook", "skewed"])
        for name in names:
            for small in (False, True):
                s = scen.load(name, small=small)
                self.assertEqual(s["name"], name)
                self.assertTrue(s["nodes"] and (s["vms"] or s["pods"]), name)

    def test_defaults(self):
        s = self.load_text(GOOD)
        self.assertEqual((s["seed"], s["interval"], s["labInterval"], s["cycles"]), (1, "2m", "10s", 8))
        self.assertEqual(s["vms"][0]["evictionStrategy"], "LiveMigrate")
        self.assertEqual(s["vms"][0]["load"]["kind"], "steady")
        self.assertEqual(s["kubevirt"]["parallelMigrationsPerCluster"], 5)

    def test_bad_files_name_the_field(self):
        self.refused(GOOD.replace("cadence: cronjob", "cadence: hourly"),
                     "cadence: expected one of cronjob, deployment, got a string 'hourly'")
        self.refused(GOOD.replace("count: 3", "count: many"), "vms[0].count: expected an integer")
        self.refused(GOOD.replace("{name: vm, count: 3}", "{name: vm, count: 3, load: {kind: warm}}"),
                     "vms[0].load.kind: expected one of steady, bursty, hot")
        self.refused(GOOD.replace("{pool: w, count: 2}", "{pool: w, count: 2, cpu: lots}"),
                     "nodes[0].cpu: expected a Kubernetes quantity")
        self.refused(GOOD + "cycels: 3\n", "cycels: unknown field (expected one of")
        self.refused(GOOD.replace("description: d\n", ""), "description: required")
        self.refused(GOOD.replace("vm-rebalance.yaml", "nope.yaml"), "policy: no such file")
        self.refused(GOOD.replace("target: {overutilized: 0}", "target: {}"),
                     "target: expected imbalance, overutilized or both")
        self.refused(GOOD + "interval: soon\n", "interval: expected a duration")
        self.refused(GOOD.replace("{name: vm, count: 3}", "{name: vm, count: 3, createOn: gpu}"),
                     "vms[0].createOn: expected one of the pools (w)")
        self.refused("- a\n- list\n", "(top): expected a map")
        self.refused("a: [\n", "not valid YAML")

    def test_unknown_scenario(self):
        with self.assertRaises(scen.ScenarioError) as cm:
            scen.load("nosuch")
        self.assertIn("no such scenario (known: openshift, pingpong, pinned, runbook, skewed)", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
