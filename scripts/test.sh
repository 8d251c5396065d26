#!/usr/bin/env bash
# The test command (README): builds the apps the end-to-end tests boot, then runs every tier
# (unit, integration, end-to-end) against the real Postgres, and prints one closing summary line.
set -uo pipefail
cd "$(dirname "$0")/.."

npm run build || exit 1
mkdir -p .tmp
report=.tmp/vitest-report.json
rm -f "$report"
npx vitest run --reporter=default --reporter=json --outputFile.json="$report" "$@"
status=$?
if [[ -f "$report" ]]; then
  node -e '
    const r = require(process.argv[1]);
    const skipped = r.numPendingTests + r.numTodoTests;
    console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed` + (skipped ? `, ${skipped} skipped` : ""));
    if (r.numTotalTests === 0) process.exit(1);
  ' "$PWD/$report" || status=1
fi
exit $status
