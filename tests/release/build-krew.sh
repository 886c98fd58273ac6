#!/usr/bin/env bash
# Builds krew (sigs.k8s.io/krew, the version tests/release/gomod/go.mod requires) once per
# machine into ${XDG_CACHE_HOME:-$HOME/.cache}/descheduler-krew/<version>/krew
# (scripts/gobuild.sh: a lock, a stamp, nothing built is committed). Prints the binary's path.
# Usage: tests/release/build-krew.sh [--print|--check]; exit status as scripts/gobuild.sh (3:
# cannot be built on this machine, said in one line).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
export GOWORK=off CGO_ENABLED=0
exec "$root/scripts/gobuild.sh" krew "$here/gomod" sigs.k8s.io/krew sigs.k8s.io/krew/cmd/krew "$@"
