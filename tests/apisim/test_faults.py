"""Fault injection: error statuses, latency, resets and truncated bodies, on demand or from a file."""

import http.client
import json
import os
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from simtest import CLUSTER, SimProcess  # noqa: E402


class Faults(unittest.TestCase):
    def setUp(self):
        self.sim = SimProcess()

    def tearDown(self):
        self.assertEqual(self.sim.stop(), 0)

    def add(self, rule):
        return self.sim.control("POST", "faults", rule)["rules"][0]

    def test_status_for_the_next_n_requests(self):
        self.add({"path": "^/api/v1/nodes$", "verb": "list", "status": 503, "count": 2, "retryAfter": 1})
        for _ in range(2):
            code, headers, st = self.sim.get("/api/v1/nodes")
            self.assertEqual((code, st["reason"], st["code"]), (503, "ServiceUnavailable", 503))
            self.assertEqual(headers["Retry-After"], "1")
            self.assertEqual(st["details"]["retryAfterSeconds"], 1)
        self.assertEqual(self.sim.get("/api/v1/nodes/worker-1")[0], 200, "get is not list")
        self.assertEqual(self.sim.get("/api/v1/nodes")[0], 200)
        self.assertEqual(self.sim.control("GET", "faults"), {"rules": [], "fired": 2})

    def test_skip_lets_the_first_requests_through(self):
        self.add({"path": "^/api/v1/nodes$", "verb": "list", "status": 500, "skip": 2, "count": 1})
        self.assertEqual([self.sim.get("/api/v1/nodes")[0] for _ in range(4)], [200, 200, 500, 200])
        self.assertEqual(self.sim.control("GET", "faults"), {"rules": [], "fired": 1})

    def test_custom_status_and_method(self):
        self.add({"method": "POST", "path": "/eviction$", "status": 429, "reason": "TooManyRequests",
                  "message": "slow down", "count": 1})
        pod = self.sim.obj("/api/v1/namespaces/shop/pods")["items"][0]["metadata"]["name"]
        code, _, st = self.sim.evict("shop", pod)
        self.assertEqual((code, st["message"], st["reason"]), (429, "slow down", "TooManyRequests"))

    def test_fraction_is_seeded(self):
        def run():
            self.sim.control("DELETE", "faults")
            self.add({"path": "/api/v1/namespaces/shop/pods", "status": 500, "fraction": 0.5, "seed": 7})
            return [self.sim.get("/api/v1/namespaces/shop/pods")[0] for _ in range(40)]
        first = run()
        self.assertTrue(10 <= first.count(500) <= 30, first)
        self.assertEqual(run(), first, "same seed, same failures")

    def test_latency(self):
        self.add({"path": "^/version$", "latency": 0.4, "count": 1})
        t = time.monotonic()
        self.assertEqual(self.sim.get("/version")[0], 200)
        self.assertGreaterEqual(time.monotonic() - t, 0.4)
        t = time.monotonic()
        self.sim.get("/version")
        self.assertLess(time.monotonic() - t, 0.3)

    def test_connection_reset(self):
        self.add({"path": "^/api/v1/nodes$", "reset": True, "count": 1})
        with self.assertRaises((ConnectionResetError, http.client.RemoteDisconnected, BrokenPipeError)):
            self.sim.get("/api/v1/nodes")
        self.assertEqual(self.sim.get("/api/v1/nodes")[0], 200)

    def test_truncated_body(self):
        self.add({"path": "^/api/v1/pods$", "truncate": 100, "count": 1})
        conn = self.sim.connection()
        conn.request("GET", "/api/v1/pods")
        r = conn.getresponse()
        self.assertEqual(r.status, 200)
        with self.assertRaises(http.client.IncompleteRead) as cm:
            r.read()
        self.assertEqual(len(cm.exception.partial), 100)
        conn.close()
        self.assertEqual(len(self.sim.obj("/api/v1/pods")["items"]), 13)

    def test_query_selects_later_pages(self):
        self.add({"path": "^/api/v1/pods$", "query": "continue=", "status": 410, "reason": "Expired",
                  "count": 1})
        first = self.sim.obj("/api/v1/pods?limit=5")
        self.assertEqual(len(first["items"]), 5)
        token = first["metadata"]["continue"]
        code, _, st = self.sim.get("/api/v1/pods?limit=5&continue=" + token)
        self.assertEqual((code, st["reason"]), (410, "Expired"))
        self.assertEqual(self.sim.get("/api/v1/pods?limit=5&continue=" + token)[0], 200)

    def test_reset_in_the_middle_of_a_response(self):
        self.add({"path": "^/api/v1/pods$", "truncate": 100, "reset": True, "count": 1})
        conn = self.sim.connection()
        conn.request("GET", "/api/v1/pods")
        r = conn.getresponse()
        self.assertEqual(r.status, 200)
        with self.assertRaises((ConnectionResetError, http.client.IncompleteRead)):
            r.read()
        conn.close()
        self.assertEqual(len(self.sim.obj("/api/v1/pods")["items"]), 13)

    def test_journal_records_every_request_and_what_was_done(self):
        self.sim.control("DELETE", "journal")
        self.add({"path": "^/api/v1/nodes$", "status": 503, "count": 1})
        self.sim.get("/api/v1/nodes")
        self.sim.get("/api/v1/pods?limit=3")
        pod = self.sim.obj("/api/v1/namespaces/shop/pods")["items"][0]["metadata"]["name"]
        self.sim.evict("shop", pod)
        journal = self.sim.settled_journal()
        self.assertEqual([e["seq"] for e in journal], sorted(e["seq"] for e in journal))
        # the journal (and seq) is in the order requests ended, and a request is journalled after
        # its answer is sent: the next request, sent as soon as that answer is read, can end and be
        # journalled first.  The order the requests came in is that of t, when each one arrived
        items = sorted(journal, key=lambda e: e["t"])
        self.assertEqual(len(items), 4, items)
        self.assertEqual([(e["method"], e["path"], e["status"]) for e in items[:2]],
                         [("GET", "/api/v1/nodes", 503), ("GET", "/api/v1/pods", 200)])
        self.assertEqual((items[0]["fault"], items[0]["outcome"]), ("status=503", "sent"))
        self.assertEqual((items[1]["query"], items[1]["continue"]), ("limit=3", True))
        self.assertEqual(items[2]["continue"], False)
        ev = items[3]
        self.assertEqual((ev["method"], ev["path"], ev["status"]),
                         ("POST", "/api/v1/namespaces/shop/pods/%s/eviction" % pod, 201))
        self.assertTrue(all(e["end"] >= e["t"] for e in items))
        self.sim.control("DELETE", "journal")
        self.assertEqual(self.sim.control("GET", "journal")["items"], [])

    def test_control_endpoints_are_never_faulted_and_rules_are_validated(self):
        rule = self.add({"path": ".", "status": 500})
        self.assertEqual(self.sim.get("/api")[0], 500)
        self.assertEqual(self.sim.control("GET", "health")["ok"], True)
        self.sim.control("DELETE", "faults?id=%d" % rule["id"])
        self.assertEqual(self.sim.get("/api")[0], 200)
        for bad in ({"path": "x"}, {"status": 99}, {"path": "(", "status": 500}, {"query": "(", "status": 500},
                    {"latency": 1, "bogus": 1},
                    {"status": 500, "fraction": 2}, {"status": 500, "count": 0}, {"status": 500, "skip": -1},
                    {"status": 500, "skip": True}):
            code, _, st = self.sim.request("POST", "/_sim/faults", bad)
            self.assertEqual(code, 400, bad)


class FaultsFile(unittest.TestCase):
    def test_rules_from_startup_file(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump([{"verb": "watch", "status": 410, "reason": "Expired", "count": 1},
                       {"path": "^/apis$", "status": 500, "count": 1}], f)
        try:
            with SimProcess(CLUSTER, ["--faults", f.name]) as sim:
                self.assertEqual(sim.get("/apis")[0], 500)
                self.assertEqual(sim.get("/apis")[0], 200)
                code, _, st = sim.get("/api/v1/pods?watch=true")
                self.assertEqual((code, st["reason"]), (410, "Expired"))
        finally:
            os.unlink(f.name)


if __name__ == "__main__":
    unittest.main()
