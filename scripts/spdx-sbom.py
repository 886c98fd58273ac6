#!/usr/bin/env python3
"""Prints an SPDX 2.3 (JSON) bill of materials of the descheduler binary.

The document describes one package, the descheduler (its SHA-256, version and purl), and the
Debian packages of this machine whose shared libraries the binary loads: every library `ldd`
lists (the transitive closure, the dynamic loader included), traced to its package with
`dpkg -S`, with that package's installed version (`dpkg-query`). Each is related to the
binary by DYNAMIC_LINK. The binary's own licence is not asserted (NOASSERTION); the Debian
packages' licences are in /usr/share/doc/PACKAGE/copyright on the machine that built it and are
not asserted here either.

Usage: scripts/spdx-sbom.py --binary PATH --version VERSION --arch ARCH [--original PATH]
  --original  the unstripped binary, when --binary is a stripped copy (ldd reads either)
"""

import argparse
import datetime
import hashlib
import json
import os
import re
import subprocess
import sys
import urllib.parse
import uuid


def run(argv):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def libraries(binary):
    """The paths of the shared objects ldd resolves for the binary."""
    p = run(["ldd", binary])
    if p.returncode != 0:
        sys.exit("spdx-sbom: ldd %s failed: %s" % (binary, p.stderr.strip()))
    paths = []
    for line in p.stdout.splitlines():
        m = re.search(r"=>\s+(/\S+)\s+\(0x", line) or re.match(r"\s*(/\S+)\s+\(0x", line)
        if m:
            paths.append(m.group(1))
        elif "not found" in line:
            sys.exit("spdx-sbom: %s: a library is missing: %s" % (binary, line.strip()))
    return paths


def owner(path):
    """The Debian package that ships the file (Debian's merged /usr: try both spellings)."""
    real = os.path.realpath(path)
    candidates = [path, real]
    for p in (path, real):
        candidates.append(p[4:] if p.startswith("/usr/") else "/usr" + p)
    for c in candidates:
        p = run(["dpkg", "-S", c])
        if p.returncode == 0:
            return p.stdout.split(":", 1)[0].strip()
    sys.exit("spdx-sbom: no Debian package ships %s (is this a Debian system?)" % path)


def installed_version(package):
    p = run(["dpkg-query", "-W", "-f=${Version}", package])
    if p.returncode != 0 or not p.stdout:
        sys.exit("spdx-sbom: dpkg-query cannot tell the version of %s" % package)
    return p.stdout


def spdx_id(name):
    return "SPDXRef-Package-" + re.sub(r"[^A-Za-z0-9.-]", "-", name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", required=True)
    ap.add_argument("--original")
    ap.add_argument("--version", required=True)
    ap.add_argument("--arch", required=True)
    args = ap.parse_args()

    with open(args.binary, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    packages = {}
    for lib in libraries(args.original or args.binary):
        pkg = owner(lib)
        packages.setdefault(pkg, []).append(lib)

    epoch = int(os.environ.get("SOURCE_DATE_EPOCH") or datetime.datetime.now().timestamp())
    created = datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    me = "SPDXRef-Package-descheduler"
    doc = {
        "spdxVersion": "SPDX-2.3",
        "dataLicense": "CC0-1.0",
        "SPDXID": "SPDXRef-DOCUMENT",
        "name": "descheduler-%s" % args.version,
        # unique per document, stable for the same binary
        "documentNamespace": "https://spdx.invalid/descheduler/%s/%s" % (
            args.version, uuid.uuid5(uuid.NAMESPACE_URL, digest)),
        "creationInfo": {"created": created, "creators": ["Tool: descheduler scripts/spdx-sbom.py"]},
        "packages": [{
            "SPDXID": me,
            "name": "descheduler",
            "versionInfo": args.version,
            "downloadLocation": "NOASSERTION",
            "filesAnalyzed": False,
            "checksums": [{"algorithm": "SHA256", "checksumValue": digest}],
            "licenseConcluded": "NOASSERTION",
            "licenseDeclared": "NOASSERTION",
            "copyrightText": "NOASSERTION",
            "primaryPackagePurpose": "APPLICATION",
        }],
        "relationships": [{"spdxElementId": "SPDXRef-DOCUMENT", "relationshipType": "DESCRIBES",
                           "relatedSpdxElement": me}],
    }
    for pkg in sorted(packages):
        version = installed_version(pkg)
        doc["packages"].append({
            "SPDXID": spdx_id(pkg),
            "name": pkg,
            "versionInfo": version,
            "supplier": "Organization: Debian",
            "downloadLocation": "NOASSERTION",
            "filesAnalyzed": False,
            "licenseConcluded": "NOASSERTION",
            "licenseDeclared": "NOASSERTION",
            "copyrightText": "NOASSERTION",
            "primaryPackagePurpose": "LIBRARY",
            "comment": "provides " + ", ".join(sorted(packages[pkg])),
            "externalRefs": [{"referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl",
                              "referenceLocator": "pkg:deb/debian/%s@%s?arch=%s" % (
                                  pkg, urllib.parse.quote(version, safe=""), args.arch)}],
        })
        doc["relationships"].append({"spdxElementId": me, "relationshipType": "DYNAMIC_LINK",
                                     "relatedSpdxElement": spdx_id(pkg)})
    json.dump(doc, sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
