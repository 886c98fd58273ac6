"""The API surface the simulator serves: one table row per resource.

Everything that differs between resources is data here: group/version,
plural/kind, scope, short names (kubectl resolves `vmi`, `pdb` through
discovery), verbs, which subresources exist, which field selectors the
apiserver accepts, and the columns `kubectl get` prints (the server renders
`meta.k8s.io/v1 Table` as a real apiserver does).  The HTTP layer and the store
never special-case a kind by name except through this table.

Custom resources (kubevirt.io, hco.kubevirt.io) are also published as
`apiextensions.k8s.io/v1 CustomResourceDefinition` objects built from the same
rows, so `kubectl get crd` and the discovery documents agree.  A CRD created
through the API registers a new resource the same way.
"""

import re
import threading

from simutil import age_of, human_duration, CLOCK, parse_time

ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
READ_VERBS = ["get", "list"]

COMMON_FIELDS = ("metadata.name", "metadata.namespace")
POD_FIELDS = ("spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
              "spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName")
EVENT_FIELDS = ("involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
                "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
                "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type")


class Resource:
    """One served resource (group, version, plural)."""

    def __init__(self, group, version, plural, kind, namespaced, short=(), verbs=ALL_VERBS,
                 status=False, custom=False, categories=(), fields=(), columns=None,
                 storage=None, singular=None, subresources=None, view=None, virtual=False,
                 generation=True):
        self.group = group
        self.version = version
        self.plural = plural
        self.kind = kind
        self.namespaced = namespaced
        self.short_names = list(short)
        self.verbs = list(verbs)
        self.status_subresource = status
        self.custom = custom
        self.categories = list(categories)
        self.field_labels = set(COMMON_FIELDS) | set(fields)
        self.extra_fields = tuple(sorted(set(fields) - set(COMMON_FIELDS)))  # indexed per object
        self.columns = columns
        # events.k8s.io/v1 events share core/v1's storage: `storage` names the bucket
        self.storage = storage or ("%s/%s" % (group, plural) if group else plural)
        self.singular = singular or kind.lower()
        self.subresources = dict(subresources or {})
        if status:
            self.subresources.setdefault("status", (kind, ["get", "patch", "update"]))
        self.view = view          # name of a converter pair in simstore for shared storage
        self.virtual = virtual    # computed on read (metrics), no storage
        self.generation = generation

    @property
    def api_version(self):
        return "%s/%s" % (self.group, self.version) if self.group else self.version

    @property
    def list_kind(self):
        return self.kind + "List"

    def key(self, namespace, name):
        return "%s/%s" % (namespace, name) if self.namespaced else name

    def __repr__(self):
        return "<Resource %s %s>" % (self.api_version, self.plural)


# ---------------------------------------------------------------------------
# Printer columns.  Each is (name, type, jsonPath-ish description, priority, fn(obj)).

def col(name, fn, typ="string", priority=0, desc="", json_path=None):
    return {"name": name, "type": typ, "priority": priority, "description": desc or name,
            "fn": fn, "jsonPath": json_path}


def _name(o):
    return o.get("metadata", {}).get("name", "")


def _cond(o, typ):
    for c in (o.get("status") or {}).get("conditions") or []:
        if isinstance(c, dict) and c.get("type") == typ:
            return c.get("status", "")
    return ""


def _pod_ready(o):
    specs = (o.get("spec") or {}).get("containers") or []
    sts = (o.get("status") or {}).get("containerStatuses") or []
    ready = sum(1 for s in sts if isinstance(s, dict) and s.get("ready"))
    return "%d/%d" % (ready, len(specs))


def _pod_status(o):
    md = o.get("metadata") or {}
    st = o.get("status") or {}
    if md.get("deletionTimestamp"):
        return "Terminating"
    if st.get("reason"):
        return st["reason"]
    for s in st.get("containerStatuses") or []:
        w = (s.get("state") or {}).get("waiting") if isinstance(s, dict) else None
        if w and w.get("reason"):
            return w["reason"]
    phase = st.get("phase") or "Pending"
    if phase == "Succeeded":
        return "Completed"
    if phase == "Failed":
        return "Error"
    return phase


def _pod_gates(o):
    gates = [g.get("conditionType") for g in (o.get("spec") or {}).get("readinessGates") or [] if isinstance(g, dict)]
    if not gates:
        return "<none>"
    return "%d/%d" % (sum(1 for g in gates if _cond(o, g) == "True"), len(gates))


def _pod_restarts(o):
    return sum(int(s.get("restartCount", 0) or 0) for s in (o.get("status") or {}).get("containerStatuses") or []
               if isinstance(s, dict))


def _node_status(o):
    ready = _cond(o, "Ready")
    s = "Ready" if ready == "True" else "NotReady" if ready else "Unknown"
    if (o.get("spec") or {}).get("unschedulable"):
        s += ",SchedulingDisabled"
    return s


def _node_roles(o):
    roles = sorted(k.split("/", 1)[1] for k in (o.get("metadata", {}).get("labels") or {})
                   if k.startswith("node-role.kubernetes.io/") and "/" in k)
    return ",".join(r for r in roles if r) or "<none>"


def _node_ip(o):
    for a in (o.get("status") or {}).get("addresses") or []:
        if isinstance(a, dict) and a.get("type") == "InternalIP":
            return a.get("address", "")
    return "<none>"


def _intstr(v):
    return "N/A" if v is None else str(v)


def _pdb_allowed(o):
    return (o.get("status") or {}).get("disruptionsAllowed", 0)


def _deploy_ready(o):
    st = o.get("status") or {}
    return "%d/%d" % (st.get("readyReplicas", 0) or 0, (o.get("spec") or {}).get("replicas", 1) or 0)


def _vmi_ip(o):
    ifs = (o.get("status") or {}).get("interfaces") or []
    return ifs[0].get("ipAddress", "") if ifs and isinstance(ifs[0], dict) else ""


def _lease_holder(o):
    return (o.get("spec") or {}).get("holderIdentity", "")


def _service_ports(o):
    ports = (o.get("spec") or {}).get("ports") or []
    return ",".join("%s/%s" % (p.get("port", ""), p.get("protocol", "TCP")) for p in ports
                    if isinstance(p, dict)) or "<none>"


def _binding_role(o):
    ref = o.get("roleRef") or {}
    return "%s/%s" % (ref.get("kind", ""), ref.get("name", ""))


def _event_last_seen(o):
    t = parse_time(o.get("lastTimestamp") or o.get("eventTime") or
                   o.get("metadata", {}).get("creationTimestamp"))
    return human_duration(CLOCK.now() - t) if t else "<unknown>"


def _event_object(o):
    io = o.get("involvedObject") or {}
    return "%s/%s" % ((io.get("kind") or "").lower(), io.get("name", ""))


NAME_COL = col("Name", _name, desc="Name must be unique within a namespace.")
AGE_COL = col("Age", age_of, desc="CreationTimestamp", json_path=".metadata.creationTimestamp", typ="date")

COLUMNS = {
    "Pod": [NAME_COL, col("Ready", _pod_ready), col("Status", _pod_status),
            col("Restarts", _pod_restarts, typ="integer"), AGE_COL,
            col("IP", lambda o: (o.get("status") or {}).get("podIP") or "<none>", priority=1),
            col("Node", lambda o: (o.get("spec") or {}).get("nodeName") or "<none>", priority=1),
            col("Nominated Node", lambda o: (o.get("status") or {}).get("nominatedNodeName") or "<none>",
                priority=1),
            col("Readiness Gates", _pod_gates, priority=1)],
    "Node": [NAME_COL, col("Status", _node_status), col("Roles", _node_roles), AGE_COL,
             col("Version", lambda o: ((o.get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion", "")),
             col("Internal-IP", _node_ip, priority=1)],
    "Namespace": [NAME_COL, col("Status", lambda o: (o.get("status") or {}).get("phase", "Active")), AGE_COL],
    "ConfigMap": [NAME_COL, col("Data", lambda o: len(o.get("data") or {}) + len(o.get("binaryData") or {}),
                                typ="integer"), AGE_COL],
    "Event": [col("Last Seen", _event_last_seen), col("Type", lambda o: o.get("type", "")),
              col("Reason", lambda o: o.get("reason", "")), col("Object", _event_object),
              col("Message", lambda o: o.get("message", "")), NAME_COL.copy() | {"priority": 1}],
    "PersistentVolumeClaim": [NAME_COL, col("Status", lambda o: (o.get("status") or {}).get("phase", "Pending")),
                              col("Volume", lambda o: (o.get("spec") or {}).get("volumeName", "")),
                              col("Capacity", lambda o: ((o.get("status") or {}).get("capacity") or {})
                                  .get("storage", "")),
                              col("Access Modes", lambda o: ",".join(
                                  {"ReadWriteOnce": "RWO", "ReadOnlyMany": "ROX", "ReadWriteMany": "RWX",
                                   "ReadWriteOncePod": "RWOP"}.get(m, m)
                                  for m in (o.get("spec") or {}).get("accessModes") or [])),
                              col("StorageClass", lambda o: (o.get("spec") or {}).get("storageClassName", "")),
                              AGE_COL],
    "Deployment": [NAME_COL, col("Ready", _deploy_ready),
                   col("Up-to-date", lambda o: (o.get("status") or {}).get("updatedReplicas", 0), typ="integer"),
                   col("Available", lambda o: (o.get("status") or {}).get("availableReplicas", 0), typ="integer"),
                   AGE_COL],
    "PodDisruptionBudget": [NAME_COL,
                            col("Min Available", lambda o: _intstr((o.get("spec") or {}).get("minAvailable"))),
                            col("Max Unavailable", lambda o: _intstr((o.get("spec") or {}).get("maxUnavailable"))),
                            col("Allowed Disruptions", _pdb_allowed, typ="integer"), AGE_COL],
    "PriorityClass": [NAME_COL, col("Value", lambda o: o.get("value", 0), typ="integer"),
                      col("Global-Default", lambda o: bool(o.get("globalDefault", False)), typ="boolean"),
                      AGE_COL],
    "Lease": [NAME_COL, col("Holder", _lease_holder), AGE_COL],
    "ServiceAccount": [NAME_COL, col("Secrets", lambda o: len(o.get("secrets") or []), typ="integer"), AGE_COL],
    "Service": [NAME_COL, col("Type", lambda o: (o.get("spec") or {}).get("type", "ClusterIP")),
                col("Cluster-IP", lambda o: (o.get("spec") or {}).get("clusterIP") or "<none>"),
                col("External-IP", lambda o: ",".join((o.get("spec") or {}).get("externalIPs") or []) or "<none>"),
                col("Port(s)", _service_ports), AGE_COL,
                col("Selector", lambda o: ",".join("%s=%s" % kv for kv in sorted(
                    ((o.get("spec") or {}).get("selector") or {}).items())) or "<none>", priority=1)],
    "ClusterRole": [NAME_COL, col("Created At", lambda o: o.get("metadata", {}).get("creationTimestamp", ""),
                                  typ="date")],
    "Role": [NAME_COL, col("Created At", lambda o: o.get("metadata", {}).get("creationTimestamp", ""),
                           typ="date")],
    "ClusterRoleBinding": [NAME_COL, col("Role", _binding_role), AGE_COL],
    "RoleBinding": [NAME_COL, col("Role", _binding_role), AGE_COL],
    "Job": [NAME_COL, col("Completions", lambda o: "%d/%d" % ((o.get("status") or {}).get("succeeded", 0) or 0,
                                                               (o.get("spec") or {}).get("completions", 1) or 1)),
            AGE_COL],
    "CronJob": [NAME_COL, col("Schedule", lambda o: (o.get("spec") or {}).get("schedule", "")),
                col("Suspend", lambda o: bool((o.get("spec") or {}).get("suspend", False)), typ="boolean"),
                AGE_COL],
    "CustomResourceDefinition": [NAME_COL, col("Created At", lambda o: o.get("metadata", {})
                                              .get("creationTimestamp", ""), typ="date")],
    # KubeVirt's own additionalPrinterColumns (jsonPath kept for the CRD objects)
    "VirtualMachineInstance": [
        NAME_COL, AGE_COL,
        col("Phase", lambda o: (o.get("status") or {}).get("phase", ""), json_path=".status.phase"),
        col("IP", _vmi_ip, json_path=".status.interfaces[0].ipAddress"),
        col("NodeName", lambda o: (o.get("status") or {}).get("nodeName", ""), json_path=".status.nodeName"),
        col("Ready", lambda o: _cond(o, "Ready"), json_path=".status.conditions[?(@.type=='Ready')].status"),
        col("Live-Migratable", lambda o: _cond(o, "LiveMigratable"), priority=1,
            json_path=".status.conditions[?(@.type=='LiveMigratable')].status"),
        col("Paused", lambda o: _cond(o, "Paused"), priority=1,
            json_path=".status.conditions[?(@.type=='Paused')].status")],
    "VirtualMachine": [
        NAME_COL, AGE_COL,
        col("Status", lambda o: (o.get("status") or {}).get("printableStatus", ""),
            json_path=".status.printableStatus"),
        col("Ready", lambda o: _cond(o, "Ready"), json_path=".status.conditions[?(@.type=='Ready')].status")],
    "VirtualMachineInstanceMigration": [
        NAME_COL,
        col("Phase", lambda o: (o.get("status") or {}).get("phase", ""), json_path=".status.phase"),
        col("VMI", lambda o: (o.get("spec") or {}).get("vmiName", ""), json_path=".spec.vmiName")],
    "KubeVirt": [NAME_COL, AGE_COL,
                 col("Phase", lambda o: (o.get("status") or {}).get("phase", ""), json_path=".status.phase")],
    "NodeMetrics": [NAME_COL, col("CPU", lambda o: (o.get("usage") or {}).get("cpu", "")),
                    col("Memory", lambda o: (o.get("usage") or {}).get("memory", ""))],
}
DEFAULT_COLUMNS = [NAME_COL, AGE_COL]


def columns_for(res):
    return res.columns or COLUMNS.get(res.kind) or DEFAULT_COLUMNS


# ---------------------------------------------------------------------------
# The registry

def _builtin():
    R = Resource
    eviction = {"eviction": ("Eviction", ["create"], "policy", "v1")}
    return [
        R("", "v1", "namespaces", "Namespace", False, ["ns"], status=True, fields=["status.phase"],
          generation=False, subresources={"finalize": ("Namespace", ["update"])}),
        R("", "v1", "nodes", "Node", False, ["no"], status=True, fields=["spec.unschedulable"],
          generation=False),
        R("", "v1", "pods", "Pod", True, ["po"], status=True, categories=["all"], fields=POD_FIELDS,
          subresources=eviction, generation=False),
        R("", "v1", "configmaps", "ConfigMap", True, ["cm"], generation=False),
        R("", "v1", "secrets", "Secret", True, [], generation=False),
        R("", "v1", "events", "Event", True, ["ev"], fields=EVENT_FIELDS, generation=False),
        R("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True, ["pvc"], status=True,
          generation=False),
        R("", "v1", "serviceaccounts", "ServiceAccount", True, ["sa"], generation=False),
        R("", "v1", "services", "Service", True, ["svc"], status=True, categories=["all"], generation=False),
        R("apps", "v1", "deployments", "Deployment", True, ["deploy"], status=True, categories=["all"]),
        R("apps", "v1", "replicasets", "ReplicaSet", True, ["rs"], status=True, categories=["all"],
          fields=["status.replicas"]),
        R("apps", "v1", "daemonsets", "DaemonSet", True, ["ds"], status=True, categories=["all"]),
        R("apps", "v1", "statefulsets", "StatefulSet", True, ["sts"], status=True, categories=["all"]),
        R("batch", "v1", "jobs", "Job", True, [], status=True, categories=["all"],
          fields=["status.successful"]),
        R("batch", "v1", "cronjobs", "CronJob", True, ["cj"], status=True, categories=["all"]),
        R("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True, ["pdb"], status=True),
        R("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False, ["pc"], generation=False),
        R("coordination.k8s.io", "v1", "leases", "Lease", True, [], generation=False),
        # RBAC objects are stored only: the simulator authenticates but does not authorize
        R("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", False, [], generation=False),
        R("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", False, [],
          generation=False),
        R("rbac.authorization.k8s.io", "v1", "roles", "Role", True, [], generation=False),
        R("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", True, [], generation=False),
        R("events.k8s.io", "v1", "events", "Event", True, ["ev"], storage="events", view="events.k8s.io",
          fields=EVENT_FIELDS, generation=False),
        R("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", False,
          ["crd", "crds"], status=True, categories=["api-extensions"]),
        R("metrics.k8s.io", "v1beta1", "nodes", "NodeMetrics", False, [], verbs=READ_VERBS, virtual=True,
          storage="metrics.k8s.io/nodes", generation=False),
        R("metrics.k8s.io", "v1beta1", "pods", "PodMetrics", True, [], verbs=READ_VERBS, virtual=True,
          storage="metrics.k8s.io/pods", generation=False),
        R("kubevirt.io", "v1", "virtualmachines", "VirtualMachine", True, ["vm", "vms"], status=True,
          custom=True, categories=["all"]),
        # The VMI CRD has no status subresource: KubeVirt's webhook JSON-patches /status on the main resource.
        R("kubevirt.io", "v1", "virtualmachineinstances", "VirtualMachineInstance", True, ["vmi", "vmis"],
          custom=True, categories=["all"]),
        R("kubevirt.io", "v1", "virtualmachineinstancemigrations", "VirtualMachineInstanceMigration", True,
          ["vmim", "vmims"], status=True, custom=True, categories=["all"]),
        R("kubevirt.io", "v1", "kubevirts", "KubeVirt", True, ["kv", "kvs"], status=True, custom=True,
          categories=["all"]),
        R("hco.kubevirt.io", "v1beta1", "hyperconvergeds", "HyperConverged", True, ["hco", "hcos"],
          status=True, custom=True),
    ]


class Registry:
    """Resources by (group, version, plural), plus kind lookups; CRDs can extend it at run time."""

    def __init__(self):
        self.lock = threading.RLock()
        self.resources = []
        for r in _builtin():
            self.add(r)

    def add(self, res):
        with self.lock:
            self.resources = [r for r in self.resources
                              if not (r.group == res.group and r.version == res.version and r.plural == res.plural)]
            self.resources.append(res)

    def remove_group_plural(self, group, plural):
        with self.lock:
            self.resources = [r for r in self.resources if not (r.group == group and r.plural == plural)]

    def get(self, group, version, plural):
        for r in self.resources:
            if r.group == group and r.version == version and r.plural == plural:
                return r
        return None

    def by_kind(self, api_version, kind):
        group, _, version = api_version.rpartition("/")
        for r in self.resources:
            if r.group == group and r.version == version and r.kind == kind:
                return r
        return None

    def by_kind_any_version(self, group, kind):
        for r in self.resources:
            if r.group == group and r.kind == kind and not r.view:
                return r
        return None

    def storage_resource(self, storage):
        """The canonical (un-viewed) resource of a storage bucket."""
        for r in self.resources:
            if r.storage == storage and not r.view:
                return r
        return None

    def groups(self):
        """[(group, [versions])] in registration order, excluding the core group."""
        out = {}
        for r in self.resources:
            if r.group:
                vs = out.setdefault(r.group, [])
                if r.version not in vs:
                    vs.append(r.version)
        return list(out.items())

    def in_group_version(self, group, version):
        return [r for r in self.resources if r.group == group and r.version == version]


# ---------------------------------------------------------------------------
# Discovery documents

def api_versions(server_address):
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}]}


def _group_doc(group, versions):
    gvs = [{"groupVersion": "%s/%s" % (group, v), "version": v} for v in versions]
    return {"name": group, "versions": gvs, "preferredVersion": gvs[0]}


def api_group_list(registry):
    return {"kind": "APIGroupList", "apiVersion": "v1",
            "groups": [_group_doc(g, vs) for g, vs in registry.groups()]}


def api_group(registry, group):
    for g, vs in registry.groups():
        if g == group:
            d = _group_doc(g, vs)
            d.update({"kind": "APIGroup", "apiVersion": "v1"})
            return d
    return None


def api_resource_list(registry, group, version):
    rs = registry.in_group_version(group, version)
    if not rs:
        return None
    out = []
    for r in rs:
        d = {"name": r.plural, "singularName": r.singular, "namespaced": r.namespaced, "kind": r.kind,
             "verbs": r.verbs}
        if r.short_names:
            d["shortNames"] = r.short_names
        if r.categories:
            d["categories"] = r.categories
        d["storageVersionHash"] = "apisim" + r.kind[:6]
        out.append(d)
        for sub, spec in sorted(r.subresources.items()):
            sd = {"name": "%s/%s" % (r.plural, sub), "singularName": "", "namespaced": r.namespaced,
                  "kind": spec[0], "verbs": spec[1]}
            if len(spec) > 2:
                sd["group"], sd["version"] = spec[2], spec[3]
            out.append(sd)
    return {"kind": "APIResourceList", "apiVersion": "v1",
            "groupVersion": "%s/%s" % (group, version) if group else version, "resources": out}


VERSION_INFO = {"major": "1", "minor": "30", "gitVersion": "v1.30.0-apisim", "gitCommit": "apisim",
                "gitTreeState": "clean", "buildDate": "2024-04-17T00:00:00Z", "goVersion": "go1.22.2",
                "compiler": "gc", "platform": "linux/amd64"}


# ---------------------------------------------------------------------------
# CRDs

def crd_for(res, created=None):
    """The CustomResourceDefinition object that would have registered `res`."""
    names = {"plural": res.plural, "singular": res.singular, "kind": res.kind, "listKind": res.list_kind}
    if res.short_names:
        names["shortNames"] = res.short_names
    if res.categories:
        names["categories"] = res.categories
    version = {"name": res.version, "served": True, "storage": True,
               "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}
    if res.status_subresource:
        version["subresources"] = {"status": {}}
    cols = [c for c in COLUMNS.get(res.kind, []) if c.get("jsonPath")]
    if cols:
        version["additionalPrinterColumns"] = [
            {"name": c["name"], "type": c["type"], "jsonPath": c["jsonPath"],
             **({"priority": c["priority"]} if c["priority"] else {})} for c in cols]
    ts = created or "2024-01-01T00:00:00Z"
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "%s.%s" % (res.plural, res.group), "creationTimestamp": ts,
                     "labels": {"app.kubernetes.io/managed-by": "apisim"}},
        "spec": {"group": res.group, "names": names, "scope": "Namespaced" if res.namespaced else "Cluster",
                 "versions": [version]},
        "status": {"acceptedNames": names, "storedVersions": [res.version],
                   "conditions": [
                       {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
                        "message": "no conflicts found", "lastTransitionTime": ts},
                       {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
                        "message": "the initial names have been accepted", "lastTransitionTime": ts}]},
    }


def resources_from_crd(crd):
    """Resources a CRD object serves; ValueError when it is malformed."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group, plural, kind = spec.get("group"), names.get("plural"), names.get("kind")
    if not (group and plural and kind):
        raise ValueError("spec.group, spec.names.plural and spec.names.kind are required")
    out = []
    for v in spec.get("versions") or []:
        if not v.get("served", True):
            continue
        out.append(Resource(group, v.get("name", "v1"), plural, kind, spec.get("scope") != "Cluster",
                            names.get("shortNames") or [], status="status" in (v.get("subresources") or {}),
                            custom=True, categories=names.get("categories") or [],
                            singular=names.get("singular")))
    return out


# ---------------------------------------------------------------------------
# Minimal JSONPath for CRD printer columns (.a.b, [n], [?(@.k=='v')])

_SEG = re.compile(r"\.([A-Za-z0-9_\-]+)|\[(\d+)\]|\[\?\(@\.([A-Za-z0-9_\-]+)==['\"]([^'\"]*)['\"]\)\]")


def json_path_get(obj, path):
    cur = [obj]
    pos = 0
    while pos < len(path):
        m = _SEG.match(path, pos)
        if not m:
            return None
        pos = m.end()
        nxt = []
        for c in cur:
            if m.group(1) is not None and isinstance(c, dict) and m.group(1) in c:
                nxt.append(c[m.group(1)])
            elif m.group(2) is not None and isinstance(c, list) and int(m.group(2)) < len(c):
                nxt.append(c[int(m.group(2))])
            elif m.group(3) is not None and isinstance(c, list):
                nxt.extend(e for e in c if isinstance(e, dict) and str(e.get(m.group(3))) == m.group(4))
        cur = nxt
    return cur[0] if cur else None


def crd_columns(crd_version):
    cols = [NAME_COL]
    for c in crd_version.get("additionalPrinterColumns") or []:
        jp = c.get("jsonPath", "")
        if c.get("type") == "date":
            def fn(o, jp=jp):
                t = parse_time(json_path_get(o, jp))
                return human_duration(CLOCK.now() - t) if t else "<unknown>"
        else:
            def fn(o, jp=jp):
                v = json_path_get(o, jp)
                return "" if v is None else v
        cols.append(col(c.get("name", jp), fn, typ=c.get("type", "string"), priority=c.get("priority", 0)))
    if len(cols) == 1:
        cols.append(AGE_COL)
    return cols
