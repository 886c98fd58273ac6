#!/usr/bin/env bash
# Builds Helm (helm.sh/helm/v4, the version tests/helm/gomod/go.mod requires) once per machine
# into ${XDG_CACHE_HOME:-$HOME/.cache}/descheduler-helm/<version>/helm (scripts/gobuild.sh: a
# lock, a stamp, nothing built is committed). Prints the binary's path.
# Usage: tests/helm/build.sh [--print|--check]; exit status as scripts/gobuild.sh (3: cannot be
# built on this machine, said in one line).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
export GOWORK=off CGO_ENABLED=0
version=$(sed -n 's/^[[:space:]]*\(require \)\{0,1\}helm.sh\/helm\/v4 \(v[^ ]*\).*$/\2/p' "$here/gomod/go.mod" | head -n1)
# `helm version` reports what Helm's own build stamps (its Makefile's LDFLAGS)
export GOBUILD_LDFLAGS="-X helm.sh/helm/v4/internal/version.version=$version"
exec "$root/scripts/gobuild.sh" helm "$here/gomod" helm.sh/helm/v4 helm.sh/helm/v4/cmd/helm "$@"
