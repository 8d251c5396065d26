#!/usr/bin/env bash
# The test command (README): builds the apps the end-to-end tests boot, then runs every tier
# against the real Postgres, Redis and Kafka, and prints where the time went and one closing summary line
# (scripts/test-summary.mjs).
set -uo pipefail
cd "$(dirname "$0")/.."

npm run build || exit 1
mkdir -p .tmp
report=.tmp/vitest-report.json
rm -f "$report"
npx vitest run --reporter=default --reporter=json --outputFile.json="$report" "$@"
status=$?
if [[ -f "$report" ]]; then
  node scripts/test-summary.mjs "$report" || status=1
fi
exit $status
