#!/usr/bin/env bash
# Builds the real components of the cluster lab (tests/lab/), once per machine, each from a small
# Go module in the tree (scripts/gobuild.sh: a lock, a stamp of go.mod+go.sum+linker flags,
# -mod=readonly, a cache outside the clone; nothing built is committed):
#   kube-apiserver                          tests/realapi/build.sh (shared with the realapi tier)
#   kube-scheduler, kube-controller-manager tests/lab/gomod/k8s      (k8s.io/kubernetes, same release)
#   kwok                                    tests/lab/gomod/kwok     (sigs.k8s.io/kwok)
#   virt-api, virt-controller, labmanifests tests/lab/gomod/kubevirt (kubevirt.io/kubevirt)
# Each binary lands in ${XDG_CACHE_HOME:-$HOME/.cache}/descheduler-lab-<name>/<version>/, with
# build-info.txt (wall time, sizes) beside it.
#
# Usage: tests/lab/build.sh [--check|--print]
#   (none)    build what is missing, with progress lines; then `NAME PATH` per component
#   --print   build what is missing (progress on stderr); only `NAME PATH` lines on stdout
#   --check   build nothing; `NAME PATH` for each component that is built and current, a line
#             on stderr for each that is not; exit 1 if any is not
# Every component is attempted even when an earlier one fails, so the lab can say which ones it
# has. Exit status: 0 all built; 1 a build failed (a real failure: the log's tail is printed);
# 3 (with a one-line reason) the builds cannot happen on this machine (no Go 1.26 toolchain, or
# no Go module proxy).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mode=${1:-}
case $mode in "" | --check | --print) ;; *) echo "usage: tests/lab/build.sh [--check|--print]" >&2; exit 2 ;; esac
gobuild=$root/scripts/gobuild.sh
# KubeVirt's release build is static (hack/build-go.sh builds with CGO_ENABLED=0); no module here
# belongs to a workspace, and a go.work above the clone must not pull them into one
export GOWORK=off CGO_ENABLED=0

k8s_version=$(sed -n 's/^[[:space:]]*\(require \)\{0,1\}k8s.io\/kubernetes \(v[^ ]*\).*$/\2/p' "$here/gomod/k8s/go.mod" | head -n1)
minor=${k8s_version#v1.}
# a binary built from the module reports v0.0.0-master unless stamped, as Kubernetes' own build
# (hack/lib/version.sh) stamps it; the component-base compatibility checks read this version
k8s_ldflags="-X k8s.io/component-base/version.gitVersion=$k8s_version -X k8s.io/component-base/version.gitMajor=1 \
-X k8s.io/component-base/version.gitMinor=${minor%%.*} -X k8s.io/component-base/version.gitTreeState=clean"
kv_version=$(sed -n 's/^[[:space:]]*\(require \)\{0,1\}kubevirt.io\/kubevirt \(v[^ ]*\).*$/\2/p' "$here/gomod/kubevirt/go.mod" | head -n1)
# KubeVirt stamps its version into client-go's version package (hack/version.sh)
kv_ldflags="-X kubevirt.io/client-go/version.gitVersion=$kv_version -X kubevirt.io/client-go/version.gitTreeState=clean"

# name | cache name | module dir | module | package | linker flags
components=(
  "kube-scheduler|lab-kube-scheduler|$here/gomod/k8s|k8s.io/kubernetes|k8s.io/kubernetes/cmd/kube-scheduler|$k8s_ldflags"
  "kube-controller-manager|lab-kube-controller-manager|$here/gomod/k8s|k8s.io/kubernetes|k8s.io/kubernetes/cmd/kube-controller-manager|$k8s_ldflags"
  "kwok|lab-kwok|$here/gomod/kwok|sigs.k8s.io/kwok|sigs.k8s.io/kwok/cmd/kwok|"
  "virt-controller|lab-virt-controller|$here/gomod/kubevirt|kubevirt.io/kubevirt|kubevirt.io/kubevirt/cmd/virt-controller|$kv_ldflags"
  "virt-api|lab-virt-api|$here/gomod/kubevirt|kubevirt.io/kubevirt|kubevirt.io/kubevirt/cmd/virt-api|$kv_ldflags"
  "labmanifests|lab-labmanifests|$here/gomod/kubevirt|kubevirt.io/kubevirt|descheduler.test/lab/kubevirt/labmanifests|"
)

progress() { if [ "$mode" = --print ]; then echo "lab build: $*" >&2; else echo "lab build: $*"; fi; }
worst=0
results=()
note() { # remember the worst status: 1 (a failure) outranks 3 (cannot build here)
  local rc=$1
  if [ "$rc" -eq 1 ] || { [ "$rc" -eq 3 ] && [ "$worst" -eq 0 ]; }; then worst=$rc; fi
}

total=$((${#components[@]} + 1))
i=1
start=$SECONDS
if [ "$mode" = --check ]; then
  out=$("$root/tests/realapi/build.sh" --check) && results+=("kube-apiserver ${out##* }") || worst=1
else
  progress "[$i/$total] kube-apiserver (tests/realapi/build.sh; waits if a build of it is running)"
  t=$SECONDS
  out=$("$root/tests/realapi/build.sh" --print)
  rc=$?
  note $rc
  [ $rc -eq 0 ] && { results+=("kube-apiserver $out"); progress "[$i/$total] kube-apiserver ready ($((SECONDS - t))s)"; }
fi
for c in "${components[@]}"; do
  [ "$worst" -eq 3 ] && break # no toolchain or no proxy: the same holds for the rest
  IFS='|' read -r name what dir module pkg ldflags <<<"$c"
  i=$((i + 1))
  if [ "$mode" = --check ]; then
    out=$(GOBUILD_LDFLAGS="$ldflags" "$gobuild" "$what" "$dir" "$module" "$pkg" --check) \
      && results+=("$name $out") || worst=1
    continue
  fi
  progress "[$i/$total] $name ($module, $(basename "$dir") module)"
  t=$SECONDS
  out=$(GOBUILD_LDFLAGS="$ldflags" "$gobuild" "$what" "$dir" "$module" "$pkg" --print)
  rc=$?
  note $rc
  if [ $rc -eq 0 ]; then
    results+=("$name $out")
    progress "[$i/$total] $name ready ($((SECONDS - t))s)"
  fi
done

[ "$mode" = --check ] || progress "done in $((SECONDS - start))s (build-info.txt beside each binary has its build time)"
for r in "${results[@]}"; do echo "$r"; done
if [ "$worst" -eq 3 ]; then
  echo "lab build: cannot build the lab's components on this machine (reason above)" >&2
fi
exit $worst
