#!/usr/bin/env python3
"""Side by side: each scenario with this project's descheduler and with upstream's, same policy,
same lab, one after the other; one table and tests/lab/out/compare.json.

    python3 tests/lab/compare.py [--scenarios "runbook skewed ..."] [--small] [--binary PATH]
        [--same-policy] [--out DIR]

"ours" runs the scenario's `targetedPolicy` (this descheduler's targeted moves on) where it has
one, else the same policy as upstream; --same-policy adds "oursSamePolicy", ours with exactly
upstream's policy (the drop-in comparison).

compare.json (its shape is relied on elsewhere; keep it):
  {"components": {"kube-apiserver": VERSION, ..., "virt-handler": "stand-in", "prometheus": ...},
   "scenarios": {NAME: {"ours": R, "upstream": R}}, "machine": ..., "commit": ...}
where each component's value is the version that ran (or "stand-in"), and R is
  {"policy", "cycles", "cyclesToConverge" (null: did not converge), "migrations",
   "migrationsSucceeded", "pingPongs", "vmsStopped", "imbalanceStart", "imbalanceEnd",
   "requests": {"VERB RESOURCE": N}, ...}
A run that could not happen (upstream cannot be built here, say) is {"notRun": WHY} and the
table says NOT RUN; the exit status is then 1. Each run is `run.py` in a process of its own,
which starts and stops its own lab.
"""

import argparse
import json
import os
import platform
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import scenario as scen  # noqa: E402
KEYS = ("policy", "cycles", "cyclesToConverge", "migrations", "migrationsSucceeded", "pingPongs", "vmsStopped",
        "imbalanceStart", "imbalanceEnd", "requests", "targetMet", "version", "migrationsFailed", "failures")
ALL = ("runbook", "openshift", "skewed", "pingpong", "pinned")


def commit():
    p = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return (p.stdout.strip() or "unknown") + ("+changes" if dirty else "")


def machine():
    cpus = os.cpu_count()
    mem = 0
    try:
        with open("/proc/meminfo") as f:
            mem = int(f.readline().split()[1]) // (1024 * 1024)
    except OSError:
        pass
    return "%s, %d cores, %d GiB" % (platform.platform(terse=True), cpus, mem)


def run_one(name, who, a):
    argv = [sys.executable, os.path.join(HERE, "run.py"), name, "--out", a.out]
    if who == "upstream":
        argv.append("--upstream")
    elif a.binary:
        argv += ["--binary", a.binary]
    if who == "ours-targeted":
        argv.append("--targeted")
    if a.small:
        argv.append("--small")
    print("=== %s with %s's descheduler" % (name, who), flush=True)
    path = os.path.join(a.out, "%s-%s.json" % (name, who))
    if os.path.exists(path):
        os.unlink(path)  # an earlier run's record must not stand in for this one
    p = subprocess.run(argv)
    if p.returncode in (2, 3) or not os.path.exists(path):
        return {"notRun": "run.py exited %d (see its output above)" % p.returncode}, None
    with open(path) as f:
        full = json.load(f)
    return {k: full.get(k) for k in KEYS}, full.get("components")


def fmt(v):
    if v is None:
        return "-"
    if isinstance(v, float):
        return "%.3f" % v
    return str(v)


def table(result):
    cols = ("cycles to converge", "migrations", "ping-pongs", "final imbalance", "VMs stopped", "target")
    lines = ["| scenario | descheduler | " + " | ".join(cols) + " |", "|" + "---|" * (len(cols) + 2)]
    for name, both in result["scenarios"].items():
        for who in [k for k in ("ours", "upstream", "oursSamePolicy") if k in both]:
            r = both.get(who) or {}
            if "notRun" in r:
                lines.append("| %s | %s | NOT RUN: %s |" % (name, who, r["notRun"]) + " |" * (len(cols) - 1))
                continue
            conv = r.get("cyclesToConverge")
            lines.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
                name, who, fmt(conv) if conv is not None else "not in %s" % r.get("cycles"),
                fmt(r.get("migrations")), fmt(r.get("pingPongs")), fmt(r.get("imbalanceEnd")),
                fmt(r.get("vmsStopped")), "met" if r.get("targetMet") else "not met"))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenarios", default=" ".join(ALL))
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--binary")
    ap.add_argument("--same-policy", action="store_true", help="also ours with upstream's policy")
    ap.add_argument("--out", default=os.path.join(HERE, "out"))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    result = {"components": {}, "scenarios": {}, "commit": commit(), "machine": machine(), "small": a.small}
    failed = False
    for name in a.scenarios.split():
        result["scenarios"][name] = {}
        try:
            targeted = bool(scen.load(name, small=a.small)["targetedPolicy"])
        except scen.ScenarioError as e:
            print("compare.py: %s" % e, file=sys.stderr)
            return 2
        runs = [("ours", "ours-targeted" if targeted else "ours"), ("upstream", "upstream")]
        if a.same_policy and targeted:
            runs.append(("oursSamePolicy", "ours"))
        for key, who in runs:
            r, comps = run_one(name, who, a)
            result["scenarios"][name][key] = r
            failed |= "notRun" in r
            for k, v in (comps or {}).items():
                if v == "not used":
                    continue
                result["components"].setdefault(k, v)
            # written after every run, so an interrupted comparison keeps what it measured
            with open(os.path.join(a.out, "compare.json"), "w") as f:
                json.dump(result, f, indent=1, sort_keys=True)
    print()
    print(table(result))
    print("\ncomponents: " + ", ".join("%s %s" % kv for kv in sorted(result["components"].items())))
    print("written: %s" % os.path.join(a.out, "compare.json"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
