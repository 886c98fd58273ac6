#!/usr/bin/env bash
# Bad KubeDescheduler input of every kind, and bad `profile render` flags: exit 2, nothing on
# stdout, one message that names the file, the field and what was expected.
. "$(dirname "$0")/lib.sh"
SNAP=$ROOT/tests/data/profile/cluster.json
SEED=$ROOT/tests/data/profile/cases/seed/kubedescheduler.yaml

render_bad() { # FILE EXPECTED-MESSAGE [flags...]
  local file=$1 msg=$2; shift 2
  run profile render --kubedescheduler "$file" --snapshot "$SNAP" --psi present "$@"
  expect_status 2
  expect_out_empty
  expect_err_lines 1
  expect_err "descheduler profile render: $file: $msg"
}
cr() { # NAME: writes $TMP/NAME.yaml from stdin
  cat >"$TMP/$1.yaml"
}
seed_with() { # NAME SED-EXPRESSION: the seed CR edited
  sed "$2" "$SEED" >"$TMP/$1.yaml"
}

# not YAML, empty, not a map, a List without exactly one KubeDescheduler
printf 'spec: [profiles\n' | cr not-yaml
render_bad "$TMP/not-yaml.yaml" "invalid YAML at line 2"
: | cr empty
render_bad "$TMP/empty.yaml" "the file is empty: expected a KubeDescheduler object"
printf -- '- a\n- b\n' | cr a-list
render_bad "$TMP/a-list.yaml" "expected a KubeDescheduler object (a map), got a list"
printf '{"apiVersion":"v1","kind":"List","items":[]}\n' | cr empty-list
render_bad "$TMP/empty-list.yaml" "expected one KubeDescheduler in the List, found 0"
run profile render --kubedescheduler "$TMP/does-not-exist.yaml" --snapshot "$SNAP"
expect_status 2
expect_err "descheduler profile render: $TMP/does-not-exist.yaml: cannot open: No such file or directory"

# wrong apiVersion / kind
seed_with v2 's#operator.openshift.io/v1#operator.openshift.io/v2#'
render_bad "$TMP/v2.yaml" 'apiVersion: expected "operator.openshift.io/v1", got "operator.openshift.io/v2"'
seed_with no-api '/^apiVersion/d'
render_bad "$TMP/no-api.yaml" 'apiVersion: expected "operator.openshift.io/v1", got nothing'
seed_with configmap 's/^kind: KubeDescheduler/kind: ConfigMap/'
render_bad "$TMP/configmap.yaml" 'kind: expected "KubeDescheduler", got "ConfigMap"'

# wrong field types
seed_with interval-string 's/deschedulingIntervalSeconds: 30/deschedulingIntervalSeconds: "30"/'
render_bad "$TMP/interval-string.yaml" 'spec.deschedulingIntervalSeconds: expected an integer (int32), got "30"'
seed_with interval-big 's/deschedulingIntervalSeconds: 30/deschedulingIntervalSeconds: 3000000000/'
render_bad "$TMP/interval-big.yaml" 'spec.deschedulingIntervalSeconds: expected an integer (int32), got 3000000000'
seed_with profiles-string 's/^  profiles:$/  profiles: SoftTopologyAndDuplicates/; /^  - /d'
render_bad "$TMP/profiles-string.yaml" 'spec.profiles: expected a list of strings, got "SoftTopologyAndDuplicates"'
seed_with profile-number 's/^  - SoftTopologyAndDuplicates/  - 7/'
render_bad "$TMP/profile-number.yaml" 'spec.profiles[0]: expected a string, got 7'
seed_with mode-bool 's/mode: Automatic/mode: yes/'
render_bad "$TMP/mode-bool.yaml" 'spec.mode: expected a string, got yes'
seed_with customizations-list 's/^  profileCustomizations:$/  profileCustomizations: []/; /^    dev/d'
render_bad "$TMP/customizations-list.yaml" 'spec.profileCustomizations: expected a map, got a list'
seed_with eib-string 's/^    devDeviationThresholds: AsymmetricLow/    devEnableEvictionsInBackground: "true"/'
render_bad "$TMP/eib-string.yaml" 'spec.profileCustomizations.devEnableEvictionsInBackground: expected true or false, got "true"'
seed_with podlifetime 's/^    devDeviationThresholds: AsymmetricLow/    podLifetime: 1d/'
render_bad "$TMP/podlifetime.yaml" 'spec.profileCustomizations.podLifetime: expected a duration such as "5m" or "1h30m", got "1d"'
seed_with cooldown 's/^    devDeviationThresholds: AsymmetricLow/    devMigrationCooldown: 15/'
render_bad "$TMP/cooldown.yaml" 'spec.profileCustomizations.devMigrationCooldown: expected a string, got 15'
seed_with included 's/^    devDeviationThresholds: AsymmetricLow/    namespaces: {included: team-a}/'
render_bad "$TMP/included.yaml" 'spec.profileCustomizations.namespaces.included: expected a list of strings, got "team-a"'
seed_with limit-negative 's/^  profiles:$/  evictionLimits: {node: -2}\n  profiles:/'
render_bad "$TMP/limit-negative.yaml" 'spec.evictionLimits.node: expected an integer of 0 or more, got -2 (the operator would turn it into 18446744073709551615, no limit)'
seed_with no-spec '/^spec:/,$d'
render_bad "$TMP/no-spec.yaml" 'spec: required (a KubeDescheduler needs spec.profiles and spec.deschedulingIntervalSeconds)'

# unknown fields (kubectl apply refuses them: strict field validation)
seed_with unknown-spec 's/^  mode: Automatic/  mode: Automatic\n  strategy: fast/'
render_bad "$TMP/unknown-spec.yaml" 'spec.strategy: unknown field (expected one of: managementState, logLevel,'
seed_with unknown-custom 's/devActualUtilizationProfile:/devActualUtilisationProfile:/'
render_bad "$TMP/unknown-custom.yaml" 'spec.profileCustomizations.devActualUtilisationProfile: unknown field (expected one of: podLifetime,'
seed_with unknown-top 's/^spec:/specs: {}\nspec:/'
render_bad "$TMP/unknown-top.yaml" 'specs: unknown field (expected one of: apiVersion, kind, metadata, spec, status)'

# unknown profile: the operator's schema message names the field and the allowed values
seed_with unknown-profile 's/^  - DevKubeVirtRelieveAndMigrate/  - KubeVirtRebalance/'
render_bad "$TMP/unknown-profile.yaml" 'validation errors: spec.profiles[1] in body should be one of [AffinityAndTaints TopologyAndDuplicates LifecycleAndUtilization DevPreviewLongLifecycle LongLifecycle SoftTopologyAndDuplicates EvictPodsWithLocalStorage EvictPodsWithPVC CompactAndScale DevKubeVirtRelieveAndMigrate KubeVirtRelieveAndMigrate]'

# a JSON CR, and a List holding one, render like the YAML one
python3 -c 'import json,sys,yaml; json.dump(yaml.safe_load(open(sys.argv[1])), open(sys.argv[2],"w"))' "$SEED" "$TMP/seed.json"
run profile render --kubedescheduler "$TMP/seed.json" --snapshot "$SNAP" --psi present -o json
expect_status 0
cp "$TMP/out" "$TMP/from-json"
python3 -c 'import json,sys,yaml; print(json.dumps({"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"x"}}, yaml.safe_load(open(sys.argv[1]))]}))' "$SEED" >"$TMP/seed-list.json"
run profile render --kubedescheduler "$TMP/seed-list.json" --snapshot "$SNAP" --psi present -o json
expect_status 0
checks=$((checks + 1)); cmp -s "$TMP/out" "$TMP/from-json" || fail "a List holding the CR renders differently"

# flags
run profile render --kubedescheduler "$SEED" --snapshot "$SNAP" -o xml
expect_status 2; expect_err 'descheduler profile render: --output: expected text, json or yaml, got "xml"'
run profile render --kubedescheduler "$SEED" --snapshot "$SNAP" --psi maybe
expect_status 2; expect_err 'descheduler profile render: --psi: expected auto, present or absent, got "maybe"'
run profile render --kubedescheduler "$SEED" --snapshot "$SNAP" --kubeconfig /dev/null
expect_status 2; expect_err 'descheduler profile render: --snapshot and --kubeconfig cannot be used together'
run profile render --kubedescheduler "$SEED" --kubedescheduler-ref a/b --kubeconfig /dev/null
expect_status 2; expect_err 'descheduler profile render: --kubedescheduler and --kubedescheduler-ref cannot be used together'
run profile render --kubedescheduler-ref cluster --kubeconfig /dev/null
expect_status 2; expect_err 'descheduler profile render: --kubedescheduler-ref: expected NAMESPACE/NAME (e.g. openshift-kube-descheduler-operator/cluster), got "cluster"'
run profile render --kubedescheduler "$SEED" --no-such-flag
expect_status 2; expect_err 'descheduler profile render: unknown flag: --no-such-flag'
env -u KUBERNETES_SERVICE_HOST -u KUBERNETES_SERVICE_PORT -u KUBECONFIG HOME="$TMP/nohome" "$DESCHEDULER" profile render --kubedescheduler "$SEED" >"$TMP/out" 2>"$TMP/err"; status=$?
expect_status 2; expect_err "descheduler profile render: cluster facts: give --snapshot FILE or --kubeconfig FILE: no --kubeconfig, \$KUBECONFIG is not set and $TMP/nohome/.kube/config does not exist; the in-cluster config: unable to load in-cluster configuration"
run profile render --kubedescheduler "$SEED" --snapshot "$SNAP" --context x
expect_status 2; expect_err 'descheduler profile render: --context picks a kubeconfig context; with --snapshot no cluster is read'
run profile render --snapshot "$SNAP"
expect_status 2; expect_err 'descheduler profile render: no --kubedescheduler given, and the snapshot holds no KubeDescheduler openshift-kube-descheduler-operator/cluster'
run profile frobnicate
expect_status 2; expect_err 'descheduler profile: unknown subcommand "frobnicate"'
run profile render --help
expect_status 0; expect_out 'Usage: descheduler profile render'

# the snapshot may hold the CR itself
python3 -c 'import json,sys,yaml; d=json.load(open(sys.argv[1])); d["items"].append(yaml.safe_load(open(sys.argv[2]))); json.dump(d, open(sys.argv[3],"w"))' "$SNAP" "$SEED" "$TMP/with-cr.json"
run profile render --snapshot "$TMP/with-cr.json" --psi present -o json
expect_status 0
checks=$((checks + 1)); cmp -s "$TMP/out" "$TMP/from-json" || fail "the CR from the snapshot renders differently"
echo "t0301: $checks checks"
