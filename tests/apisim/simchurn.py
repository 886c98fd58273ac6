"""Pod churn on demand: `POST /_sim/churn` changes a share of the pods at once, the way a busy
cluster changes between two descheduling cycles (kubelets report restarts, controllers replace
pods, users relabel them).  The benchmark of a Deployment-mode descheduler calls it between
cycles; tests call it to get a known number of changes.

Which pods change and how is decided by a seeded random generator over the pods in key order,
so the same state and the same seed give the same changes.  The k-th chosen pod gets, by
k % 10:
  0-4  a status update: its first container restarted (restartCount + 1, new startedAt);
  5    an annotation change (`apisim.io/churn`);
  6    a label change (`tier` rotated);
  7    a phase change to Succeeded (a launcher pod gets a status update instead);
  8-9  a replacement: the pod is deleted and a new one with a fresh name and uid, from the
       same generateName, is bound to a node picked at random (as a ReplicaSet and the
       scheduler would); a launcher pod gets a status update instead (KubeVirt owns those).
       With "rollout": true the pod's whole ReplicaSet is rolled, as a Deployment's rolling
       update does: each of its pods is replaced by a pod of a new ReplicaSet (new
       pod-template-hash in the label, the owner and generateName; new owner uid), so the
       old ReplicaSet's values leave the cluster and new ones come; a pod of it chosen later
       in the same call is skipped (it is gone). "changed" then counts every pod replaced.
Every change is a write, so watchers see MODIFIED, or DELETED then ADDED, events.
"""

import copy
import random

from simutil import loads, rfc3339

TIERS = ("web", "api", "worker")
SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # apimachinery's utilrand, as generateName uses


class Churn:
    def __init__(self, store, registry):
        self.store = store
        self.pods = registry.get("", "v1", "pods")
        self.nodes = registry.get("", "v1", "nodes")
        self.calls = 0

    def run(self, spec):
        """spec: {"fraction": F} or {"count": N}, optional "seed" (default: the call number) and
        "rollout" (replacements from new ReplicaSets)."""
        if not isinstance(spec, dict):
            raise ValueError("expected a JSON object such as {\"fraction\": 0.01}")
        rollout = spec.get("rollout", False)
        if not isinstance(rollout, bool):
            raise ValueError("rollout must be true or false")
        self.calls += 1
        seed = spec.get("seed", self.calls)
        entries = self.store.entries(self.pods)
        if "count" in spec:
            n = int(spec["count"])
        elif "fraction" in spec:
            frac = float(spec["fraction"])
            if not 0 <= frac <= 1:
                raise ValueError("fraction must be within [0, 1]")
            n = round(len(entries) * frac)
        else:
            raise ValueError("give \"fraction\" or \"count\"")
        if n < 0:
            raise ValueError("count must not be negative")
        rng = random.Random(seed)
        chosen = rng.sample(entries, min(n, len(entries)))
        nodes = [e.name for e in self.store.entries(self.nodes)]
        done = {"status": 0, "annotation": 0, "label": 0, "phase": 0, "replaced": 0}
        rollouts = {}  # old ReplicaSet uid -> its successor's (hash, uid), this call
        now = rfc3339()
        siblings = {}  # with rollout: owner uid -> its pods' keys (from the store's index)
        if rollout:
            for e in entries:
                for uid in getattr(e.info, "owners", ()):
                    siblings.setdefault(uid, []).append((e.ns, e.name))
        for k, e in enumerate(chosen):
            if rollout and self.store.entry(self.pods, e.ns, e.name) is None:
                continue  # rolled with its ReplicaSet earlier in this call
            obj = loads(e.raw)
            md = obj["metadata"]
            launcher = (md.get("labels") or {}).get("kubevirt.io") == "virt-launcher"
            what = k % 10
            if what in (7, 8, 9) and launcher:
                what = 0
            if what >= 8 and not nodes:
                what = 0
            ns, name = md.get("namespace", ""), md["name"]
            if what <= 4:
                self.store.modify(self.pods, ns, name, lambda o: _restart(o, now))
                done["status"] += 1
            elif what == 5:
                self.store.modify(self.pods, ns, name, lambda o: _annotate(o, seed))
                done["annotation"] += 1
            elif what == 6:
                self.store.modify(self.pods, ns, name, _relabel)
                done["label"] += 1
            elif what == 7:
                self.store.modify(self.pods, ns, name, lambda o: _succeed(o, now))
                done["phase"] += 1
            elif rollout and _replicaset_uid(obj) in siblings:
                for sns, sname in siblings[_replicaset_uid(obj)]:
                    cur = self.store.entry(self.pods, sns, sname)
                    if cur is None:
                        continue
                    self.store.remove(self.pods, sns, sname)
                    new = _replacement(loads(cur.raw), rng.choice(nodes), now, rng)
                    _new_replicaset(new, rollouts, rng)
                    self.store.put_raw(self.pods, new)
                    done["replaced"] += 1
            else:
                self.store.remove(self.pods, ns, name)
                self.store.put_raw(self.pods, _replacement(obj, rng.choice(nodes), now, rng))
                done["replaced"] += 1
        return {"pods": len(entries), "changed": sum(done.values()), "changes": done, "seed": seed,
                "resourceVersion": str(self.store.rv)}


def _restart(obj, now):
    statuses = (obj.get("status") or {}).get("containerStatuses") or []
    if not statuses:
        obj.setdefault("metadata", {}).setdefault("annotations", {})["apisim.io/churn-status"] = now
        return True
    first = statuses[0]
    first["restartCount"] = int(first.get("restartCount") or 0) + 1
    first["state"] = {"running": {"startedAt": now}}
    return True


def _annotate(obj, seed):
    ann = obj["metadata"].get("annotations")
    if not isinstance(ann, dict):
        ann = obj["metadata"]["annotations"] = {}
    ann["apisim.io/churn"] = str(seed)
    return True


def _relabel(obj):
    labels = obj["metadata"].get("labels")
    if not isinstance(labels, dict):
        labels = obj["metadata"]["labels"] = {}
    cur = labels.get("tier")
    labels["tier"] = TIERS[(TIERS.index(cur) + 1) % len(TIERS)] if cur in TIERS else TIERS[0]
    return True


def _succeed(obj, now):
    st = obj.setdefault("status", {})
    st["phase"] = "Succeeded"
    for cs in st.get("containerStatuses") or []:
        cs["ready"] = False
        cs["state"] = {"terminated": {"exitCode": 0, "reason": "Completed", "finishedAt": now}}
    return True


def _random_uid(rng):
    return "%08x-%04x-4%03x-%04x-%012x" % (rng.getrandbits(32), rng.getrandbits(16), rng.getrandbits(12),
                                           rng.getrandbits(16), rng.getrandbits(48))


def _replicaset_uid(obj):
    """The uid of obj's controlling ReplicaSet, or None."""
    for ref in obj["metadata"].get("ownerReferences") or []:
        if ref.get("kind") == "ReplicaSet" and ref.get("controller") and "-" in ref.get("name", ""):
            return ref.get("uid")
    return None


def _new_replicaset(obj, rollouts, rng):
    """obj (a fresh replacement) now belongs to the successor of its ReplicaSet."""
    md = obj["metadata"]
    for ref in md.get("ownerReferences") or []:
        if ref.get("kind") != "ReplicaSet" or "-" not in ref.get("name", ""):
            continue
        old_hash = ref["name"].rsplit("-", 1)[1]
        if ref["uid"] not in rollouts:
            rollouts[ref["uid"]] = ("".join(rng.choice(SUFFIX_ALPHABET) for _ in range(10)), _random_uid(rng))
        new_hash, new_uid = rollouts[ref["uid"]]
        base = ref["name"][:-len(old_hash)]
        ref["name"], ref["uid"] = base + new_hash, new_uid
        labels = md.get("labels")
        if isinstance(labels, dict) and "pod-template-hash" in labels:
            labels["pod-template-hash"] = new_hash
        if md.get("generateName", "").startswith(base):
            suffix = md["name"][len(md["generateName"]):]
            md["generateName"] = base + new_hash + "-"
            md["name"] = md["generateName"] + suffix


def _replacement(old, node, now, rng):
    obj = copy.deepcopy(old)
    md = obj["metadata"]
    base = md.get("generateName") or (md["name"] + "-")
    md["name"] = base + "".join(rng.choice(SUFFIX_ALPHABET) for _ in range(5))
    md["uid"] = _random_uid(rng)
    md["creationTimestamp"] = now
    for k in ("resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds"):
        md.pop(k, None)
    obj.setdefault("spec", {})["nodeName"] = node
    st = obj.setdefault("status", {})
    st["phase"] = "Running"
    st["startTime"] = now
    for cs in st.get("containerStatuses") or []:
        cs["restartCount"] = 0
        cs["ready"] = True
        cs["state"] = {"running": {"startedAt": now}}
    return obj
