"""Watch semantics: event order and types, selectors, initial state, bookmarks, 410 for old versions.

A watch is read here the way client-go reads it: a chunked HTTP/1.1 response
of newline-delimited JSON events.
"""

import http.client
import json
import os
import socket
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from simtest import SimProcess  # noqa: E402
from test_rest import PODS, new_pod  # noqa: E402


class WatchStream:
    """Collects events of one watch in a background thread."""

    def __init__(self, sim, path):
        self.conn = http.client.HTTPConnection("127.0.0.1", sim.port, timeout=20)
        self.conn.request("GET", path, headers={"Accept": "application/json"})
        self.resp = self.conn.getresponse()
        self.events = []
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        try:
            while True:
                line = self.resp.readline()
                if not line:
                    break
                self.events.append(json.loads(line))
        except (OSError, ValueError, AttributeError, http.client.HTTPException):  # closed under us
            pass
        finally:
            self.done.set()

    def wait(self, n, timeout=10):
        end = time.monotonic() + timeout
        while len(self.events) < n and time.monotonic() < end and not self.done.is_set():
            time.sleep(0.02)
        return self.events

    def close(self):
        # unblock the reader thread first: closing a buffered reader another thread reads waits for it
        try:
            self.conn.sock.shutdown(socket.SHUT_RDWR)
        except (OSError, AttributeError):
            pass
        self.done.wait(5)
        self.conn.close()


class Watch(unittest.TestCase):
    def setUp(self):
        self.sim = SimProcess(args=["--bookmark-seconds", "0.3"])
        self.streams = []

    def tearDown(self):
        for s in self.streams:
            s.close()
        self.assertEqual(self.sim.stop(), 0)

    def watch(self, path):
        s = WatchStream(self.sim, path)
        self.streams.append(s)
        return s

    def test_events_after_list_resource_version(self):
        rv = self.sim.obj(PODS)["metadata"]["resourceVersion"]
        w = self.watch(PODS + "?watch=true&resourceVersion=" + rv)
        self.assertEqual(w.resp.status, 200)
        self.assertEqual(w.resp.getheader("Content-Type"), "application/json")
        self.assertEqual(w.resp.getheader("Transfer-Encoding"), "chunked")
        self.sim.request("POST", PODS, new_pod("w1"))
        self.sim.request("PATCH", PODS + "/w1", {"metadata": {"labels": {"x": "y"}}},
                         content_type="application/merge-patch+json")
        self.sim.request("DELETE", PODS + "/w1")
        evs = w.wait(3)
        self.assertEqual([e["type"] for e in evs], ["ADDED", "MODIFIED", "DELETED"])
        rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in evs]
        self.assertEqual(rvs, sorted(rvs))
        self.assertGreater(rvs[0], int(rv))
        self.assertEqual(evs[1]["object"]["metadata"]["labels"]["x"], "y")

    def test_initial_events_and_namespace_filter(self):
        w = self.watch("/api/v1/namespaces/shop/pods?watch=1")
        evs = w.wait(5)
        self.assertEqual(len(evs), 5)
        self.assertTrue(all(e["type"] == "ADDED" and e["object"]["metadata"]["namespace"] == "shop" for e in evs))
        self.sim.request("POST", "/api/v1/namespaces/default/pods", new_pod("elsewhere", ns="default"))
        self.sim.request("POST", PODS, new_pod("here"))
        evs = w.wait(6)
        self.assertEqual(evs[-1]["object"]["metadata"]["name"], "here")
        self.assertEqual(len(evs), 6)

    def test_label_selector_transitions(self):
        self.sim.request("POST", PODS, new_pod("sel", labels={"role": "a"}))
        rv = self.sim.obj(PODS)["metadata"]["resourceVersion"]
        w = self.watch(PODS + "?watch=true&labelSelector=role%3Db&resourceVersion=" + rv)
        for role in ("b", "c"):
            self.sim.request("PATCH", PODS + "/sel", {"metadata": {"labels": {"role": role}}},
                             content_type="application/merge-patch+json")
        evs = w.wait(2)
        self.assertEqual([e["type"] for e in evs], ["ADDED", "DELETED"],
                         "entering the selector is ADDED, leaving it DELETED")

    def test_single_object_watch_by_field_selector(self):
        w = self.watch("/api/v1/nodes?watch=true&fieldSelector=metadata.name%3Dworker-2")
        self.sim.request("PATCH", "/api/v1/nodes/worker-1", {"spec": {"unschedulable": True}},
                         content_type="application/merge-patch+json")
        self.sim.request("PATCH", "/api/v1/nodes/worker-2", {"spec": {"unschedulable": True}},
                         content_type="application/merge-patch+json")
        evs = w.wait(2)
        self.assertEqual([(e["type"], e["object"]["metadata"]["name"]) for e in evs],
                         [("ADDED", "worker-2"), ("MODIFIED", "worker-2")])

    def test_too_old_resource_version_is_410(self):
        w = self.watch(PODS + "?watch=true&resourceVersion=1")
        evs = w.wait(1)
        self.assertEqual(evs[0]["type"], "ERROR")
        st = evs[0]["object"]
        self.assertEqual((st["kind"], st["code"], st["reason"]), ("Status", 410, "Expired"))
        self.assertTrue(st["message"].startswith("too old resource version: 1 ("))
        self.assertTrue(w.done.wait(5), "the stream ends after the error")

    def test_bookmarks_and_timeout(self):
        rv = self.sim.obj(PODS)["metadata"]["resourceVersion"]
        t0 = time.monotonic()
        w = self.watch(PODS + "?watch=true&allowWatchBookmarks=true&timeoutSeconds=2&resourceVersion=" + rv)
        self.assertTrue(w.done.wait(10))
        self.assertGreaterEqual(time.monotonic() - t0, 1.5)
        bms = [e for e in w.events if e["type"] == "BOOKMARK"]
        self.assertGreaterEqual(len(bms), 2)
        self.assertEqual(bms[0]["object"]["kind"], "Pod")
        self.assertTrue(bms[0]["object"]["metadata"]["resourceVersion"])

    def test_send_initial_events_ends_with_bookmark(self):
        w = self.watch(PODS + "?watch=true&sendInitialEvents=true&allowWatchBookmarks=true"
                       "&resourceVersionMatch=NotOlderThan")
        evs = w.wait(6)
        self.assertEqual([e["type"] for e in evs[:5]], ["ADDED"] * 5)
        self.assertEqual(evs[5]["type"], "BOOKMARK")
        self.assertEqual(evs[5]["object"]["metadata"]["annotations"], {"k8s.io/initial-events-end": "true"})

    def test_watch_on_custom_resources(self):
        w = self.watch("/apis/kubevirt.io/v1/namespaces/vms/virtualmachineinstances?watch=true")
        self.assertEqual(len(w.wait(7)), 7)


    def test_too_large_resource_version_is_504(self):
        rv = int(self.sim.obj(PODS)["metadata"]["resourceVersion"])
        code, _, body = self.sim.request("GET", PODS + "?watch=true&resourceVersion=%d" % (rv + 1000))
        self.assertEqual(code, 504)
        self.assertTrue(body["message"].startswith("Too large resource version: %d, current: " % (rv + 1000)))
        self.assertEqual(body["details"]["causes"][0]["reason"], "ResourceVersionTooLarge")


class WatchFaults(unittest.TestCase):
    """The watch fault keys (simfaults.py): what a client's watch cache must survive."""

    def setUp(self):
        self.sim = SimProcess()
        self.streams = []

    def tearDown(self):
        for s in self.streams:
            s.close()
        self.assertEqual(self.sim.stop(), 0)

    def watch_with(self, rule):
        self.assertIn(self.sim.request("POST", "/_sim/faults", dict(rule, verb="watch", count=1))[0], (200, 201))
        rv = self.sim.obj(PODS)["metadata"]["resourceVersion"]
        s = WatchStream(self.sim, PODS + "?watch=true&resourceVersion=" + rv)
        self.streams.append(s)
        self.assertEqual(s.resp.status, 200)
        return s

    def two_changes(self):
        """Two changes made in one write burst (one batch for the watcher)."""
        pod = self.sim.obj(PODS + "/" + self.sim.obj(PODS)["items"][0]["metadata"]["name"])
        items = []
        for n in ("1", "2"):
            p = json.loads(json.dumps(pod))
            p["metadata"].setdefault("annotations", {})["t"] = n
            items.append(p)
        code, _, _ = self.sim.request("POST", "/_sim/load", {"apiVersion": "v1", "kind": "List", "items": items})
        self.assertEqual(code, 200)

    def test_duplicate_and_reorder(self):
        w = self.watch_with({"watchDuplicate": True, "watchReorder": True})
        self.two_changes()
        evs = w.wait(4)
        anns = [e["object"]["metadata"]["annotations"]["t"] for e in evs]
        self.assertEqual(anns, ["2", "2", "1", "1"])
        rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in evs]
        self.assertGreater(rvs[0], rvs[2], "the newer event first")

    def test_expire_after_one_event(self):
        w = self.watch_with({"watchExpire": 1})
        self.sim.request("POST", PODS, new_pod("x1"))
        self.assertTrue(w.done.wait(5), "the stream ends after the error")
        self.assertEqual([e["type"] for e in w.events], ["ADDED", "ERROR"])
        self.assertEqual(w.events[1]["object"]["code"], 410)
        journal = self.sim.settled_journal()
        self.assertEqual([e["outcome"] for e in journal if "watch=true" in e["query"]], ["expired"])

    def test_cut_after_one_event(self):
        w = self.watch_with({"watchCut": 1})
        self.sim.request("POST", PODS, new_pod("x2"))
        self.sim.request("POST", PODS, new_pod("x3"))
        self.assertTrue(w.done.wait(5), "the connection is reset")
        self.assertEqual([e["object"]["metadata"]["name"] for e in w.events], ["x2"])

    def test_delay(self):
        w = self.watch_with({"watchDelay": 1.5})
        t0 = time.monotonic()
        self.sim.request("POST", PODS, new_pod("x5"))
        self.assertEqual(len(w.wait(1)), 1)
        self.assertGreaterEqual(time.monotonic() - t0, 1.4, "the event came before its delay")
        code, _, body = self.sim.request("POST", "/_sim/faults", {"verb": "watch", "watchDelay": "1"})
        self.assertEqual(code, 400)
        self.assertIn("watchDelay must be a number of seconds", body["message"])

    def test_drop(self):
        w = self.watch_with({"watchDrop": True})
        self.sim.request("POST", PODS, new_pod("x4"))
        time.sleep(1.5)
        self.assertEqual(w.events, [])
        self.assertEqual(self.sim.obj("/_sim/journal")["inFlightWatches"], 1)


if __name__ == "__main__":
    unittest.main()
