#!/usr/bin/env bash
# The Containerfile agrees with the project without building it (its base image needs a
# registry): the build stage installs the packages scripts/deps.sh builds with, the runtime
# stage's packages (with their dependencies, as apt resolves them) provide every shared
# library this binary loads, and it installs the binary where the manifests run it.
. "$(dirname "$0")/lib.sh"
CF=$ROOT/Containerfile
: >"$TMP/out"
: >"$TMP/err"
command -v dpkg-query >/dev/null && command -v apt-cache >/dev/null ||
  skip_script "not a Debian system: no dpkg/apt-cache"

# packages of the N-th `apt-get install` of the Containerfile (1 = build, 2 = runtime)
stage_packages() {
  python3 - "$CF" "$1" <<'EOF'
import re, sys
text = open(sys.argv[1]).read().replace("\\\n", " ")
runs = [l for l in text.splitlines() if l.startswith("RUN ") and "apt-get install" in l]
words = runs[int(sys.argv[2]) - 1].split("apt-get install", 1)[1].split("&&")[0].split()
print("\n".join(sorted(w for w in words if not w.startswith("-"))))
EOF
}
stage_packages 1 >"$TMP/build-stage"
stage_packages 2 >"$TMP/runtime-stage"
checks=$((checks + 1))
[ -s "$TMP/build-stage" ] && [ -s "$TMP/runtime-stage" ] || fail "no apt-get install in the Containerfile's stages"

# the build stage installs what scripts/deps.sh builds with
sed -n '/^build_pkgs=(/,/)/p' "$ROOT/scripts/deps.sh" | tr -d '()' | sed 's/build_pkgs=//' | tr ' ' '\n' |
  grep -v '^$' | sort >"$TMP/deps-build"
checks=$((checks + 1))
diff "$TMP/deps-build" "$TMP/build-stage" >"$TMP/err" || fail "Containerfile build stage != scripts/deps.sh build packages"

# every library the binary loads comes from a package the runtime stage pulls in
mapfile -t runtime <"$TMP/runtime-stage"
apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces \
  --no-enhances "${runtime[@]}" 2>"$TMP/err" | grep -v '^ ' | sed 's/:.*//' | sort -u >"$TMP/closure"
checks=$((checks + 1))
# without package lists the runtime closure, this script's main claim, cannot be checked: the
# whole script is a skip, whatever passed above
grep -qx libc6 "$TMP/closure" || skip_script "apt-cache has no package lists (run apt-get update)"
owner() { # the package that installed a library path (merged /usr: try the /usr path and the real file)
  local p=$1 c
  for c in "$p" "$(readlink -f "$p")" "/usr$p" "$(dirname "/usr$p")/$(basename "$(readlink -f "$p")")"; do
    dpkg-query -S "$c" 2>/dev/null | head -n1 | cut -d: -f1 | grep . && return 0
  done
  return 1
}
ldd "$DESCHEDULER" | sed -n 's/.*=> \(\/[^ ]*\) (0x.*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (0x.*/\1/p' >"$TMP/libs"
checks=$((checks + 1))
[ -s "$TMP/libs" ] || fail "ldd listed no library"
while read -r lib; do
  checks=$((checks + 1))
  pkg=$(owner "$lib") || fail "no Debian package owns $lib"
  grep -qx "$pkg" "$TMP/closure" || fail "$lib comes from $pkg, which the runtime stage does not install"
done <"$TMP/libs"

# CA certificates, the binary at /bin/descheduler (the manifests' command), non-root user
checks=$((checks + 1))
grep -qx ca-certificates "$TMP/runtime-stage" || fail "runtime stage lacks ca-certificates"
checks=$((checks + 1))
grep -q '^COPY --from=build /build/descheduler /bin/descheduler$' "$CF" || fail "binary not copied to /bin/descheduler"
checks=$((checks + 1))
grep -q '^USER 65532:65532$' "$CF" || fail "the image does not run as 65532"
checks=$((checks + 1))
grep -qE '^ *- /bin/descheduler$' "$ROOT/deploy/cronjob/cronjob.yaml" || fail "the CronJob does not run /bin/descheduler"
echo "t0401: $checks checks"
