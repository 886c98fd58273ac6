#!/usr/bin/env bash
# The release artifacts (`make test-release`; `make test` runs it as one suite): runs
# scripts/release.sh twice into temporary directories (the image in a private buildah store)
# and checks
#   - SHA256SUMS matches, and the second run gives the same tarball, .deb and SBOM (times
#     come from the commit, not the clock);
#   - the tarball holds the binary, the kubectl plugin link, the manifests, the chart, the
#     dashboard, the docs, the examples and the completions, and its binary runs;
#   - the .deb's control fields and files; the SBOM lists, with its installed version, the
#     Debian package of every library ldd names, and the binary's SHA-256;
#   - the OCI archive: a container from it, its root mounted, runs /bin/descheduler version;
#   - the krew manifest: krew (tests/release/build-krew.sh, once per machine) installs the
#     plugin from it and the tarball, kubectl runs `kubectl descheduler version`, and a tarball
#     with another SHA-256 is refused (a part skipped, saying why, where krew cannot be built);
#   - the .deb installs with apt in a clean Debian bookworm chroot (debootstrap --variant=minbase,
#     kept once per machine as a tarball in ~/.cache/descheduler-chroot, unpacked fresh each run):
#     apt pulls what Depends names and nothing of this machine is visible, then
#     `descheduler version`, `kubectl-descheduler version` and `descheduler simulate` on the
#     example the package ships pass in it.
# Exit status: 0 pass, 1 fail, 3 (after saying why) when it cannot run here: not root (chroot),
# no dpkg-dev or buildah, or no bookworm chroot can be made (debootstrap or the Debian mirror
# missing).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
binary=${DESCHEDULER:-$root/build/descheduler}
skip() { echo "SKIP release: $*"; exit 3; }
fail() { echo "FAIL release: $*"; failed=1; }
failed=0
checks=0
check() { # description, command...: counts the check, says FAIL with the description
  local what=$1; shift
  checks=$((checks + 1))
  "$@" || fail "$what"
}

[ -x "$binary" ] || { echo "release: build first: $binary is missing"; exit 1; }
[ "$(id -u)" = 0 ] || skip "needs root for chroot and the image store"
for tool in dpkg-deb dpkg-shlibdeps buildah chroot python3; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/deps.sh test installs it)"
done

tmp=$(mktemp -d)
export BUILDAH_OPTS="--storage-driver vfs --root $tmp/storage --runroot $tmp/runroot"
b() { buildah $BUILDAH_OPTS "$@"; } # shellcheck disable=SC2086
cleanup() {
  [ -n "${ctr:-}" ] && b rm "$ctr" >/dev/null 2>&1
  b rmi -a -f >/dev/null 2>&1
  rm -rf "$tmp"
}
trap cleanup EXIT
start=$SECONDS

for run in 1 2; do
  "$root/scripts/release.sh" --binary "$binary" --out "$tmp/out$run" >"$tmp/release$run.log" 2>&1 ||
    { cat "$tmp/release$run.log"; echo "FAIL release: scripts/release.sh failed"; exit 1; }
done
cat "$tmp/release1.log"
out=$tmp/out1
version=$("$binary" version | sed -n 's/.*GitVersion:\([^ ]*\).*/\1/p')
arch=$(dpkg --print-architecture)
debversion=$(echo "${version#v}" | tr - +)
tarball=descheduler-$version-linux-$arch.tar.gz
deb=descheduler_${debversion}_$arch.deb
sbom=descheduler-$version.spdx.json
oci=descheduler-$version-oci.tar

# --- sums, and the same bytes from a second run
check "SHA256SUMS does not match the artifacts" sh -c "cd '$out' && sha256sum --quiet -c SHA256SUMS"
check "SHA256SUMS does not list the five artifacts" \
  test "$(awk '{print $2}' "$out/SHA256SUMS" | sort | tr '\n' ' ')" = "$(printf '%s\n' "$tarball" "$deb" "$sbom" "$oci" descheduler.krew.yaml | sort | tr '\n' ' ')"
for f in "$tarball" "$deb" "$sbom" descheduler.krew.yaml; do
  check "$f differs between two runs of the same commit" cmp -s "$out/$f" "$tmp/out2/$f"
done

# --- the tarball
mkdir "$tmp/tar"
tar -C "$tmp/tar" -xzf "$out/$tarball"
t=$tmp/tar/descheduler-$version-linux-$arch
for f in bin/descheduler deploy/cronjob/kustomization.yaml deploy/kubedescheduler/kustomization.yaml \
  deploy/helm/descheduler/Chart.yaml deploy/monitoring/grafana-dashboard.json docs/install.md \
  examples/kubevirt-rebalance/cluster.json completion/descheduler.bash completion/_descheduler README.md CHANGELOG.md; do
  check "the tarball has no $f" test -s "$t/$f"
done
check "the tarball has a link (krew cannot unpack one)" test -z "$(find "$t" -type l)"
check "the tarball's binary does not run" sh -c "'$t/bin/descheduler' version | grep -q 'GitVersion:$version '"

# --- the .deb
field() { dpkg-deb -f "$out/$deb" "$1"; }
check "Package is not descheduler" test "$(field Package)" = descheduler
check "Version is not $debversion" test "$(field Version)" = "$debversion"
check "Architecture is not $arch" test "$(field Architecture)" = "$arch"
for dep in libc6 libcurl4 libgnutls30 libmicrohttpd12 libyajl2 libyaml-0-2 ca-certificates; do
  check "Depends does not name $dep ($(field Depends))" sh -c "dpkg-deb -f '$out/$deb' Depends | tr ',' '\n' | grep -q '^ *$dep\\b'"
done
dpkg-deb -c "$out/$deb" >"$tmp/deb-files"
for f in ./usr/bin/descheduler ./usr/bin/kubectl-descheduler ./usr/share/bash-completion/completions/descheduler \
  ./usr/share/zsh/vendor-completions/_descheduler ./usr/share/descheduler/deploy/helm/descheduler/Chart.yaml \
  ./usr/share/descheduler/examples/kubevirt-rebalance/policy.yaml ./usr/share/doc/descheduler/README.md; do
  check "the .deb has no $f" grep -q " $f\( ->\|$\)" "$tmp/deb-files"
done
check "the .deb's files are not owned by root" sh -c "! awk '{print \$2}' '$tmp/deb-files' | grep -v '^root/root$' | grep -q ."

# --- the SBOM: every library ldd names, by its Debian package and installed version
check "the SBOM does not describe the binary and its libraries" python3 - "$out/$sbom" "$t/bin/descheduler" "$binary" <<'EOF'
import hashlib, json, re, subprocess, sys
doc = json.load(open(sys.argv[1]))
assert doc["spdxVersion"] == "SPDX-2.3" and doc["dataLicense"] == "CC0-1.0", doc["spdxVersion"]
pkgs = {p["name"]: p for p in doc["packages"]}
me = pkgs["descheduler"]
digest = hashlib.sha256(open(sys.argv[2], "rb").read()).hexdigest()
assert me["checksums"] == [{"algorithm": "SHA256", "checksumValue": digest}], me["checksums"]
want = set()
for line in subprocess.run(["ldd", sys.argv[3]], stdout=subprocess.PIPE, text=True, check=True).stdout.splitlines():
    m = re.search(r"(/\S+)\s+\(0x", line)
    if m:
        p = subprocess.run(["dpkg", "-S", m.group(1)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        if p.returncode != 0:
            p = subprocess.run(["dpkg", "-S", "/usr" + m.group(1)], stdout=subprocess.PIPE, text=True, check=True)
        want.add(p.stdout.split(":")[0])
got = set(pkgs) - {"descheduler"}
assert got == want, ("packages", sorted(got ^ want))
for name in want:
    v = subprocess.run(["dpkg-query", "-W", "-f=${Version}", name], stdout=subprocess.PIPE, text=True, check=True).stdout
    assert pkgs[name]["versionInfo"] == v, (name, pkgs[name]["versionInfo"], v)
    assert pkgs[name]["externalRefs"][0]["referenceLocator"].startswith("pkg:deb/debian/%s@" % name)
links = {r["relatedSpdxElement"] for r in doc["relationships"] if r["relationshipType"] == "DYNAMIC_LINK"}
assert links == {pkgs[n]["SPDXID"] for n in want}, links
assert {"spdxElementId": "SPDXRef-DOCUMENT", "relationshipType": "DESCRIBES",
        "relatedSpdxElement": me["SPDXID"]} in doc["relationships"]
EOF

# --- the OCI archive: a container from it runs the binary
b rmi -a -f >/dev/null 2>&1 # the image release.sh built; the archive must stand alone
if ctr=$(b from --pull-never "oci-archive:$out/$oci" 2>"$tmp/from.err") && mnt=$(b mount "$ctr"); then
  check "the image's binary does not run from its own root" \
    sh -c "chroot --userspec=65532:65532 '$mnt' /bin/descheduler version | grep -q 'GitVersion:$version '"
else
  checks=$((checks + 1)); fail "buildah cannot use the OCI archive: $(cat "$tmp/from.err")"
fi

# --- the krew manifest: krew (built from the Go module proxy) installs the plugin from it and
# the tarball, checking the SHA-256; kubectl then finds `kubectl descheduler`
krew_manifest=$out/descheduler.krew.yaml
check "the krew manifest does not carry the tarball's SHA-256" \
  grep -q "sha256: \"$(sha256sum "$out/$tarball" | cut -d' ' -f1)\"" "$krew_manifest"
krew=$("$here/build-krew.sh" --print 2>"$tmp/krew-build.log")
case $? in
  0)
    export KREW_ROOT=$tmp/krew
    if "$krew" install --manifest="$krew_manifest" --archive="$out/$tarball" </dev/null >"$tmp/krew.log" 2>&1; then
      kubectl=$root/.deps/bin/kubectl
      command -v "$kubectl" >/dev/null || kubectl=kubectl
      check "kubectl does not run the plugin krew installed" \
        sh -c "PATH='$KREW_ROOT/bin':\$PATH '$kubectl' descheduler version | grep -q 'GitVersion:$version '"
    else
      checks=$((checks + 1)); fail "krew install of the manifest and tarball failed: $(tail -3 "$tmp/krew.log")"
    fi
    # a tarball that is not the one the manifest names is refused
    printf 'x' >>"$tmp/out2/$tarball"
    check "krew installed a tarball whose SHA-256 is not the manifest's" \
      sh -c "! KREW_ROOT='$tmp/krew2' '$krew' install --manifest='$krew_manifest' --archive='$tmp/out2/$tarball' </dev/null >/dev/null 2>&1"
    unset KREW_ROOT ;;
  3) echo "release: part skipped: krew cannot be built on this machine: $(tail -1 "$tmp/krew-build.log")" ;;
  *) checks=$((checks + 1)); fail "tests/release/build-krew.sh failed: $(tail -3 "$tmp/krew-build.log")" ;;
esac

# --- the .deb in a clean bookworm chroot
cache=${XDG_CACHE_HOME:-$HOME/.cache}/descheduler-chroot
base=$cache/bookworm-minbase.tar
if [ ! -s "$base" ]; then
  command -v debootstrap >/dev/null || skip "debootstrap is not installed (scripts/deps.sh test installs it)"
  mirror=$(sed -n 's/^URIs: *\(http[^ ]*\/debian\)$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
  mirror=${mirror:-http://deb.debian.org/debian}
  echo "release: making a bookworm chroot once for this machine ($mirror)"
  mkdir -p "$cache"
  if ! debootstrap --variant=minbase bookworm "$tmp/bootstrap" "$mirror" >"$tmp/debootstrap.log" 2>&1; then
    tail -5 "$tmp/debootstrap.log"
    skip "debootstrap could not make a bookworm chroot from $mirror (above)"
  fi
  tar -C "$tmp/bootstrap" -cf "$base.part" . && mv "$base.part" "$base"
  rm -rf "$tmp/bootstrap"
fi
croot=$tmp/chroot
mkdir "$croot"
tar -C "$croot" -xf "$base"
cp /etc/resolv.conf "$croot/etc/resolv.conf"
cp "$out/$deb" "$croot/tmp/"
check "a clean chroot already has descheduler or libcurl4" sh -c "! chroot '$croot' dpkg -s descheduler libcurl4 >/dev/null 2>&1"
if ! chroot "$croot" sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends /tmp/$deb" \
  >"$tmp/apt.log" 2>&1; then
  if grep -q "Could not resolve\|Failed to fetch\|Temporary failure" "$tmp/apt.log"; then
    tail -5 "$tmp/apt.log"; skip "the chroot cannot reach the Debian mirror (above)"
  fi
  checks=$((checks + 1)); fail "apt-get install of the .deb in a clean chroot failed: $(tail -5 "$tmp/apt.log")"
fi
check "descheduler version in the chroot" sh -c "chroot '$croot' descheduler version | grep -q 'GitVersion:$version '"
check "kubectl-descheduler version in the chroot" sh -c "chroot '$croot' kubectl-descheduler version | grep -q 'GitVersion:$version '"
ex=/usr/share/descheduler/examples/kubevirt-rebalance
chroot "$croot" descheduler simulate --policy-config-file $ex/policy.yaml --snapshot $ex/cluster.json \
  --feature-gates EvictionsInBackground=true >"$tmp/simulate.out" 2>"$tmp/simulate.err"
rc=$?
check "simulate on the packaged example failed in the chroot: $(tail -3 "$tmp/simulate.err")" test $rc = 0
check "simulate in the chroot planned no move: $(head -5 "$tmp/simulate.out")" grep -q "virt-launcher-" "$tmp/simulate.out"
check "the chroot's descheduler is not the packaged one" \
  sh -c "chroot '$croot' dpkg -S /usr/bin/descheduler | grep -q '^descheduler:'"

echo "release: $checks checks, $((SECONDS - start))s"
exit $failed
