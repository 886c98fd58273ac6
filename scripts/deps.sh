#!/usr/bin/env bash
# Installs what the build and the tests need, from Debian's packages, only when missing.
# Usage: scripts/deps.sh [build|test|bench]   (test = build + the programs the tests run;
#        bench = build + what bench/ runs: GNU time for peak RSS, curl, python3, and the JSON
#        libraries bench/jsonlibs.sh compares)
# buildah and ca-certificates: tests/cli/t0400-image.sh builds the container image
# (scripts/build-image.sh) without a daemon or registry.
# dpkg-dev (dpkg-shlibdeps) and debootstrap: scripts/release.sh builds the .deb and
# tests/release/test.sh installs it in a clean bookworm chroot.
# etcd-server (bookworm's 3.4): the storage of the real kube-apiserver in tests/realapi/ (the
# kube-apiserver itself is built from the Go module proxy by tests/realapi/build.sh; Go is the
# machine's, not a Debian package). Its post-install cannot start a service in a container;
# the tests start their own etcd.
#
# kubectl: the tests run Debian's kubectl (package kubernetes-client). Some machines carry
# another /usr/bin/kubectl (e.g. Google Cloud SDK's) that conflicts with the package, so the
# package is unpacked into .deps/ instead of installed; tests use .deps/bin/kubectl.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
what=${1:-build}

build_pkgs=(build-essential cmake pkg-config libyaml-dev libyajl-dev libcurl4-openssl-dev
            libmicrohttpd-dev libgnutls28-dev libcmocka-dev)
test_pkgs=(python3 openssl curl hostname prometheus python3-kubernetes python3-yaml clang libclang-rt-14-dev
           buildah ca-certificates chromium valgrind etcd-server zsh dpkg-dev debootstrap)

bench_pkgs=(python3 curl time libjson-c-dev libjansson-dev libcjson-dev)

pkgs=("${build_pkgs[@]}")
[ "$what" = test ] && pkgs+=("${test_pkgs[@]}")
[ "$what" = bench ] && pkgs+=("${bench_pkgs[@]}")

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}" >&2
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

if [ "$what" = test ] && [ ! -x "$here/.deps/bin/kubectl" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && apt-get download kubernetes-client >/dev/null 2>&1) || {
    as_root apt-get update -qq
    (cd "$tmp" && chmod 777 "$tmp" && apt-get download kubernetes-client >/dev/null)
  }
  dpkg-deb -x "$tmp"/kubernetes-client_*.deb "$tmp/x"
  mkdir -p "$here/.deps/bin"
  cp "$tmp/x/usr/bin/kubectl" "$here/.deps/bin/kubectl"
  echo "deps: Debian kubectl unpacked to .deps/bin/kubectl" >&2
fi
