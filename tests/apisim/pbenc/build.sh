#!/usr/bin/env bash
# Builds pbenc, the simulator's protobuf encoder for Pods (main.go; test infrastructure, never
# the product), once per machine, from this Go module (k8s.io/api and k8s.io/apimachinery from
# the Go module proxy), into
#   ${XDG_CACHE_HOME:-$HOME/.cache}/descheduler-apisim-pbenc/<k8s.io/api version>/pbenc
# Usage: tests/apisim/pbenc/build.sh [--print|--check]; exit 3 when the build cannot happen on
# this machine (no Go 1.26, no module proxy): callers skip, saying why. See scripts/gobuild.sh.
# The sources' checksum is linked in (pbenc --version prints it): gobuild.sh rebuilds when its
# linker flags change, so an edit of main.go builds again like a change of go.mod does.
here=$(cd "$(dirname "$0")" && pwd)
sum=$(cat "$here"/*.go | sha256sum | cut -c1-16)
export GOBUILD_LDFLAGS="-X main.source=$sum"
exec "$here/../../../scripts/gobuild.sh" apisim-pbenc "$here" k8s.io/api descheduler.test/pbenc "$@"
