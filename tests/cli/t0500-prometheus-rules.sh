#!/usr/bin/env bash
# The shipped recording rules (deploy/monitoring): promtool accepts them, their unit tests pass
# (tests/data/monitoring/rules_test.yaml: exact values for two workers and a control plane),
# and the PrometheusRule manifest holds exactly the same groups as the rules file. A live
# Prometheus evaluating them over backfilled data is t0501.
. "$(dirname "$0")/lib.sh"
PROMTOOL=${PROMTOOL:-promtool}
command -v "$PROMTOOL" >/dev/null || { echo "promtool not found (scripts/deps.sh test installs prometheus)" >&2; exit 1; }
RULES=$ROOT/deploy/monitoring/descheduler-rules.yaml

"$PROMTOOL" check rules "$RULES" >"$TMP/out" 2>"$TMP/err"; status=$?
expect_status 0
expect_out "SUCCESS: 16 rules found"

(cd "$ROOT/tests/data/monitoring" && "$PROMTOOL" test rules rules_test.yaml) >"$TMP/out" 2>"$TMP/err"; status=$?
expect_status 0
expect_out "SUCCESS"

# the rules the OpenShift profiles query are all recorded
for r in descheduler:nodeutilization:cpu:avg1m descheduler:combined_utilization_and_pressure:avg1m \
         descheduler:node:linear_amplified_ideal_point_positive_distance:k3:avg1m; do
  checks=$((checks + 1))
  grep -q "record: $r\$" "$RULES" || fail "no recording rule $r"
done

# the manifest is the rules file under spec
python3 - "$RULES" "$ROOT/deploy/monitoring/prometheusrule.yaml" >"$TMP/out" 2>"$TMP/err" <<'PY'
import sys, yaml
rules = yaml.safe_load(open(sys.argv[1]))
cr = yaml.safe_load(open(sys.argv[2]))
assert cr["apiVersion"] == "monitoring.coreos.com/v1" and cr["kind"] == "PrometheusRule", cr.get("kind")
assert cr["spec"]["groups"] == rules["groups"], "spec.groups differs from the rules file"
print("same groups")
PY
status=$?
expect_status 0
expect_out "same groups"
# the kustomize base renders it
KUBECTL=${KUBECTL:-$ROOT/.deps/bin/kubectl}
"$KUBECTL" kustomize "$ROOT/deploy/monitoring" >"$TMP/out" 2>"$TMP/err"; status=$?
expect_status 0
expect_out 'kind: PrometheusRule'
expect_out 'record: descheduler:node:linear_amplified_ideal_point_positive_distance:k3:avg1m'
echo "t0500: $checks checks"
