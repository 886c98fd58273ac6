#!/usr/bin/env python3
"""Keeps the layer rule of docs/architecture.md: a file in src/ includes only headers of its own
folder and of folders in lower layers.

The layer table is read from docs/architecture.md itself (the rows `| N | `src/DIR/` | ...`),
so the document and the check cannot disagree. Every quoted #include of every src/*/*.[ch] is
resolved to the folder it names; an include of a folder in the same or a higher layer, of a
folder the table does not list, or of a file that does not exist is reported as
FILE:LINE: what is wrong. Exit 0 when the tree keeps the rule, 1 when it does not, 2 when the
table cannot be read.

  python3 tests/tools/check_layers.py [--root DIR]
  python3 tests/tools/check_layers.py --self-test   (a deliberately wrong include must fail)
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROW = re.compile(r"^\|\s*(\d+)\s*\|\s*(.+?)\s*\|")
DIR = re.compile(r"`src/([a-z_]+)/`")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def read_layers(root):
    """{folder: layer} from the layer table of docs/architecture.md."""
    layers = {}
    path = os.path.join(root, "docs", "architecture.md")
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = ROW.match(line)
            if not m:
                continue
            for d in DIR.findall(m.group(2)):
                layers[d] = int(m.group(1))
    return layers


def check(root):
    layers = read_layers(root)
    if not layers:
        print("check_layers: no layer table (rows `| N | `src/DIR/` |`) in docs/architecture.md",
              file=sys.stderr)
        return 2
    src = os.path.join(root, "src")
    problems = []
    for d in sorted(os.listdir(src)):
        full = os.path.join(src, d)
        if not os.path.isdir(full):
            continue
        if d not in layers:
            problems.append("src/%s/: a folder the layer table of docs/architecture.md does not list" % d)
            continue
        for name in sorted(os.listdir(full)):
            if not name.endswith((".c", ".h")):
                continue
            rel = "src/%s/%s" % (d, name)
            with open(os.path.join(full, name), encoding="utf-8") as f:
                for n, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    target = os.path.normpath(os.path.join(full, m.group(1)))
                    if not os.path.exists(target):
                        problems.append("%s:%d: includes %s, which does not exist" % (rel, n, m.group(1)))
                        continue
                    tdir = os.path.relpath(os.path.dirname(target), src)
                    if tdir == d:
                        continue
                    if tdir not in layers:
                        problems.append("%s:%d: includes %s, outside the layers" % (rel, n, m.group(1)))
                    elif layers[tdir] >= layers[d]:
                        problems.append("%s:%d: src/%s/ (layer %d) includes %s of src/%s/ (layer %d): "
                                        "a file may include only its own folder and lower layers"
                                        % (rel, n, d, layers[d], m.group(1), tdir, layers[tdir]))
    for p in problems:
        print(p)
    if problems:
        print("check_layers: %d include(s) break the layer rule of docs/architecture.md" % len(problems))
        return 1
    print("check_layers: %d folders, every include keeps the layer rule" % len(layers))
    return 0


def self_test(root):
    """The check passes on the tree, and fails once a lower layer includes a higher one."""
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(os.path.join(root, "src"), os.path.join(tmp, "src"))
        os.makedirs(os.path.join(tmp, "docs"))
        shutil.copy(os.path.join(root, "docs", "architecture.md"), os.path.join(tmp, "docs"))
        if check(tmp) != 0:
            print("check_layers self-test: the copy of the tree already fails")
            return 1
        # the model (low) reaching for the API client (high)
        victim = os.path.join(tmp, "src", "model", "model.c")
        with open(victim, "a", encoding="utf-8") as f:
            f.write('\n#include "../kube/client.h"\n')
        out = subprocess.run([sys.executable, __file__, "--root", tmp], capture_output=True, text=True)
        if out.returncode != 1 or "src/model/model.c" not in out.stdout:
            print("check_layers self-test: a wrong include was not caught:\n" + out.stdout)
            return 1
    print("check_layers self-test: a wrong include (model.c -> kube/client.h) is caught")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    sys.exit(self_test(a.root) if a.self_test else check(a.root))


if __name__ == "__main__":
    main()
