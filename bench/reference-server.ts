/**
 * The official a2a-js SDK server (`../shared/reference-server`, read its README) that `npm run bench` runs
 * beside the platform: copied to a folder of the OS temp dir, installed there once per package-lock (`npm ci`),
 * then started on free ports with `QUIET=1 HTTP_PORT=… GRPC_PORT=… node server.mjs`. Its agent completes every
 * task at once (the echo in `status.message`), in memory.
 */
import { processEnv } from '@lib/config';
import { freePort, repoRoot } from '@lib/testing';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { A2aEndpoints } from './support/a2a-load';
import { ServerProcess } from './support/server-process';

/** Where the reference server's sources are shared, next to this repository. */
export const DEFAULT_REFERENCE_SOURCE = join(repoRoot(), '..', 'shared', 'reference-server');

/** Written into an installed copy once `npm ci` has succeeded there. */
const INSTALLED_MARKER = '.bench-installed';
const START_TIMEOUT_MS = 30_000;

/** The files of `source` except its node_modules (there should be none in a shared copy). */
function copySources(source: string, target: string): void {
  cpSync(source, target, {
    recursive: true,
    filter: (path) => basename(path) !== 'node_modules',
  });
}

function run(command: string, args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const child = spawn(command, args, {
      cwd,
      env: processEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (chunk: Buffer): void => {
      output = (output + chunk.toString('utf8')).slice(-4_000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', reject);
    child.on('exit', (code, signal) =>
      code === 0
        ? resolve()
        : reject(
            new Error(`${command} ${args.join(' ')} ended ${String(signal ?? code)}:\n${output}`),
          ),
    );
  });
}

/**
 * A copy of `source` (a server shared beside this repository: the reference server, the durable peer) with
 * its dependencies installed, under the OS temp dir and named by `name` and the hash of its
 * package-lock.json, so that later runs reuse it; its sources are refreshed from `source` on every call.
 */
export async function installSharedServer(
  source: string,
  name: string,
): Promise<{ dir: string; installed: boolean }> {
  const lock = readFileSync(join(source, 'package-lock.json'));
  const key = createHash('sha256').update(lock).digest('hex').slice(0, 16);
  const dir = join(tmpdir(), `a2a-bench-${name}-${key}`);
  if (existsSync(join(dir, INSTALLED_MARKER))) {
    copySources(source, dir);
    return { dir, installed: false };
  }
  // Installed beside the final folder, then renamed into place: a run that stops half-way leaves no
  // folder that looks installed.
  const staging = `${dir}.${process.pid}.tmp`;
  rmSync(staging, { recursive: true, force: true });
  copySources(source, staging);
  try {
    await run('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], staging);
    writeFileSync(join(staging, INSTALLED_MARKER), new Date().toISOString());
    // Another run may have finished installing the same lock meanwhile: then its copy is kept.
    if (!existsSync(join(dir, INSTALLED_MARKER))) {
      rmSync(dir, { recursive: true, force: true });
      renameSync(staging, dir);
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return { dir, installed: true };
}

/** The reference server, installed (see {@link installSharedServer}). */
export function installReferenceServer(
  source: string = DEFAULT_REFERENCE_SOURCE,
): Promise<{ dir: string; installed: boolean }> {
  return installSharedServer(source, 'reference-server');
}

/** The version of package `name` installed in `dir`. */
export function installedVersion(dir: string, name: string): string {
  const manifest = readFileSync(join(dir, 'node_modules', name, 'package.json'), 'utf8');
  return String((JSON.parse(manifest) as { version?: unknown }).version);
}

/** The `@a2a-js/sdk` version installed in `dir`. */
export function referenceSdkVersion(dir: string): string {
  return installedVersion(dir, '@a2a-js/sdk');
}

/**
 * Starts the installed reference server in `dir` (`nodeArgs`, e.g. `--cpu-prof`: it exits normally on SIGTERM,
 * so the profile is written) on free ports; resolves once both its HTTP and gRPC ports listen.
 */
export async function startReferenceServer(
  dir: string,
  nodeArgs: readonly string[] = [],
): Promise<{ process: ServerProcess; endpoints: A2aEndpoints }> {
  const [http, grpc] = await Promise.all([freePort(), freePort()]);
  const server = await ServerProcess.start(
    'the reference server',
    dir,
    { QUIET: '1', HTTP_PORT: String(http), GRPC_PORT: String(grpc) },
    nodeArgs,
    (output) => /HTTP on/.test(output) && /gRPC on/.test(output),
    START_TIMEOUT_MS,
  );
  return {
    process: server,
    endpoints: {
      jsonrpcUrl: `http://127.0.0.1:${http}/a2a/jsonrpc`,
      restBaseUrl: `http://127.0.0.1:${http}/a2a/rest`,
      grpcTarget: `127.0.0.1:${grpc}`,
      grpcTenant: '',
    },
  };
}
