#!/usr/bin/env bash
# The test command (README): builds the apps the end-to-end tests boot, then runs every tier
# against the real Postgres, Redis and Kafka (and, without arguments, the Python SDK's pytest tier), and
# prints where the time went and one closing summary line (scripts/test-summary.mjs).
set -uo pipefail
cd "$(dirname "$0")/.."

npm run build || exit 1
mkdir -p .tmp
report=.tmp/vitest-report.json
python_report=.tmp/pytest-report.xml
rm -f "$report" "$python_report"
status=0
# The whole run (no arguments) also runs the Python worker SDK's unit tests (sdks/python, pytest with
# Debian's python3: the repository's .python-version).
if [[ $# -eq 0 ]]; then
  python3 -m pytest sdks/python -q --junitxml="$python_report" || status=1
fi
npx vitest run --reporter=default --reporter=json --outputFile.json="$report" "$@" || status=1
if [[ -f "$report" ]]; then
  reports=("$report")
  if [[ -f "$python_report" ]]; then
    reports+=("$python_report")
  fi
  node scripts/test-summary.mjs "${reports[@]}" || status=1
fi
exit $status
