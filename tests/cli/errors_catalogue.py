#!/usr/bin/env python3
"""Walks docs/errors.md: runs every catalogued bad input and checks the message and exit code.

Each entry of the catalogue is a level-3 heading followed by a list:

    ### flags-unknown: an unknown flag
    - command: `descheduler simulate ... --bogus`
    - exit: `2`
    - message: `descheduler simulate: unknown flag: --bogus`

`command` is split like a shell would (no expansion); `descheduler` is the binary under test.
Placeholders: {EXAMPLE} (examples/kubevirt-rebalance), {DATA} (tests/data/cli), {LIVE}
(tests/data/live), {PROFILE} (tests/data/profile), {OPENSHIFT} (examples/openshift-kubevirt),
{ROOT} (the repository),
{TMP} (a fresh directory per entry), {KUBECONFIG} and {SIM_URL} (the entry's simulator). Optional items:
    - env: `NAME=value ...`             added to the environment (`NAME=` removes NAME)
    - file: `{TMP}/name`                followed by a fenced block: the file's contents
    - simulator: `SNAPSHOT [ARGS...]`   start tests/apisim for this entry (plain HTTP)
    - faults: `[...]`                   fault rules installed before the command (JSON)
    - load: `{...}`                     objects added to the simulator (a v1 List, JSON)
Every `message` must be one whole line of stderr, or the text after the klog header
(`E1201 10:00:00.000000   1234 file.c:12] `) of one; `{N}` in a message stands for any
number (a byte count that depends on the simulator's generated fields). An entry with exit 2 must also print
nothing on stdout. Code spans may use double backticks when the text holds one.

Usage: errors_catalogue.py --binary build/descheduler [--doc docs/errors.md] [--only ID]
Exit 0 when every entry holds; the failures are printed with the actual stderr.
"""

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KLOG = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ [^ ]+:\d+\] ")
ITEM = re.compile(r"^- (\w+): (`+)(.*?)\2\s*$")


def parse(path):
    entries, cur, pending_file = [], None, None
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        ln = lines[i]
        if ln.startswith("### "):
            head = ln[4:]
            ident, _, title = head.partition(": ")
            cur = {"id": ident.strip("`"), "title": title, "line": i + 1, "messages": [], "files": {}}
            entries.append(cur)
        elif cur is not None and ln.startswith("## "):
            cur = None
        elif cur is not None:
            m = ITEM.match(ln)
            if m:
                key, val = m.group(1), m.group(3)
                if key == "message":
                    cur["messages"].append(val)
                elif key == "file":
                    pending_file = val
                else:
                    cur[key] = val
            elif ln.strip().startswith("```") and pending_file is not None:
                indent = ln.index("```")
                body = []
                i += 1
                while i < len(lines) and not lines[i].strip().startswith("```"):
                    body.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i])
                    i += 1
                cur["files"][pending_file] = "\n".join(body) + "\n"
                pending_file = None
        i += 1
    return [e for e in entries if "command" in e]


class Sim:
    def __init__(self, spec, tmp):
        parts = shlex.split(spec)
        self.dir = os.path.join(tmp, "sim")
        os.makedirs(self.dir)
        self.kubeconfig = os.path.join(self.dir, "kubeconfig")
        self.err = open(os.path.join(self.dir, "stderr"), "w")
        self.proc = subprocess.Popen([sys.executable, os.path.join(ROOT, "tests", "apisim", "apisim.py"),
                                      "--snapshot", parts[0], "--port", "0", "--kubeconfig-out", self.kubeconfig]
                                     + parts[1:], stdout=subprocess.PIPE, stderr=self.err, text=True)
        if self.proc.stdout.readline().strip() != "ready":
            raise RuntimeError("the simulator did not start")
        text = open(self.kubeconfig).read()
        self.url = re.search(r'server: *"?([^"\n]+)"?', text).group(1)

    def ctl(self, method, path, body):
        req = urllib.request.Request(self.url + "/_sim/" + path, data=body.encode(), method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            r.read()

    def close(self):
        self.proc.terminate()
        self.proc.wait()
        self.err.close()


def run_entry(e, binary):
    tmp = tempfile.mkdtemp(prefix="errcat-")
    sim = None
    try:
        subst = {"{EXAMPLE}": os.path.join(ROOT, "examples", "kubevirt-rebalance"),
                 "{DATA}": os.path.join(ROOT, "tests", "data", "cli"),
                 "{LIVE}": os.path.join(ROOT, "tests", "data", "live"),
                 "{PROFILE}": os.path.join(ROOT, "tests", "data", "profile"),
                 "{OPENSHIFT}": os.path.join(ROOT, "examples", "openshift-kubevirt"),
                 "{ROOT}": ROOT, "{TMP}": tmp}

        def fill(text):
            for k, v in subst.items():
                text = text.replace(k, v)
            return text

        if "simulator" in e:
            sim = Sim(fill(e["simulator"]), tmp)
            subst["{KUBECONFIG}"], subst["{SIM_URL}"] = sim.kubeconfig, sim.url
            if "load" in e:
                sim.ctl("POST", "load", fill(e["load"]))
            if "faults" in e:
                sim.ctl("POST", "faults", fill(e["faults"]))
        for name, body in e["files"].items():
            path = fill(name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(fill(body))
            if body.startswith("#!"):
                os.chmod(path, 0o755)
        env = dict(os.environ)
        for kv in shlex.split(fill(e.get("env", ""))):
            k, _, v = kv.partition("=")
            if v:
                env[k] = v
            else:
                env.pop(k, None)
        argv = shlex.split(fill(e["command"]))
        if argv[0] != "descheduler":
            return ["the command must start with `descheduler`"], "", ""
        argv[0] = binary
        try:
            p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60, cwd=tmp)
        except subprocess.TimeoutExpired:
            return ["did not finish within 60 s"], "", ""
        problems = []
        want = int(e.get("exit", "0"))
        if p.returncode != want:
            problems.append("exit %d, expected %d" % (p.returncode, want))
        lines = p.stderr.splitlines()
        bodies = [KLOG.sub("", ln) for ln in lines]
        for m in e["messages"]:
            m = fill(m)
            rx = re.compile("^" + re.escape(m).replace(re.escape("{N}"), r"\d+") + "$")
            if not any(rx.match(ln) for ln in lines + bodies):
                problems.append("no stderr line is: %s" % m)
        if want == 2 and p.stdout:
            problems.append("stdout is not empty")
        return problems, p.stdout, p.stderr
    finally:
        if sim:
            sim.close()
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "descheduler"))
    ap.add_argument("--doc", default=os.path.join(ROOT, "docs", "errors.md"))
    ap.add_argument("--only")
    a = ap.parse_args()
    binary = os.path.abspath(a.binary)
    entries = parse(a.doc)
    ids = [e["id"] for e in entries]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        print("errors catalogue: duplicate ids: %s" % ", ".join(dupes))
        return 1
    failed, t0 = 0, time.monotonic()
    for e in entries:
        if a.only and a.only != e["id"]:
            continue
        if not e["messages"]:
            print("FAIL %s (line %d): no message given" % (e["id"], e["line"]))
            failed += 1
            continue
        problems, out, err = run_entry(e, binary)
        if problems:
            failed += 1
            print("FAIL %s (line %d): %s" % (e["id"], e["line"], e["title"]))
            for p in problems:
                print("     " + p)
            for ln in err.splitlines()[:12]:
                print("     | " + ln[:400])
    n = len(entries) if not a.only else 1
    print("errors catalogue: %d entries, %d failed, %.0fs" % (n, failed, time.monotonic() - t0))
    return 1 if failed or not entries else 0


if __name__ == "__main__":
    sys.exit(main())
