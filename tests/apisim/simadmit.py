"""Kind-specific defaulting and validation on create/update ("admission").

Only what a client of this project can observe is done: a created pod gets
the defaults and `spec.priority` from its PriorityClass (the Priority
admission plugin, 403 for an unknown class), a status reset as the apiserver
does, and, standing in for a kubelet, a pod created already bound to a node
starts `Running` and Ready; resources with a status subresource drop a
client-supplied status on create; a CRD is validated (the simulator registers
its resource once it is stored); PDBs reject minAvailable together with
maxUnavailable; a Service gets its defaults and a cluster IP from 10.96.0.0/16;
(Cluster)RoleBindings need a roleRef that never changes.
"""

from simutil import ApiError, invalid, rfc3339, bytes_of, milli
import simresources

_KUBELET_CONDS = ("Initialized", "Ready", "ContainersReady", "PodScheduled")


def qos_class(spec):
    reqs_any = False
    guaranteed = True
    for c in spec.get("containers") or []:
        r = (c.get("resources") or {}) if isinstance(c, dict) else {}
        req, lim = r.get("requests") or {}, r.get("limits") or {}
        if req or lim:
            reqs_any = True
        for k in ("cpu", "memory"):
            if k not in lim or (k in req and req[k] != lim[k] and
                                (milli(req[k]) != milli(lim[k]) if k == "cpu" else bytes_of(req[k]) != bytes_of(lim[k]))):
                guaranteed = False
    if not reqs_any:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


class Admission:
    def __init__(self, registry, store):
        self.reg = registry
        self.store = store

    def __call__(self, res, obj, old):
        fn = getattr(self, "_" + res.kind.lower(), None)
        if old is None and res.status_subresource and res.kind not in ("Pod", "Namespace",
                                                                         "CustomResourceDefinition"):
            obj.pop("status", None)
        if fn:
            fn(res, obj, old)

    def _pod(self, res, obj, old):
        if old is not None:
            return
        name = obj["metadata"]["name"]
        spec = obj.get("spec")
        if not isinstance(spec, dict) or not spec.get("containers"):
            raise invalid(res, "Pod", name, "spec.containers", "", "Required value")
        spec.setdefault("restartPolicy", "Always")
        spec.setdefault("dnsPolicy", "ClusterFirst")
        spec.setdefault("schedulerName", "default-scheduler")
        spec.setdefault("terminationGracePeriodSeconds", 30)
        spec.setdefault("securityContext", {})
        for c in spec["containers"]:
            if isinstance(c, dict):
                r = c.setdefault("resources", {})
                if r.get("limits") and not r.get("requests"):
                    r["requests"] = dict(r["limits"])
        pcs = self.reg.get("scheduling.k8s.io", "v1", "priorityclasses")
        pc_name = spec.get("priorityClassName")
        if pc_name:
            pc = self.store.find(pcs, "", pc_name)
            if pc is None:
                raise ApiError(403, "Forbidden", 'pods "%s" is forbidden: no PriorityClass with name %s was found'
                               % (name, pc_name), {"name": name, "kind": "pods"})
            spec["priority"] = pc.get("value", 0)
            if pc.get("preemptionPolicy"):
                spec.setdefault("preemptionPolicy", pc["preemptionPolicy"])
        else:
            default = next((e.obj() for e in self.store.entries(pcs) if e.obj().get("globalDefault")), None)
            if default:
                spec["priorityClassName"] = default["metadata"]["name"]
                spec["priority"] = default.get("value", 0)
            else:
                spec.setdefault("priority", 0)
        ts = rfc3339()
        status = {"phase": "Pending", "qosClass": qos_class(spec)}
        if spec.get("nodeName"):  # no kubelet: a bound pod starts at once
            status.update({"phase": "Running", "startTime": ts, "hostIP": "", "podIP": "",
                           "conditions": [{"type": t, "status": "True", "lastTransitionTime": ts}
                                          for t in _KUBELET_CONDS] +
                           [{"type": g["conditionType"], "status": "True", "lastTransitionTime": ts}
                            for g in spec.get("readinessGates") or [] if isinstance(g, dict) and
                            g.get("conditionType")],
                           "containerStatuses": [{"name": c.get("name", ""), "ready": True, "restartCount": 0,
                                                  "started": True, "image": c.get("image", ""), "imageID": "",
                                                  "state": {"running": {"startedAt": ts}}}
                                                 for c in spec["containers"] if isinstance(c, dict)]})
        obj["status"] = status

    def _namespace(self, res, obj, old):
        if old is None:
            obj["status"] = {"phase": "Active"}
        labels = obj["metadata"].setdefault("labels", {})
        labels.setdefault("kubernetes.io/metadata.name", obj["metadata"]["name"])

    def _service(self, res, obj, old):
        spec = obj.setdefault("spec", {})
        if not isinstance(spec, dict):
            raise invalid(res, "Service", obj["metadata"]["name"], "spec", "must be an object")
        spec.setdefault("type", "ClusterIP")
        spec.setdefault("sessionAffinity", "None")
        for p in spec.get("ports") or []:
            if isinstance(p, dict):
                p.setdefault("protocol", "TCP")
                p.setdefault("targetPort", p.get("port"))
        if old is not None:  # the allocated address is immutable
            spec["clusterIP"] = (old.get("spec") or {}).get("clusterIP", spec.get("clusterIP"))
        elif spec.get("clusterIP") != "None":
            spec["clusterIP"] = self._next_cluster_ip(res)
        if spec["clusterIP"] and spec["clusterIP"] != "None":
            spec["clusterIPs"] = [spec["clusterIP"]]

    def _next_cluster_ip(self, res):
        """The next free address of the service range 10.96.0.0/16 (10.96.0.1 is `kubernetes`)."""
        used = {(e.obj().get("spec") or {}).get("clusterIP") for e in self.store.entries(res)}
        for n in range(10, 65535):
            ip = "10.96.%d.%d" % (n // 256, n % 256)
            if n % 256 and ip not in used:
                return ip
        raise ApiError(500, "InternalError", "Internal error occurred: failed to allocate a serviceIP: "
                                             "range is full")

    def _rolebinding(self, res, obj, old):
        ref = obj.get("roleRef")
        kind = res.kind + ".rbac.authorization.k8s.io"
        name = obj["metadata"]["name"]
        if not isinstance(ref, dict) or not ref.get("kind") or not ref.get("name"):
            raise invalid(res, kind, name, "roleRef", "", "Required value")
        allowed = ("ClusterRole",) if res.kind == "ClusterRoleBinding" else ("Role", "ClusterRole")
        if ref["kind"] not in allowed:
            raise invalid(res, kind, name, "roleRef.kind", '"%s": supported values: %s'
                          % (ref["kind"], ", ".join('"%s"' % a for a in allowed)), "Unsupported value")
        if old is not None and old.get("roleRef") != ref:
            raise invalid(res, kind, name, "roleRef", "cannot change roleRef")

    _clusterrolebinding = _rolebinding

    def _poddisruptionbudget(self, res, obj, old):
        spec = obj.get("spec") or {}
        if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
            raise invalid(res, "PodDisruptionBudget", obj["metadata"]["name"], "spec", "",
                          "minAvailable and maxUnavailable cannot be both set")

    def _customresourcedefinition(self, res, obj, old):
        try:
            served = simresources.resources_from_crd(obj)
        except ValueError as e:
            raise invalid(res, "CustomResourceDefinition", obj["metadata"]["name"], "spec", "", str(e))
        spec = obj["spec"]
        expect = "%s.%s" % (spec["names"]["plural"], spec["group"])
        if obj["metadata"]["name"] != expect:
            raise invalid(res, "CustomResourceDefinition", obj["metadata"]["name"], "metadata.name",
                          obj["metadata"]["name"], 'must be spec.names.plural+"."+spec.group')
        # registration happens when the CRD is stored (apisim.Sim._on_write), so dry runs serve nothing
        if old is None:
            ts = rfc3339()
            obj["status"] = {"acceptedNames": spec["names"], "storedVersions": [r.version for r in served][:1],
                             "conditions": [{"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
                                             "message": "the initial names have been accepted",
                                             "lastTransitionTime": ts}]}
