"""The API simulator against the real kube-apiserver: the same requests to both, the answers compared.

Both start from the same snapshot (the KubeVirt example, and the PDB cluster of the live tests);
the probes of a snapshot run in order on one server of each kind (those that read first); each
sends one request sequence and compares the HTTP status and the parts of the
answer a client reads (Status reason, message, code, details; the fields of an object named by
the probe), after removing what legitimately differs (UIDs, resourceVersions, timestamps).
Where the simulator answered differently it was fixed to match (tests/apisim/README.md lists
each difference found and its fix); the few differences that remain on purpose are in
ACCEPTED, each with its reason, and the test checks that they still differ as described (so a
stale entry fails too).
"""

import json
import os
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "apisim"))

import realtest  # noqa: E402
from simtest import SimProcess  # noqa: E402

EXAMPLE = os.path.join(REPO, "examples", "kubevirt-rebalance", "cluster.json")
PDB_CLUSTER = os.path.join(REPO, "tests", "data", "live", "pdb-cluster.json")
DESCHEDULER_EVICTION = {"requested-by": "sigs.k8s.io/descheduler",
                        "reason": "triggered by test/LowNodeUtilization: node is overutilized"}


def eviction(ns, name, annotations=None, body_name=None):
    return {"apiVersion": "policy/v1", "kind": "Eviction",
            "metadata": {"name": body_name or name, "namespace": ns, "annotations": annotations or {}}}


def evict_path(ns, name, dry_run=False):
    return "/api/v1/namespaces/%s/pods/%s/eviction%s" % (ns, name, "?dryRun=All" if dry_run else "")


def status_view(code, body):
    """What a client reads of an answer that is a Status (or the code alone for an object)."""
    if isinstance(body, dict) and body.get("kind") == "Status":
        out = {k: body.get(k) for k in ("status", "reason", "message", "code")}
        if body.get("details"):
            d = dict(body["details"])
            d.pop("uid", None)
            out["details"] = d
        return code, out
    return code, None


def pod_phase_or_gone(server, ns, name):
    code, _, body = server.get("/api/v1/namespaces/%s/pods/%s" % (ns, name))
    if code == 404:
        return "gone"
    return (body.get("status") or {}).get("phase")


# Each probe: (name, snapshot, fn(server) -> a JSON-able observation)

def p_pod_not_found(s):
    return status_view(*s.get("/api/v1/namespaces/vms/pods/nope")[::2])


def p_evict_missing_pod(s):
    code, _, body = s.request("POST", evict_path("vms", "nope"), eviction("vms", "nope"))
    return status_view(code, body)


def p_evict_name_mismatch(s):
    code, _, body = s.request("POST", evict_path("vms", "virt-launcher-vm-alpha-4f551"),
                              eviction("vms", "virt-launcher-vm-alpha-4f551", body_name="other"))
    return status_view(code, body)


def p_evict_launcher_twice(s):
    out = []
    for _ in range(2):
        code, _, body = s.request("POST", evict_path("vms", "virt-launcher-vm-alpha-4f551"),
                                  eviction("vms", "virt-launcher-vm-alpha-4f551", DESCHEDULER_EVICTION))
        out.append(status_view(code, body))
    vmi = s.obj("/apis/kubevirt.io/v1/namespaces/vms/virtualmachineinstances/vm-alpha")
    out.append({"evacuationNodeName": vmi["status"].get("evacuationNodeName"),
                "eviction-source": (vmi["metadata"].get("annotations") or {}).get("kubevirt.io/eviction-source")})
    return out


def p_evict_not_migratable(s):
    code, _, body = s.request("POST", evict_path("vms", "virt-launcher-vm-gpu-7c362"),
                              eviction("vms", "virt-launcher-vm-gpu-7c362", DESCHEDULER_EVICTION))
    return status_view(code, body)


def p_evict_dry_run(s):
    code, _, body = s.request("POST", evict_path("vms", "virt-launcher-vm-bravo-09d27", dry_run=True),
                              eviction("vms", "virt-launcher-vm-bravo-09d27", DESCHEDULER_EVICTION))
    vmi = s.obj("/apis/kubevirt.io/v1/namespaces/vms/virtualmachineinstances/vm-bravo")
    return [status_view(code, body), vmi["status"].get("evacuationNodeName")]


def p_evict_plain_pod(s):
    """A pod no PDB covers: 201 Success; the pod then ends (immediately in the simulator,
    through Terminating on a real server)."""
    code, _, body = s.request("POST", evict_path("kube-system", "kube-proxy-f5431"), eviction("kube-system",
                                                                                            "kube-proxy-f5431"))
    end = time.monotonic() + 10
    while pod_phase_or_gone(s, "kube-system", "kube-proxy-f5431") != "gone" and time.monotonic() < end:
        time.sleep(0.1)
    return [status_view(code, body), pod_phase_or_gone(s, "kube-system", "kube-proxy-f5431")]


def p_evict_pdb_blocked(s):
    code, _, body = s.request("POST", evict_path("shop", "web-6d4b9-0"), eviction("shop", "web-6d4b9-0"))
    pdb = s.obj("/apis/policy/v1/namespaces/shop/poddisruptionbudgets/web")
    st = pdb.get("status") or {}
    return [status_view(code, body), {k: st.get(k) for k in ("currentHealthy", "desiredHealthy",
                                                             "disruptionsAllowed", "expectedPods")}]


def p_evict_pdb_allowed(s):
    """minAvailable lowered to 3: one eviction goes (201), the budget is spent, the next is 429."""
    s.request("PATCH", "/apis/policy/v1/namespaces/shop/poddisruptionbudgets/web", {"spec": {"minAvailable": 3}},
              content_type="application/merge-patch+json")
    pdb_path = "/apis/policy/v1/namespaces/shop/poddisruptionbudgets/web"
    end = time.monotonic() + 10
    while time.monotonic() < end:  # the disruption controller (the stand-in on a real server) catches up
        st = s.obj(pdb_path).get("status") or {}
        if st.get("disruptionsAllowed") == 1 and st.get("observedGeneration") == s.obj(pdb_path)["metadata"]["generation"]:
            break
        time.sleep(0.1)
    out = []
    for name in ("web-6d4b9-0", "web-6d4b9-1"):
        code, _, body = s.request("POST", evict_path("shop", name), eviction("shop", name))
        out.append(status_view(code, body))
        # the disruption controller counts the pods again once the evicted one is gone (until
        # then a real server's 429 says "does not allow evicting pods currently": it only
        # decremented disruptionsAllowed)
        end = time.monotonic() + 10
        while (s.obj(pdb_path).get("status") or {}).get("currentHealthy") != 3 and time.monotonic() < end:
            time.sleep(0.1)
    return out


def p_list_paging(s):
    code, _, body = s.get("/api/v1/pods?limit=4")
    md = body.get("metadata") or {}
    code2, _, body2 = s.get("/api/v1/pods?limit=4&continue=" + md.get("continue", ""))
    md2 = body2.get("metadata") or {}
    return [code, len(body["items"]), bool(md.get("continue")), md.get("remainingItemCount"),
            code2, len(body2["items"]), bool(md2.get("continue")), md2.get("remainingItemCount"),
            [p["metadata"]["name"] for p in body["items"] + body2["items"]]]


def p_bad_continue(s):
    # not base64 / base64 of no JSON / a token of another encoding version
    return [status_view(*s.get("/api/v1/pods?limit=4&continue=" + t)[::2])
            for t in ("a=b", "not-a-token", "eyJ2IjoieCJ9")]


def p_watch_too_old(s):
    """A watch from a resourceVersion long compacted: one ERROR event with a 410 Status."""
    code, _, body = s.request("GET", "/api/v1/namespaces/vms/pods?watch=1&resourceVersion=1&timeoutSeconds=2",
                              raw=True)
    first = json.loads(body.decode().splitlines()[0]) if body else {}
    obj = first.get("object") or {}
    return [code, first.get("type"), obj.get("code"), obj.get("reason")]


def p_list_rv0_limit(s):
    """resourceVersion=0 (any version, from the cache) with a limit."""
    code, _, body = s.get("/api/v1/pods?limit=4&resourceVersion=0")
    md = body.get("metadata") or {}
    return [code, len(body["items"]), bool(md.get("continue"))]


def p_eviction_discovery(s):
    res = s.obj("/api/v1")["resources"]
    ev = [r for r in res if r["name"] == "pods/eviction"]
    return [{k: r.get(k) for k in ("name", "namespaced", "group", "version", "kind", "verbs")} for r in ev]


def p_vmi_strategic_patch(s):
    code, _, body = s.request("PATCH", "/apis/kubevirt.io/v1/namespaces/vms/virtualmachineinstances/vm-alpha",
                              {"metadata": {"labels": {"a": "b"}}},
                              content_type="application/strategic-merge-patch+json")
    return status_view(code, body)


def p_lease_conflict(s):
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
             "metadata": {"name": "probe", "namespace": "kube-system"}, "spec": {"holderIdentity": "a"}}
    code, _, created = s.request("POST", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases", lease)
    stale = dict(created)
    stale["metadata"] = dict(created["metadata"])
    stale["spec"] = {"holderIdentity": "b"}
    path = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/probe"
    s.request("PUT", path, stale)
    stale["spec"] = {"holderIdentity": "c"}
    code2, _, body2 = s.request("PUT", path, stale)  # the same, now stale, resourceVersion
    code3, _, body3 = s.request("POST", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases", lease)
    return [code, status_view(code2, body2), status_view(code3, body3)]


# in order: on one server per snapshot, the probes that read come before those that change it
PROBES = [
    ("pod not found", EXAMPLE, p_pod_not_found),
    ("eviction of a missing pod", EXAMPLE, p_evict_missing_pod),
    ("eviction whose body names another pod", EXAMPLE, p_evict_name_mismatch),
    ("paged list", EXAMPLE, p_list_paging),
    ("list with a malformed continue token", EXAMPLE, p_bad_continue),
    ("watch from a compacted resourceVersion", EXAMPLE, p_watch_too_old),
    ("list at resourceVersion 0 with a limit", EXAMPLE, p_list_rv0_limit),
    ("discovery of pods/eviction", EXAMPLE, p_eviction_discovery),
    ("strategic merge patch of a custom resource", EXAMPLE, p_vmi_strategic_patch),
    ("stale update and duplicate create of a Lease", EXAMPLE, p_lease_conflict),
    ("launcher eviction twice (KubeVirt webhook)", EXAMPLE, p_evict_launcher_twice),
    ("eviction of a VM that cannot migrate", EXAMPLE, p_evict_not_migratable),
    ("launcher eviction with dryRun=All", EXAMPLE, p_evict_dry_run),
    ("eviction of a pod without PDB", EXAMPLE, p_evict_plain_pod),
    ("eviction refused by a PDB", PDB_CLUSTER, p_evict_pdb_blocked),
    ("eviction allowed by a PDB, then its budget spent", PDB_CLUSTER, p_evict_pdb_allowed),
]

# Differences kept on purpose: probe name -> why. The test asserts they still differ.
ACCEPTED = {
    "watch from a compacted resourceVersion":
        "the simulator's watch window starts at the loaded state, so a version from before it is 410 "
        "Expired, as on a long-running cluster; a freshly started kube-apiserver's watch cache holds "
        "everything since its own start and replays it (etcd compaction does not shorten that window)",
}


def observe(snapshot, probes, server_factory):
    out = {}
    with server_factory(snapshot) as s:
        for name, _, fn in probes:
            out[name] = json.loads(json.dumps(fn(s)))
    return out


def sim_server(snapshot):
    return SimProcess(snapshot=snapshot, args=["--migration-seconds", "600"])


def real_server(snapshot):
    return realtest.RealServer(snapshot, ["--migration-seconds", "600"])


class SimulatorMatchesRealServer(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sim, cls.real = {}, {}
        for snap in sorted({p[1] for p in PROBES}):
            probes = [p for p in PROBES if p[1] == snap]
            cls.sim.update(observe(snap, probes, sim_server))
            cls.real.update(observe(snap, probes, real_server))

    def test_every_probe_answers_alike(self):
        diffs = []
        for name, _, _ in PROBES:
            same = self.sim[name] == self.real[name]
            if name in ACCEPTED:
                self.assertFalse(same, "%s: listed as an accepted difference but both answer %s"
                                 % (name, json.dumps(self.real[name])))
                continue
            if not same:
                diffs.append("%s:\n  simulator: %s\n  real:      %s" % (name, json.dumps(self.sim[name]),
                                                                      json.dumps(self.real[name])))
        self.assertEqual(diffs, [], "\n" + "\n".join(diffs))


if __name__ == "__main__":
    unittest.main()
