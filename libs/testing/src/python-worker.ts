import { join } from 'node:path';
import { PlatformProcess, repoRoot, type CommandLine } from './platform-processes';

/** The example agents of the Python worker SDK (`sdks/python/examples/<name>.py`). */
export type PythonExample = 'echo' | 'countdown' | 'interview' | 'shout';

/**
 * A Python example agent as a worker process: `python3 -u sdks/python/examples/<example>.py`, run from the
 * repository root, whose `.python-version` makes pyenv's `python3` the system one (with Debian's grpcio
 * and protobuf). The pid is the Python interpreter's (pyenv's shim replaces itself with it).
 */
export class PythonWorkerProcess extends PlatformProcess {
  constructor(
    readonly example: PythonExample,
    env: Record<string, string>,
  ) {
    super(`python-${example}`, join('sdks', 'python', 'examples', `${example}.py`), [], {
      PYTHONUNBUFFERED: '1',
      ...env,
    });
  }

  protected override commandLine(): CommandLine {
    const root = repoRoot();
    return { command: 'python3', args: ['-u', join(root, this.entry)], cwd: root };
  }
}

/**
 * Starts the Python example `example` as a worker of the platform at `target` (the worker gRPC port) with
 * the worker credential `secret`, and waits until it says it is connected.
 */
export async function startPythonWorker(
  example: PythonExample,
  target: string,
  secret: string,
  env: Record<string, string> = {},
): Promise<PythonWorkerProcess> {
  const proc = new PythonWorkerProcess(example, {
    WORKER_TARGET: target,
    WORKER_SECRET: secret,
    ...env,
  }).start();
  try {
    await proc.waitForOutput(/connected to/);
  } catch (error) {
    await proc.stop();
    throw error;
  }
  return proc;
}
