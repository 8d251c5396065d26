// Prints where a test run's time went and its closing line, from Vitest's JSON report (scripts/test.sh)
// and, when given as a second argument, pytest's JUnit XML report of the Python SDK (tier "python"): the
// wall time of each tier (tiers run one after another), the ten slowest Vitest files, and
// "tests: N passed, N failed" over both. Exits 1 when the Vitest report counts no test at all.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

const TIERS = ['unit', 'int', 'e2e', 'fault', 'browser'];
const SLOWEST = 10;

const report = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const python = process.argv[3] ? pytestCounts(readFileSync(process.argv[3], 'utf8')) : undefined;

/** The counts of pytest's JUnit XML report: its <testsuite> totals and the test modules it ran. */
function pytestCounts(xml) {
  const suite = /<testsuite\b([^>]*)>/.exec(xml);
  if (!suite) {
    throw new Error(`${process.argv[3]}: no <testsuite> element`);
  }
  const attribute = (name) => Number(new RegExp(`\\b${name}="([^"]*)"`).exec(suite[1])?.[1] ?? 0);
  const modules = new Set(
    [...xml.matchAll(/<testcase\b[^>]*\bclassname="([^"]*)"/g)].map((match) => match[1]),
  );
  const tests = attribute('tests');
  const failed = attribute('failures') + attribute('errors');
  const skipped = attribute('skipped');
  return {
    files: modules.size,
    tests,
    failed,
    skipped,
    passed: tests - failed - skipped,
    seconds: attribute('time'),
  };
}

/** The tier of a spec file, from its name (`*.unit.spec.ts`, `*.e2e.spec.ts`, …). */
function tierOf(file) {
  return TIERS.find((tier) => file.endsWith(`.${tier}.spec.ts`)) ?? 'other';
}

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
/** One tier's line: its name, wall time, files and tests. */
const tierLine = (tier, ms, fileCount, tests) =>
  `${tier.padEnd(8)} ${seconds(ms).padStart(9)}  ${String(fileCount).padStart(4)} files  ${String(tests).padStart(5)} tests`;
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
  console.log(tierLine(tier, wall, own.length, tests));
}
if (python) {
  console.log(tierLine('python', python.seconds * 1000, python.files, python.tests));
}
console.log(`slowest ${SLOWEST} files:`);
for (const f of [...files].sort((a, b) => b.end - b.start - (a.end - a.start)).slice(0, SLOWEST)) {
  console.log(`${seconds(f.end - f.start).padStart(9)}  ${f.file}`);
}

const skipped = report.numPendingTests + report.numTodoTests + (python?.skipped ?? 0);
console.log(
  `tests: ${report.numPassedTests + (python?.passed ?? 0)} passed, ` +
    `${report.numFailedTests + (python?.failed ?? 0)} failed` +
    (skipped ? `, ${skipped} skipped` : ''),
);
if (report.numTotalTests === 0) {
  process.exit(1);
}
