// What the code generators (scripts/gen-proto*.mjs) share: write the generated folder anew, or, with
// `--check`, generate it elsewhere and compare it byte for byte with what is checked in (exit 1 when stale).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Relative paths of all files below dir (sorted, forward slashes), without Python's bytecode caches. */
export function listFiles(dir, prefix = '') {
  if (!fs.existsSync(path.join(dir, prefix))) return [];
  const out = [];
  for (const entry of fs.readdirSync(path.join(dir, prefix), { withFileTypes: true })) {
    if (entry.name === '__pycache__') continue;
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...listFiles(dir, rel));
    else out.push(rel);
  }
  return out.sort();
}

/** `generate(dir)` into a throw-away folder, hand that folder to `use`, then remove it. */
function inScratch(name, generate, use) {
  const tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), `a2a-${name}-`));
  try {
    const fresh = path.join(tmpRoot, 'generated');
    generate(fresh);
    use(fresh);
  } finally {
    fs.rmSync(tmpRoot, { recursive: true, force: true });
  }
}

function check(name, outputDir, shown, generate) {
  inScratch(name, generate, (fresh) => {
    const expected = listFiles(fresh);
    const differing = [];
    for (const rel of new Set([...expected, ...listFiles(outputDir)])) {
      const a = path.join(fresh, rel);
      const b = path.join(outputDir, rel);
      if (!fs.existsSync(a)) differing.push(`${rel} (not produced by the generator; remove it)`);
      else if (!fs.existsSync(b)) differing.push(`${rel} (missing)`);
      else if (!fs.readFileSync(a).equals(fs.readFileSync(b)))
        differing.push(`${rel} (content differs)`);
    }
    if (differing.length > 0) {
      console.error(
        `${name} --check: ${shown} is out of date; run \`npm run gen\`. Differing files:`,
      );
      for (const line of differing.sort()) console.error(`  ${line}`);
      process.exit(1);
    }
    console.log(`${name} --check: ${shown} is up to date (${expected.length} files).`);
  });
}

function write(name, outputDir, shown, generate) {
  inScratch(name, generate, (fresh) => {
    fs.rmSync(outputDir, { recursive: true, force: true });
    fs.mkdirSync(path.dirname(outputDir), { recursive: true });
    fs.cpSync(fresh, outputDir, { recursive: true });
    const files = listFiles(outputDir);
    console.log(`${name}: wrote ${files.length} files to ${shown}:`);
    for (const rel of files) console.log(`  ${rel}`);
  });
}

/**
 * Runs a generator as its command line asks: no argument writes `outputDir` anew, `--check` compares.
 * `generate(dir)` writes the whole generated tree into `dir`.
 */
export function runGenerator({ name, repoRoot, outputDir, generate }) {
  const args = process.argv.slice(2);
  const unknown = args.filter((arg) => arg !== '--check');
  if (unknown.length > 0) {
    console.error(`${name}: unknown argument(s): ${unknown.join(' ')}`);
    process.exit(1);
  }
  const shown = path.relative(repoRoot, outputDir);
  if (args.includes('--check')) check(name, outputDir, shown, generate);
  else write(name, outputDir, shown, generate);
}
