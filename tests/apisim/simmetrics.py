"""metrics.k8s.io/v1beta1 NodeMetrics and PodMetrics, computed on read.

metrics-server reports measured usage; the simulator has nothing to measure,
so a pod's usage is, in order of preference: a value set explicitly (a
`PodMetrics` object in the snapshot, or `PUT /_sim/metrics`), else the sum of
its containers' requests.  A node's usage is the sum over the non-terminal
pods bound to it, unless the snapshot or `/_sim/metrics` pinned it, so usage
follows pods when they are evicted or live-migrated.  When a migration
completes, the source pod's explicit usage is carried to the target pod
(same VM, same load).
"""

import threading

from simutil import CLOCK, format_cpu, format_memory, milli, bytes_of, rfc3339

FINAL = ("Succeeded", "Failed")


class Metrics:
    def __init__(self, store, registry):
        self.store = store
        self.reg = registry
        self.lock = threading.Lock()
        self.pod_usage = {}    # "ns/name" -> {container: (cpu_m, mem_b)}
        self.node_usage = {}   # node -> (cpu_m, mem_b)
        self.pods = registry.get("", "v1", "pods")
        self.nodes = registry.get("", "v1", "nodes")
        store.virtual["metrics.k8s.io/nodes"] = self.node_objects
        store.virtual["metrics.k8s.io/pods"] = self.pod_objects

    # -- explicit values -------------------------------------------------------

    def load_object(self, obj):
        """A NodeMetrics or PodMetrics object from a snapshot or the control endpoint."""
        md = obj.get("metadata") or {}
        if obj.get("kind") == "NodeMetrics":
            u = obj.get("usage") or {}
            with self.lock:
                self.node_usage[md["name"]] = (milli(u.get("cpu", 0)), bytes_of(u.get("memory", 0)))
        elif obj.get("kind") == "PodMetrics":
            cs = {}
            for c in obj.get("containers") or []:
                u = c.get("usage") or {}
                cs[c.get("name", "")] = (milli(u.get("cpu", 0)), bytes_of(u.get("memory", 0)))
            with self.lock:
                self.pod_usage["%s/%s" % (md.get("namespace", "default"), md["name"])] = cs
        else:
            raise ValueError("not a NodeMetrics or PodMetrics object")

    def carry(self, ns, src, dst):
        with self.lock:
            u = self.pod_usage.get("%s/%s" % (ns, src))
            if u is not None:
                self.pod_usage["%s/%s" % (ns, dst)] = dict(u)

    # -- computed objects -------------------------------------------------------

    def _pod_usage(self, entry):
        with self.lock:
            explicit = self.pod_usage.get("%s/%s" % (entry.ns, entry.name))
        if explicit is not None:
            return explicit
        obj = entry.obj()
        out = {}
        for c in (obj.get("spec") or {}).get("containers") or []:
            req = ((c.get("resources") or {}).get("requests") or {})
            out[c.get("name", "")] = (milli(req.get("cpu", 0)), bytes_of(req.get("memory", 0)))
        return out

    def _pod_total(self, entry):
        with self.lock:
            explicit = self.pod_usage.get("%s/%s" % (entry.ns, entry.name))
        if explicit is not None:
            return sum(v[0] for v in explicit.values()), sum(v[1] for v in explicit.values())
        return entry.info.cpu_m, entry.info.mem_b

    def pod_objects(self, res, ns):
        ts = rfc3339(CLOCK.now())
        out = []
        for e in self.store.entries(self.pods, ns):
            if e.fields.get("status.phase") != "Running":
                continue
            out.append({"kind": "PodMetrics", "apiVersion": "metrics.k8s.io/v1beta1",
                        "metadata": {"name": e.name, "namespace": e.ns, "creationTimestamp": ts,
                                     "labels": dict(e.labels)},
                        "timestamp": ts, "window": "10s",
                        "containers": [{"name": n, "usage": {"cpu": format_cpu(c), "memory": format_memory(m)}}
                                       for n, (c, m) in self._pod_usage(e).items()]})
        return out

    def node_objects(self, res, ns):
        ts = rfc3339(CLOCK.now())
        pods_b = self.store.bucket("pods")
        out = []
        for n in self.store.entries(self.nodes):
            with self.lock:
                pinned = self.node_usage.get(n.name)
            if pinned is None:
                cpu = mem = 0
                for k in pods_b.by_node.get(n.name, ()):
                    p = pods_b.entries[k]
                    if p.fields.get("status.phase") in FINAL:
                        continue
                    c, m = self._pod_total(p)
                    cpu += c
                    mem += m
            else:
                cpu, mem = pinned
            out.append({"kind": "NodeMetrics", "apiVersion": "metrics.k8s.io/v1beta1",
                        "metadata": {"name": n.name, "creationTimestamp": ts, "labels": dict(n.labels)},
                        "timestamp": ts, "window": "10s",
                        "usage": {"cpu": format_cpu(cpu), "memory": format_memory(mem)}})
        return out
