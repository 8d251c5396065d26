import { loadConfig, workerSchema } from '@lib/config';
import { exitProcess, fieldLogger, startProcessObservability } from '@lib/observability/process';
import { AgentWorker, type AgentExecutor, type ExampleAgentId } from '@lib/worker-sdk';
import { hostname } from 'node:os';
import { CountdownAgent } from './countdown.agent';
import { EchoAgent } from './echo.agent';
import { ExpenseAgent } from './expense.agent';
import { InterviewAgent } from './interview.agent';
import { TckAgent } from './tck.agent';
import { UnitsAgent } from './units.agent';

const AGENTS: Record<ExampleAgentId, () => AgentExecutor> = {
  echo: () => new EchoAgent(),
  interview: () => new InterviewAgent(),
  countdown: () => new CountdownAgent(),
  tck: () => new TckAgent(),
  units: () => new UnitsAgent(),
  expense: () => new ExpenseAgent(),
};

/**
 * Tasks at once when WORKER_CONCURRENCY is unset: echo only copies text (its limit is the platform's
 * throughput, not its own work); the others wait on timers and people or do a little arithmetic, 8 is
 * plenty for a demo.
 */
const DEFAULT_CONCURRENCY: Record<ExampleAgentId, number> = {
  echo: 256,
  interview: 8,
  countdown: 8,
  tck: 8,
  units: 8,
  expense: 8,
};

const log = fieldLogger('AgentWorker');

function isAgentId(name: string | undefined): name is ExampleAgentId {
  return name !== undefined && Object.hasOwn(AGENTS, name);
}

/** Runs one example agent as a worker: `node dist/apps/agents/src/main.js <echo|interview|countdown|tck|units|expense>`. */
async function main(): Promise<number> {
  const agentId = process.argv[2];
  if (!isAgentId(agentId)) {
    log.error(`usage: main.js <${Object.keys(AGENTS).join('|')}>`);
    return 1;
  }
  const config = loadConfig(workerSchema);
  if (!config.WORKER_SECRET) {
    log.error(
      'WORKER_SECRET is required: the secret of the worker credential issued for this agent',
    );
    return 1;
  }
  const worker = AgentWorker.create({
    target: config.WORKER_TARGET,
    credential: config.WORKER_SECRET,
    executor: AGENTS[agentId](),
    maxConcurrentTasks: config.WORKER_CONCURRENCY ?? DEFAULT_CONCURRENCY[agentId],
    identity: `${agentId}@${hostname()}-${process.pid}`,
    logger: log,
  });
  let signals = 0;
  const stop = (): void => {
    signals += 1;
    if (signals > 1) {
      process.exit(130);
    }
    void worker.shutdown();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  if (process.send) {
    // Started by a supervisor (`npm start`) with an IPC channel: its closing means the supervisor is gone,
    // even when it was killed with SIGKILL. Its tasks' leases expire and the platform re-dispatches them.
    process.once('disconnect', () => process.exit(0));
  }
  await worker.run();
  return 0;
}

startProcessObservability('agents');
main().then(
  (code) => exitProcess(code),
  (error: unknown) => {
    log.error('agent worker failed', { err: error });
    exitProcess(1);
  },
);
