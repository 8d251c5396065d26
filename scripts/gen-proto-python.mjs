#!/usr/bin/env node
// Generates the Python protobuf modules of the Python worker SDK (sdks/python/src/a2a_platform_worker/_proto/)
// from proto/ with protoc's built-in Python generator.
//
//   node scripts/gen-proto-python.mjs           regenerate (wipes the output folder first)
//   node scripts/gen-proto-python.mjs --check   generate elsewhere and compare byte-for-byte; exit 1 when stale
//
// The SDK needs only the messages: it calls the WorkerService methods by path, so no gRPC stubs are made.
// The google/api annotations (HTTP routes, method signatures, field behaviour) are options that no Python
// code reads, and googleapis-common-protos is not a dependency of the SDK, so they are stripped from a copy
// of the protos before protoc runs. protoc must be 3.21.x (Debian 12's protobuf-compiler): another version
// writes different code, and the check would fail for that alone.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { listFiles, runGenerator } from './generated-code.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const protoRoot = path.join(repoRoot, 'proto');
const outputDir = path.join(repoRoot, 'sdks', 'python', 'src', 'a2a_platform_worker', '_proto');
/** The Python package the generated modules live in. */
const PYTHON_PACKAGE = 'a2a_platform_worker._proto';
/** The proto files we generate modules for (paths relative to proto/). */
const TARGETS = ['lf/a2a/v1/a2a.proto', 'platform/worker/v1/worker.proto'];
/** The top-level proto packages of TARGETS: the generated code imports them from PYTHON_PACKAGE. */
const OWN_ROOTS = ['lf', 'platform'];
const PROTOC_VERSION = /^libprotoc 3\.21\.\d+$/;

function fail(message) {
  console.error(`gen-proto-python: ${message}`);
  process.exit(2);
}

/**
 * The proto text without its google.api options: the imports of google/api files, `option (google.api.x) = …;`
 * statements (a `{ … }` value may span lines) and `[(google.api.field_behavior) = X]` field options.
 */
function stripGoogleApi(text, file) {
  const kept = [];
  let depth = 0;
  for (const line of text.split('\n')) {
    if (depth > 0) {
      depth += braceBalance(line);
      continue;
    }
    if (/^\s*import\s+"google\/api\/[^"]+"\s*;\s*$/.test(line)) {
      continue;
    }
    if (/^\s*option\s+\(google\.api\.[a-z_]+\)\s*=/.test(line)) {
      depth = braceBalance(line);
      continue;
    }
    kept.push(line.replace(/\s*\[\(google\.api\.field_behavior\)\s*=\s*[A-Z_]+\]/g, ''));
  }
  const stripped = kept.join('\n');
  const left = stripped.split('\n').findIndex((line) => line.includes('google.api'));
  if (depth !== 0 || left !== -1) {
    fail(
      `cannot strip the google.api options of proto/${file}` +
        (left === -1 ? ' (unbalanced braces)' : ` (line left: "${kept[left].trim()}")`),
    );
  }
  return stripped;
}

function braceBalance(line) {
  return (line.match(/\{/g) ?? []).length - (line.match(/\}/g) ?? []).length;
}

function checkProtoc() {
  const result = spawnSync('protoc', ['--version'], { encoding: 'utf8' });
  if (result.error) {
    fail(
      `cannot run protoc (${result.error.message}); install Debian's protobuf-compiler (protoc 3.21) and libprotobuf-dev (the well-known types)`,
    );
  }
  const version = result.stdout.trim();
  if (!PROTOC_VERSION.test(version)) {
    fail(
      `protoc is "${version}", the checked-in code is made with libprotoc 3.21.x (Debian 12's ` +
        'protobuf-compiler); another version writes different code',
    );
  }
}

/** Points the generated imports of our own protos (`from lf.a2a.v1 import …`) into PYTHON_PACKAGE. */
function rewriteImports(text) {
  const roots = OWN_ROOTS.join('|');
  return text.replace(
    new RegExp(`^from (${roots})((?:\\.\\w+)*) import `, 'gm'),
    (_match, root, rest) => `from ${PYTHON_PACKAGE}.${root}${rest} import `,
  );
}

/** Runs protoc for TARGETS and writes the Python package into outDir (which must not exist yet). */
function generate(outDir) {
  checkProtoc();
  const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'a2a-gen-python-'));
  try {
    for (const target of TARGETS) {
      const source = path.join(protoRoot, target);
      if (!fs.existsSync(source)) fail(`missing proto file proto/${target}`);
      const staged = path.join(stage, target);
      fs.mkdirSync(path.dirname(staged), { recursive: true });
      fs.writeFileSync(staged, stripGoogleApi(fs.readFileSync(source, 'utf8'), target));
    }
    fs.mkdirSync(outDir, { recursive: true });
    const result = spawnSync(
      'protoc',
      [`-I${stage}`, `--python_out=${outDir}`, `--pyi_out=${outDir}`, ...TARGETS],
      { cwd: stage, encoding: 'utf8' },
    );
    if (result.error) fail(`cannot run protoc: ${result.error.message}`);
    if (result.status !== 0) {
      process.stderr.write(result.stdout ?? '');
      process.stderr.write(result.stderr ?? '');
      fail(`protoc exited with status ${result.status}`);
    }
  } finally {
    fs.rmSync(stage, { recursive: true, force: true });
  }
  for (const rel of listFiles(outDir)) {
    const file = path.join(outDir, rel);
    fs.writeFileSync(file, rewriteImports(fs.readFileSync(file, 'utf8')));
  }
  // Every folder is a regular package, so that mypy and setuptools find the modules.
  const packages = new Set(['']);
  for (const target of TARGETS) {
    const parts = path.posix.dirname(target).split('/');
    parts.forEach((_part, i) => packages.add(parts.slice(0, i + 1).join('/')));
  }
  for (const pkg of packages) {
    fs.writeFileSync(
      path.join(outDir, pkg, '__init__.py'),
      '"""Generated by scripts/gen-proto-python.mjs from proto/; do not edit."""\n',
    );
  }
}

runGenerator({ name: 'gen-proto-python', repoRoot, outputDir, generate });
