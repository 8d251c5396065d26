/**
 * The official a2a-js SDK server (`../shared/reference-server`, read its README) that `npm run bench` runs
 * beside the platform: copied to a folder of the OS temp dir, installed there once per package-lock (`npm ci`),
 * then started on free ports with `QUIET=1 HTTP_PORT=… GRPC_PORT=… node server.mjs`. Its agent completes every
 * task at once (the echo in `status.message`), in memory.
 */
import { processEnv } from '@lib/config';
import { freePort, repoRoot, sleep } from '@lib/testing';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { A2aEndpoints } from './support/a2a-load';

/** Where the reference server's sources are shared, next to this repository. */
export const DEFAULT_REFERENCE_SOURCE = join(repoRoot(), '..', 'shared', 'reference-server');

/** Written into an installed copy once `npm ci` has succeeded there. */
const INSTALLED_MARKER = '.bench-installed';
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 5_000;

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
 * A copy of `source` with its dependencies installed, under the OS temp dir and named by the hash of its
 * package-lock.json, so that later runs reuse it; its sources are refreshed from `source` on every call.
 */
export async function installReferenceServer(
  source: string = DEFAULT_REFERENCE_SOURCE,
): Promise<{ dir: string; installed: boolean }> {
  const lock = readFileSync(join(source, 'package-lock.json'));
  const key = createHash('sha256').update(lock).digest('hex').slice(0, 16);
  const dir = join(tmpdir(), `a2a-bench-reference-server-${key}`);
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

/** The `@a2a-js/sdk` version installed in `dir`. */
export function referenceSdkVersion(dir: string): string {
  const manifest = readFileSync(
    join(dir, 'node_modules', '@a2a-js', 'sdk', 'package.json'),
    'utf8',
  );
  return String((JSON.parse(manifest) as { version?: unknown }).version);
}

/** One running reference server process. */
export class ReferenceServer {
  private output = '';

  private constructor(
    private readonly child: ChildProcess,
    readonly endpoints: A2aEndpoints,
  ) {
    const keep = (chunk: Buffer): void => {
      this.output = (this.output + chunk.toString('utf8')).slice(-16_000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
  }

  /**
   * Starts `node <nodeArgs> server.mjs` in the installed `dir` (e.g. `--cpu-prof`: it exits normally on
   * SIGTERM, so the profile is written); resolves once both its HTTP and gRPC ports listen.
   */
  static async start(dir: string, nodeArgs: readonly string[] = []): Promise<ReferenceServer> {
    const [http, grpc] = await Promise.all([freePort(), freePort()]);
    const child = spawn(process.execPath, [...nodeArgs, 'server.mjs'], {
      cwd: dir,
      env: {
        PATH: processEnv()['PATH'] ?? '',
        QUIET: '1',
        HTTP_PORT: String(http),
        GRPC_PORT: String(grpc),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const server = new ReferenceServer(child, {
      jsonrpcUrl: `http://127.0.0.1:${http}/a2a/jsonrpc`,
      restBaseUrl: `http://127.0.0.1:${http}/a2a/rest`,
      grpcTarget: `127.0.0.1:${grpc}`,
      grpcTenant: '',
    });
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (!/HTTP on/.test(server.output) || !/gRPC on/.test(server.output)) {
      if (!server.running || Date.now() > deadline) {
        await server.stop();
        throw new Error(`the reference server did not start:\n${server.output.slice(-4_000)}`);
      }
      await sleep(50);
    }
    return server;
  }

  get pid(): number {
    return this.child.pid ?? 0;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** What it printed (the last 16 000 characters). */
  get log(): string {
    return this.output;
  }

  /** SIGTERM (the server exits at once), SIGKILL if it has not after 5 s. */
  async stop(): Promise<void> {
    if (!this.running) {
      return;
    }
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  }
}
