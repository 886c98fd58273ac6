#!/usr/bin/env bash
# The container image of scripts/build-image.sh is complete: built with buildah from scratch
# around this binary, it holds exactly the binary, its libraries, CA certificates and the
# user files; and its binary, run from the image's own root filesystem mounted read-only
# (chroot as user 65532: nothing from the host), passes the seed scenario (t0200) against the
# API simulator, talks HTTPS with a verified CA and a token, and answers its /healthz probe.
# Where `podman run` works, the seed scenario runs there too; otherwise that part is skipped,
# saying why (lib.sh's skip_part).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/livelib.sh"

command -v buildah >/dev/null || skip_script "buildah is not installed (scripts/deps.sh test installs it)"
if [ "$(id -u)" != 0 ]; then
  # chroot and mounts need root: a rootless user namespace is enough
  [ -z "${T0300_UNSHARED:-}" ] || skip_script "not root, and buildah unshare gave no root"
  T0300_UNSHARED=1 exec buildah unshare bash "$0" "$@"
fi
for tool in chroot unshare mount curl; do
  command -v "$tool" >/dev/null || skip_script "$tool is not installed"
done

# a private image store: nothing touches the machine's own containers or images
export BUILDAH_OPTS="--storage-driver vfs --root $TMP/storage --runroot $TMP/runroot"
b() { buildah $BUILDAH_OPTS "$@"; } # shellcheck disable=SC2086
image=localhost/descheduler:t0400
cleanup_image() {
  b rm -a >/dev/null 2>&1
  b rmi -a -f >/dev/null 2>&1
  cleanup_sims
}
trap cleanup_image EXIT

start=$(date +%s%N)
"$ROOT/scripts/build-image.sh" --binary "$DESCHEDULER" --tag "$image" >"$TMP/out" 2>"$TMP/err"
status=$?
expect_status 0
expect_out "$image"
build_ms=$((($(date +%s%N) - start) / 1000000))

# a fresh container of the committed image, its root filesystem mounted
ctr=$(b from --pull-never "$image") || fail "buildah from $image"
root=$(b mount "$ctr") || fail "buildah mount"
[ -x "$root/bin/descheduler" ] || fail "no /bin/descheduler in the image"

# nothing but the binary, the libraries ldd names (the loader included), CA certificates,
# passwd/group and /tmp
(cd "$root" && find . -mindepth 1 -not -type d | sed 's|^\./|/|' | sort) >"$TMP/files"
{
  echo /bin/descheduler
  echo /etc/group
  echo /etc/passwd
  echo /etc/ssl/certs/ca-certificates.crt
  ldd "$DESCHEDULER" | sed -n 's/.*=> \(\/[^ ]*\) (0x.*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (0x.*/\1/p'
} | sort >"$TMP/expected"
checks=$((checks + 1))
diff "$TMP/expected" "$TMP/files" >"$TMP/err" || fail "image files differ from what the binary needs"
checks=$((checks + 1))
[ "$(stat -c %a "$root/tmp")" = 1777 ] || fail "/tmp is not mode 1777"
checks=$((checks + 1))
grep -q '^descheduler:x:65532:65532:' "$root/etc/passwd" || fail "no user 65532 in /etc/passwd"
checks=$((checks + 1))
[ "$(b inspect --format '{{.OCIv1.Config.User}}' "$image")" = 65532:65532 ] || fail "the image does not run as 65532"
size=$(du -sk "$root" | cut -f1)

# in-image: runs /bin/descheduler from the image's root, mounted read-only, as user 65532.
# File arguments (kubeconfig, policy) are copied under the image's /tmp/in first, as a pod's
# volumes would be mounted; nothing else of the host is visible.
ro=$TMP/ro
mkdir -p "$ro"
cat >"$TMP/in-image" <<EOF
#!/usr/bin/env bash
root='$root'; ro='$ro'
args=(); n=0
for a in "\$@"; do
  flag=; val=\$a
  case \$a in --*=*) flag=\${a%%=*}=; val=\${a#*=} ;; esac
  if [ -f "\$val" ]; then
    n=\$((n + 1)); mkdir -p "\$root/tmp/in/\$\$-\$n"
    cp "\$val" "\$root/tmp/in/\$\$-\$n/"
    chmod -R a+rX "\$root/tmp/in"
    a="\$flag/tmp/in/\$\$-\$n/\$(basename "\$val")"
  fi
  args+=("\$a")
done
exec unshare -m --propagation private sh -c \\
  'mount --bind "\$1" "\$2" && mount -o remount,bind,ro "\$2" && r=\$2 && shift 2 &&
   exec chroot --userspec=65532:65532 "\$r" /bin/descheduler "\$@"' sh "\$root" "\$ro" "\${args[@]}"
EOF
chmod +x "$TMP/in-image"

run_image() { "$TMP/in-image" "$@" >"$TMP/out" 2>"$TMP/err"; status=$?; }
run_image version
expect_status 0
expect_out "GitVersion:$("$DESCHEDULER" version | sed -n 's/.*GitVersion:\([^ ]*\).*/\1/p')"
# the root it runs from really is read-only
checks=$((checks + 1))
unshare -m sh -c "mount --bind '$root' '$ro' && mount -o remount,bind,ro '$ro' && ! touch '$ro/tmp/x' 2>/dev/null" ||
  fail "the image root is writable through the read-only mount"

# the seed scenario, every run of it from the image
DESCHEDULER=$TMP/in-image bash "$ROOT/tests/cli/t0200-live-seed.sh" >"$TMP/out" 2>"$TMP/err"
status=$?
expect_status 0
expect_out "t0200:"

# HTTPS: the kubeconfig carries the simulator's CA and a token; the image verifies the server
token=t0400-$RANDOM$RANDOM
sim_start "$EXAMPLE/cluster.json" --migration-seconds 600 --tls-dir "$TMP/tls" --token "$token"
run_image --kubeconfig "$SIM_KC" --secure-port 0 --policy-config-file "$EXAMPLE/policy.yaml" \
  --feature-gates EvictionsInBackground=true --v 3
expect_status 0
expect_err '"Eviction in background assumed" pod="vms/virt-launcher-vm-alpha-4f551"'

# /healthz, as the liveness probe asks it: HTTPS with the in-memory self-signed certificate
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$TMP/in-image" --kubeconfig "$SIM_KC" --policy-config-file "$EXAMPLE/policy.yaml" --secure-port "$port" \
  --descheduling-interval 1h --feature-gates EvictionsInBackground=true >"$TMP/loop.out" 2>"$TMP/loop.err" &
loop=$!
health=
for _ in $(seq 100); do
  health=$(curl -sk "https://127.0.0.1:$port/healthz" 2>/dev/null) && [ -n "$health" ] && break
  sleep 0.1
done
kill -TERM "$loop"
wait "$loop"
status=$?
checks=$((checks + 1))
[ "$health" = ok ] || fail "/healthz from the image answered '$health'"
expect_status 0

# podman, where it can run containers here
if ! command -v podman >/dev/null; then
  skip_part "podman run: podman is not installed"
elif ! podman $BUILDAH_OPTS run --rm --network host --read-only "$image" /bin/descheduler version \
  >"$TMP/podman.out" 2>"$TMP/podman.err"; then
  skip_part "podman run: podman cannot run containers here: $(grep -m1 -i 'error' "$TMP/podman.err" || head -n1 "$TMP/podman.err")"
else
  cat >"$TMP/in-podman" <<EOF
#!/usr/bin/env bash
args=(); vols=(); n=0
for a in "\$@"; do
  flag=; val=\$a
  case \$a in --*=*) flag=\${a%%=*}=; val=\${a#*=} ;; esac
  if [ -f "\$val" ]; then
    n=\$((n + 1)); vols+=(-v "\$val:/in/\$n/\$(basename "\$val"):ro")
    a="\$flag/in/\$n/\$(basename "\$val")"
  fi
  args+=("\$a")
done
exec podman $BUILDAH_OPTS run --rm --network host --read-only "\${vols[@]}" '$image' /bin/descheduler "\${args[@]}"
EOF
  chmod +x "$TMP/in-podman"
  DESCHEDULER=$TMP/in-podman bash "$ROOT/tests/cli/t0200-live-seed.sh" >"$TMP/out" 2>"$TMP/err"
  status=$?
  expect_status 0
  echo "t0400: podman run passed the seed scenario"
fi
echo "t0400: image built in ${build_ms} ms, ${size} KiB unpacked"
echo "t0400: $checks checks"
