#!/usr/bin/env python3
"""promdata.py - node-exporter and kube-state-metrics series for tests, as OpenMetrics text
that `promtool tsdb create-blocks-from openmetrics` turns into Prometheus blocks.

    promdata.py --start UNIX --end UNIX [--step 15] SPEC.json OUT.om

SPEC describes each node by what the descheduler's recording rules measure:

    {"memory_bytes": 34359738368,
     "nodes": {"worker-1": {"busy": 0.9, "psi_cpu": 0.3, "mem_used": 0.8, "psi_mem": 0.1,
                            "role": "worker"}, ...}}

busy       share of CPU time not idle (one CPU; the idle counter grows by 1 - busy per second)
psi_cpu    node_pressure_cpu_waiting_seconds_total growth per second (omit: no PSI series)
mem_used   1 - MemAvailable / allocatable memory
psi_mem    node_pressure_memory_waiting_seconds_total growth per second
role       kube_node_role{role=...} (kube-state-metrics); default "worker"

Every per-node series carries instance=<node name>, as a node-exporter scraped with the
instance relabelled to the node name has it. Python standard library only.
"""

import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--start", type=int, required=True)
    ap.add_argument("--end", type=int, required=True)
    ap.add_argument("--step", type=int, default=15)
    ap.add_argument("spec")
    ap.add_argument("out")
    a = ap.parse_args()
    spec = json.load(open(a.spec))
    mem = int(spec.get("memory_bytes", 32 << 30))
    nodes = spec["nodes"]
    times = list(range(a.start, a.end + 1, a.step))

    out = []

    def family(name, typ, series):
        out.append("# TYPE %s %s" % (name, typ))
        for labels, fn in series:
            lab = ",".join('%s="%s"' % kv for kv in labels)
            sample = name + ("_total" if typ == "counter" else "")
            for t in times:
                out.append("%s{%s} %s %d" % (sample, lab, repr(float(fn(t))), t))

    def counter(rate):
        return lambda t: rate * (t - a.start)

    def const(v):
        return lambda t: v

    names = sorted(nodes)
    family("node_cpu_seconds", "counter",
           [((("instance", n), ("cpu", "0"), ("mode", "idle")), counter(1 - nodes[n]["busy"]))
            for n in names])
    family("node_pressure_cpu_waiting_seconds", "counter",
           [((("instance", n),), counter(nodes[n]["psi_cpu"])) for n in names if "psi_cpu" in nodes[n]])
    family("node_pressure_memory_waiting_seconds", "counter",
           [((("instance", n),), counter(nodes[n].get("psi_mem", 0))) for n in names if "psi_cpu" in nodes[n]])
    family("node_memory_MemAvailable_bytes", "gauge",
           [((("instance", n),), const(round(mem * (1 - nodes[n].get("mem_used", 0.5))))) for n in names])
    family("kube_node_status_allocatable", "gauge",
           [((("node", n), ("resource", "memory"), ("unit", "byte")), const(mem)) for n in names])
    family("kube_node_role", "gauge",
           [((("node", n), ("role", nodes[n].get("role", "worker"))), const(1)) for n in names])
    out.append("# EOF")
    with open(a.out, "w") as f:
        f.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
