"""KubeVirt's side of a pod eviction, emulated (KubeVirt's pod-eviction-admitter.go, evacuation.go, migration.go).

Two halves:

- `admit_eviction()` is the validating webhook `virt-launcher-eviction-
  interceptor.kubevirt.io` (admitLauncherPod): for a virt-launcher pod it
  resolves the effective eviction strategy and either allows the eviction
  (the normal PDB path then deletes the pod) or marks the VMI for evacuation
  and denies with the text the descheduler looks for.

- `KubeVirtSim.tick()` plays virt-controller and virt-handler (evacuation.go, migration.go): the
  VMI controller annotates the current launcher `eviction-in-progress`, the
  evacuation controller creates `kubevirt-evacuation-*` migrations, the
  migration controller admits them within `parallelMigrationsPerCluster` /
  `parallelOutboundMigrationsPerNode`, places a target pod on a node that fits,
  and after `migration_seconds` completes: VMI moves (same UID), markers are
  cleared, the source launcher ends `Succeeded`.  A failure switch makes chosen
  migrations end `Failed`; the VMI stays marked and the retry is delayed by
  KubeVirt's back-off (base `backoff_seconds`, doubling).

Timing uses `simutil.CLOCK`, which `/_sim/migrations/advance` moves forward,
so tests need not sleep for minutes.  All writes go through the store, so
every step is visible to watchers exactly as controllers' writes would be.
"""

import copy
import sys
import threading
import uuid
import zlib

from simutil import CLOCK, generate_suffix, parse_time, rfc3339
from simstore import pod_ready, pod_requests

EVICT_ONLY = "descheduler.alpha.kubernetes.io/request-evict-only"
IN_PROGRESS = "descheduler.alpha.kubernetes.io/eviction-in-progress"
EVICTION_SOURCE = "kubevirt.io/eviction-source"
EVAC_ANNOTATION = "kubevirt.io/evacuationMigration"
WEBHOOK = "virt-launcher-eviction-interceptor.kubevirt.io"
FAIL_ANNOTATION = "apisim.kubevirt.io/fail-migration"
_IN_PROGRESS_B = b'"descheduler.alpha.kubernetes.io/eviction-in-progress"'
_EVICT_ONLY_B = b'"descheduler.alpha.kubernetes.io/request-evict-only"'
FINAL_PHASES = ("Succeeded", "Failed")
NOT_RUNNING_PHASES = ("", "Pending", "Succeeded", "Failed", "WaitingForSync", "Synchronizing")
PRIORITY = {"system-critical": 100, "user-triggered": 50, "system-maintenance": 20}


def launcher_flags(entry):
    """(eviction-in-progress annotated, request-evict-only annotated) of a pod entry, read from
    its bytes once per version: the controllers ask it of every launcher on every tick."""
    try:
        return entry.kv
    except AttributeError:
        entry.kv = (_IN_PROGRESS_B in entry.raw, _EVICT_ONLY_B in entry.raw)
        return entry.kv


def _cond_true(obj, typ):
    return any(isinstance(c, dict) and c.get("type") == typ and c.get("status") == "True"
               for c in (obj.get("status") or {}).get("conditions") or [])


def _transition(vmim, phase, now):
    st = vmim.setdefault("status", {})
    st["phase"] = phase
    st.setdefault("phaseTransitionTimestamps", []).append(
        {"phase": phase, "phaseTransitionTimestamp": rfc3339(now)})


def _phase_time(vmim, phase):
    for t in reversed((vmim.get("status") or {}).get("phaseTransitionTimestamps") or []):
        if t.get("phase") == phase:
            return parse_time(t.get("phaseTransitionTimestamp"))
    return None


def tolerates(tolerations, taint):
    for t in tolerations or []:
        if not isinstance(t, dict):
            continue
        if t.get("effect") and t.get("effect") != taint.get("effect"):
            continue
        if t.get("operator") == "Exists":
            if not t.get("key") or t.get("key") == taint.get("key"):
                return True
        elif t.get("key") == taint.get("key") and (t.get("value") or "") == (taint.get("value") or ""):
            return True
    return False


def _match_node_expr(expr, labels):
    k, op, vals = expr.get("key"), expr.get("operator"), expr.get("values") or []
    v = labels.get(k)
    if op == "In":
        return v is not None and v in vals
    if op == "NotIn":
        return v is None or v not in vals
    if op == "Exists":
        return v is not None
    if op == "DoesNotExist":
        return v is None
    if op in ("Gt", "Lt"):
        try:
            return (int(v) > int(vals[0])) if op == "Gt" else (int(v) < int(vals[0]))
        except (TypeError, ValueError, IndexError):
            return False
    return False


def node_affinity_ok(spec, node_labels, node_name):
    req = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
           .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    terms = req.get("nodeSelectorTerms")
    if not terms:
        return True
    for term in terms:
        ok = all(_match_node_expr(e, node_labels) for e in term.get("matchExpressions") or [])
        ok = ok and all(_match_node_expr(e, {"metadata.name": node_name}) for e in term.get("matchFields") or [])
        if ok and (term.get("matchExpressions") or term.get("matchFields")):
            return True
    return False


class KubeVirtSim:
    def __init__(self, store, registry, migration_seconds=5.0, backoff_seconds=20.0,
                 unschedulable_timeout=300.0, log=None):
        self.store = store
        self.reg = registry
        self.migration_seconds = float(migration_seconds)
        self.backoff_seconds = float(backoff_seconds)
        self.unschedulable_timeout = float(unschedulable_timeout)
        self.fail_rules = {}          # "ns/name" or "*" -> remaining failures (-1 = every time)
        self.wake = threading.Event()
        self.deleted_launchers = []   # (ns, vmi name, node) of launcher pods deleted outside migrations
        self.log = log or (lambda msg: print("apisim: " + msg, file=sys.stderr, flush=True))
        self.pods = registry.get("", "v1", "pods")
        self.nodes = registry.get("", "v1", "nodes")
        self.events = registry.get("", "v1", "events")
        self.vmis = registry.get("kubevirt.io", "v1", "virtualmachineinstances")
        self.vmims = registry.get("kubevirt.io", "v1", "virtualmachineinstancemigrations")
        self.kubevirts = registry.get("kubevirt.io", "v1", "kubevirts")
        self.metrics_hook = None      # fn(src_ns, src_name, dst_name): carry pod metrics to the target pod
        self.busy = False             # time-driven work pending: the driver must keep ticking
        self._config = None           # KubeVirt CR configuration, cached during one tick
        self._vmi_cache = {}          # (ns, name) -> (rv, marked, nodeName, phase)
        self._vmim_cache = {}         # (ns, name) -> (rv, phase, vmiName, creationTimestamp)
        # uids of the VMIs _vmi_needs_work last found idle; a write to one of them, to a pod it
        # owns, to a node or to the KubeVirt CR takes them out (the check reads nothing else),
        # so a tick looks again only at what changed (20,000 VMIs made every tick cost 0.15 s
        # under the store lock, which the API's requests wait on)
        self._quiet = set()
        store.listeners.append(self._on_write)

    # -- configuration -------------------------------------------------------

    def config(self):
        if self._config is not None:
            return self._config
        for e in self.store.entries(self.kubevirts):
            return ((e.obj().get("spec") or {}).get("configuration")) or {}
        return {}

    def limits(self):
        m = self.config().get("migrations") or {}
        return int(m.get("parallelMigrationsPerCluster", 5)), int(m.get("parallelOutboundMigrationsPerNode", 2))

    def effective_strategy(self, vmi):
        s = (vmi.get("spec") or {}).get("evictionStrategy")
        if s:
            return s
        return self.config().get("evictionStrategy") or None

    # -- the webhook (pod-eviction-admitter.go) --------------------------------

    def admit_eviction(self, pod, eviction, dry_run):
        """None to allow; otherwise the denial message (HTTP 429, empty reason)."""
        md = pod.get("metadata") or {}
        labels = md.get("labels") or {}
        phase = (pod.get("status") or {}).get("phase")
        if labels.get("kubevirt.io") != "virt-launcher" or phase in FINAL_PHASES:
            return None
        domain = (md.get("annotations") or {}).get("kubevirt.io/domain")
        if not domain:
            return None
        ns = md.get("namespace", "")
        with self.store.lock:
            vmi = self.store.find(self.vmis, ns, domain)
            if vmi is None:
                return ('kubevirt failed getting the vmi: virtualmachineinstances.kubevirt.io "%s" not found'
                        % domain)
            strategy = self.effective_strategy(vmi)
            if not strategy:
                return None
            migratable = _cond_true(vmi, "LiveMigratable")
            name = vmi["metadata"]["name"]
            if strategy == "None":
                return None
            if strategy == "LiveMigrate" and not migratable:
                return "VMI %s is configured with an eviction strategy but is not live-migratable" % name
            if strategy == "LiveMigrateIfPossible" and not migratable:
                return None
            if strategy not in ("LiveMigrate", "LiveMigrateIfPossible", "External"):
                return None
            st = vmi.get("status") or {}
            if st.get("evacuationNodeName"):
                return 'Evacuation in progress: Eviction triggered evacuation of VMI "%s/%s"' % (ns, name)
            node = (pod.get("spec") or {}).get("nodeName", "")
            if st.get("nodeName") != node:
                return "Eviction request for target Pod"
            if not isinstance(eviction, dict):
                return "failed to parse the eviction object: not an object"
            from_descheduler = (((eviction.get("metadata") or {}).get("annotations") or {})
                                .get("requested-by") == "sigs.k8s.io/descheduler")
            if not dry_run:
                def mark(v):
                    v.setdefault("status", {})["evacuationNodeName"] = node
                    if from_descheduler:
                        v["metadata"].setdefault("annotations", {})[EVICTION_SOURCE] = "descheduler"
                    return True
                self.store.modify(self.vmis, ns, name, mark)
                self.wake.set()
            return 'Eviction triggered evacuation of VMI "%s/%s"' % (ns, name)

    # -- write listener --------------------------------------------------------

    def _on_write(self, storage, typ, entry, prev):
        if storage == "kubevirt.io/virtualmachineinstances":
            self._quiet.discard(entry.uid)
        elif storage == "pods":
            for e in (entry, prev):
                if e is not None:
                    self._quiet.difference_update(e.info.owners)
        elif storage in ("nodes", "kubevirt.io/kubevirts"):
            self._quiet.clear()
        if storage in ("kubevirt.io/virtualmachineinstances", "kubevirt.io/virtualmachineinstancemigrations",
                       "kubevirt.io/kubevirts", "nodes"):
            self.wake.set()
        elif storage == "pods" and typ == "DELETED" and entry.labels.get("kubevirt.io") == "virt-launcher":
            self.deleted_launchers.append((entry.ns, entry.uid, entry.fields.get("spec.nodeName", ""),
                                           entry.labels.get("kubevirt.io/created-by", "")))
            self.wake.set()

    # -- failure switch ----------------------------------------------------------

    def set_failures(self, vmi_key, count):
        with self.store.lock:
            if count == 0:
                self.fail_rules.pop(vmi_key, None)
            else:
                self.fail_rules[vmi_key] = count

    def _should_fail(self, vmi):
        key = "%s/%s" % (vmi["metadata"].get("namespace", ""), vmi["metadata"]["name"])
        if (vmi["metadata"].get("annotations") or {}).get(FAIL_ANNOTATION) == "true":
            return True
        for k in (key, "*"):
            n = self.fail_rules.get(k)
            if n:
                if n > 0:
                    self.fail_rules[k] = n - 1
                    if n - 1 == 0:
                        del self.fail_rules[k]
                return True
        return False

    # -- helpers ---------------------------------------------------------------

    def _vmi_pods(self, vmi_uid):
        b = self.store.bucket("pods")
        out = []
        for k in b.by_owner.get(vmi_uid, ()):
            e = b.entries.get(k)
            if e is not None:
                out.append(e)
        return out

    def _current_pod(self, vmi):
        node = (vmi.get("status") or {}).get("nodeName")
        best = None
        for e in self._vmi_pods(vmi["metadata"]["uid"]):
            if e.fields.get("spec.nodeName") != node or not node:
                continue
            o = e.obj()
            ts = o["metadata"].get("creationTimestamp", "")
            if best is None or ts > best[0] or (ts == best[0] and e.name > best[1]["metadata"]["name"]):
                best = (ts, o)
        return best[1] if best else None

    def _event(self, obj, typ, reason, message, component="virt-controller"):
        md = obj["metadata"]
        now = CLOCK.now()
        ev = {"apiVersion": "v1", "kind": "Event",
              "metadata": {"name": "%s.%x" % (md["name"], int(now * 1e9)), "namespace": md.get("namespace", ""),
                           "uid": str(uuid.uuid4()), "creationTimestamp": rfc3339(now)},
              "involvedObject": {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "name": md["name"],
                                 "namespace": md.get("namespace", ""), "uid": md.get("uid", "")},
              "reason": reason, "message": message, "type": typ, "count": 1,
              "firstTimestamp": rfc3339(now), "lastTimestamp": rfc3339(now),
              "source": {"component": component}, "reportingComponent": component, "reportingInstance": ""}
        self.store.put_raw(self.events, ev)

    # -- the controllers ---------------------------------------------------------

    def tick(self):
        """One pass of every controller; returns True when it wrote something.

        Runs under the store lock, so it must stay cheap with thousands of VMIs: objects are
        decoded only when a cached summary (keyed by resourceVersion) says they need work.
        """
        with self.store.lock:
            self._config = None
            self._config = self.config()
            try:
                now = CLOCK.now()
                wrote = self._handle_deleted_launchers()
                index = self._vmim_index()
                drained = self._drained_nodes()
                for e in self.store.entries(self.vmis):
                    if e.uid in self._quiet:
                        continue
                    if not self._vmi_needs_work(e, drained):
                        self._quiet.add(e.uid)
                        continue
                    vmi = e.obj()
                    wrote |= self._vmi_controller(vmi)
                    if self._evacuation_controller(vmi, index, drained, now):
                        wrote = True
                        index = self._vmim_index()
                wrote |= self._migration_controller(now, self._vmim_index() if wrote else index)
                # unfinished migrations advance with time (durations, back-off, scheduling timeouts)
                self.busy = any(t[3] not in FINAL_PHASES for lst in self._vmim_index().values() for t in lst)
                return wrote
            finally:
                self._config = None

    def _vmi_needs_work(self, e, drained):
        """Cheap pre-check from cached VMI fields and the pods' stored bytes."""
        key = (e.ns, e.name)
        c = self._vmi_cache.get(key)
        if c is None or c[0] != e.rv:
            o = e.obj()
            st = o.get("status") or {}
            c = self._vmi_cache[key] = (e.rv, bool(st.get("evacuationNodeName")), st.get("nodeName"), st.get("phase"))
        _, marked, node, phase = c
        if phase in FINAL_PHASES:
            return False
        if marked or (node and node in drained):
            return True
        for p in self._vmi_pods(e.uid):
            if (p.fields.get("spec.nodeName") == node and p.fields.get("status.phase") not in FINAL_PHASES and
                    p.info.ready):
                in_progress, evict_only = launcher_flags(p)
                if in_progress or not evict_only:
                    return True
        return False

    def _vmim_index(self):
        """(namespace, vmiName) -> [(creationTimestamp, rv, entry, phase)] sorted by age; cached per version."""
        out, seen = {}, set()
        for e in self.store.entries(self.vmims):
            key = (e.ns, e.name)
            seen.add(key)
            c = self._vmim_cache.get(key)
            if c is None or c[0] != e.rv:
                o = e.obj()
                c = self._vmim_cache[key] = (e.rv, (o.get("status") or {}).get("phase", ""),
                                             (o.get("spec") or {}).get("vmiName", ""),
                                             o["metadata"].get("creationTimestamp", ""))
            out.setdefault((e.ns, c[2]), []).append((c[3], e.rv, e, c[1]))
        for key in [k for k in self._vmim_cache if k not in seen]:
            del self._vmim_cache[key]
        for lst in out.values():
            lst.sort(key=lambda t: (t[0], t[1]))
        return out

    def _drained_nodes(self):
        key = self.config().get("migrations", {}).get("nodeDrainTaintKey", "kubevirt.io/drain")
        out = set()
        for e in self.store.entries(self.nodes):
            if any(t.get("key") == key and t.get("effect") == "NoSchedule" for t in e.info.taints
                   if isinstance(t, dict)):
                out.add(e.name)
        return out

    def _handle_deleted_launchers(self):
        """A launcher deleted while its VMI still runs there (strategy None, manual delete): VMI fails."""
        wrote = False
        pending, self.deleted_launchers = self.deleted_launchers, []
        for ns, _pod_uid, node, vmi_uid in pending:
            for e in self.store.entries(self.vmis, ns):
                if e.uid != vmi_uid:
                    continue
                vmi = e.obj()
                st = vmi.get("status") or {}
                if st.get("nodeName") != node or st.get("phase") in FINAL_PHASES:
                    continue
                if any(p.fields.get("spec.nodeName") == node and p.fields.get("status.phase") not in FINAL_PHASES
                       for p in self._vmi_pods(vmi_uid)):
                    continue

                def fail(v):
                    s = v.setdefault("status", {})
                    s["phase"] = "Failed"
                    for c in s.get("conditions") or []:
                        if c.get("type") == "Ready":
                            c["status"] = "False"
                            c["reason"] = "PodTerminating"
                    return True
                self.store.modify(self.vmis, ns, e.name, fail)
                wrote = True
        return wrote

    def _vmi_controller(self, vmi):
        """As the VMI controller (lifecycle.go): keep request-evict-only and eviction-in-progress on the current pod."""
        st = vmi.get("status") or {}
        if st.get("phase") in FINAL_PHASES:
            return False
        pod = self._current_pod(vmi)
        if pod is None or not pod_ready(pod) or (pod.get("status") or {}).get("phase") in FINAL_PHASES:
            return False
        marked = bool(st.get("evacuationNodeName"))

        def fix(p):
            ann = p["metadata"].setdefault("annotations", {})
            changed = False
            if ann.get(EVICT_ONLY) is None:
                ann[EVICT_ONLY] = ""
                changed = True
            if marked and IN_PROGRESS not in ann:
                ann[IN_PROGRESS] = "true"
                changed = True
            elif not marked and IN_PROGRESS in ann:
                del ann[IN_PROGRESS]
                changed = True
            return changed
        ann = pod["metadata"].get("annotations") or {}
        if ann.get(EVICT_ONLY) is not None and (IN_PROGRESS in ann) == marked:
            return False
        self.store.modify(self.pods, pod["metadata"]["namespace"], pod["metadata"]["name"], fix)
        return True

    def _migrating(self, vmi, now):
        ms = (vmi.get("status") or {}).get("migrationState") or {}
        start = parse_time(ms.get("startTimestamp"))
        end = parse_time(ms.get("endTimestamp"))
        return start is not None and start <= now and (end is None or end > now)

    def _evacuation_controller(self, vmi, index, drained, now):
        """As evacuation.go: one kubevirt-evacuation-* VMIM per marked, migratable VMI."""
        md, st = vmi["metadata"], vmi.get("status") or {}
        node = st.get("nodeName")
        evac = st.get("evacuationNodeName")
        if not ((evac and node == evac) or (node and node in drained)):
            return False
        if st.get("phase") in FINAL_PHASES or md.get("deletionTimestamp") or self._migrating(vmi, now):
            return False
        strategy = self.effective_strategy(vmi)
        migratable = _cond_true(vmi, "LiveMigratable")
        if strategy == "LiveMigrate":
            on_eviction = True
        elif strategy == "LiveMigrateIfPossible":
            on_eviction = migratable
        else:
            on_eviction = False
        if not on_eviction or not migratable:
            return False
        ns = md.get("namespace", "")
        if any(t[3] not in FINAL_PHASES for t in index.get((ns, md["name"]), [])):
            return False
        live = [e for e in self._vmi_pods(md["uid"]) if e.fields.get("status.phase") not in FINAL_PHASES]
        if len(live) > 1:
            return False
        priority = ("system-maintenance" if (md.get("annotations") or {}).get(EVICTION_SOURCE) == "descheduler"
                    else "system-critical")
        vmim = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstanceMigration",
                "metadata": {"generateName": "kubevirt-evacuation-", "namespace": ns,
                             "name": "kubevirt-evacuation-" + generate_suffix(),
                             "uid": str(uuid.uuid4()), "creationTimestamp": rfc3339(now), "generation": 1,
                             "labels": {"kubevirt.io/vmi-name": md["name"]},
                             "annotations": {EVAC_ANNOTATION: node}},
                "spec": {"vmiName": md["name"], "priority": priority}}
        self.store.put_raw(self.vmims, vmim)
        self._event(vmi, "Normal", "SuccessfulCreate", "Created Migration %s" % vmim["metadata"]["name"],
                    "disruptionbudget-controller")
        return True

    def _migration_controller(self, now, index):
        wrote = False
        per_cluster, per_node = self.limits()
        vmims = [t[2].obj() for lst in index.values() for t in lst if t[3] not in FINAL_PHASES]
        self._index = index

        def prio(m):
            return PRIORITY.get((m.get("spec") or {}).get("priority"), 0)
        vmims.sort(key=lambda m: (-prio(m), m["metadata"].get("creationTimestamp", ""),
                                  int(m["metadata"]["resourceVersion"])))
        vmi_cache = {}

        def vmi_of(m):
            k = (m["metadata"].get("namespace", ""), (m.get("spec") or {}).get("vmiName", ""))
            if k not in vmi_cache:
                vmi_cache[k] = self.store.find(self.vmis, *k)
            return vmi_cache[k]

        running = [m for m in vmims if (m.get("status") or {}).get("phase", "") not in NOT_RUNNING_PHASES]
        for m in vmims:
            phase = (m.get("status") or {}).get("phase", "")
            if phase in FINAL_PHASES:
                continue
            vmi = vmi_of(m)
            if phase == "":
                self._update_vmim(m, lambda o: _transition(o, "Pending", now) or True)
                wrote = True
                phase = "Pending"
            if vmi is None:
                self._fail(m, None, now, "VMI does not exist")
                wrote = True
                continue
            if phase == "Pending":
                if self._older_unfinished(m, vmims):
                    self._fail(m, vmi, now, "another migration of the VMI is in progress")
                    wrote = True
                    continue
                if not self._backoff_over(m, vmims, now):
                    continue
                src = (vmi.get("status") or {}).get("nodeName")
                if len(running) >= per_cluster:
                    continue
                out = [r for r in running if self._source_node(vmi_of(r), r) == src]
                if len(out) >= per_node:
                    continue
                self._start(m, vmi, now)
                running.append(m)
                wrote = True
            elif phase == "Scheduling":
                wrote |= self._try_schedule(m, vmi, now)
            elif phase == "Running":
                start = _phase_time(m, "Running") or now
                if now >= start + self.migration_seconds:
                    self._complete(m, vmi, now)
                    wrote = True
        return wrote

    def _source_node(self, vmi, m):
        ms = (m.get("status") or {}).get("migrationState") or {}
        if ms.get("sourceNode"):
            return ms["sourceNode"]
        return (vmi or {}).get("status", {}).get("nodeName")

    def _older_unfinished(self, m, vmims):
        me = (m["metadata"].get("namespace"), m["spec"].get("vmiName"))
        for o in vmims:
            if o is m or (o["metadata"].get("namespace"), (o.get("spec") or {}).get("vmiName")) != me:
                continue
            if (o.get("status") or {}).get("phase", "") not in NOT_RUNNING_PHASES:
                return True
        return False

    def _backoff_over(self, m, vmims, now):
        """Evacuation VMIMs wait backoff * 2^(n-1) after the n-th consecutive failure (handleMigrationBackoff)."""
        if EVAC_ANNOTATION not in (m["metadata"].get("annotations") or {}):
            return True
        me = (m["metadata"].get("namespace"), m["spec"].get("vmiName"))
        mine = (m["metadata"].get("creationTimestamp", ""), int(m["metadata"]["resourceVersion"]))
        # evacuation VMIMs are created only after the previous one finished, so age order is creation order
        prior = [t[2].obj() for t in self._index.get(me, []) if t[2].name != m["metadata"]["name"] and
                 (t[0], t[1]) <= mine]
        failed = 0
        last_fail = None
        for o in reversed(prior):
            ph = (o.get("status") or {}).get("phase")
            if ph == "Succeeded":
                break
            if ph == "Failed":
                failed += 1
                t = _phase_time(o, "Failed")
                if last_fail is None and t is not None:
                    last_fail = t
        if failed == 0 or last_fail is None:
            return True
        return now >= last_fail + self.backoff_seconds * (2 ** (failed - 1))

    def _update_vmim(self, m, fn):
        def wrapped(o):
            fn(o)
            m.clear()
            m.update(copy.deepcopy(o))
            return True
        self.store.modify(self.vmims, m["metadata"]["namespace"], m["metadata"]["name"], wrapped)

    # -- placement ---------------------------------------------------------------

    def choose_node(self, pod_spec, exclude, vmi_uid):
        """The node with the most free capacity that fits the pod (or None)."""
        cpu, mem = pod_requests(pod_spec)
        pods_b = self.store.bucket("pods")
        best = None
        for e in self.store.entries(self.nodes):
            info = e.info
            if e.name in exclude or not info.ready or info.unschedulable:
                continue
            if any(not v == e.labels.get(k) for k, v in (pod_spec.get("nodeSelector") or {}).items()):
                continue
            if not node_affinity_ok(pod_spec, e.labels, e.name):
                continue
            if any(t.get("effect") in ("NoSchedule", "NoExecute") and not tolerates(pod_spec.get("tolerations"), t)
                   for t in info.taints if isinstance(t, dict)):
                continue
            used_cpu = used_mem = count = 0
            clash = False
            for k in pods_b.by_node.get(e.name, ()):
                p = pods_b.entries[k]
                if p.fields.get("status.phase") in FINAL_PHASES:
                    continue
                if vmi_uid and p.labels.get("kubevirt.io/created-by") == vmi_uid:
                    clash = True
                    break
                pi = p.info
                used_cpu += pi.cpu_m
                used_mem += pi.mem_b
                count += 1
            if clash:
                continue
            if used_cpu + cpu > info.cpu_m or used_mem + mem > info.mem_b or count + 1 > info.pods:
                continue
            free = ((info.cpu_m - used_cpu - cpu) / max(info.cpu_m, 1) +
                    (info.mem_b - used_mem - mem) / max(info.mem_b, 1)) / 2
            if best is None or free > best[0] or (free == best[0] and e.name < best[1]):
                best = (free, e.name)
        return best[1] if best else None

    # -- migration steps -----------------------------------------------------------

    def _start(self, m, vmi, now):
        """Admitted: create the target launcher pod (RenderMigrationManifest) and move to Scheduling."""
        src = self._current_pod(vmi)
        md = vmi["metadata"]
        if src is None:
            self._fail(m, vmi, now, "no source launcher pod")
            return
        target = {"apiVersion": "v1", "kind": "Pod", "metadata": {}, "spec": copy.deepcopy(src.get("spec") or {})}
        tmd = target["metadata"]
        smd = src["metadata"]
        tmd["generateName"] = "virt-launcher-%s-" % md["name"]
        tmd["name"] = tmd["generateName"] + generate_suffix()
        tmd["namespace"] = smd["namespace"]
        tmd["uid"] = str(uuid.uuid4())
        tmd["creationTimestamp"] = rfc3339(now)
        tmd["labels"] = dict(smd.get("labels") or {})
        tmd["labels"]["kubevirt.io/migrationJobUID"] = m["metadata"]["uid"]
        ann = dict(smd.get("annotations") or {})
        ann.pop(IN_PROGRESS, None)
        ann["kubevirt.io/migrationJobName"] = m["metadata"]["name"]
        tmd["annotations"] = ann
        tmd["ownerReferences"] = copy.deepcopy(smd.get("ownerReferences") or [])
        spec = target["spec"]
        spec.pop("nodeName", None)
        sel = dict(spec.get("nodeSelector") or {})
        sel.update((m.get("spec") or {}).get("addedNodeSelector") or {})
        if sel:
            spec["nodeSelector"] = sel
        anti = spec.setdefault("affinity", {}).setdefault("podAntiAffinity", {})
        anti.setdefault("requiredDuringSchedulingIgnoredDuringExecution", []).append(
            {"labelSelector": {"matchExpressions": [{"key": "kubevirt.io/created-by", "operator": "In",
                                                     "values": [md["uid"]]}]},
             "topologyKey": "kubernetes.io/hostname"})
        target["status"] = {"phase": "Pending", "qosClass": (src.get("status") or {}).get("qosClass", "Burstable"),
                            "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                            "lastTransitionTime": rfc3339(now)}]}
        self.store.put_raw(self.pods, target)

        def sched(o):
            _transition(o, "Scheduling", now)
            st = o["status"]
            st["migrationState"] = {"migrationUid": o["metadata"]["uid"], "sourceNode": vmi["status"]["nodeName"],
                                    "sourcePod": smd["name"], "targetPod": tmd["name"], "mode": "PreCopy"}
            return True
        self._update_vmim(m, sched)
        self._try_schedule(m, vmi, now)

    def _target_pod(self, m):
        ms = (m.get("status") or {}).get("migrationState") or {}
        return self.store.find(self.pods, m["metadata"]["namespace"], ms.get("targetPod", ""))

    def _try_schedule(self, m, vmi, now):
        pod = self._target_pod(m)
        if pod is None:
            self._fail(m, vmi, now, "target pod disappeared")
            return True
        src_node = vmi["status"].get("nodeName")
        node = self.choose_node(pod["spec"], {src_node}, vmi["metadata"]["uid"])
        if node is None:
            started = _phase_time(m, "Scheduling") or now
            if now - started >= self.unschedulable_timeout:
                self.store.remove(self.pods, pod["metadata"]["namespace"], pod["metadata"]["name"])
                self._fail(m, vmi, now, "target pod was unschedulable for too long")
                return True
            return False
        ts = rfc3339(now)

        def bind(p):
            p["spec"]["nodeName"] = node
            p["status"] = _running_status(p, ts)
            return True
        self.store.modify(self.pods, pod["metadata"]["namespace"], pod["metadata"]["name"], bind)

        def run(o):
            for ph in ("Scheduled", "PreparingTarget", "TargetReady", "Running"):
                _transition(o, ph, now)
            o["status"]["migrationState"].update({"targetNode": node, "startTimestamp": ts})
            return True
        self._update_vmim(m, run)
        ms = copy.deepcopy(m["status"]["migrationState"])

        def vmi_start(v):
            v["status"]["migrationState"] = ms
            v["metadata"].setdefault("labels", {})["kubevirt.io/migrationTargetNodeName"] = node
            return True
        self.store.modify(self.vmis, vmi["metadata"]["namespace"], vmi["metadata"]["name"], vmi_start)
        return True

    def _complete(self, m, vmi, now):
        ns = m["metadata"]["namespace"]
        ms = copy.deepcopy(m["status"].get("migrationState") or {})
        ts = rfc3339(now)
        ms["endTimestamp"] = ts
        if self._should_fail(vmi):
            self._fail(m, vmi, now, "apisim: injected migration failure", ms)
            return
        ms["completed"] = True
        target_node = ms["targetNode"]
        tpod = self.store.find(self.pods, ns, ms.get("targetPod", ""))

        def vmi_done(v):
            st = v.setdefault("status", {})
            st["nodeName"] = target_node
            st.pop("evacuationNodeName", None)
            st["migrationState"] = ms
            st["migrationTransport"] = "Unix"
            if tpod is not None:
                st["activePods"] = {tpod["metadata"]["uid"]: target_node}
            lb = v["metadata"].setdefault("labels", {})
            lb["kubevirt.io/nodeName"] = target_node
            lb.pop("kubevirt.io/migrationTargetNodeName", None)
            (v["metadata"].get("annotations") or {}).pop(EVICTION_SOURCE, None)
            return True
        self.store.modify(self.vmis, ns, vmi["metadata"]["name"], vmi_done)
        if tpod is not None:
            def label_node(p):
                p["metadata"].setdefault("labels", {})["kubevirt.io/nodeName"] = target_node
                return True
            self.store.modify(self.pods, ns, tpod["metadata"]["name"], label_node)
        self.store.modify(self.pods, ns, ms.get("sourcePod", ""), lambda p: _terminate(p, "Succeeded", ts))
        if self.metrics_hook and tpod is not None:
            self.metrics_hook(ns, ms.get("sourcePod", ""), tpod["metadata"]["name"])

        def done(o):
            _transition(o, "Succeeded", now)
            o["status"]["migrationState"] = ms
            return True
        self._update_vmim(m, done)
        self._event(vmi, "Normal", "Migrated", "The VirtualMachineInstance migrated to node %s." % target_node,
                    "virt-handler")
        self._gc_migrations(ns, vmi["metadata"]["name"])

    def _fail(self, m, vmi, now, reason, ms=None):
        ts = rfc3339(now)
        ms = ms or copy.deepcopy((m.get("status") or {}).get("migrationState") or {})
        if ms:
            ms.update({"failed": True, "failureReason": reason, "endTimestamp": ts})

        def failed(o):
            _transition(o, "Failed", now)
            if ms:
                o["status"]["migrationState"] = ms
            return True
        self._update_vmim(m, failed)
        if ms.get("targetPod"):
            self.store.modify(self.pods, m["metadata"]["namespace"], ms["targetPod"],
                              lambda p: _terminate(p, "Failed", ts))
        if vmi is not None and ms.get("startTimestamp"):
            def vmi_failed(v):
                v.setdefault("status", {})["migrationState"] = ms
                (v["metadata"].get("labels") or {}).pop("kubevirt.io/migrationTargetNodeName", None)
                return True
            self.store.modify(self.vmis, vmi["metadata"]["namespace"], vmi["metadata"]["name"], vmi_failed)
        if vmi is not None:
            self._event(vmi, "Warning", "MigrationFailed", "VirtualMachineInstance migration uid %s failed. reason:%s"
                        % (m["metadata"]["uid"], reason))
        self.log("migration %s/%s failed: %s" % (m["metadata"]["namespace"], m["metadata"]["name"], reason))

    def _gc_migrations(self, ns, vmi_name):
        """Keep the 5 newest finalized VMIMs of a VMI; older ones go, with the pod they leave behind."""
        done = [t[2].obj() for t in self._vmim_index().get((ns, vmi_name), []) if t[3] in FINAL_PHASES]
        for o in done[:-5]:
            ms = (o.get("status") or {}).get("migrationState") or {}
            pod = ms.get("sourcePod") if o["status"]["phase"] == "Succeeded" else ms.get("targetPod")
            if pod:
                self.store.remove(self.pods, ns, pod)
            self.store.remove(self.vmims, ns, o["metadata"]["name"])

    # -- driving -------------------------------------------------------------------

    def advance(self, seconds):
        """Move the clock and run the controllers to quiescence; returns migration counts by phase.

        The controllers first catch up at the current time: what a write before this call left them
        to do (an eviction's evacuation, a drained node) is the background driver's work, which it
        may not have got to yet when the call comes, and done after the move it would start its
        migration at the later time, so that the advance could not finish it."""
        self._settle()
        CLOCK.advance(max(0.0, float(seconds)))
        self._settle()
        return self.summary()

    def _settle(self):
        for _ in range(100):
            if not self.tick():
                break

    def summary(self):
        out = {}
        for e in self.store.entries(self.vmims):
            ph = (e.obj().get("status") or {}).get("phase", "") or "New"
            out[ph] = out.get(ph, 0) + 1
        return out




def _running_status(pod, ts):
    spec = pod.get("spec") or {}
    conds = [{"type": t, "status": "True", "lastTransitionTime": ts}
             for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")]
    for g in spec.get("readinessGates") or []:
        if isinstance(g, dict) and g.get("conditionType"):
            conds.append({"type": g["conditionType"], "status": "True", "lastTransitionTime": ts})
    h = zlib.crc32(pod["metadata"]["name"].encode())
    ip = "10.%d.%d.%d" % (128 + (h >> 16) % 64, (h >> 8) % 256, 1 + h % 250)
    return {"phase": "Running", "startTime": ts, "hostIP": "", "podIP": ip, "podIPs": [{"ip": ip}],
            "qosClass": (pod.get("status") or {}).get("qosClass", "Burstable"),
            "conditions": conds,
            "containerStatuses": [{"name": c.get("name", ""), "ready": True, "restartCount": 0, "started": True,
                                   "image": c.get("image", ""), "imageID": "",
                                   "state": {"running": {"startedAt": ts}}}
                                  for c in spec.get("containers") or [] if isinstance(c, dict)]}


def _terminate(pod, phase, ts):
    st = pod.setdefault("status", {})
    if st.get("phase") == phase:
        return False
    st["phase"] = phase
    code, reason = (0, "Completed") if phase == "Succeeded" else (1, "Error")
    for c in st.get("conditions") or []:
        if c.get("type") in ("Ready", "ContainersReady"):
            c.update({"status": "False", "reason": "PodCompleted" if phase == "Succeeded" else "PodFailed",
                      "lastTransitionTime": ts})
    for cs in st.get("containerStatuses") or []:
        cs["ready"] = False
        cs["started"] = False
        cs["state"] = {"terminated": {"exitCode": code, "reason": reason, "finishedAt": ts}}
    return True

