// Prints where a test run's time went and its closing line, from Vitest's JSON report (scripts/test.sh):
// the wall time of each tier (tiers run one after another), the ten slowest test files, and
// "tests: N passed, N failed". Exits 1 when the report counts no test at all.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

const TIERS = ['unit', 'int', 'e2e', 'fault', 'browser'];
const SLOWEST = 10;

const report = JSON.parse(readFileSync(process.argv[2], 'utf8'));

/** The tier of a spec file, from its name (`*.unit.spec.ts`, `*.e2e.spec.ts`, …). */
function tierOf(file) {
  return TIERS.find((tier) => file.endsWith(`.${tier}.spec.ts`)) ?? 'other';
}

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
const files = report.testResults.map((result) => ({
  file: relative(process.cwd(), result.name),
  tier: tierOf(result.name),
  start: result.startTime,
  end: result.endTime,
  tests: result.assertionResults.length,
}));

console.log('== where the test time went');
for (const tier of [...TIERS, 'other']) {
  const own = files.filter((f) => f.tier === tier);
  if (own.length === 0) {
    continue;
  }
  const wall = Math.max(...own.map((f) => f.end)) - Math.min(...own.map((f) => f.start));
  const tests = own.reduce((sum, f) => sum + f.tests, 0);
  console.log(
    `${tier.padEnd(8)} ${seconds(wall).padStart(9)}  ${String(own.length).padStart(4)} files  ${String(tests).padStart(5)} tests`,
  );
}
console.log(`slowest ${SLOWEST} files:`);
for (const f of [...files].sort((a, b) => b.end - b.start - (a.end - a.start)).slice(0, SLOWEST)) {
  console.log(`${seconds(f.end - f.start).padStart(9)}  ${f.file}`);
}

const skipped = report.numPendingTests + report.numTodoTests;
console.log(
  `tests: ${report.numPassedTests} passed, ${report.numFailedTests} failed` +
    (skipped ? `, ${skipped} skipped` : ''),
);
if (report.numTotalTests === 0) {
  process.exit(1);
}
