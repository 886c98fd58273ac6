"""Pod LISTs in kube-apiserver's protobuf encoding (`--protobuf-encoder`, simprotobuf.py).

A simulator started with pbenc (tests/apisim/pbenc/, built by its build.sh; the tests that need
it print SKIP with the reason when Go or the module proxy is missing here) is paged through with
limit/continue twice, once asking for protobuf and once for JSON: the protobuf pages are read
with the small wire reader below and must carry the JSON pages' list metadata and items, in the
same order; and each page must be, byte for byte, what kube-apiserver's own protobuf serializer
(k8s.io/apimachinery's, run by `pbenc --list` on the JSON page) writes for that list. Then the
Accept rule (goautoneg's clause order, JSON first for `*/*`, protobuf only for pod LISTs, no
protobuf conversions), the on-demand encoding of pods written after the load, a pod pbenc
cannot encode (500 naming it, never JSON instead), and the simulator without an encoder.
"""

import json
import os
import subprocess
import sys
import tempfile
import threading
import unittest
from urllib.parse import quote

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import apisim  # noqa: E402
from simtest import CLUSTER, HERE, SimProcess, write_snapshot  # noqa: E402

BUILD = os.path.join(HERE, "pbenc", "build.sh")
PROTOBUF = "application/vnd.kubernetes.protobuf"
# what kube-scheduler (client-go with protobuf) and the descheduler's client send
PB_ACCEPT = "application/vnd.kubernetes.protobuf, application/json"
_pbenc = None


def pbenc():
    """The built pbenc binary; unittest.SkipTest (with the reason, printed as SKIP) when it
    cannot be built on this machine (build.sh exit 3); a failed build fails the test."""
    global _pbenc
    if _pbenc is None:
        p = subprocess.run([BUILD, "--print"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode == 3:
            _pbenc = unittest.SkipTest("pbenc cannot be built here: " + " ".join(p.stderr.split()))
            print("\nSKIP (protobuf lists): %s" % _pbenc, file=sys.stderr, flush=True)
        elif p.returncode != 0:
            raise AssertionError("tests/apisim/pbenc/build.sh failed (%d):\n%s" % (p.returncode, p.stderr))
        else:
            _pbenc = p.stdout.strip()
    if isinstance(_pbenc, unittest.SkipTest):
        raise _pbenc
    return _pbenc


# ---------------------------------------------------------------------------
# A protobuf wire reader: enough to take a list apart

def varint(buf, i):
    v = shift = 0
    while True:
        if i >= len(buf) or shift > 63:
            raise AssertionError("a varint runs past the message")
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        if b < 0x80:
            return v, i
        shift += 7


def fields(buf):
    """[(number, wire type, value)] of one message: an int for varints, bytes otherwise."""
    out, i = [], 0
    while i < len(buf):
        key, i = varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(buf, i)
        elif wt == 2:
            n, i = varint(buf, i)
            if i + n > len(buf):
                raise AssertionError("field %d: %d bytes past the message" % (num, i + n - len(buf)))
            v, i = bytes(buf[i:i + n]), i + n
        elif wt == 1:
            v, i = bytes(buf[i:i + 8]), i + 8
        elif wt == 5:
            v, i = bytes(buf[i:i + 4]), i + 4
        else:
            raise AssertionError("wire type %d" % wt)
        out.append((num, wt, v))
    return out


def first(msg, num, default=b""):
    for n, _, v in fields(msg):
        if n == num:
            return v
    return default


def read_list(body):
    """(kind, apiVersion, list meta {1: selfLink, 2: rv, 3: continue, 4: remaining}, [item bytes])
    of a `k8s\\0` + runtime.Unknown page, checking the envelope's exact field sequence."""
    if body[:4] != b"k8s\x00":
        raise AssertionError("no k8s\\0 magic: %r" % body[:16])
    env = fields(body[4:])
    if [(n, wt) for n, wt, _ in env] != [(1, 2), (2, 2), (3, 2), (4, 2)] or env[2][2] or env[3][2]:
        raise AssertionError("envelope fields %r" % [(n, wt, v if n != 2 else "...") for n, wt, v in env])
    tm = fields(env[0][2])
    if [(n, wt) for n, wt, _ in tm] != [(1, 2), (2, 2)]:
        raise AssertionError("typeMeta fields %r" % tm)
    raw = fields(env[1][2])
    if not raw or raw[0][:2] != (1, 2) or any(f[:2] != (2, 2) for f in raw[1:]):
        raise AssertionError("the list's fields are not metadata then items: %r" % [f[:2] for f in raw])
    lm = fields(raw[0][2])
    if [(n, wt) for n, wt, _ in lm][:3] != [(1, 2), (2, 2), (3, 2)] or \
            [(n, wt) for n, wt, _ in lm][3:] not in ([], [(4, 0)]):
        raise AssertionError("ListMeta fields %r" % lm)
    return tm[1][2].decode(), tm[0][2].decode(), {n: v for n, _, v in lm}, [f[2] for f in raw[1:]]


def item_summary(pod_bytes):
    """name, namespace, uid, resourceVersion, spec.nodeName, status.phase of one Pod message."""
    md = first(pod_bytes, 1)
    return (first(md, 1).decode(), first(md, 3).decode(), first(md, 5).decode(), first(md, 6).decode(),
            first(first(pod_bytes, 2), 10).decode(), first(first(pod_bytes, 3), 1).decode())


def json_summary(pod):
    md = pod["metadata"]
    return (md["name"], md.get("namespace", ""), md.get("uid", ""), md.get("resourceVersion", ""),
            pod.get("spec", {}).get("nodeName", ""), pod.get("status", {}).get("phase", ""))


def extra_pods():
    """A few pods beside the example cluster's 13: more pages, two namespaces, quantities."""
    pods = []
    for i in range(12):
        pods.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": "batch-%02d" % i, "namespace": "batch" if i % 2 else "shop",
                                  "labels": {"app": "batch", "i": str(i)},
                                  "annotations": {"note": "pod %d" % i}},
                     "spec": {"nodeName": "worker-%d" % (1 + i % 3), "priority": i,
                              "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
                              "containers": [{"name": "c", "image": "busybox",
                                              "resources": {"requests": {"cpu": "%dm" % (100 + i),
                                                                         "memory": "64Mi"}}}]},
                     "status": {"phase": "Running" if i % 4 else "Pending"}})
    return pods


def snapshot_with(items, directory):
    with open(CLUSTER) as f:
        base = json.load(f)["items"]
    return write_snapshot(base + items, directory)


class ProtobufLists(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.sim = None
        cls.skip = None
        try:
            cls.pbenc = pbenc()
        except unittest.SkipTest as e:
            cls.skip = e
            return
        cls.sim = SimProcess(snapshot_with(extra_pods(), cls.tmp.name),
                             args=["--protobuf-encoder", cls.pbenc])

    @classmethod
    def tearDownClass(cls):
        if cls.sim is not None:
            log = cls.sim.log()
            code = cls.sim.stop()
            assert code == 0 and "internal error" not in log, log
        cls.tmp.cleanup()

    def setUp(self):
        if self.skip is not None:
            raise self.skip

    def get(self, path, accept):
        return self.sim.get(path, headers={"Accept": accept}, raw=True)

    def go_list(self, json_page):
        """kube-apiserver's protobuf serializer's bytes for a JSON PodList (pbenc --list)."""
        p = subprocess.run([self.pbenc, "--list"], input=json_page, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        self.assertEqual(p.returncode, 0, p.stderr.decode())
        return p.stdout

    def pages(self, path, limit):
        """[(protobuf body, JSON body)] of one paged list, each page asked both ways."""
        out, cont = [], ""
        while True:
            q = "%s?limit=%d" % (path, limit) + ("&continue=" + quote(cont, safe="") if cont else "")
            code, hdr, pb = self.get(q, PB_ACCEPT)
            self.assertEqual(code, 200, pb[:300])
            self.assertEqual(hdr["Content-Type"], PROTOBUF)
            self.assertEqual(int(hdr["Content-Length"]), len(pb))
            code, hdr, js = self.get(q, "application/json")
            self.assertEqual((code, hdr["Content-Type"]), (200, "application/json"))
            out.append((pb, js))
            cont = json.loads(js)["metadata"].get("continue", "")
            if not cont:
                return out

    def check_page(self, pb, js):
        kind, av, lm, items = read_list(pb)
        page = json.loads(js)
        self.assertEqual((kind, av), ("PodList", "v1"))
        meta = page["metadata"]
        self.assertEqual(lm[1], b"")  # selfLink: always written, empty
        self.assertEqual(lm[2].decode(), meta["resourceVersion"])
        self.assertEqual(lm[3].decode(), meta.get("continue", ""))
        self.assertEqual(lm.get(4), meta.get("remainingItemCount"))
        self.assertEqual([item_summary(b) for b in items], [json_summary(p) for p in page["items"]])
        for (name, ns, uid, rv, _, _) in map(item_summary, items):
            self.assertTrue(name and ns and uid and rv, (name, ns, uid, rv))
        self.assertEqual(self.go_list(js), pb, "the page is not what kube-apiserver's serializer writes")
        return len(items), meta

    def test_paged_list_matches_json_and_go(self):
        for path, limit in (("/api/v1/pods", 4), ("/api/v1/pods", 7), ("/api/v1/namespaces/shop/pods", 3)):
            pages = self.pages(path, limit)
            seen = []
            for pb, js in pages:
                n, meta = self.check_page(pb, js)
                seen += [p["metadata"]["name"] for p in json.loads(js)["items"]]
                if meta.get("continue"):
                    self.assertEqual(n, limit)
                    self.assertIn("remainingItemCount", meta)
            self.assertGreater(len(pages), 2, path)
            code, _, whole = self.get(path, "application/json")
            self.assertEqual(seen, [p["metadata"]["name"] for p in json.loads(whole)["items"]], path)

    def test_unpaged_selected_and_empty_lists(self):
        for q in ("/api/v1/pods", "/api/v1/pods?resourceVersion=0&limit=3",
                  "/api/v1/pods?labelSelector=app%3Dbatch", "/api/v1/pods?fieldSelector=spec.nodeName%3Dworker-2",
                  "/api/v1/namespaces/nowhere/pods", "/api/v1/pods?labelSelector=app%3Dnone"):
            code, hdr, pb = self.get(q, PB_ACCEPT)
            self.assertEqual((code, hdr["Content-Type"]), (200, PROTOBUF), q)
            code, _, js = self.get(q, "application/json")
            n, meta = self.check_page(pb, js)
            self.assertNotIn("continue", meta, q)
        code, _, pb = self.get("/api/v1/pods?labelSelector=app%3Dnone", PB_ACCEPT)
        self.assertEqual(len(read_list(pb)[3]), 0)

    def test_accept_rule(self):
        pods, one = "/api/v1/pods?limit=2", "/api/v1/namespaces/shop/pods/batch-00"
        cases = [
            (pods, PB_ACCEPT, PROTOBUF),
            (pods, PROTOBUF, PROTOBUF),
            (pods, "application/vnd.kubernetes.protobuf;q=0.5, application/json", "application/json"),
            (pods, "application/json;q=0.9, application/vnd.kubernetes.protobuf", PROTOBUF),
            (pods, "*/*, application/vnd.kubernetes.protobuf", PROTOBUF),  # a concrete type before */*
            (pods, "*/*", "application/json"),
            (pods, "application/*", "application/json"),
            (pods, "application/json, application/vnd.kubernetes.protobuf", "application/json"),
            (pods, "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io, "
                   "application/json;as=Table;v=v1;g=meta.k8s.io", "application/json;as=Table;v=v1;g=meta.k8s.io"),
            (pods, "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io, "
                   "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io", "application/json"),
            ("/api/v1/nodes", PB_ACCEPT, "application/json"),
            ("/api/v1/nodes", PROTOBUF, 406),
            ("/apis/metrics.k8s.io/v1beta1/pods", PB_ACCEPT, "application/json"),
            (one, PB_ACCEPT, "application/json"),
            (one, PROTOBUF, 406),
            (pods, "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io", 406),
        ]
        for path, accept, want in cases:
            code, hdr, body = self.get(path, accept)
            if want == 406:
                st = json.loads(body)
                self.assertEqual((code, st["reason"]), (406, "NotAcceptable"), (path, accept))
                continue
            self.assertEqual((code, hdr["Content-Type"]), (200, want), (path, accept))
            if want == PROTOBUF:
                read_list(body)
            else:
                self.assertIn(json.loads(body)["kind"], ("PodList", "NodeList", "PodMetricsList", "Pod", "Table",
                                                         "PartialObjectMetadataList"))
        code, _, st = self.get("/api/v1/pods", "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io")
        self.assertEqual(json.loads(st)["message"], "only the following media types are accepted: "
                         "application/json, application/vnd.kubernetes.protobuf")
        # a watch stays JSON: its first event is a JSON line
        code, hdr, body = self.get("/api/v1/namespaces/shop/pods?watch=1&timeoutSeconds=1", PB_ACCEPT)
        self.assertEqual(code, 200)
        self.assertTrue(hdr["Content-Type"].startswith("application/json"), hdr)
        self.assertEqual(json.loads(body.split(b"\n")[0])["type"], "ADDED")

    def test_written_pods_are_encoded_on_demand(self):
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": "late", "namespace": "batch", "labels": {"app": "late"}},
               "spec": {"nodeName": "worker-1", "containers": [{"name": "c", "image": "busybox"}]}}
        code, _, made = self.sim.request("POST", "/api/v1/namespaces/batch/pods", pod)
        self.assertEqual(code, 201, made)
        code, _, patched = self.sim.request("PATCH", "/api/v1/namespaces/batch/pods/batch-01",
                                            {"metadata": {"labels": {"patched": "yes"}}},
                                            content_type="application/merge-patch+json")
        self.assertEqual(code, 200, patched)
        try:
            code, _, pb = self.get("/api/v1/namespaces/batch/pods", PB_ACCEPT)
            code, _, js = self.get("/api/v1/namespaces/batch/pods", "application/json")
            self.check_page(pb, js)
            got = {s[0]: s for s in map(item_summary, read_list(pb)[3])}
            self.assertEqual(got["late"][2:4], (made["metadata"]["uid"], made["metadata"]["resourceVersion"]))
            self.assertEqual(got["batch-01"][3], patched["metadata"]["resourceVersion"])
        finally:
            self.sim.request("DELETE", "/api/v1/namespaces/batch/pods/late")


class ProtobufFailures(unittest.TestCase):
    def test_pod_pbenc_cannot_encode_is_a_500_naming_it(self):
        enc = pbenc()
        bad = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bad-priority", "namespace": "odd"},
               "spec": {"priority": "high", "containers": [{"name": "c", "image": "busybox"}]}}
        with tempfile.TemporaryDirectory() as tmp:
            sim = SimProcess(snapshot_with([bad], tmp), args=["--protobuf-encoder", enc])
            try:
                code, hdr, body = sim.get("/api/v1/pods", headers={"Accept": PB_ACCEPT}, raw=True)
                st = json.loads(body)
                self.assertEqual((code, hdr["Content-Type"], st["reason"]), (500, "application/json", "InternalError"))
                self.assertIn('pod "odd/bad-priority" cannot be encoded as protobuf', st["message"])
                self.assertEqual(st["details"]["name"], "bad-priority")
                # the other namespaces' pages, and JSON, are served as before
                code, hdr, _ = sim.get("/api/v1/namespaces/vms/pods", headers={"Accept": PB_ACCEPT}, raw=True)
                self.assertEqual((code, hdr["Content-Type"]), (200, PROTOBUF))
                code, _, lst = sim.get("/api/v1/namespaces/odd/pods")
                self.assertEqual((code, lst["items"][0]["metadata"]["name"]), (200, "bad-priority"))
            finally:
                log = sim.log()
                self.assertEqual(sim.stop(), 0)
            self.assertIn("protobuf: 1 pods cannot be encoded", log)

    def test_without_encoder_protobuf_is_not_served(self):
        with SimProcess() as sim:
            code, hdr, body = sim.get("/api/v1/pods?limit=2", headers={"Accept": PB_ACCEPT}, raw=True)
            self.assertEqual((code, hdr["Content-Type"], json.loads(body)["kind"]), (200, "application/json", "PodList"))
            code, _, st = sim.get("/api/v1/pods", headers={"Accept": PROTOBUF})
            self.assertEqual((code, st["reason"], st["message"]), (406, "NotAcceptable", "only the following media "
                                                                   "types are accepted: application/json"))

    def test_unusable_encoder_stops_the_start(self):
        with tempfile.TemporaryDirectory() as tmp:
            p = subprocess.run([sys.executable, apisim.__file__, "--snapshot", CLUSTER, "--port", "0",
                                "--protobuf-encoder", os.path.join(tmp, "missing")],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
        self.assertEqual(p.returncode, 2)
        self.assertIn("--protobuf-encoder: cannot run the protobuf encoder", p.stderr)
        self.assertNotIn("ready", p.stdout)


class ProtobufConcurrency(unittest.TestCase):
    def test_lists_while_pods_change(self):
        """Protobuf pages read by four clients at once while churn replaces and changes pods:
        every page 200 and well formed, and the last one equal to the JSON list."""
        enc = pbenc()
        with tempfile.TemporaryDirectory() as tmp:
            sim = SimProcess(snapshot_with(extra_pods(), tmp), args=["--protobuf-encoder", enc])
            errors, pages, stop = [], [], threading.Event()

            def reader():
                conn = sim.connection()
                try:
                    while not stop.is_set():
                        cont = ""
                        while True:
                            q = "/api/v1/pods?limit=5" + ("&continue=" + quote(cont, safe="") if cont else "")
                            code, _, body = sim.get(q, headers={"Accept": PB_ACCEPT}, raw=True, conn=conn)
                            if code == 410:  # a token whose version left the watch window
                                break
                            if code != 200:
                                raise AssertionError("%s: %d %s" % (q, code, body[:300]))
                            cont = read_list(body)[2][3].decode()
                            pages.append(q)
                            if not cont:
                                break
                except Exception as e:  # noqa: BLE001 - reported by the main thread
                    errors.append(e)
                finally:
                    conn.close()

            threads = [threading.Thread(target=reader) for _ in range(4)]
            try:
                for t in threads:
                    t.start()
                for seed in range(8):
                    sim.control("POST", "churn", {"fraction": 0.5, "seed": seed})
                stop.set()
                for t in threads:
                    t.join(timeout=60)
                self.assertEqual(errors, [])
                self.assertGreaterEqual(len(pages), 20)
                code, _, pb = sim.get("/api/v1/pods", headers={"Accept": PB_ACCEPT}, raw=True)
                code, _, js = sim.get("/api/v1/pods", raw=True)
                self.assertEqual([item_summary(b) for b in read_list(pb)[3]],
                                 [json_summary(p) for p in json.loads(js)["items"]])
            finally:
                stop.set()
                log = sim.log()
                self.assertEqual(sim.stop(), 0)
            self.assertNotIn("internal error", log)


class AcceptOrder(unittest.TestCase):
    """apisim.parse_accept against goautoneg's ParseAccept (the order kube-apiserver tries)."""

    def test_order(self):
        def order(h):
            return ["%s/%s" % (t, s) for t, s, _ in apisim.parse_accept(h)]
        self.assertEqual(order("application/vnd.kubernetes.protobuf, application/json"),
                         ["application/vnd.kubernetes.protobuf", "application/json"])
        self.assertEqual(order("application/vnd.kubernetes.protobuf;q=0.5, application/json;q=0.9"),
                         ["application/json", "application/vnd.kubernetes.protobuf"])
        self.assertEqual(order("*/*, application/*, text/html"), ["text/html", "application/*", "*/*"])
        self.assertEqual(order("*, text, a/b/c, , application/json"), ["application/json", "*/*"])
        self.assertEqual(order("a/b;q=x, c/d"), ["c/d", "a/b"])  # an unreadable q is 0, as ParseFloat's error
        self.assertEqual(apisim.parse_accept("application/json ; as=Table ; v=v1;g=meta.k8s.io;x")[0][2],
                         {"as": "Table", "v": "v1", "g": "meta.k8s.io"})

    def test_negotiate(self):
        self.assertEqual(apisim.negotiate(PB_ACCEPT, protobuf=True), ("protobuf", None))
        self.assertEqual(apisim.negotiate(PB_ACCEPT), ("json", None))
        self.assertEqual(apisim.negotiate(""), ("json", None))
        self.assertEqual(apisim.negotiate("application/json;as=Table;v=v1;g=meta.k8s.io, application/json"),
                         ("table", "v1"))


if __name__ == "__main__":
    unittest.main()
