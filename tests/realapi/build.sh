#!/usr/bin/env bash
# Builds the real kube-apiserver the tests in tests/realapi/ run, once per machine, from the Go
# module in tests/realapi/gomod/ (k8s.io/kubernetes from the Go module proxy, its staging
# modules replaced by the versions the proxy serves), into
#   ${XDG_CACHE_HOME:-$HOME/.cache}/descheduler-realapi/<version>/kube-apiserver
# Usage: tests/realapi/build.sh [--print|--check]; exit 3 when the build cannot happen on this
# machine (no Go 1.26, no module proxy). See scripts/gobuild.sh.
here=$(cd "$(dirname "$0")" && pwd)
# the version a built-from-module binary reports is v0.0.0-master unless stamped, as
# Kubernetes' own build (hack/lib/version.sh) stamps it
v=$(sed -n 's/^[[:space:]]*k8s.io\/kubernetes \(v[^ ]*\).*$/\1/p' "$here/gomod/go.mod" | head -n1)
minor=${v#v1.}
export GOBUILD_LDFLAGS="-X k8s.io/component-base/version.gitVersion=$v -X k8s.io/component-base/version.gitMajor=1 \
-X k8s.io/component-base/version.gitMinor=${minor%%.*} -X k8s.io/component-base/version.gitTreeState=clean"
exec "$here/../../scripts/gobuild.sh" realapi "$here/gomod" k8s.io/kubernetes k8s.io/kubernetes/cmd/kube-apiserver "$@"
