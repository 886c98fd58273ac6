#!/usr/bin/env python3
"""Two or more descheduler binaries compared on Deployment-mode cycles, in turn on one simulator.

The machine's speed for the passes over 150,000 pods moves by a third between cycles of one run
(they wait on memory, which other work on the host shares), so a change of a tenth shows only
over many cycles of binaries taking turns on the same cluster. This script starts tests/apisim
once on a cluster file made by bench/bench.py (default: the 5k/150k one), then for --rounds
rounds runs each binary in turn in Deployment mode on the watch cache with --dry-run (the
cluster does not change, so every cycle decides the same), --cycles cycles at --interval, with
bench/policy-lnu.yaml, and reads each cycle's "Cycle timings" line. Cycle 1 (the list) is left
out. Prints, per binary, min / median of the view ("decode"), deciding, and their sum, and
each median against the first binary's; then the page faults (minor, from /proc/PID/stat) the
process took from one cycle's timings line to the next, which, unlike the times, hardly move
from run to run.

  python3 bench/ab_deploy.py OLD_BINARY NEW_BINARY [--rounds 3 --cycles 20]
"""
import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402  (the simulator and the timings line, shared with the benchmark)


def minor_faults(pid):
    """The process's minor page faults so far (/proc/PID/stat, field 10)."""
    with open("/proc/%d/stat" % pid) as f:
        return int(f.read().rsplit(")", 1)[1].split()[7])


def run_binary(binary, sim, cycles, interval):
    """(view, decide, page faults since the cycle before) of cycles 2..cycles of one dry-run
    Deployment-mode run."""
    cmd = [binary, "--kubeconfig", sim.kubeconfig, "--descheduling-interval", "%gs" % interval,
           "--secure-port", "0", "--policy-config-file", bench.POLICY, "--dry-run",
           "--client-connection-qps", "10000", "--client-connection-burst", "10000", "--v", "3"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    out, seen, faults = [], 0, 0
    for line in proc.stderr:
        t = bench.timings_of(line)
        if t is None:
            continue
        seen += 1
        now = minor_faults(proc.pid)
        if seen > 1:
            out.append((t["decode"], t["decide"], now - faults))
        faults = now
        if seen == cycles:
            proc.send_signal(signal.SIGINT)
    rc = proc.wait()
    if seen < cycles:
        raise RuntimeError("%s stopped after %d cycles (exit %d)" % (binary, seen, rc))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("binaries", nargs="+", help="descheduler binaries; the first is the baseline")
    ap.add_argument("--snapshot", default=os.path.join(HERE, "out", "cluster-5000-150000-20000.json"))
    ap.add_argument("--rounds", type=int, default=3, help="runs of each binary, in turn (default 3)")
    ap.add_argument("--cycles", type=int, default=21, help="cycles per run, the first left out (default 21)")
    ap.add_argument("--interval", type=float, default=0.7, help="seconds between cycles (default 0.7)")
    a = ap.parse_args()
    if not os.path.exists(a.snapshot):
        ap.error("no cluster file %s: make it with bench/bench.py --sizes 5000:150000:20000 --only simulate"
                 % a.snapshot)
    for b in a.binaries:
        if not os.access(b, os.X_OK):
            ap.error("not an executable: %s" % b)
    if a.rounds < 1 or a.cycles < 2:
        ap.error("--rounds must be at least 1 and --cycles at least 2")
    work = tempfile.mkdtemp(prefix="ab-deploy-")
    bench.log("starting the simulator on %s" % os.path.basename(a.snapshot))
    sim = bench.Sim(a.snapshot, work)
    runs = {b: [] for b in a.binaries}
    try:
        for r in range(a.rounds):
            for b in a.binaries:
                bench.log("round %d/%d: %s" % (r + 1, a.rounds, b))
                runs[b] += run_binary(b, sim, a.cycles, a.interval)
    finally:
        sim.stop()
        shutil.rmtree(work, ignore_errors=True)
    print("Deployment-mode cycles in dry run, %d per binary; seconds, min / median (median / baseline's)"
          % len(runs[a.binaries[0]]))
    base = None
    for b in a.binaries:
        view = [v for v, _, _ in runs[b]]
        decide = [d for _, d, _ in runs[b]]
        both = [v + d for v, d, _ in runs[b]]
        med = (statistics.median(view), statistics.median(decide), statistics.median(both))
        base = base or med
        print("%-40s view %.3f / %.3f (%.2f)  decide %.3f / %.3f (%.2f)  sum %.3f / %.3f (%.2f)" % (
            b, min(view), med[0], med[0] / base[0], min(decide), med[1], med[1] / base[1],
            min(both), med[2], med[2] / base[2]))
    for b in a.binaries:
        faults = [f for _, _, f in runs[b]]
        print("%-40s page faults a cycle %d / %d (min / median)" % (b, min(faults), statistics.median(faults)))


if __name__ == "__main__":
    main()
