#!/usr/bin/env python3
"""Every document the repository cites is in the repository.

    python3 tests/cli/check_refs.py [ROOT]

Reads the files git tracks under ROOT (default: this checkout) and reports, one line each:
  - a reference to one of the behaviour-reference files kept beside the development checkout
    (descheduler-core, plugins, kubevirt, operator-profiles, watch, design; each with .md) that
    is not a file of the repository, or to its conformance/upstream folder;
  - a section sign in src/, tests/, docs/ or README.md (a citation of those files' sections);
  - an absolute path of a development machine (/work/..., /root/..., /home/...), or the shared
    folder beside the development checkout (../shared; only tests/run-all.sh may look for it,
    and only if it is there);
  - a Markdown page under docs/ named but not there;
  - a relative Markdown link whose target is not in the repository, or whose #anchor is not a
    heading of the page it points to.
tests/conformance/vectors/ (imported data) and this file are not read. Exit 1 when anything is
reported. tests/cli/t0003-plain-clone.sh runs it on a plain clone.
"""
import os
import re
import subprocess
import sys

SELF = "tests/cli/check_refs.py"
SKIP_PREFIXES = ("tests/conformance/vectors/",)
SECTION_SIGN_SCOPE = ("src/", "tests/", "docs/", "README.md")
REFERENCE_NAMES = {n + ".md" for n in
                   ("descheduler-core", "plugins", "kubevirt", "operator-profiles", "watch", "design")}

MD_TOKEN = re.compile(r"(?<![\w./-])([\w./-]*[\w-]\.md)\b")
SHARED_FOLDER = re.compile(r"conformance/upstream\b")
ABSOLUTE_DEV_PATH = re.compile(r"(?<![\w.$}/~-])/(?:work|root|home)/")
SHARED_SIBLING = re.compile(r"\.\./shared\b")
SHARED_SIBLING_ALLOWED = {"tests/run-all.sh"}
DOCS_PAGE = re.compile(r"(?<![\w./-])(docs/[\w.-]+\.md)\b")
MD_LINK = re.compile(r"\]\(\s*([^)\s]+)(?:\s+\"[^\"]*\")?\s*\)")


def tracked(root):
    out = subprocess.run(["git", "-C", root, "ls-files", "-z"], check=True,
                         stdout=subprocess.PIPE).stdout
    return sorted(p for p in out.decode().split("\0") if p)


def read_text(root, path):
    try:
        with open(os.path.join(root, path), "rb") as f:
            data = f.read()
    except OSError:
        return None
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def slug(heading):
    """GitHub's anchor for a Markdown heading."""
    s = re.sub(r"[`*_]", "", heading.strip().lower())
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(text):
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, re.M)}


def resolve(root, files, base_dir, target):
    """The repository path target names, relative to base_dir or to the root; None if neither
    is a tracked file or a directory holding one."""
    for start in (base_dir, ""):
        p = os.path.normpath(os.path.join(start, target))
        if p.startswith("..") or os.path.isabs(p):
            continue
        if p in files or any(f.startswith(p.rstrip("/") + "/") for f in files):
            return p
    return None


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), "..", ".."))
    files = set(tracked(root))
    texts = {}
    problems = []
    for path in sorted(files):
        if path == SELF or path.startswith(SKIP_PREFIXES):
            continue
        text = read_text(root, path)
        if text is None:
            continue
        texts[path] = text
        base = os.path.dirname(path)
        for no, line in enumerate(text.split("\n"), 1):
            where = "%s:%d" % (path, no)
            for m in MD_TOKEN.finditer(line):
                tok = m.group(1)
                if os.path.basename(tok) not in REFERENCE_NAMES:
                    continue
                if "://" in line[:m.end()].split()[-1]:
                    continue  # part of a URL
                if resolve(root, files, base, tok) is None:
                    problems.append("%s: cites %s, which is not in the repository" % (where, tok))
            if SHARED_FOLDER.search(line):
                problems.append("%s: cites conformance/upstream, which is not in the repository "
                                "(tests/conformance/ is)" % where)
            if "\u00a7" in line and (path.startswith(SECTION_SIGN_SCOPE)):
                problems.append("%s: section sign (a section of a file that is not in the "
                                "repository?): %s" % (where, line.strip()[:80]))
            if ABSOLUTE_DEV_PATH.search(line):
                problems.append("%s: absolute path of a development machine: %s"
                                % (where, line.strip()[:80]))
            if SHARED_SIBLING.search(line) and path not in SHARED_SIBLING_ALLOWED:
                problems.append("%s: points outside the repository: %s" % (where, line.strip()[:80]))
            for m in DOCS_PAGE.finditer(line):
                if m.group(1) not in files:
                    problems.append("%s: names %s, which does not exist" % (where, m.group(1)))
            if path.endswith(".md"):
                for m in MD_LINK.finditer(line):
                    target = m.group(1)
                    if re.match(r"[A-Za-z][\w+.-]*:", target) or target.startswith("#"):
                        continue
                    page, _, frag = target.partition("#")
                    p = resolve(root, files, base, page)
                    if p is None:
                        problems.append("%s: links to %s, which is not in the repository"
                                        % (where, target))
                    elif frag and p.endswith(".md"):
                        problems.append(("anchor", where, p, frag))
    # anchors are checked once every page is read
    out = []
    for pr in problems:
        if isinstance(pr, tuple):
            _, where, p, frag = pr
            text = texts.get(p) if p in texts else read_text(root, p)
            if text is None or frag not in anchors(text):
                out.append("%s: links to %s#%s, which has no such heading" % (where, p, frag))
        else:
            out.append(pr)
    # in-page anchors
    for path, text in texts.items():
        if not path.endswith(".md"):
            continue
        own = anchors(text)
        for no, line in enumerate(text.split("\n"), 1):
            for m in MD_LINK.finditer(line):
                if m.group(1).startswith("#") and m.group(1)[1:] not in own:
                    out.append("%s:%d: links to %s, which has no such heading"
                               % (path, no, m.group(1)))
    for line in out:
        print(line)
    print("check_refs: %d files read, %d problems" % (len(texts), len(out)))
    return 1 if out else 0


if __name__ == "__main__":
    sys.exit(main())
