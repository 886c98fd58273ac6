"""The cluster lab's virt-handler stand-in: the one emulated KubeVirt part (tests/lab/).

Everything else in the lab is real (kube-apiserver, kube-controller-manager, kube-scheduler,
KWOK as the kubelets, KubeVirt's virt-api and virt-controller). virt-handler needs a real node
with libvirt, so this module reports what virt-handler (and the virt-launcher under it) would
report, and nothing more; KubeVirt's controllers then act on those reports as in a real cluster.
What it writes, and where KubeVirt v1.6.0 does the same:

- nodes (pkg/virt-handler/heartbeat/heartbeat.go, do()): each node it serves gets the
  `kubevirt.io/heartbeat` annotation refreshed every `heartbeat_seconds` (virt-handler: 1 min
  with jitter) and the labels `kubevirt.io/schedulable=true`, `cpumanager=false`; the node
  labeller's CPU-model and machine-type labels (pkg/virt-handler/node-labeller) are set
  once (the launcher pod's node selector has `machine-type.node.kubevirt.io/q35`); the migration
  controller requires `host-model-cpu.node.kubevirt.io/<model>` on the source node and puts
  `cpu-model-migration.node.kubevirt.io/<model>` in the target pod's node selector
  (pkg/virt-controller/watch/migration/migration.go, prepareNodeSelectorForHostCpuModel).
  virt-controller's node controller (pkg/virt-controller/watch/node/node.go) marks a node
  whose heartbeat is older than 5 minutes unschedulable and fails its VMIs;
- VMI start (pkg/virt-handler/vm.go): once virt-controller has set a VMI `Scheduled` on one of
  its nodes and the launcher pod runs (KWOK made it Running and Ready), the VMI becomes
  `Running` with the `LiveMigratable` and `StorageLiveMigratable` conditions
  (calculateLiveMigrationCondition), `migrationMethod`, `selinuxContext: none` (the migration
  controller refuses to render a target pod without it), the current CPU topology and memory
  taken from the spec (so virt-controller sees no hotplug pending). A VMI is not migratable when
  it has host devices or GPUs (reason `HostDeviceNotLiveMigratable`, as virt-handler) or when
  it carries the lab's annotation `lab.kubevirt.io/non-migratable` (value: a KubeVirt reason,
  e.g. `DisksNotLiveMigratable`, optionally `REASON: message`) — the lab's stand-in for what
  virt-handler finds in the domain (non-shared disks, ...);
- migration (pkg/virt-handler/migration-target.go, migration-source.go): after virt-controller
  handed the migration over (`status.migrationState` with this migration's UID, `targetNode`,
  `targetPod`) and the target pod runs, it writes, one update each, as the handlers do:
  `targetNodeAddress` + `targetDirectMigrationNodePorts` (target: PreparingTarget ->
  TargetReady), `startTimestamp` + `mode` (source: -> Running), and `migration_seconds` later the
  completion: `targetNodeDomainDetected`, `targetNodeDomainReadyTimestamp`, `endTimestamp`,
  `completed`, `status.nodeName` and the `kubevirt.io/nodeName` label = the target node, the
  `kubevirt.io/migrationTargetNodeName` label and `status.evacuationNodeName` removed
  (ackMigrationCompletion) (-> Succeeded);
- the source launcher then exits, as virt-launcher does once its domain has left: the stand-in
  annotates that pod `lab.kubevirt.io/launcher-exited` and KWOK (the kubelet) reports it
  `Succeeded` through the lab's Stage `lab-launcher-exit` (cluster.py);
- a deleted VMI whose domain runs here is shut down: phase `Succeeded`; virt-controller then
  deletes its pods and removes its finalizers.

Not done: guest agent data, interfaces' IPs, volume status, hotplug, paused states, migration
abort and failure injection, decentralized migrations, node-restriction identities.

Design for size: two informers (VMIs, and pods labelled `kubevirt.io=virt-launcher`), events
only queue the VMI's key, a few workers handle one VMI each (labkube.WorkQueue); a migration's
duration is a delayed re-queue, not a poll.
"""

import calendar
import copy
import os
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from labkube import ApiError, Informer, WorkQueue, key_of  # noqa: E402

NON_MIGRATABLE = "lab.kubevirt.io/non-migratable"
LAUNCHER_EXITED = "lab.kubevirt.io/launcher-exited"
VMI_PATH = "/apis/kubevirt.io/v1/virtualmachineinstances"
CREATED_BY = "kubevirt.io/created-by"
MIGRATION_JOB = "kubevirt.io/migrationJobUID"
NODE_NAME_LABEL = "kubevirt.io/nodeName"
MIGRATION_TARGET_LABEL = "kubevirt.io/migrationTargetNodeName"
DEFAULT_CPU_MODEL = "Skylake-Client-IBRS"


def now_rfc3339():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def parse_rfc3339(s):
    return calendar.timegm(time.strptime(s[:19], "%Y-%m-%dT%H:%M:%S"))


def pod_running(pod):
    """The launcher's containers run (virt-handler talks to virt-launcher's socket; it does not
    look at the pod's Ready condition, which the node lifecycle controller may have turned False)."""
    return (pod.get("status") or {}).get("phase") == "Running" and not (pod.get("metadata") or {}).get("deletionTimestamp")


def _condition(conds, typ):
    for c in conds:
        if c.get("type") == typ:
            return c
    return None


def _set_condition(conds, new):
    for i, c in enumerate(conds):
        if c.get("type") == new["type"]:
            conds[i] = new
            return
    conds.append(new)


class HandlerStandIn:
    """virt-handler's reports for the nodes in `nodes`, written with `client` (a kubeclient
    Client whose user should be `system:serviceaccount:kubevirt:kubevirt-handler`, the identity
    KubeVirt's webhooks know as virt-handler's)."""

    def __init__(self, client, migration_seconds=3.0, heartbeat_seconds=60.0, cpu_model=DEFAULT_CPU_MODEL,
                 workers=4, log=None):
        self.client = client
        self.migration_seconds = float(migration_seconds)
        self.heartbeat_seconds = float(heartbeat_seconds)
        self.cpu_model = cpu_model
        self.log = log or (lambda m: None)
        self.nodes = set()
        self.labelled = set()   # nodes whose labeller labels are set
        self.nodes_lock = threading.Lock()
        self.queue = WorkQueue()
        self.stopping = threading.Event()
        self.pods_by_vmi = {}   # VMI UID -> set of launcher pod keys
        self.exited = set()     # launcher pod UIDs annotated (the informer may lag the write)
        self.started_at = {}    # migration UID -> time.time() of its startTimestamp (which has
                                # only whole seconds)
        self.index_lock = threading.Lock()
        self.stats = {"vmi_writes": 0, "pod_writes": 0, "node_writes": 0, "conflicts": 0, "errors": 0,
                      "started": 0, "migrations": 0}
        self.threads = []
        self.n_workers = workers
        self.vmis = Informer(client, VMI_PATH, self._on_vmi, name="vmis", log=self.log)
        self.pods = Informer(client, "/api/v1/pods", self._on_pod, label_selector="kubevirt.io=virt-launcher",
                             name="launcher pods", log=self.log)

    # -- life cycle --------------------------------------------------------------------------

    def start(self):
        self.pods.start()
        self.vmis.start()
        self.pods.wait_synced()
        self.vmis.wait_synced()
        for i in range(self.n_workers):
            t = threading.Thread(target=self._worker, daemon=True, name="handler worker %d" % i)
            t.start()
            self.threads.append(t)
        t = threading.Thread(target=self._heartbeats, daemon=True, name="handler heartbeat")
        t.start()
        self.threads.append(t)
        return self

    def stop(self):
        self.stopping.set()
        self.queue.close()
        self.vmis.stop()
        self.pods.stop()
        for t in self.threads:
            t.join(5)

    def add_nodes(self, names):
        """Serves these nodes from now on (labels and a first heartbeat at once)."""
        with self.nodes_lock:
            new = [n for n in names if n not in self.nodes]
            self.nodes.update(new)
        for n in new:
            self._heartbeat(n)

    def remove_node(self, name):
        """Stops serving a node (its heartbeat goes stale, as when virt-handler dies there)."""
        with self.nodes_lock:
            self.nodes.discard(name)
            self.labelled.discard(name)

    def serves(self, node):
        with self.nodes_lock:
            return node in self.nodes

    # -- events ------------------------------------------------------------------------------

    def _on_vmi(self, typ, obj, old):
        if typ != "DELETED":
            self.queue.add(key_of(obj))

    def _on_pod(self, typ, pod, old):
        md = pod["metadata"]
        uid = (md.get("labels") or {}).get(CREATED_BY)
        k = key_of(pod)
        if uid:
            with self.index_lock:
                if typ == "DELETED":
                    self.exited.discard(md.get("uid"))
                    s = self.pods_by_vmi.get(uid)
                    if s is not None:
                        s.discard(k)
                        if not s:
                            del self.pods_by_vmi[uid]
                else:
                    self.pods_by_vmi.setdefault(uid, set()).add(k)
        vmi_name = (md.get("annotations") or {}).get("kubevirt.io/domain")
        if vmi_name:
            self.queue.add("%s/%s" % (md["namespace"], vmi_name))

    def launcher_pods(self, vmi):
        with self.index_lock:
            keys = list(self.pods_by_vmi.get(vmi["metadata"]["uid"], ()))
        return [p for p in (self.pods.get(k) for k in keys) if p is not None]

    # -- workers -----------------------------------------------------------------------------

    def _worker(self):
        while True:
            key = self.queue.get()
            if key is None:
                return
            try:
                self._sync(key)
            except ApiError as e:
                if e.code == 409:
                    self.stats["conflicts"] += 1  # the watch brings the newer version and a new sync
                    self.queue.add_after(key, 0.2)
                elif e.code != 404:
                    self.stats["errors"] += 1
                    self.log("handler: %s: %s" % (key, e))
                    self.queue.add_after(key, 1.0)
            except Exception as e:  # keep serving the other VMIs
                self.stats["errors"] += 1
                self.log("handler: %s: %r" % (key, e))
                self.queue.add_after(key, 1.0)
            finally:
                self.queue.done(key)

    def _put_vmi(self, vmi):
        md = vmi["metadata"]
        out = self.client.put("/apis/kubevirt.io/v1/namespaces/%s/virtualmachineinstances/%s"
                              % (md["namespace"], md["name"]), vmi)
        self.stats["vmi_writes"] += 1
        return out

    def _sync(self, key):
        vmi = self.vmis.get(key)
        if vmi is None:
            return
        md = vmi["metadata"]
        st = vmi.get("status") or {}
        phase = st.get("phase")
        node = st.get("nodeName")
        if md.get("deletionTimestamp"):
            if phase in ("Scheduled", "Running") and node and self.serves(node):
                new = copy.deepcopy(vmi)
                new["status"]["phase"] = "Succeeded"  # the domain was shut down
                self._put_vmi(new)
            return
        if phase == "Scheduled" and node and self.serves(node):
            pod = self._source_pod(vmi, node)
            if pod is not None and pod_running(pod):
                self._start_domain(vmi)
            return
        if phase == "Running":
            ms = st.get("migrationState")
            if ms and ms.get("migrationUid") and not ms.get("failed"):
                if not ms.get("completed"):
                    self._migrate(vmi, ms)
                else:
                    self._source_exit(vmi, ms)

    def _source_pod(self, vmi, node):
        for p in self.launcher_pods(vmi):
            if (p.get("spec") or {}).get("nodeName") == node and MIGRATION_JOB not in (p["metadata"].get("labels") or {}):
                return p
        return None

    def migratable(self, vmi):
        """The LiveMigratable condition virt-handler would compute (pkg/virt-handler/vm.go)."""
        ann = (vmi["metadata"].get("annotations") or {}).get(NON_MIGRATABLE)
        if ann is not None:
            reason, _, msg = ann.partition(":")
            reason = reason.strip() or "DisksNotLiveMigratable"
            return {"type": "LiveMigratable", "status": "False", "reason": reason,
                    "message": msg.strip() or "marked not live-migratable by the lab (%s)" % NON_MIGRATABLE}
        dev = ((vmi.get("spec") or {}).get("domain") or {}).get("devices") or {}
        if dev.get("hostDevices") or dev.get("gpus"):
            return {"type": "LiveMigratable", "status": "False", "reason": "HostDeviceNotLiveMigratable",
                    "message": "VMI uses a PCI host devices"}
        return {"type": "LiveMigratable", "status": "True"}

    def _start_domain(self, vmi):
        new = copy.deepcopy(vmi)
        st = new["status"]
        conds = st.setdefault("conditions", [])
        now = now_rfc3339()
        lm = self.migratable(vmi)
        lm.update(lastProbeTime=None, lastTransitionTime=now)
        _set_condition(conds, lm)
        storage = {"type": "StorageLiveMigratable", "status": lm["status"], "lastProbeTime": None,
                   "lastTransitionTime": now}
        if lm["status"] == "False":
            storage.update(reason="NotMigratable", message="%s: %s" % (lm["reason"], lm["message"]))
        _set_condition(conds, storage)
        st["phase"] = "Running"
        st["migrationMethod"] = "LiveMigration"
        st["selinuxContext"] = "none"
        st.setdefault("guestOSInfo", {})
        dom = (new.get("spec") or {}).get("domain") or {}
        cpu = dom.get("cpu") or {}
        st["currentCPUTopology"] = {"sockets": cpu.get("sockets") or 1, "cores": cpu.get("cores") or 1,
                                    "threads": cpu.get("threads") or 1}
        guest = (dom.get("memory") or {}).get("guest") or \
            ((dom.get("resources") or {}).get("requests") or {}).get("memory")
        if guest:
            st["memory"] = {"guestAtBoot": guest, "guestCurrent": guest, "guestRequested": guest}
        self._put_vmi(new)
        self.stats["started"] += 1

    def _migrate(self, vmi, ms):
        key = key_of(vmi)
        target_node, target_pod = ms.get("targetNode"), ms.get("targetPod")
        if not target_node or not target_pod or not self.serves(target_node):
            return
        if not ms.get("targetNodeAddress"):
            pod = self.pods.get("%s/%s" % (vmi["metadata"]["namespace"], target_pod))
            if pod is None or not pod_running(pod):
                return  # the pod's next event queues the VMI again
            new = copy.deepcopy(vmi)
            nms = new["status"]["migrationState"]
            # the target handler's migration proxy address and ports (migration-target.go)
            nms["targetNodeAddress"] = (pod.get("status") or {}).get("hostIP") or "127.0.0.1"
            nms["targetDirectMigrationNodePorts"] = {"49152": 0, "49153": 49152}
            self._put_vmi(new)
            return
        if not ms.get("startTimestamp"):
            new = copy.deepcopy(vmi)
            nms = new["status"]["migrationState"]
            t = time.time()
            nms["startTimestamp"] = now_rfc3339()
            nms["mode"] = "PreCopy"
            self._put_vmi(new)
            self.started_at[ms["migrationUid"]] = t
            self.stats["migrations"] += 1
            self.queue.add_after(key, self.migration_seconds)
            return
        start = self.started_at.get(ms["migrationUid"]) or parse_rfc3339(ms["startTimestamp"])
        left = start + self.migration_seconds - time.time()
        if left > 0:
            self.queue.add_after(key, left)
            return
        new = copy.deepcopy(vmi)
        st = new["status"]
        nms = st["migrationState"]
        now = now_rfc3339()
        nms["targetNodeDomainDetected"] = True
        nms["targetNodeDomainReadyTimestamp"] = now
        nms["endTimestamp"] = now
        nms["completed"] = True
        st["nodeName"] = target_node
        st.pop("evacuationNodeName", None)
        st["migrationTransport"] = "Unix"
        labels = new["metadata"].setdefault("labels", {})
        labels[NODE_NAME_LABEL] = target_node
        labels.pop(MIGRATION_TARGET_LABEL, None)
        out = self._put_vmi(new)
        self.started_at.pop(ms["migrationUid"], None)
        self._source_exit(out, nms)

    def _source_exit(self, vmi, ms):
        """The source launcher exits once the domain left; KWOK reports the pod Succeeded."""
        name = ms.get("sourcePod")
        ns = vmi["metadata"]["namespace"]
        pods = [self.pods.get("%s/%s" % (ns, name))] if name else \
            [p for p in self.launcher_pods(vmi) if p["spec"].get("nodeName") == ms.get("sourceNode")]
        for pod in pods:
            if pod is None or pod["spec"].get("nodeName") == vmi["status"].get("nodeName"):
                continue
            md = pod["metadata"]
            if ((pod.get("status") or {}).get("phase") != "Running" or md["uid"] in self.exited
                    or LAUNCHER_EXITED in (md.get("annotations") or {})):
                continue
            self.client.merge_patch("/api/v1/namespaces/%s/pods/%s" % (ns, md["name"]),
                                    {"metadata": {"annotations": {LAUNCHER_EXITED: "domain migrated to %s"
                                                                  % vmi["status"].get("nodeName")}}})
            self.stats["pod_writes"] += 1
            self.exited.add(md["uid"])

    # -- heartbeat ---------------------------------------------------------------------------

    def _heartbeats(self):
        while not self.stopping.wait(self.heartbeat_seconds):
            with self.nodes_lock:
                nodes = sorted(self.nodes)
            for n in nodes:
                if self.stopping.is_set():
                    return
                self._heartbeat(n)

    def _heartbeat(self, node):
        labels = {"kubevirt.io/schedulable": "true", "cpumanager": "false"}
        with self.nodes_lock:
            first = node not in self.labelled
        if first:
            m = self.cpu_model
            labels.update({"cpu-model.node.kubevirt.io/" + m: "true",
                           "cpu-model-migration.node.kubevirt.io/" + m: "true",
                           "host-model-cpu.node.kubevirt.io/" + m: "true",
                           "cpu-vendor.node.kubevirt.io/Intel": "true",
                           # the launcher pod's node selector asks for the VMI's machine type
                           # (the mutating webhook defaults it to q35)
                           "machine-type.node.kubevirt.io/q35": "true"})
        try:
            self.client.merge_patch("/api/v1/nodes/" + node, {"metadata": {
                "labels": labels, "annotations": {"kubevirt.io/heartbeat": now_rfc3339()}}})
            self.stats["node_writes"] += 1
            if first:
                with self.nodes_lock:
                    self.labelled.add(node)
        except Exception as e:
            self.stats["errors"] += 1
            self.log("handler: heartbeat of %s: %s" % (node, e))
