#!/usr/bin/env bash
# `descheduler profile render` on every golden case of tests/data/profile/cases (a KubeDescheduler
# CR in, the expected DeschedulerPolicy, arguments and warnings, or the operator's message, out),
# compared as data by tests/cli/profile_golden.py; each rendered policy must load as a policy
# file (a skipped part for the KubeVirt profile while KubevirtMigrationAware is not registered).
. "$(dirname "$0")/lib.sh"
python3 -c 'import yaml' 2>/dev/null || { echo "t0300: PyYAML missing (run scripts/deps.sh test)" >&2; exit 1; }
python3 "$ROOT/tests/cli/profile_golden.py" "$DESCHEDULER" >"$TMP/golden" || { cat "$TMP/golden"; exit 1; }
cat "$TMP/golden"
# rendered policies that could not be loaded here are a skipped part, never a pass
not_checked=$(sed -n 's/^  not checked: //p' "$TMP/golden")
[ -z "$not_checked" ] || skip_part "$not_checked"
