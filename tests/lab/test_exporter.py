"""The lab's usage model and exporter (exporter.py) without a cluster: loads by profile (a
scenario's durations included), a node's utilization from what runs on it, and the series the
shipped recording rules read. Offline (make check)."""

import os
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from exporter import Exporter, LoadModel, imbalance, parse_quantity  # noqa: E402


class FixedPlacement:
    def __init__(self, by_node):
        self.placed = by_node

    def by_node(self):
        return self.placed


class Exporting(unittest.TestCase):
    def test_quantities(self):
        self.assertEqual(parse_quantity("500m"), 0.5)
        self.assertEqual(parse_quantity("4Gi"), 4 * 2 ** 30)
        self.assertEqual(parse_quantity("32"), 32.0)

    def test_loads_follow_the_profile(self):
        m = LoadModel(7)
        m.add("ns/steady", "2", "4Gi", {"kind": "steady", "cpu": 0.5, "memory": 0.5, "jitter": 0})
        m.add("ns/bursty", "2", "4Gi", {"kind": "bursty", "low": 0.1, "high": 0.6, "period": "4m", "jitter": 0})
        self.assertEqual(m.demand("ns/steady"), (1.0, 2.0 * 2 ** 30))
        # the square wave: high for half the period, low for the other half
        values = {round(m.demand("ns/bursty", m.t0 + s)[0], 6) for s in range(0, 240, 10)}
        self.assertEqual(values, {0.2, 1.2})
        self.assertEqual(m.demand("ns/unknown"), (0.0, 0.0))
        # seeded: the same seed, the same jitter
        a, b = LoadModel(3), LoadModel(3)
        for lm in (a, b):
            lm.add("x", "2", "1Gi", {"cpu": 0.3, "jitter": 0.2})
        self.assertEqual(a.demand("x", 0), b.demand("x", 0))

    def test_node_series(self):
        m = LoadModel(1)
        m.add("ns/hot", "8", "8Gi", {"cpu": 1.0, "memory": 1.0, "jitter": 0})
        m.add("ns/calm", "2", "4Gi", {"cpu": 0.5, "memory": 0.5, "jitter": 0})
        nodes = {"a": {"cpu": 8.0, "memory": 16.0 * 2 ** 30, "worker": True},
                 "b": {"cpu": 8.0, "memory": 16.0 * 2 ** 30, "worker": False}}
        e = Exporter(m, FixedPlacement({"a": ["ns/hot", "ns/calm"]}), nodes)
        truth = e.ground_truth()
        self.assertEqual(truth["a"]["cpu"], 1.0)             # capped at the node
        self.assertAlmostEqual(truth["a"]["cpuDemand"], 9.0 / 8.0)  # 1 core beyond it
        self.assertEqual(truth["b"], {"cpu": 0.0, "memory": 0.0, "cpuDemand": 0.0, "memDemand": 0.0})
        e.last = time.time() - 10  # ten seconds since the last scrape
        text = e.render().decode()
        series = dict(line.rsplit(" ", 1) for line in text.splitlines() if not line.startswith("#"))
        # a busy node's idle counter stands still, an idle node's grows by 10 s
        self.assertAlmostEqual(float(series['node_cpu_seconds_total{instance="a",cpu="0",mode="idle"}']), 0.0, places=1)
        self.assertAlmostEqual(float(series['node_cpu_seconds_total{instance="b",cpu="0",mode="idle"}']), 10.0, places=1)
        # CPU pressure: the demand beyond 90% of the node, per second
        self.assertAlmostEqual(float(series['node_pressure_cpu_waiting_seconds_total{instance="a"}']),
                               (9.0 / 8.0 - 0.9) * 10, places=1)
        self.assertIn('kube_node_role{node="a",role="worker"} 1', text)
        self.assertNotIn('kube_node_role{node="b"', text)

    def test_imbalance(self):
        self.assertEqual(imbalance([]), (0.0, 0.0))
        spread, sd = imbalance([0.75, 0.75, 0.0, 0.0])
        self.assertEqual(spread, 0.75)
        self.assertAlmostEqual(sd, 0.375)


if __name__ == "__main__":
    unittest.main()
