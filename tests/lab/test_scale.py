#!/usr/bin/env python3
"""tests/lab/scale.py at a tiny size: 20 nodes, 200 pods, 20 of them virt-launchers.

A load (cache=False, into a cache directory of its own) and then a start from that cache:
- every object gen_cluster.py wrote is on the server, under the name it wrote;
- each one's managedFields are the server's: an Apply entry of the loader's field manager, and
  nothing of the snapshot's (no Update entry of kubelet, kube-controller-manager, virt-*);
- owner references and `kubevirt.io/created-by` labels name the server's VMI UIDs;
- every pod is Running, its status written by KWOK (the `kwok` field manager, a pod IP);
- the cached start serves the same objects (same UIDs, resourceVersions) and is not audited
  for the loader.

Skips (unittest.SkipTest, with the reason) only when kube-apiserver or KWOK are not built here
(tests/lab/build.sh) or there is no etcd. Run: python3 tests/lab/test_scale.py
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import scale  # noqa: E402
from cluster import LabUnavailable  # noqa: E402
from kubeclient import Client  # noqa: E402

NODES, PODS, VMS = 20, 200, 20


def snapshot_objects(tmp):
    path = os.path.join(tmp, "cluster.json")
    subprocess.run([sys.executable, scale.GEN_CLUSTER, "--nodes", str(NODES), "--pods", str(PODS),
                    "--vms", str(VMS), "--seed", "1", "--out", path], check=True)
    return list(scale.read_snapshot(path))


def server_objects(sc):
    """{(kind, namespace, name): object} of the kinds the loader writes."""
    out = {}
    for kind in scale.KIND_ORDER:
        items, _ = sc.cluster.client.list_all(scale.kvstandin.path_of(sc.res[kind]))
        for o in items:
            md = o["metadata"]
            out[(kind, md.get("namespace"), md["name"])] = o
    return out


class ScaleTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="test_scale.")
        cls.cache = os.path.join(cls.tmp, "cache")
        cls.snapshot = snapshot_objects(cls.tmp)
        t = time.time()
        sc = scale.ScaleCluster(NODES, PODS, VMS, cache=False, cache_dir=cls.cache,
                                users={"bench-user": ["system:masters"]}, audited_users=["bench-user"])
        try:
            sc.start()
        except LabUnavailable as e:
            shutil.rmtree(cls.tmp, ignore_errors=True)
            raise unittest.SkipTest("kube-apiserver or KWOK unavailable: %s" % e)
        try:
            cls.loaded_stats = dict(sc.load_stats)
            cls.loaded = server_objects(sc)
            cls.loaded_seconds = time.time() - t
            c = sc.cluster
            admin = Client("127.0.0.1", c.port, c.certs["ca.crt"], c.admin_token)
            admin.get("/api/v1/namespaces/default")
            admin.close()
            deadline = time.time() + 10   # the audit log is written asynchronously
            while time.time() < deadline and not c.audit_events(since_reset=False):
                time.sleep(0.1)
            cls.loaded_audit = c.audit_events(since_reset=False)
        finally:
            sc.stop()
        t = time.time()
        cls.sc = scale.ScaleCluster(NODES, PODS, VMS, cache=True, cache_dir=cls.cache)
        try:
            cls.sc.start()
            cls.cached = server_objects(cls.sc)
        except BaseException:
            cls.sc.stop()
            shutil.rmtree(cls.tmp, ignore_errors=True)
            raise
        cls.cached_seconds = time.time() - t
        print("\ntest_scale: loaded in %.1f s, cached start in %.1f s" % (cls.loaded_seconds, cls.cached_seconds),
              file=sys.stderr)

    @classmethod
    def tearDownClass(cls):
        cls.sc.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_every_object_present(self):
        want = {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) for o in self.snapshot}
        missing = sorted(k for k in want if k not in self.loaded)
        self.assertEqual(missing, [])
        self.assertEqual(self.loaded_stats["source"], "loaded")
        self.assertEqual(self.loaded_stats["objects"], len(self.snapshot))

    def test_managed_fields_are_the_servers(self):
        names = {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) for o in self.snapshot}
        for key in names:
            mf = self.loaded[key]["metadata"].get("managedFields") or []
            applied = [m for m in mf if m["manager"] == scale.FIELD_MANAGER]
            self.assertTrue(applied, "%s has no entry of %s: %s" % (key, scale.FIELD_MANAGER, mf))
            self.assertTrue(all(m["operation"] == "Apply" for m in applied), (key, applied))
            others = {m["manager"] for m in mf} - {scale.FIELD_MANAGER, "kwok"}
            # the system priority classes are kube-apiserver's own before the loader applies them
            if key[0] != "PriorityClass":
                self.assertEqual(others, set(), "%s has managedFields of %s" % (key, others))
            self.assertNotIn("kubelet", {m["manager"] for m in mf})

    def test_owner_references_resolve(self):
        vmi_uids = {o["metadata"]["uid"] for k, o in self.loaded.items() if k[0] == "VirtualMachineInstance"}
        self.assertEqual(len(vmi_uids), VMS)
        launchers = [o for k, o in self.loaded.items() if k[0] == "Pod" and k[2].startswith("virt-launcher-")]
        self.assertEqual(len(launchers), VMS)
        for p in launchers:
            md = p["metadata"]
            ref = md["ownerReferences"][0]
            vmi = self.loaded[("VirtualMachineInstance", md["namespace"], ref["name"])]
            self.assertEqual(ref["uid"], vmi["metadata"]["uid"], md["name"])
            self.assertEqual(md["labels"]["kubevirt.io/created-by"], vmi["metadata"]["uid"], md["name"])
        # a snapshot UID the server made anew: none of the snapshot's VMI UIDs is still referred to
        old = {o["metadata"]["uid"] for o in self.snapshot if o["kind"] == "VirtualMachineInstance"}
        self.assertFalse(old & vmi_uids)

    def test_pods_running_by_kwok(self):
        pods = [o for k, o in self.loaded.items() if k[0] == "Pod"]
        self.assertEqual(len(pods), PODS)
        placed = {o["metadata"]["name"]: o["spec"]["nodeName"] for o in self.snapshot if o["kind"] == "Pod"}
        for p in pods:
            self.assertEqual(p["status"].get("phase"), "Running", p["metadata"]["name"])
            self.assertTrue(p["status"].get("podIP"), p["metadata"]["name"])
            writers = {(m["manager"], m.get("subresource")) for m in p["metadata"]["managedFields"]}
            self.assertIn(("kwok", "status"), writers)
            self.assertEqual(p["spec"]["nodeName"], placed[p["metadata"]["name"]])
        self.assertEqual(self.loaded_stats["podStatus"], "KWOK")
        self.assertGreater(self.loaded_stats["kwokSeconds"], 0)

    def test_loader_and_kwok_not_audited(self):
        # the load's thousands of requests and KWOK's status writes: none; the admin's one GET
        users = [(e.get("user") or {}).get("username") for e in self.loaded_audit]
        self.assertEqual(users, ["realapi-admin"])

    def test_audited_users(self):
        sc = scale.ScaleCluster(NODES, PODS, VMS, cache=True, cache_dir=self.cache,
                                users={"bench-user": ["system:masters"], "quiet-user": ["system:masters"]},
                                audited_users=["bench-user"])
        try:
            sc.start()
            c = sc.cluster
            c.reset_requests()
            for token in (c.user_tokens["bench-user"], c.user_tokens["quiet-user"], c.admin_token):
                client = Client("127.0.0.1", c.port, c.certs["ca.crt"], token)
                client.get("/api/v1/nodes", limit=1)
                client.close()
            deadline = time.time() + 10
            while time.time() < deadline and len(c.audit_events()) < 2:
                time.sleep(0.1)
            users = sorted((e.get("user") or {}).get("username") for e in c.audit_events())
            self.assertEqual(users, ["bench-user", "realapi-admin"])
        finally:
            sc.stop()

    def test_cached_start_same_objects(self):
        self.assertEqual(self.sc.load_stats["source"], "cached etcd data")
        self.assertEqual(set(self.cached), set(self.loaded))
        for k, o in self.loaded.items():
            if k[0] in ("Namespace", "PriorityClass"):
                continue  # kube-apiserver's own may be touched at its start
            c = self.cached[k]
            self.assertEqual(c["metadata"]["uid"], o["metadata"]["uid"], k)
            self.assertEqual(json.dumps(c, sort_keys=True), json.dumps(o, sort_keys=True), k)
        self.assertEqual(self.sc.not_running(), 0)

    def test_restart_apiserver(self):
        pid = self.sc.apiserver_pid()
        secs = self.sc.restart_apiserver(0.2)
        self.assertNotEqual(self.sc.apiserver_pid(), pid)
        self.assertGreater(secs, 0)
        self.assertIn("apiserver_request_total", self.sc.apiserver_metrics())
        self.assertEqual(self.sc.cluster.client.get("/api/v1/nodes", limit=1)["items"][0]["metadata"]["name"],
                         "node-00000")


if __name__ == "__main__":
    unittest.main(verbosity=2)
