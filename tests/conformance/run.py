#!/usr/bin/env python3
"""Runs the upstream conformance vectors against a descheduler binary.

A vector (tests/conformance/vectors/<plugin>/NN-*.json) is one case of an upstream unit-test
table turned into data: a DeschedulerPolicy (`policy`), a cluster (`objects`, a v1 List), the
feature gates and clock it ran with (`featureGates`, `now`) and what upstream asserts
(`expect.evictedCount`, and `expect.evicted` when the test names the pods). See README.md.

For each vector this script writes the policy and the cluster to a scratch directory, runs

    BINARY simulate --policy-config-file P --snapshot C -o json [--feature-gates ...] [--now T]

and compares the plan's `evictions[].pod` with the expectation:
  - the number of evictions (background requests included) must equal expect.evictedCount;
  - when expect.evicted is a list, the set of pods must equal it, or equal one of the sets
    upstream itself chose in full cycles where its order is random
    (oracleCycle.observedPodSets).

Exit status 0 only when at least one vector ran and none failed. The last line of output is
"N passed, M failed".
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def find_vectors(root, only):
    for folder, _, files in sorted(os.walk(root)):
        for name in sorted(files):
            if not name.endswith(".json"):
                continue
            path = os.path.join(folder, name)
            if only and only not in os.path.relpath(path, root):
                continue
            yield path


def simulate_command(binary, case, policy_path, cluster_path):
    cmd = [binary, "simulate", "--policy-config-file", policy_path, "--snapshot", cluster_path,
           "-o", "json"]
    gates = case.get("featureGates") or {}
    if gates:
        cmd += ["--feature-gates",
                ",".join("%s=%s" % (k, "true" if gates[k] else "false") for k in sorted(gates))]
    if case.get("now"):
        cmd += ["--now", case["now"]]
    return cmd


def judge(case, planned):
    """Returns "" when the plan meets the vector's expectation, else why not."""
    expect = case["expect"]
    if len(planned) != expect["evictedCount"]:
        return "expected %d evictions, the plan has %d: %s" % (
            expect["evictedCount"], len(planned), sorted(planned))
    wanted = expect.get("evicted")
    if wanted is None or sorted(planned) == sorted(wanted):
        return ""
    accepted = [sorted(s) for s in ((case.get("oracleCycle") or {}).get("observedPodSets") or [])]
    if sorted(planned) in accepted:
        return ""
    return "expected pods %s, the plan evicts %s" % (sorted(wanted), sorted(planned))


def run_vector(binary, path, timeout):
    with open(path) as fh:
        case = json.load(fh)
    with tempfile.TemporaryDirectory(prefix="conformance-") as scratch:
        policy_path = os.path.join(scratch, "policy.json")
        cluster_path = os.path.join(scratch, "cluster.json")
        with open(policy_path, "w") as fh:
            json.dump(case["policy"], fh)
        with open(cluster_path, "w") as fh:
            json.dump(case["objects"], fh)
        try:
            proc = subprocess.run(simulate_command(binary, case, policy_path, cluster_path),
                                  capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return case, "no answer within %gs" % timeout
    if proc.returncode != 0:
        return case, "exit status %d: %s" % (proc.returncode, proc.stderr.strip()[-400:])
    try:
        planned = [e["pod"] for e in json.loads(proc.stdout)["evictions"]]
    except (ValueError, KeyError, TypeError) as e:
        return case, "the plan is not the expected JSON (%s): %r" % (e, proc.stdout[:200])
    return case, judge(case, planned)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", required=True, help="the descheduler binary to test")
    ap.add_argument("--vectors", default=os.path.join(HERE, "vectors"),
                    help="folder of vectors (default: vectors/ beside this script)")
    ap.add_argument("--filter", help="only vectors whose path contains this text")
    ap.add_argument("--timeout", type=float, default=30, help="seconds per vector")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--verbose", action="store_true", help="also list the passing vectors")
    args = ap.parse_args()
    if not os.access(args.binary, os.X_OK):
        print("run.py: %s is not an executable binary" % args.binary, file=sys.stderr)
        return 2
    paths = list(find_vectors(args.vectors, args.filter))
    passed = failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = pool.map(lambda p: run_vector(args.binary, p, args.timeout), paths)
        for path, (case, why) in zip(paths, results):
            rel = os.path.relpath(path, args.vectors)
            if why:
                failed += 1
                print("FAIL %s [%s]: %s" % (rel, case.get("name"), why))
            else:
                passed += 1
                if args.verbose:
                    print("PASS %s" % rel)
    print("%d passed, %d failed" % (passed, failed))
    return 0 if passed and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
