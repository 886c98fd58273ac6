"""Usage that follows the VMs: a seeded load per workload, summed per node from the placement the
API server reports, published as the node-exporter and kube-state-metrics series that the shipped
recording rules (deploy/monitoring/descheduler-rules.yaml) read.

Each VM (and each ordinary pod) of a scenario gets a load from `LoadModel`: a share of its CPU
and memory requests, steady, bursty (a square wave with a per-workload phase) or hot, with a
seeded jitter, so two runs of a scenario see the same load. Where a workload runs is read from
the cluster, never assumed: a VM runs on its VMI's `status.nodeName` (KubeVirt moves that field
when a live migration completes, so until then the load stays on the source), an ordinary pod on
its `spec.nodeName`. A node's demand is the sum of the loads of what runs on it.

Per node, at every scrape (`instance` is the node's name, as the rules expect):
- `node_cpu_seconds_total{mode="idle",cpu="0"}`: a counter that grows by (1 - utilization) per
  second, utilization = min(1, CPU demand / allocatable CPU); the rules take
  `1 - rate(...[1m])`;
- `node_memory_MemAvailable_bytes`: allocatable memory minus memory demand (not below 0);
- `node_pressure_cpu_waiting_seconds_total` / `node_pressure_memory_waiting_seconds_total`:
  counters that grow, per second, by the share of demand beyond 90% of the node
  (max(0, demand / allocatable - 0.9)), the PSI "some" stall a saturating node shows;
- kube-state-metrics' `kube_node_status_allocatable{node,resource}` and
  `kube_node_role{node,role="worker"}` for nodes labelled `node-role.kubernetes.io/worker`.

Counters are integrated between scrapes from the demand at the time of each scrape (Prometheus
scrapes often; the error is one scrape interval of a load step). `ground_truth()` gives the
runner the same per-node utilization without Prometheus's averaging, so the lab reports what the
nodes really carry beside what the descheduler was told.
"""

import math
import random
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from labkube import Informer, key_of
from scenario import seconds

PRESSURE_KNEE = 0.9


def parse_quantity(q):
    """A Kubernetes quantity as a float (cores or bytes)."""
    if isinstance(q, (int, float)):
        return float(q)
    s = str(q).strip()
    suffixes = {"Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "Ti": 2 ** 40, "Pi": 2 ** 50, "Ei": 2 ** 60,
                "n": 1e-9, "u": 1e-6, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}
    for suf in ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n", "u", "m", "k", "M", "G", "T", "P", "E"):
        if s.endswith(suf):
            return float(s[: -len(suf)]) * suffixes[suf]
    return float(s)


class LoadModel:
    """The load of every workload, by key ("namespace/name" of the VMI or pod). `profile` is the
    scenario's load block: {kind: steady|bursty|hot, cpu: share, memory: share, jitter, period,
    low, high}."""

    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.loads = {}   # key -> (cpu cores requested, memory bytes, profile, phase, cpu factor, mem factor)
        self.t0 = time.time()

    def add(self, key, cpu_request, memory_request, profile):
        profile = dict(profile)
        if isinstance(profile.get("period"), str):  # a scenario's duration ("2m")
            profile["period"] = seconds(profile["period"])
        jitter = float(profile.get("jitter", 0.1))
        fc = 1.0 + jitter * (2 * self.rng.random() - 1)
        fm = 1.0 + jitter * (2 * self.rng.random() - 1)
        phase = self.rng.random()
        self.loads[key] = (parse_quantity(cpu_request), parse_quantity(memory_request), dict(profile), phase, fc, fm)

    def demand(self, key, now=None):
        """(CPU cores, memory bytes) the workload uses now; (0, 0) for an unknown one."""
        entry = self.loads.get(key)
        if entry is None:
            return 0.0, 0.0
        cpu, mem, p, phase, fc, fm = entry
        share = float(p.get("cpu", 0.3))
        if p.get("kind") == "bursty":
            period = float(p.get("period", 120))
            t = ((now or time.time()) - self.t0) / period + phase
            share = float(p.get("high", min(1.0, share * 2))) if (t % 1.0) < 0.5 else float(p.get("low", share / 2))
        return max(0.0, cpu * share * fc), max(0.0, mem * float(p.get("memory", 0.5)) * fm)


class Placement:
    """Where each workload runs, from watches of VMIs and pods (one list, then events)."""

    def __init__(self, client, log=None):
        self.vmis = Informer(client, "/apis/kubevirt.io/v1/virtualmachineinstances", name="exporter vmis", log=log)
        # launchers are placed through their VMI; other pods by their node
        self.pods = Informer(client, "/api/v1/pods", name="exporter pods", log=log,
                             label_selector="!kubevirt.io", field_selector="status.phase=Running")

    def start(self):
        self.vmis.start()
        self.pods.start()
        self.vmis.wait_synced()
        self.pods.wait_synced()
        return self

    def stop(self):
        self.vmis.stop()
        self.pods.stop()

    def by_node(self):
        """{node: [workload key, ...]} of what runs now."""
        out = {}
        for v in self.vmis.values():
            st = v.get("status") or {}
            node = st.get("nodeName")
            if node and st.get("phase") == "Running":
                out.setdefault(node, []).append(key_of(v))
        for p in self.pods.values():
            node = (p.get("spec") or {}).get("nodeName")
            if node and not (p.get("metadata") or {}).get("deletionTimestamp"):
                out.setdefault(node, []).append(key_of(p))
        return out


class Exporter:
    """The /metrics endpoint. `nodes` is {name: {"cpu": cores, "memory": bytes, "worker": bool}}."""

    def __init__(self, loads, placement, nodes):
        self.loads, self.placement, self.nodes = loads, placement, nodes
        self.lock = threading.Lock()
        self.counters = {n: [0.0, 0.0, 0.0] for n in nodes}  # idle, cpu pressure, memory pressure
        self.last = time.time()
        self.server = None

    def ground_truth(self, now=None):
        """{node: {"cpu": utilization 0..1, "memory": 0..1, "cpuDemand": share (may pass 1),
        "memDemand": share}} from the load model and the placement."""
        placed = self.placement.by_node()
        out = {}
        for n, cap in self.nodes.items():
            cpu = mem = 0.0
            for k in placed.get(n, ()):
                c, m = self.loads.demand(k, now)
                cpu += c
                mem += m
            cd = cpu / cap["cpu"] if cap["cpu"] else 0.0
            md = mem / cap["memory"] if cap["memory"] else 0.0
            out[n] = {"cpu": min(1.0, cd), "memory": min(1.0, md), "cpuDemand": cd, "memDemand": md}
        return out

    def _advance(self):
        now = time.time()
        truth = self.ground_truth(now)
        with self.lock:
            dt = max(0.0, now - self.last)
            self.last = now
            for n, u in truth.items():
                c = self.counters[n]
                c[0] += (1.0 - u["cpu"]) * dt
                c[1] += max(0.0, u["cpuDemand"] - PRESSURE_KNEE) * dt
                c[2] += max(0.0, u["memDemand"] - PRESSURE_KNEE) * dt
            counters = {n: list(c) for n, c in self.counters.items()}
        return truth, counters

    def render(self):
        truth, counters = self._advance()
        lines = ["# TYPE node_cpu_seconds_total counter"]
        for n in sorted(self.nodes):
            lines.append('node_cpu_seconds_total{instance="%s",cpu="0",mode="idle"} %.6f' % (n, counters[n][0]))
        lines.append("# TYPE node_memory_MemAvailable_bytes gauge")
        for n in sorted(self.nodes):
            avail = max(0.0, self.nodes[n]["memory"] * (1.0 - truth[n]["memory"]))
            lines.append('node_memory_MemAvailable_bytes{instance="%s"} %.0f' % (n, avail))
        lines.append("# TYPE node_pressure_cpu_waiting_seconds_total counter")
        for n in sorted(self.nodes):
            lines.append('node_pressure_cpu_waiting_seconds_total{instance="%s"} %.6f' % (n, counters[n][1]))
        lines.append("# TYPE node_pressure_memory_waiting_seconds_total counter")
        for n in sorted(self.nodes):
            lines.append('node_pressure_memory_waiting_seconds_total{instance="%s"} %.6f' % (n, counters[n][2]))
        lines.append("# TYPE kube_node_status_allocatable gauge")
        for n in sorted(self.nodes):
            lines.append('kube_node_status_allocatable{node="%s",resource="cpu",unit="core"} %g' % (n, self.nodes[n]["cpu"]))
            lines.append('kube_node_status_allocatable{node="%s",resource="memory",unit="byte"} %.0f'
                         % (n, self.nodes[n]["memory"]))
        lines.append("# TYPE kube_node_role gauge")
        for n in sorted(self.nodes):
            if self.nodes[n].get("worker"):
                lines.append('kube_node_role{node="%s",role="worker"} 1' % n)
        return ("\n".join(lines) + "\n").encode()

    def serve(self, port=0):
        exporter = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                if self.path.split("?")[0] != "/metrics":
                    self.send_response(404)
                    self.end_headers()
                    return
                body = exporter.render()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", port), H)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True, name="exporter").start()
        return self.server.server_address[1]

    def stop(self):
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


def imbalance(values):
    """(max - min, population standard deviation) of a list of numbers; (0, 0) when empty."""
    if not values:
        return 0.0, 0.0
    mean = sum(values) / len(values)
    return max(values) - min(values), math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
