#!/usr/bin/env bash
# Builds one Go program that tests or benchmarks need (never the product: that is C) from a
# small Go module in the tree, once per machine, into a cache outside the clone:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/descheduler-<what>/<version>/<binary>
# The build is reused while the module's go.mod (comments aside) and go.sum (and GOBUILD_LDFLAGS,
# extra linker flags such as -X version stamps) are unchanged (a stamp holds their checksum). Nothing built here is committed. Used by tests/realapi/build.sh (kube-apiserver)
# and bench/upstream.sh (upstream's descheduler).
#
# Usage: scripts/gobuild.sh WHAT MODULE_DIR MODULE PACKAGE [--print|--check]
#   WHAT       cache name (realapi, upstream)
#   MODULE     the required module whose version names the cache directory
#   PACKAGE    the main package to build; the binary is named after its last path element
#   (none)     build if missing; say where it is
#   --print    build if missing; print only the binary's path on stdout
#   --check    exit 0 (printing the path) if the binary is there and current, 1 if not; builds nothing
# Exit status: 0 built (or already there), 1 the build failed, 3 the build cannot happen on
# this machine (no Go 1.26 toolchain, or the module proxy cannot be reached): callers skip
# then, saying why. GOMODCACHE / GOCACHE / GOPROXY are Go's own (point them at empty
# directories to measure a first build); the figures of the last build are kept in
# build-info.txt beside the binary.
set -uo pipefail
[ $# -ge 4 ] || { echo "usage: scripts/gobuild.sh WHAT MODULE_DIR MODULE PACKAGE [--print|--check]" >&2; exit 2; }
what=$1 mod=$2 module=$3 pkg=$4 mode=${5:-}
name=${pkg##*/}
version=$(sed -n "s|^[[:space:]]*\(require \)\{0,1\}$module \(v[^ ]*\).*\$|\2|p" "$mod/go.mod" | head -n1)
[ -n "$version" ] || { echo "gobuild.sh: $mod/go.mod does not require $module" >&2; exit 1; }
cache=${XDG_CACHE_HOME:-$HOME/.cache}/descheduler-$what/$version
bin=$cache/$name
ldflags="-s -w ${GOBUILD_LDFLAGS:-}"
stamp=$( (grep -v '^[[:space:]]*//' "$mod/go.mod"; cat "$mod/go.sum"; echo "$ldflags") | sha256sum | cut -c1-16)

current() { [ -x "$bin" ] && [ "$(cat "$cache/stamp" 2>/dev/null)" = "$stamp" ]; }
say() { if [ "$mode" = --print ]; then echo "$*" >&2; else echo "$*"; fi; }

if [ "$mode" = --check ]; then
  current && { echo "$bin"; exit 0; }
  echo "gobuild.sh: $name ($module $version) is not built at $bin" >&2
  exit 1
fi

mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9 # one build at a time; a second caller waits and then finds it built
if ! current; then
  command -v go >/dev/null || { echo "gobuild.sh: cannot build $name: no Go toolchain (go) on PATH" >&2; exit 3; }
  gov=$(go env GOVERSION 2>/dev/null)
  case $gov in
    go1.2[6-9]* | go1.[3-9][0-9]* | go[2-9]*) ;;
    *) echo "gobuild.sh: cannot build $name ($module $version): it needs Go 1.26 or newer, found ${gov:-none}" >&2; exit 3 ;;
  esac
  say "gobuild.sh: building $name ($module $version) with $gov, once per machine"
  log=$cache/build.log
  start=$(date +%s)
  # -mod=readonly: go.mod/go.sum in the clone are never rewritten; -trimpath and -s -w make
  # the binary smaller and the build independent of where the caches are
  if ! (cd "$mod" && GOFLAGS="-mod=readonly -buildvcs=false" \
        go build -trimpath -ldflags="$ldflags" -o "$bin.tmp" "$pkg") >"$log" 2>&1; then
    rm -f "$bin.tmp"
    unreachable='dial tcp|no such host|connection refused|i/o timeout|TLS handshake timeout|proxyconnect'
    if grep -qE "$unreachable" "$log"; then
      echo "gobuild.sh: cannot build $name ($module $version): the Go module proxy could not be reached:" >&2
      grep -m3 -E "$unreachable" "$log" >&2
      exit 3
    fi
    echo "gobuild.sh: go build of $name ($module $version) failed (log: $log):" >&2
    tail -n 20 "$log" >&2
    exit 1
  fi
  mv "$bin.tmp" "$bin"
  secs=$(($(date +%s) - start))
  {
    echo "$name ($module $version) built $(date -u +%Y-%m-%dT%H:%M:%SZ) with $gov in ${secs}s"
    echo "binary: $(du -h "$bin" | cut -f1)"
    echo "module downloads: $(du -sh "$(go env GOMODCACHE)/cache/download" 2>/dev/null | cut -f1) ($(go env GOMODCACHE))"
    echo "build cache: $(du -sh "$(go env GOCACHE)" 2>/dev/null | cut -f1) ($(go env GOCACHE))"
  } >"$cache/build-info.txt"
  echo "$stamp" >"$cache/stamp"
  say "gobuild.sh: $(head -n1 "$cache/build-info.txt")"
fi
if [ "$mode" = --print ]; then echo "$bin"; else echo "$name: $bin"; fi
