#!/usr/bin/env bash
# Bad input of every kind exits 2 with one clear message on stderr and no plan on stdout.
. "$(dirname "$0")/lib.sh"

snap=$EXAMPLE/cluster.json
pol=$EXAMPLE/policy.yaml

bad_policy() { # FILE EXPECTED-TEXT [HINT]: upstream's message, and a line of advice when given
  run simulate --policy-config-file "$DATA/$1" --snapshot "$snap"
  expect_status 2
  expect_err_lines $(($# > 2 ? 2 : 1))
  expect_err "$2"
  [ $# -gt 2 ] && expect_err "$3"
  expect_out_empty
}

bad_policy include-namespaces.yaml "failed decoding descheduler's policy config \"$DATA/include-namespaces.yaml\": in profile p: only Exclude namespaces can be set, inclusion is not supported"
bad_policy thresholds-above-target.yaml "in profile p: thresholds' memory percentage is greater than targetThresholds'"
bad_policy unknown-plugin.yaml "in profile p: plugin LowNodeUtilisation in pluginConfig not registered" \
  "did you mean LowNodeUtilization?"
bad_policy v1alpha1.yaml "no kind \"DeschedulerPolicy\" is registered for version \"descheduler/v1alpha1\" in scheme \"sigs.k8s.io/descheduler/pkg/descheduler/scheme/scheme.go:40\"" \
  "descheduler/v1alpha1 is not read by upstream's descheduler either since v0.31.0: write the policy as descheduler/v1alpha2"
bad_policy unknown-arg.yaml "strict decoding error: unknown field \"thresold\""
bad_policy bad-type.yaml "profiles[0].pluginConfig[0].args.thresholds.cpu: expected a number (a percentage), got \"high\""
bad_policy broken.yaml "invalid YAML at line"
bad_policy bad-node-selector.yaml "nodeSelector: invalid label selector \"kubevirt.io/schedulable in (true\": expected ',' or ')' in a value list"

# a truncated snapshot names the file and the byte where it ends
head -c 4000 "$snap" >"$TMP/truncated.json"
run simulate --policy-config-file "$pol" --snapshot "$TMP/truncated.json"
expect_status 2
expect_err_lines 1
expect_err "truncated.json: truncated JSON: the document ends at byte 4000"

# a malformed object names the item and the field
run simulate --policy-config-file "$pol" --snapshot "$DATA/bad-quantity.json"
expect_status 2
expect_err_lines 1
expect_err "items[1] (Pod default/p1): spec.containers[0].resources.requests.cpu: invalid quantity \"lots\""

# missing files
run simulate --policy-config-file "$TMP/nope.yaml" --snapshot "$snap"
expect_status 2
expect_err "failed to read policy config file \"$TMP/nope.yaml\": No such file or directory"
run simulate --policy-config-file "$pol" --snapshot "$TMP/nope.json"
expect_status 2
expect_err "$TMP/nope.json: cannot open: No such file or directory"

# flags
run simulate --policy-config-file "$pol" --snapshot "$snap" --feature-gates Foo=true
expect_status 2
expect_err "unrecognized feature gate: Foo"
run simulate --policy-config-file "$pol" --snapshot "$snap" --now yesterday
expect_status 2
expect_err "--now: invalid time \"yesterday\""
run simulate --policy-config-file "$pol" --snapshot "$snap" --bogus
expect_status 2
expect_err "unknown flag: --bogus"
run simulate --snapshot "$snap"
expect_status 2
expect_err "--policy-config-file is required"
run simulate --policy-config-file "$pol" --snapshot "$snap" -o xml
expect_status 2
expect_err "--output: expected text, json or yaml"
echo "t0002: $checks checks"
