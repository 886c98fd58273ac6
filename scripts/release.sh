#!/usr/bin/env bash
# Builds the release artifacts from an already-built binary (`make release` builds it first):
#   descheduler-VERSION-linux-ARCH.tar.gz   bin/descheduler, deploy/ (kustomize bases, Helm
#                                           chart, dashboard, policies), docs/, examples/,
#                                           shell completion, README.md, CHANGELOG.md
#   descheduler_DEBVERSION_ARCH.deb         /usr/bin/descheduler and kubectl-descheduler, the
#                                           completions, docs and manifests under /usr/share;
#                                           Depends computed by dpkg-shlibdeps
#   descheduler-VERSION-oci.tar             the image of scripts/build-image.sh, as an OCI archive
#   descheduler-VERSION.spdx.json           SPDX 2.3 bill of materials: the binary and every Debian
#                                           package whose library it links (scripts/spdx-sbom.py)
#   descheduler.krew.yaml                   the krew plugin manifest (deploy/krew) for the
#                                           tarball: its SHA-256, and its URL under --download-url
#   SHA256SUMS                              of all of the above
# VERSION is the binary's (`descheduler version`); DEBVERSION is VERSION without its "v" and
# with "+" for "-" (v0.36.0-c.1 -> 0.36.0+c.1: after upstream's 0.36.0 in Debian's order).
# File times are the last commit's (SOURCE_DATE_EPOCH if set), so the tarball and the .deb
# depend only on their content.
#
# Needs Debian (dpkg-deb and dpkg-shlibdeps from dpkg-dev; dpkg -S to name the packages the
# libraries come from), python3, and buildah for the image (BUILDAH_OPTS as for
# scripts/build-image.sh, e.g. "--storage-driver vfs"). Elsewhere: build the tarball and the
# image, and skip the .deb and the SBOM, with --no-deb (the SBOM reads the Debian package
# database); --no-image skips the image. What is skipped is said, never silently left out.
#
# Usage: scripts/release.sh [--binary PATH] [--out DIR] [--download-url BASE] [--no-image] [--no-deb]
#   --download-url BASE  where the tarball will be published (the krew manifest's uri is
#                        BASE/TARBALL); without it the uri is under https://example.invalid/ and
#                        the manifest serves only `kubectl krew install --archive`
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
binary=$root/build/descheduler
out=$root/dist
image=1
deb=1
download_url=

die() { echo "release: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
  case $1 in
    --binary) [ $# -ge 2 ] || die "--binary needs a path"; binary=$2; shift 2 ;;
    --binary=*) binary=${1#*=}; shift ;;
    --out) [ $# -ge 2 ] || die "--out needs a directory"; out=$2; shift 2 ;;
    --out=*) out=${1#*=}; shift ;;
    --download-url) [ $# -ge 2 ] || die "--download-url needs a URL"; download_url=$2; shift 2 ;;
    --download-url=*) download_url=${1#*=}; shift ;;
    --no-image) image=; shift ;;
    --no-deb) deb=; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
done

[ -x "$binary" ] || die "$binary: not an executable (run make build, or pass --binary)"
need() { command -v "$1" >/dev/null || die "$1 not found ($2)"; }
need python3 "Debian package python3"
need strip "Debian package binutils"
if [ -n "$deb" ]; then
  need dpkg-deb "Debian package dpkg; on another system use --no-deb"
  need dpkg-shlibdeps "Debian package dpkg-dev; on another system use --no-deb"
fi
[ -z "$image" ] || need buildah "Debian package buildah; or --no-image"

version=$("$binary" version | sed -n 's/.*GitVersion:\([^ ]*\).*/\1/p')
[ -n "$version" ] || die "$binary version: no GitVersion in its output"
debversion=$(echo "${version#v}" | tr - +)
arch=$(dpkg --print-architecture 2>/dev/null || uname -m)
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
  SOURCE_DATE_EPOCH=$(git -C "$root" log -1 --format=%ct 2>/dev/null || date +%s)
fi
export SOURCE_DATE_EPOCH

mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
name=descheduler-$version-linux-$arch
artifacts=()

# the files every artifact shares: the stripped binary and its shell completion
strip --strip-unneeded -o "$work/descheduler" "$binary"
"$work/descheduler" completion bash >"$work/descheduler.bash"
"$work/descheduler" completion zsh >"$work/_descheduler"

# --- the tarball
t=$work/$name
mkdir -p "$t/bin" "$t/completion"
cp "$work/descheduler" "$t/bin/descheduler"
# no kubectl-descheduler link: krew cannot unpack links, and makes its own (docs/install.md)
cp "$work/descheduler.bash" "$t/completion/descheduler.bash"
cp "$work/_descheduler" "$t/completion/_descheduler"
cp -r "$root/deploy" "$root/docs" "$root/examples" "$t/"
cp "$root/README.md" "$root/CHANGELOG.md" "$t/"
tar -C "$work" --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner \
  -cf - "$name" | gzip -n >"$out/$name.tar.gz"
artifacts+=("$name.tar.gz")
echo "release: $out/$name.tar.gz"

# --- the krew manifest for that tarball
if [ -n "$download_url" ]; then
  uri=${download_url%/}/$name.tar.gz
else
  uri=https://example.invalid/descheduler/$version/$name.tar.gz
fi
sum=$(sha256sum "$out/$name.tar.gz" | cut -d' ' -f1)
sed -e "s|@VERSION@|$version|; s|@ARCH@|$arch|; s|@URI@|$uri|; s|@SHA256@|$sum|; s|@DIR@|$name|g" \
  -e '/^# /d' "$root/deploy/krew/descheduler.yaml" >"$out/descheduler.krew.yaml"
artifacts+=("descheduler.krew.yaml")
if [ -n "$download_url" ]; then
  echo "release: $out/descheduler.krew.yaml ($uri)"
else
  echo "release: $out/descheduler.krew.yaml (no --download-url: its uri is a placeholder; it serves kubectl krew install --archive)"
fi

# --- the Debian package
if [ -n "$deb" ]; then
  d=$work/deb
  mkdir -p "$d/DEBIAN" "$d/usr/bin" "$d/usr/share/bash-completion/completions" \
    "$d/usr/share/zsh/vendor-completions" "$d/usr/share/doc/descheduler" "$d/usr/share/descheduler"
  install -m 0755 "$work/descheduler" "$d/usr/bin/descheduler"
  ln -s descheduler "$d/usr/bin/kubectl-descheduler"
  install -m 0644 "$work/descheduler.bash" "$d/usr/share/bash-completion/completions/descheduler"
  install -m 0644 "$work/_descheduler" "$d/usr/share/zsh/vendor-completions/_descheduler"
  cp "$root/README.md" "$d/usr/share/doc/descheduler/"
  gzip -n -9 -c "$root/CHANGELOG.md" >"$d/usr/share/doc/descheduler/changelog.gz"
  cp -r "$root/docs" "$d/usr/share/doc/descheduler/docs"
  cp -r "$root/deploy" "$root/examples" "$d/usr/share/descheduler/"
  # dpkg-shlibdeps reads a debian/control of its own; the binary's libraries give Depends
  mkdir -p "$work/shlibs/debian"
  printf 'Source: descheduler\n\nPackage: descheduler\nArchitecture: any\n' >"$work/shlibs/debian/control"
  depends=$(cd "$work/shlibs" && dpkg-shlibdeps -O -e "$d/usr/bin/descheduler" 2>/dev/null |
    sed -n 's/^shlibs:Depends=//p')
  [ -n "$depends" ] || die "dpkg-shlibdeps found no dependencies for $binary"
  size=$(du -sk --exclude=DEBIAN "$d" | cut -f1)
  cat >"$d/DEBIAN/control" <<EOF
Package: descheduler
Version: $debversion
Architecture: $arch
Maintainer: descheduler maintainers <descheduler@invalid>
Installed-Size: $size
Depends: $depends, ca-certificates
Section: admin
Priority: optional
Homepage: https://github.com/kubernetes-sigs/descheduler
Description: Kubernetes descheduler for KubeVirt virtual machines
 A drop-in replacement for the Kubernetes descheduler (descheduler/v1alpha2
 policies, the same flags and logs) that rebalances KubeVirt VMs by live
 migration with VM safety rules. Installs descheduler and kubectl-descheduler
 (a kubectl plugin), shell completion, and the install manifests and Helm
 chart under /usr/share/descheduler.
EOF
  find "$d" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
  debfile=descheduler_${debversion}_$arch.deb
  dpkg-deb --root-owner-group -Zxz --build "$d" "$out/$debfile" >/dev/null
  artifacts+=("$debfile")
  echo "release: $out/$debfile (Depends: $depends, ca-certificates)"

  sbom=descheduler-$version.spdx.json
  python3 "$root/scripts/spdx-sbom.py" --binary "$work/descheduler" --original "$binary" \
    --version "$version" --arch "$arch" >"$out/$sbom"
  artifacts+=("$sbom")
  echo "release: $out/$sbom"
else
  echo "release: --no-deb: no Debian package and no SBOM"
fi

# --- the image, as an OCI archive
if [ -n "$image" ]; then
  tag=localhost/descheduler:$version
  "$root/scripts/build-image.sh" --binary "$binary" --tag "$tag" >/dev/null
  oci=descheduler-$version-oci.tar
  rm -f "$out/$oci"
  # shellcheck disable=SC2086
  buildah ${BUILDAH_OPTS:-} push --quiet "$tag" "oci-archive:$out/$oci:$tag" >/dev/null
  artifacts+=("$oci")
  echo "release: $out/$oci ($tag)"
else
  echo "release: --no-image: no OCI archive"
fi

(cd "$out" && sha256sum "${artifacts[@]}" >SHA256SUMS)
echo "release: $out/SHA256SUMS"
