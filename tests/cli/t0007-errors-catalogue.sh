#!/usr/bin/env bash
# docs/errors.md is the catalogue of bad input: every entry's command is run and its message
# and exit code compared (tests/cli/errors_catalogue.py), so the page cannot drift.
. "$(dirname "$0")/lib.sh"
python3 "$ROOT/tests/cli/errors_catalogue.py" --binary "$DESCHEDULER" --doc "$ROOT/docs/errors.md"
