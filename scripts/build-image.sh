#!/usr/bin/env bash
# Builds the descheduler's container image without a registry or a daemon: `FROM scratch`
# plus exactly what the binary needs to run, taken from this machine:
#   /bin/descheduler                         the built binary, stripped
#   the shared libraries ldd lists           at the paths ldd shows, the dynamic loader included
#   /etc/ssl/certs/ca-certificates.crt       CA certificates (libcurl's default bundle on Debian)
#   /etc/passwd, /etc/group                  root and the user the image runs as, descheduler (65532)
#   /tmp                                     empty, mode 1777
# Nothing else: no shell, no package manager. The binary writes no file (its serving
# certificate is made in memory), so the image runs with a read-only root filesystem.
# The image is as portable as the machine's libraries: build on the Debian release the
# cluster's nodes can run (any x86-64/arm64 Linux kernel will do, the userland is in the image).
#
# Usage: scripts/build-image.sh [--binary PATH] [--tag NAME] [--rootfs DIR]
#   --binary PATH  the binary to package (default: build/descheduler; run `make build` first)
#   --tag NAME     image name (default: localhost/descheduler:<the binary's version>)
#   --rootfs DIR   only lay out the root filesystem in DIR (an empty or missing directory);
#                  no image, buildah not needed
# Environment: BUILDAH_OPTS, global options for buildah, e.g.
#   BUILDAH_OPTS="--storage-driver vfs" scripts/build-image.sh   (hosts without overlay support)
# Push the result with `buildah push NAME docker://REGISTRY/descheduler:TAG`, or save it with
# `buildah push NAME oci-archive:descheduler.tar` (docs/install.md).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
binary=$here/build/descheduler
tag=
rootfs_only=

die() { echo "build-image: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
  case $1 in
    --binary) [ $# -ge 2 ] || die "--binary needs a path"; binary=$2; shift 2 ;;
    --binary=*) binary=${1#*=}; shift ;;
    --tag) [ $# -ge 2 ] || die "--tag needs a name"; tag=$2; shift 2 ;;
    --tag=*) tag=${1#*=}; shift ;;
    --rootfs) [ $# -ge 2 ] || die "--rootfs needs a directory"; rootfs_only=$2; shift 2 ;;
    --rootfs=*) rootfs_only=${1#*=}; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
done

[ -x "$binary" ] || die "$binary: not an executable (run make build, or pass --binary)"
version=$("$binary" version | sed -n 's/.*GitVersion:\([^ ]*\).*/\1/p')
[ -n "$version" ] || die "$binary version: no GitVersion in its output"
tag=${tag:-localhost/descheduler:$version}
ca_bundle=/etc/ssl/certs/ca-certificates.crt
[ -s "$ca_bundle" ] || die "$ca_bundle: missing (install the ca-certificates package)"
command -v ldd >/dev/null || die "ldd not found (package libc-bin)"

# stage_rootfs DIR: the image's whole content
stage_rootfs() {
  local root=$1 line path
  mkdir -p "$root/bin" "$root/etc/ssl/certs" "$root/tmp"
  chmod 1777 "$root/tmp"
  if command -v strip >/dev/null; then
    strip --strip-unneeded -o "$root/bin/descheduler" "$binary"
  else
    cp "$binary" "$root/bin/descheduler"
  fi
  chmod 0755 "$root/bin/descheduler"
  # ldd prints `name => /path (addr)`, `/path/to/ld.so (addr)`, and `linux-vdso.so.1 (addr)` (in
  # the kernel, nothing to copy); `not found` means the binary cannot run here either
  local listing
  listing=$(ldd "$binary") || die "ldd $binary failed"
  if grep -q "not found" <<<"$listing"; then
    die "ldd $binary: $(grep "not found" <<<"$listing" | tr -s ' \t' ' ')"
  fi
  local n=0
  while read -r line; do
    path=$(sed -n 's/.*=> \(\/[^ ]*\) (0x.*/\1/p; s/^\(\/[^ ]*\) (0x.*/\1/p' <<<"$line")
    [ -n "$path" ] || continue
    mkdir -p "$root$(dirname "$path")"
    cp -L "$path" "$root$path"   # the file itself at the path the loader looks for
    chmod 0755 "$root$path"
    n=$((n + 1))
  done <<<"$listing"
  [ "$n" -gt 0 ] || die "ldd $binary listed no libraries: is it static? (then this script is not needed)"
  cp -L "$ca_bundle" "$root$ca_bundle"
  chmod 0644 "$root$ca_bundle"
  printf 'root:x:0:0:root:/root:/sbin/nologin\ndescheduler:x:65532:65532:descheduler:/nonexistent:/sbin/nologin\n' \
    >"$root/etc/passwd"
  printf 'root:x:0:\ndescheduler:x:65532:\n' >"$root/etc/group"
  chmod 0644 "$root/etc/passwd" "$root/etc/group"
}

if [ -n "$rootfs_only" ]; then
  [ ! -e "$rootfs_only" ] || [ -z "$(ls -A "$rootfs_only")" ] || die "$rootfs_only: not empty"
  mkdir -p "$rootfs_only"
  stage_rootfs "$rootfs_only"
  echo "build-image: root filesystem of $version in $rootfs_only ($(du -sh "$rootfs_only" | cut -f1))" >&2
  exit 0
fi

command -v buildah >/dev/null || die "buildah not found (Debian package buildah; scripts/deps.sh test installs it)"
# shellcheck disable=SC2086 # BUILDAH_OPTS is a list of words on purpose
b() { buildah ${BUILDAH_OPTS:-} "$@"; }

stage=$(mktemp -d)
ctr=
cleanup() {
  [ -z "$ctr" ] || b rm "$ctr" >/dev/null 2>&1 || true
  rm -rf "$stage"
}
trap cleanup EXIT
stage_rootfs "$stage/root"

ctr=$(b from scratch)
b copy "$ctr" "$stage/root/" / >/dev/null
b config --user 65532:65532 --workingdir / --port 10258/tcp \
  --cmd '["/bin/descheduler", "--help"]' \
  --label org.opencontainers.image.title=descheduler \
  --label org.opencontainers.image.version="$version" \
  --label org.opencontainers.image.description="Kubernetes descheduler in C, built for KubeVirt VM rebalancing" \
  "$ctr"
b commit --quiet "$ctr" "$tag" >/dev/null
b rm "$ctr" >/dev/null
ctr=
size=$(b images --format '{{.Size}}' "$tag" | head -n1)
echo "build-image: $tag ($size, from scratch: $(find "$stage/root" -type f | wc -l) files)" >&2
echo "$tag"
