#!/usr/bin/env bash
# Builds the real kube-apiserver the tests in tests/realapi/ run, once per machine, from the Go
# module in tests/realapi/gomod/ (k8s.io/kubernetes from the Go module proxy, its staging
# modules replaced by the versions the proxy serves), into
#   ${XDG_CACHE_HOME:-$HOME/.cache}/descheduler-realapi/<version>/kube-apiserver
# Usage: tests/realapi/build.sh [--print|--check]; exit 3 when the build cannot happen on this
# machine (no Go 1.26, no module proxy). See scripts/gobuild.sh.
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../../scripts/gobuild.sh" realapi "$here/gomod" k8s.io/kubernetes k8s.io/kubernetes/cmd/kube-apiserver "$@"
