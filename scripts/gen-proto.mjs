#!/usr/bin/env node
// Generates the TypeScript protobuf code in libs/a2a-protocol/src/generated/ from proto/ with buf + ts-proto.
//
//   node scripts/gen-proto.mjs           regenerate (wipes the output folder first)
//   node scripts/gen-proto.mjs --check   generate elsewhere and compare byte-for-byte; exit 1 when stale
//
// Everything happens in a throw-away directory: our proto/ tree plus the few google/api option files the A2A
// proto imports (taken from node_modules/google-proto-files), a buf.yaml without dependencies and a
// buf.gen.yaml that runs the local ts-proto plugin. buf never contacts the Buf Schema Registry.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runGenerator } from './generated-code.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const protoRoot = path.join(repoRoot, 'proto');
const googleProtoRoot = path.join(repoRoot, 'node_modules', 'google-proto-files');
const bufBin = path.join(
  repoRoot,
  'node_modules',
  '.bin',
  process.platform === 'win32' ? 'buf.cmd' : 'buf',
);
const tsProtoPlugin = path.join(
  repoRoot,
  'node_modules',
  '.bin',
  process.platform === 'win32' ? 'protoc-gen-ts_proto.cmd' : 'protoc-gen-ts_proto',
);
const outputDir = path.join(repoRoot, 'libs', 'a2a-protocol', 'src', 'generated');

/** The proto files we generate code for (paths relative to proto/). */
const TARGETS = [
  'lf/a2a/v1/a2a.proto',
  'platform/worker/v1/worker.proto',
  'platform/task/v1/task_service.proto',
  // google.rpc.Status with its ErrorInfo and BadRequest details: the gRPC binding's error trailer (digest §9.3).
  'google/rpc/status.proto',
  'google/rpc/error_details.proto',
];

/** google/api files imported directly by our protos (only for options; never needed at runtime). */
const GOOGLE_API_IMPORTS = [
  'google/api/annotations.proto',
  'google/api/client.proto',
  'google/api/field_behavior.proto',
];

/** ts-proto options (int64 as number, string-literal enums, ISO string timestamps, grpc-js services). */
const TS_PROTO_OPTIONS = [
  'outputServices=grpc-js',
  'esModuleInterop=true',
  'env=node',
  'forceLong=number',
  'stringEnums=true',
  'enumsAsLiterals=true',
  'unrecognizedEnum=false',
  'useDate=string',
  'outputJsonMethods=true',
  'outputEncodeMethods=true',
  // ts-proto emits every transitive import by default. The google/api files only declare custom options
  // (HTTP routes, field behaviour) and no generated code refers to them, so mark them as provided elsewhere
  // ("M" = file-to-module mapping): they and their imports (descriptor.proto, ...) are then not emitted.
  ...GOOGLE_API_IMPORTS.map(
    (file) => `M${file}=google-proto-files/${file.replace(/\.proto$/, '')}`,
  ),
];

function fail(message) {
  console.error(`gen-proto: ${message}`);
  process.exit(2);
}

/** Import paths declared in a .proto file. */
function importsOf(file) {
  const text = fs.readFileSync(file, 'utf8');
  const result = [];
  const re = /^\s*import\s+(?:public\s+|weak\s+)?"([^"]+)"\s*;/gm;
  let match;
  while ((match = re.exec(text)) !== null) result.push(match[1]);
  return result;
}

/** All .proto files below dir, as paths relative to dir with forward slashes. */
function listProtos(dir, prefix = '') {
  const out = [];
  for (const entry of fs.readdirSync(path.join(dir, prefix), { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...listProtos(dir, rel));
    else if (entry.isFile() && entry.name.endsWith('.proto')) out.push(rel);
  }
  return out.sort();
}

/**
 * Copies proto/, the google/* TARGETS and the transitive closure of the google/* imports that are not protobuf
 * well-known types (buf ships google/protobuf/*.proto itself) into moduleDir.
 */
function stageModule(moduleDir) {
  fs.cpSync(protoRoot, moduleDir, { recursive: true });
  const pending = [
    ...listProtos(moduleDir).flatMap((rel) => importsOf(path.join(moduleDir, rel))),
    ...TARGETS.filter((target) => target.startsWith('google/')),
  ];
  const copied = new Set();
  while (pending.length > 0) {
    const imp = pending.pop();
    if (copied.has(imp) || imp.startsWith('google/protobuf/')) continue;
    if (fs.existsSync(path.join(protoRoot, imp))) continue; // one of ours, already staged
    const source = path.join(googleProtoRoot, imp);
    if (!fs.existsSync(source))
      fail(`cannot resolve import "${imp}" (looked in ${googleProtoRoot})`);
    const target = path.join(moduleDir, imp);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.copyFileSync(source, target);
    copied.add(imp);
    pending.push(...importsOf(source));
  }
  return [...copied].sort();
}

/** Runs buf generate for TARGETS and writes the TypeScript output into outDir (which must not exist yet). */
function generate(outDir) {
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'a2a-gen-proto-'));
  try {
    const moduleDir = path.join(workDir, 'proto');
    stageModule(moduleDir);
    for (const target of TARGETS) {
      if (!fs.existsSync(path.join(moduleDir, target))) fail(`missing proto file proto/${target}`);
    }
    fs.writeFileSync(
      path.join(workDir, 'buf.yaml'),
      ['version: v2', 'modules:', '  - path: proto', ''].join('\n'),
    );
    fs.writeFileSync(
      path.join(workDir, 'buf.gen.yaml'),
      [
        'version: v2',
        'clean: false',
        'plugins:',
        `  - local: ${JSON.stringify(tsProtoPlugin)}`,
        `    out: ${JSON.stringify(outDir)}`,
        '    strategy: all',
        '    opt:',
        ...TS_PROTO_OPTIONS.map((opt) => `      - ${JSON.stringify(opt)}`),
        'inputs:',
        '  - directory: proto',
        '    paths:',
        ...TARGETS.map((target) => `      - ${JSON.stringify(`proto/${target}`)}`),
        '',
      ].join('\n'),
    );
    const result = spawnSync(bufBin, ['generate'], {
      cwd: workDir,
      encoding: 'utf8',
      env: {
        ...process.env,
        // Keep buf's cache inside the throw-away directory; with no deps it never needs the network.
        BUF_CACHE_DIR: path.join(workDir, '.buf-cache'),
      },
    });
    if (result.error) fail(`cannot run ${bufBin}: ${result.error.message}`);
    if (result.status !== 0) {
      process.stderr.write(result.stdout ?? '');
      process.stderr.write(result.stderr ?? '');
      fail(`buf generate exited with status ${result.status}`);
    }
  } finally {
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

runGenerator({ name: 'gen-proto', repoRoot, outputDir, generate });
