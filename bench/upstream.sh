#!/usr/bin/env bash
# Builds upstream's descheduler (sigs.k8s.io/descheduler, the release bench/upstream/go.mod
# requires: the newest that builds with Go 1.26) from the Go module proxy, once per machine, into
#   ${XDG_CACHE_HOME:-$HOME/.cache}/descheduler-upstream/<version>/descheduler
# for bench/compare.sh. Its code and binary are never committed.
# Usage: bench/upstream.sh [--print|--check]; exit 3 when the build cannot happen on this
# machine (no Go 1.26, no module proxy). See scripts/gobuild.sh.
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../scripts/gobuild.sh" upstream "$here/upstream" sigs.k8s.io/descheduler sigs.k8s.io/descheduler/cmd/descheduler "$@"
