"""`POST .../pods/NAME/eviction`: kube-apiserver's EvictionREST, plus PDB status.

Order of checks follows pkg/registry/core/pod/storage/eviction.go:
body and name check, then admission (here: KubeVirt's validating webhook for
pods named `virt-launcher*`, whose denial is wrapped exactly as apiserver wraps
a webhook's result), then: terminal/pending/terminating pods are deleted
without a PDB check; more than one matching PDB is a 500; an unready pod is
let go when the budget is already met (or the PDB says AlwaysAllow);
otherwise `disruptionsAllowed == 0` is the 429 with the `DisruptionBudget`
cause; the delete that ends an eviction checks `deleteOptions.preconditions.uid`
(409 for another pod of that name).  Success is 201 with a `Success` Status and
the pod is deleted at once (the simulator has no kubelet, so graceful
termination takes no time).

There is no disruption controller either: a PDB's status is computed from the
pods it selects whenever it is needed, and `refresh_pdb_status()` writes it
back to the stored PDBs of namespaces whose pods changed, so readers see
current `disruptionsAllowed` / `currentHealthy` / `desiredHealthy`.
"""

import math

from simutil import ApiError, rfc3339, status_object, success_status, not_found
from simstore import match_labels, selector_from_object

PDB_MESSAGE = "Cannot evict pod as it would violate the pod's disruption budget."


def _scaled(value, total, round_up):
    """intstr: an int, or a percentage of `total`."""
    if isinstance(value, str) and value.endswith("%"):
        try:
            pct = int(value[:-1])
        except ValueError:
            return None
        v = pct * total / 100.0
        return int(math.ceil(v)) if round_up else int(math.floor(v))
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def pdb_selects(pdb):
    """Requirements of a PDB's selector; None (selects nothing) when nil or empty, as eviction.go treats it."""
    sel = (pdb.get("spec") or {}).get("selector")
    reqs = selector_from_object(sel)
    if not reqs:
        return None
    return reqs


def pdb_status(store, pods_res, pdb):
    """What the disruption controller would write: expected, healthy, desired, allowed."""
    ns = pdb["metadata"].get("namespace", "")
    reqs = pdb_selects(pdb)
    expected = healthy = 0
    if reqs is not None:
        for e in store.entries(pods_res, ns):
            if e.fields.get("status.phase") in ("Succeeded", "Failed") or e.info.deleting:
                continue
            if match_labels(reqs, e.labels):
                expected += 1
                if e.info.ready:
                    healthy += 1
    spec = pdb.get("spec") or {}
    if spec.get("minAvailable") is not None:
        desired = _scaled(spec["minAvailable"], expected, True) or 0
    elif spec.get("maxUnavailable") is not None:
        desired = max(0, expected - (_scaled(spec["maxUnavailable"], expected, True) or 0))
    else:
        desired = expected
    allowed = max(0, healthy - desired)
    return {"observedGeneration": pdb["metadata"].get("generation", 1), "disruptionsAllowed": allowed,
            "currentHealthy": healthy, "desiredHealthy": desired, "expectedPods": expected}


def refresh_pdb_status(store, registry, namespaces):
    """Write computed status into the PDBs of `namespaces` (only when it changed)."""
    pdbs_res = registry.get("policy", "v1", "poddisruptionbudgets")
    pods_res = registry.get("", "v1", "pods")
    for ns in namespaces:
        for e in store.entries(pdbs_res, ns):
            pdb = e.obj()
            want = pdb_status(store, pods_res, pdb)
            st = pdb.get("status") or {}
            if all(st.get(k) == v for k, v in want.items()):
                continue

            def apply(o, want=want):
                s = o.setdefault("status", {})
                s.update(want)
                ok = want["disruptionsAllowed"] > 0
                s["conditions"] = [{"type": "DisruptionAllowed", "status": "True" if ok else "False",
                                    "reason": "SufficientPods" if ok else "InsufficientPods", "message": "",
                                    "observedGeneration": want["observedGeneration"],
                                    "lastTransitionTime": rfc3339()}]
                return True
            store.modify(pdbs_res, ns, e.name, apply)


def evict(store, registry, kubevirt, ns, name, body, dry_run_param):
    """Returns (http code, body dict) or raises ApiError."""
    pods_res = registry.get("", "v1", "pods")
    if not isinstance(body, dict):
        raise ApiError(400, "BadRequest", "the body of the request was not a JSON object")
    kind, av = body.get("kind"), body.get("apiVersion")
    if kind != "Eviction" or av not in ("policy/v1", "policy/v1beta1"):
        raise ApiError(400, "BadRequest", "not a Eviction object: expected policy/v1 Eviction, got %s %s"
                       % (av, kind))
    md = body.get("metadata") if isinstance(body.get("metadata"), dict) else {}
    if md.get("name") != name:
        raise ApiError(400, "BadRequest", "name in URL does not match name in Eviction object")
    opts = body.get("deleteOptions") if isinstance(body.get("deleteOptions"), dict) else {}
    dry_run = dry_run_param == "All" or (opts.get("dryRun") or [None])[0] == "All"

    with store.lock:
        entry = store.entry(pods_res, ns, name)
        if entry is None:
            raise not_found(pods_res, name)
        pod = entry.obj()
        if name.startswith("virt-launcher") and kubevirt is not None:
            deny = kubevirt.admit_eviction(pod, body, dry_run)
            if deny is not None:
                raise ApiError(429, "", 'admission webhook "%s" denied the request: %s'
                               % ("virt-launcher-eviction-interceptor.kubevirt.io", deny))
        uid = (opts.get("preconditions") or {}).get("uid")
        phase = (pod.get("status") or {}).get("phase")
        if phase in ("Succeeded", "Failed", "Pending") or pod["metadata"].get("deletionTimestamp"):
            return _delete(store, pods_res, ns, name, dry_run, entry, uid)
        pdbs = []
        if entry.labels:
            for pe in store.entries(registry.get("policy", "v1", "poddisruptionbudgets"), ns):
                p = pe.obj()
                reqs = pdb_selects(p)
                if reqs is not None and match_labels(reqs, entry.labels):
                    pdbs.append(p)
        if len(pdbs) > 1:
            return 500, status_object(500, "", "This pod has more than one PodDisruptionBudget, which the eviction "
                                      "subresource does not support.")
        if pdbs:
            pdb = pdbs[0]
            st = pdb_status(store, pods_res, pdb)
            if not entry.info.ready:
                if (pdb.get("spec") or {}).get("unhealthyPodEvictionPolicy") == "AlwaysAllow":
                    return _delete(store, pods_res, ns, name, dry_run, entry, uid)
                if st["currentHealthy"] >= st["desiredHealthy"] and st["desiredHealthy"] > 0:
                    return _delete(store, pods_res, ns, name, dry_run, entry, uid)
            if st["disruptionsAllowed"] <= 0:
                details = {"causes": [{"reason": "DisruptionBudget",
                                       "message": "The disruption budget %s needs %d healthy pods and has %d currently"
                                       % (pdb["metadata"]["name"], st["desiredHealthy"], st["currentHealthy"])}]}
                raise ApiError(429, "TooManyRequests", PDB_MESSAGE, details)
        return _delete(store, pods_res, ns, name, dry_run, entry, uid)


def _delete(store, pods_res, ns, name, dry_run, entry, uid):
    """The delete that ends an eviction; its UID precondition is checked here, after the PDB
    checks, as kube-apiserver checks it in the delete (so a pod whose budget is spent answers
    429 whatever its UID). kube-apiserver has taken one disruption of the budget by then, which
    a refused delete leaves taken until the disruption controller gives it back; the simulator
    computes budgets from the pods and keeps no such record."""
    if uid and uid != entry.uid:
        raise ApiError(409, "Conflict", 'Operation cannot be fulfilled on Pod "%s": the UID in the precondition '
                       "(%s) does not match the UID in record (%s). The object might have been deleted and then "
                       "recreated" % (name, uid, entry.uid))
    if not dry_run:
        def disrupt(p):
            conds = p.setdefault("status", {}).setdefault("conditions", [])
            conds[:] = [c for c in conds if c.get("type") != "DisruptionTarget"]
            conds.append({"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI",
                          "message": "Eviction API: evicting", "lastTransitionTime": rfc3339()})
            return True
        store.modify(pods_res, ns, name, disrupt)
        store.delete(pods_res, ns, name, {})
    return 201, success_status(201)
