#!/usr/bin/env bash
# The commands table and the habits every command shares (src/cli/main.c, flags.h, output.h):
# `descheduler --help` lists every command of the table beside the run command's flags; every
# command answers --help (exit 0, its flags and exit codes) and `descheduler help COMMAND` the
# same; a help default is the flag's real default; -o json and -o yaml print the same document
# wherever a command prints one (kubectl's -ojson form too); pause and resume --dry-run change
# nothing; and the exit-code rule: a bad flag exits 2, a cluster that does not answer exits 1
# for every command that reads one (docs/errors.md).
. "$(dirname "$0")/lib.sh"
SNAP=$EXAMPLE/cluster.json
POL=$EXAMPLE/policy.yaml
OPENSHIFT=$ROOT/examples/openshift-kubevirt

# JSON in FILE; YAML in FILE2 holding the same document (when given)
expect_json() {
  checks=$((checks + 1))
  python3 - "$@" <<'PY' || fail "not the same valid JSON/YAML document: $*"
import json, sys, yaml
doc = json.load(open(sys.argv[1]))
if len(sys.argv) > 2:
    assert yaml.safe_load(open(sys.argv[2])) == doc, "the YAML says something else"
PY
}

# --- the table: every row is listed by --help and answers --help ------------------------------
# the rows as main.c declares them: `{"name", cmd_...`
commands=$(sed -n 's/^ *{"\([a-z-]*\)", cmd_[a-z]*,.*/\1/p' "$ROOT/src/cli/main.c")
checks=$((checks + 1))
[ "$(echo "$commands" | wc -w)" -ge 10 ] || fail "commands[] of main.c not found: $commands"
run --help
expect_status 0
expect_out 'Available Commands:'
expect_out '      --policy-config-file string'    # upstream's flags are the main command's
expect_out '      --descheduling-interval duration'
expect_out 'Exit status:'
cp "$TMP/out" "$TMP/main-help"
for c in $commands; do
  checks=$((checks + 1))
  grep -qE "^  $c +[a-z]" "$TMP/main-help" || fail "descheduler --help does not list $c"
done
run help
expect_status 0
checks=$((checks + 1)); cmp -s "$TMP/out" "$TMP/main-help" || fail "descheduler help != descheduler --help"

for c in $commands; do
  args=("$c")
  [ "$c" = profile ] && args=(profile render)
  [ "$c" = help ] && continue
  run "${args[@]}" --help
  expect_status 0
  expect_out "Usage: descheduler ${args[*]}"
  expect_out 'Flags:'
  expect_out 'Exit status:'
  expect_out '  2  bad input'
  checks=$((checks + 1))
  if [ "$c" = completion ]; then # its one argument is the shell; it has no flag
    grep -qx '  none' "$TMP/out" || fail "completion --help does not say it has no flag"
  else
    grep -qE '^  (-[a-z], )?    --[a-z]|^  -[a-z], --[a-z]' "$TMP/out" || fail "$c --help lists no flag"
  fi
  cp "$TMP/out" "$TMP/cmd-help"
  run help "${args[@]}"
  expect_status 0
  checks=$((checks + 1)); cmp -s "$TMP/out" "$TMP/cmd-help" || fail "help ${args[*]} != ${args[*]} --help"
  # a bad flag is bad input: 2, one message, nothing on stdout
  run "${args[@]}" --no-such-flag
  expect_status 2
  expect_err 'unknown flag: --no-such-flag'
  expect_out_empty
done
run help frobnicate
expect_status 2
expect_err 'descheduler help: unknown command "frobnicate"'
run simualte
expect_status 2
expect_err 'did you mean simulate?'

# --version and version print the same; version --help is help
run version
expect_status 0
cp "$TMP/out" "$TMP/version"
run --version
expect_status 0
checks=$((checks + 1)); cmp -s "$TMP/out" "$TMP/version" || fail "--version != version"
expect_out 'Descheduler version {Major:0 Minor:36 GitVersion:'

# --- help defaults are the real defaults ---------------------------------------------------------
# written once, as the target's value: pflag's forms (durations as Go prints them)
run --help
expect_out '      --secure-port int'
checks=$((checks + 1))
grep -E -- '--secure-port int .*\(default 10258\)$' "$TMP/out" >/dev/null || fail "secure-port default"
checks=$((checks + 1))
grep -E -- '--leader-elect-lease-duration duration .*\(default 2m17s\)$' "$TMP/out" >/dev/null || fail "lease duration default"
checks=$((checks + 1))
grep -E -- '--leader-elect-resource-namespace string .*\(default kube-system\)$' "$TMP/out" >/dev/null || fail "lease namespace default"
checks=$((checks + 1))
! grep -E -- '--dry-run .*\(default' "$TMP/out" >/dev/null || fail "a false bool shows a default"
default_of() { # COMMAND... -- FLAG: the flag's default as the command's --help says it
  local flag=${*: -1}
  "$DESCHEDULER" "${@:1:$#-1}" --help | sed -n "s/^.*--$flag [a-z]* .*(default \\(.*\\))\$/\\1/p"
}
# simulate's and a live run's --decision-examples: one default, the one --help gives
n=$(default_of simulate decision-examples)
checks=$((checks + 1))
[ -n "$n" ] && [ "$n" = "$(default_of decision-examples)" ] || fail "decision-examples defaults: '$n' '$(default_of decision-examples)'"
cat >"$TMP/lifetime.yaml" <<'YAML'
apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
profiles:
- name: p
  pluginConfig:
  - name: PodLifeTime
    args: {maxPodLifeTimeSeconds: 999999999}
  plugins: {deschedule: {enabled: [PodLifeTime]}}
YAML
run simulate --policy-config-file "$TMP/lifetime.yaml" --snapshot "$SNAP" -o json
expect_status 0
checks=$((checks + 1))
python3 - "$TMP/out" "$n" <<'PY' || fail "simulate names more or fewer pods per reason than --decision-examples' default"
import json, sys
reasons, n = json.load(open(sys.argv[1]))["decisions"]["reasons"], int(sys.argv[2])
assert any(r["count"] > n for r in reasons), reasons  # a reason with more pods than are named
assert all(len(r["examples"]) == min(r["count"], n) for r in reasons), reasons
PY
# -o's default: text for simulate, yaml for profile render
checks=$((checks + 1)); [ "$(default_of simulate output)" = text ] || fail "simulate -o default"
run simulate --policy-config-file "$POL" --snapshot "$SNAP"
expect_out 'Simulated one descheduling cycle'
checks=$((checks + 1)); [ "$(default_of profile render output)" = yaml ] || fail "profile render -o default"
run profile render --kubedescheduler "$OPENSHIFT/kubedescheduler.yaml" --snapshot "$OPENSHIFT/cluster.json"
expect_status 0
expect_out '# DeschedulerPolicy rendered from'
# verify's --timeout, as it prints it when it starts
checks=$((checks + 1)); [ "$(default_of verify timeout)" = 5m0s ] || fail "verify --timeout default: $(default_of verify timeout)"

# --- -o json and -o yaml: the same document; kubectl's attached forms ---------------------------
out_both() { # COMMAND...: -ojson and -o yaml of the same command, compared
  "$DESCHEDULER" "$@" -ojson >"$TMP/doc.json" 2>"$TMP/err"
  "$DESCHEDULER" "$@" -o=yaml >"$TMP/doc.yaml" 2>>"$TMP/err"
  expect_json "$TMP/doc.json" "$TMP/doc.yaml"
}
out_both simulate --policy-config-file "$POL" --snapshot "$SNAP"
out_both explain vms/virt-launcher-vm-alpha-4f551 --policy-config-file "$POL" --snapshot "$SNAP"
checks=$((checks + 1))
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["pod"]=="vms/virt-launcher-vm-alpha-4f551" and d["events"] and d["nodeRecord"]["name"]==d["node"], d' \
  "$TMP/doc.json" || fail "explain -o json: the pod's record"
# profile render's YAML is the policy alone, a file the descheduler loads (its arguments in a
# comment); its JSON holds the policy, the arguments and the warnings
"$DESCHEDULER" profile render --kubedescheduler "$OPENSHIFT/kubedescheduler.yaml" \
  --snapshot "$OPENSHIFT/cluster.json" -ojson >"$TMP/doc.json" 2>"$TMP/err"
"$DESCHEDULER" profile render --kubedescheduler "$OPENSHIFT/kubedescheduler.yaml" \
  --snapshot "$OPENSHIFT/cluster.json" -o yaml >"$TMP/doc.yaml" 2>"$TMP/err"
checks=$((checks + 1))
python3 -c 'import json,sys,yaml; assert yaml.safe_load(open(sys.argv[2])) == json.load(open(sys.argv[1]))["policy"]' \
  "$TMP/doc.json" "$TMP/doc.yaml" || fail "profile render: -o yaml is not the policy of -o json"
out_both version
# -v3 is --v 3: the cycle's V3 line
run simulate --policy-config-file "$POL" --snapshot "$SNAP" -ojson -v3
expect_status 0
expect_err '"Cycle timings"'
expect_json "$TMP/out"

# --- a cluster that does not answer: 1 for every command that reads one ----------------------
cat >"$TMP/closed.kc" <<'YAML'
apiVersion: v1
kind: Config
current-context: x
contexts: [{name: x, context: {cluster: c}}]
clusters: [{name: c, cluster: {server: "http://127.0.0.1:1"}}]
YAML
unreachable() { # COMMAND...: exits 1 against the closed port, 2 with a kubeconfig that is not there
  run "$@" --kubeconfig "$TMP/closed.kc"
  checks=$((checks + 1))
  [ "$status" -eq 1 ] || fail "$* against a closed port: exit $status, expected 1"
  run "$@" --kubeconfig "$TMP/nope.kc"
  checks=$((checks + 1))
  [ "$status" -eq 2 ] || fail "$* with a missing kubeconfig: exit $status, expected 2"
}
unreachable --policy-config-file "$POL" --secure-port 0
unreachable --kubedescheduler "$OPENSHIFT/kubedescheduler.yaml" --secure-port 0
unreachable --kubedescheduler-ref openshift-kube-descheduler-operator/cluster --secure-port 0
unreachable soft-taint --policy-config-file "$POL" --once
unreachable soft-taint --kubedescheduler "$OPENSHIFT/kubedescheduler.yaml" --once
unreachable check
unreachable verify --vmi vms/vm-alpha --from worker-a --timeout 0
unreachable pause
unreachable resume
unreachable profile render --kubedescheduler "$OPENSHIFT/kubedescheduler.yaml"
unreachable profile render --kubedescheduler-ref openshift-kube-descheduler-operator/cluster
# a document even then
run pause --kubeconfig "$TMP/closed.kc" -o json
expect_status 1
expect_json "$TMP/out"

# --- the runbook commands' documents against the API simulator; pause/resume --dry-run -------
python3 - "$SNAP" "$ROOT/tests/data/runbook/cronjob.yaml" "$TMP/sim-snapshot.json" <<'PY'
import json, sys, yaml
d = json.load(open(sys.argv[1]))
d["items"].append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "descheduler"}})
d["items"].append(yaml.safe_load(open(sys.argv[2])))
json.dump(d, open(sys.argv[3], "w"))
PY
python3 "$ROOT/tests/apisim/apisim.py" --snapshot "$TMP/sim-snapshot.json" --port 0 \
  --kubeconfig-out "$TMP/sim.kc" >"$TMP/sim.out" 2>"$TMP/sim.err" &
sim=$!
for _ in $(seq 100); do grep -q '^ready' "$TMP/sim.out" 2>/dev/null && break; sleep 0.1; done
checks=$((checks + 1))
grep -q '^ready' "$TMP/sim.out" || { kill $sim; fail "the API simulator did not start: $(tail -3 "$TMP/sim.err")"; }
url=$(sed -n 's/.*server: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$TMP/sim.kc" | head -n1)
suspended() { curl -sf "$url/apis/batch/v1/namespaces/descheduler/cronjobs/descheduler" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["spec"].get("suspend", False))'; }

out_both check --kubeconfig "$TMP/sim.kc"
out_both verify --vmi vms/vm-alpha --from worker-a --timeout 0 --kubeconfig "$TMP/sim.kc"
run pause --kubeconfig "$TMP/sim.kc" --dry-run
expect_status 0
expect_out 'Dry run: would pause CronJob descheduler/descheduler: spec.suspend true'
checks=$((checks + 1)); [ "$(suspended)" = False ] || fail "pause --dry-run suspended the CronJob"
out_both pause --kubeconfig "$TMP/sim.kc" --dry-run
checks=$((checks + 1))
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["action"]=="would-patch" and d["patch"]=={"spec":{"suspend":True}} and d["dryRun"], d' \
  "$TMP/doc.json" || fail "pause --dry-run -o json"
checks=$((checks + 1)); [ "$(suspended)" = False ] || fail "pause --dry-run -o json suspended the CronJob"
run pause --kubeconfig "$TMP/sim.kc" -o json
expect_status 0
checks=$((checks + 1)); [ "$(suspended)" = True ] || fail "pause did not suspend the CronJob"
run resume --kubeconfig "$TMP/sim.kc" --dry-run
expect_status 0
expect_out 'Dry run: would resume CronJob descheduler/descheduler: spec.suspend false'
checks=$((checks + 1)); [ "$(suspended)" = True ] || fail "resume --dry-run resumed the CronJob"
out_both resume --kubeconfig "$TMP/sim.kc" --dry-run
checks=$((checks + 1)); [ "$(suspended)" = True ] || fail "resume --dry-run -o json resumed the CronJob"
run resume --kubeconfig "$TMP/sim.kc" -o yaml
expect_status 0
checks=$((checks + 1))
python3 -c 'import sys,yaml; d=yaml.safe_load(open(sys.argv[1])); assert d["action"]=="patched" and not d["dryRun"], d' \
  "$TMP/out" || fail "resume -o yaml"
checks=$((checks + 1)); [ "$(suspended)" = False ] || fail "resume did not resume the CronJob"

# a live run's defaults as the simulator sees them: LIST pages of --list-page-size's default,
# and --decision-examples' default in the decision record
page=$(default_of list-page-size)
curl -sf -X DELETE "$url/_sim/journal" >/dev/null
run --kubeconfig "$TMP/sim.kc" --secure-port 0 --dry-run --policy-config-file "$TMP/lifetime.yaml" \
  --decisions-file "$TMP/decisions.jsonl"
expect_status 0
curl -sf "$url/_sim/journal" >"$TMP/journal.json"
checks=$((checks + 1))
python3 - "$TMP/journal.json" "$page" "$TMP/decisions.jsonl" "$n" <<'PY' || fail "a live run's defaults are not its help's"
import json, sys
lists = [e for e in json.load(open(sys.argv[1]))["items"] if e["method"] == "GET" and "limit=" in e["query"]]
assert lists and all("limit=%s" % sys.argv[2] in e["query"].split("&") for e in lists), lists
reasons, n = json.loads(open(sys.argv[3]).readline())["decisions"]["reasons"], int(sys.argv[4])
assert any(r["count"] > n for r in reasons) and all(len(r["examples"]) == min(r["count"], n) for r in reasons), reasons
PY
kill $sim
wait $sim 2>/dev/null
# the snapshot command: one string, as simulate --help gives it, in every doc that shows it
run simulate --help
cmd=$(sed -n 's/^.*`\(kubectl get [^`]*\)` prints it.*$/\1/p' "$TMP/out")
[ -n "$cmd" ] || fail "simulate --help names no kubectl command"
for doc in docs/install.md docs/simulate.md docs/utilization.md; do
  checks=$((checks + 1))
  grep -qF "$cmd" "$ROOT/$doc" || fail "$doc does not give simulate's snapshot command: $cmd"
  grep -o 'kubectl get nodes,pods[^ ]* -A -o json' "$ROOT/$doc" | grep -vqxF "$cmd" &&
    fail "$doc gives another snapshot command than simulate's: $cmd"
done

echo "t0009: $checks checks"
