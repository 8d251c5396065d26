/**
 * Chaos scenario: SIGKILL the only task-service replica while slow tasks are in flight, restart it on the same
 * ports, and check what the platform made of it. Used by `scripts/chaos/kill-task-service.ts`
 * (`npm run chaos:kill`) and by `test/e2e/chaos-kill-task-service.e2e.spec.ts`.
 *
 * Processes (all from `dist/`, loopback only): one task-service, one ingress pointing at it, one `countdown`
 * agent worker connected to it. The worker and the ingress are never restarted: they must reconnect alone.
 */
import { seedTenant } from '@lib/tenancy';
import {
  createTestDatabase,
  freePort,
  sleep,
  startAgentWorker,
  startIngress,
  startTaskService,
  type PlatformProcess,
  type TestDatabase,
} from '@lib/testing';
import { AGENT_PROFILES } from '@lib/worker-sdk';
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';

const TENANT = 'demo';
const API_KEY = 'demo-key';
const WORKER_SECRET = 'demo-worker-secret';
const AGENT = 'countdown';
/**
 * How long a WORKING task found without a live lease at check (a) may stay so, unchanged, before it counts as
 * stuck: a sweep and a re-dispatch take a few intervals, longer on a busy machine; only a task nothing
 * acts on stays unchanged this long.
 */
const SETTLE_MS = 15_000;
const TERMINAL_STATES = new Set([
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_REJECTED',
]);

export interface KillScenarioOptions {
  /** K: how many countdown tasks are in flight when the task-service dies. */
  tasks: number;
  /** N of each countdown (its text). */
  countdown: number;
  /** Delay of each countdown step (message metadata `stepMs`). */
  stepMs: number;
  leaseTtlMs: number;
  heartbeatIntervalMs: number;
  sweepIntervalMs: number;
  /** How long the task-service stays dead. */
  downMs: number;
  /** Wait this long past restart + LEASE_TTL_MS before check (a). */
  marginMs: number;
  /** Give up waiting for every task to end this long after the restart. */
  deadlineMs: number;
  /** Share of the tasks that must be WORKING before the kill (waits at most `workingTimeoutMs`). */
  workingShare: number;
  workingTimeoutMs: number;
  /** Progress lines while the scenario runs (default: none). */
  progress?: (line: string) => void;
}

export const DEFAULT_KILL_SCENARIO: KillScenarioOptions = {
  tasks: 20,
  countdown: 20,
  stepMs: 400,
  leaseTtlMs: 3_000,
  heartbeatIntervalMs: 500,
  sweepIntervalMs: 250,
  downMs: 1_000,
  marginMs: 2_000,
  deadlineMs: 60_000,
  workingShare: 0.8,
  workingTimeoutMs: 20_000,
};

/** State counts at one moment (read.task_view for the tenant, plus ops.task_work rows by status). */
export interface Sample {
  /** Milliseconds since the first task was sent. */
  atMs: number;
  phase: string;
  states: Record<string, number>;
  leased: number;
  queued: number;
}

/** A WORKING task without a live lease at the check moment. */
export interface StaleLease {
  taskId: string;
  version: number;
  workStatus: string | null;
  leaseEpoch: number | null;
  /** How long ago the lease expired (ms); null when there is no lease at all. */
  overdueMs: number | null;
}

export interface StreamProblem {
  streamId: string;
  events: number;
  maxVersion: number;
  distinctVersions: number;
}

export interface KillScenarioReport {
  options: KillScenarioOptions;
  taskIds: string[];
  samples: Sample[];
  /** Milestones, in ms since the first task was sent. */
  times: {
    allSubmittedMs: number;
    killedMs: number;
    restartedMs: number;
    restartReadyMs: number;
    checkAMs: number;
    allTerminalMs: number | null;
  };
  workingAtKill: number;
  /** The kill happened with at least `workingShare` of the tasks WORKING (else the run proves little). */
  preconditionMet: boolean;
  /** Ms from the restarted task-service being ready to the worker logging `reconnected`; null if never. */
  workerReconnectedAfterMs: number | null;
  /** Ms from the restarted task-service being ready to the first GetTask through the ingress that worked. */
  ingressServedAfterMs: number | null;
  ingressProbeErrors: string[];
  events: {
    leaseGranted: number;
    leaseExpired: number;
    /** Tasks granted a lease more than once. */
    redispatchedTasks: number;
    maxAttempt: number;
    total: number;
  };
  finalStates: Record<string, number>;
  allTerminal: boolean;
  checkA: {
    passed: boolean;
    workingAtCheck: number;
    /** WORKING tasks whose lease was absent or expired at the check moment. */
    atCheck: StaleLease[];
    /** Of those, the ones still so, unchanged (same stream version), for `settleMs`. */
    stuck: StaleLease[];
    settleMs: number;
  };
  checkB: { passed: boolean; streams: number; problems: StreamProblem[] };
  /** Extra consistency: streams whose read.task_view / events.streams version differs from the log. */
  viewMismatches: {
    taskId: string;
    viewVersion: number | null;
    streamVersion: number | null;
    logVersion: number;
  }[];
  logs: Record<'taskServiceBeforeKill' | 'taskServiceAfterRestart' | 'ingress' | 'worker', string>;
  passed: boolean;
}

/** Runs the whole scenario on a fresh database and cleans up after itself. Needs `npm run build` first. */
export async function runKillTaskServiceScenario(
  overrides: Partial<KillScenarioOptions> = {},
): Promise<KillScenarioReport> {
  const options: KillScenarioOptions = { ...DEFAULT_KILL_SCENARIO, ...overrides };
  const progress = options.progress ?? ((): void => undefined);
  let db: TestDatabase | null = null;
  const processes: PlatformProcess[] = [];
  try {
    db = await createTestDatabase('chaos_kill');
    await seedDemoTenant(db.pool);

    const [workerPort, commandPort] = await Promise.all([freePort(), freePort()]);
    const taskServiceEnv = {
      POSTGRES_URL: db.url,
      WORKER_GRPC_PORT: String(workerPort),
      TASK_SERVICE_GRPC_PORT: String(commandPort),
      LEASE_TTL_MS: String(options.leaseTtlMs),
      HEARTBEAT_INTERVAL_MS: String(options.heartbeatIntervalMs),
      SWEEP_INTERVAL_MS: String(options.sweepIntervalMs),
      NO_COLOR: '1',
      // Diagnostics only: grpc-js then says why a message could not be serialized instead of hiding it.
      GRPC_NODE_DEBUG_SEND_ERROR_DETAILS: 'true',
    };
    // startTaskService reports the free ports it picked, not the ones given in env: use ours.
    const workerTarget = `127.0.0.1:${workerPort}`;
    const commandTarget = `127.0.0.1:${commandPort}`;
    const first = await startTaskService({ ...taskServiceEnv, REPLICA_ID: 'chaos-before-kill' });
    processes.push(first.process);
    const ingress = await startIngress({ POSTGRES_URL: db.url, NO_COLOR: '1' }, [commandTarget]);
    processes.push(ingress.process);
    const worker = await startAgentWorker(AGENT, workerTarget, `${WORKER_SECRET}:${AGENT}`, {
      // Room for every task at once, so that all of them are in flight when the task-service dies.
      WORKER_CONCURRENCY: String(options.tasks),
      NO_COLOR: '1',
    });
    processes.push(worker);
    progress(
      `task-service pid ${String(first.process.pid)} (worker ${workerTarget}, command ${commandTarget}), ` +
        `ingress ${ingress.baseUrl}, countdown worker pid ${String(worker.pid)}`,
    );

    const samples: Sample[] = [];
    const started = Date.now();
    const since = (): number => Date.now() - started;
    const pool = db.pool;
    const record = async (phase: string): Promise<Sample> => {
      const sample = { atMs: since(), phase, ...(await counts(pool)) };
      const previous = samples.at(-1);
      if (!previous || previous.phase !== phase || !sameCounts(previous, sample)) {
        samples.push(sample);
        progress(formatSample(sample));
      }
      return sample;
    };

    const rpc = `${ingress.baseUrl}/agents/${TENANT}/${AGENT}/jsonrpc`;
    const taskIds = await Promise.all(
      Array.from({ length: options.tasks }, () =>
        submitCountdown(rpc, options.countdown, options.stepMs),
      ),
    );
    const allSubmittedMs = since();
    progress(
      `${taskIds.length} countdown tasks sent (N=${options.countdown}, stepMs=${options.stepMs})`,
    );

    const wanted = Math.ceil(options.workingShare * options.tasks);
    const workingDeadline = Date.now() + options.workingTimeoutMs;
    let beforeKill = await record('before kill');
    while (
      (beforeKill.states['TASK_STATE_WORKING'] ?? 0) < wanted &&
      Date.now() < workingDeadline
    ) {
      await sleep(50);
      beforeKill = await record('before kill');
    }
    const workingAtKill = beforeKill.states['TASK_STATE_WORKING'] ?? 0;
    const preconditionMet = workingAtKill >= wanted;
    if (!preconditionMet) {
      progress(
        `only ${workingAtKill} of ${options.tasks} tasks WORKING after ${options.workingTimeoutMs} ms ` +
          `(wanted ${wanted}): the platform misbehaved before the kill; killing anyway`,
      );
    }

    await first.process.kill();
    const killedMs = since();
    progress(
      `SIGKILL task-service (pid ${String(first.process.pid)}) with ${workingAtKill} tasks WORKING`,
    );
    const downUntil = Date.now() + options.downMs;
    while (Date.now() < downUntil) {
      await record('down');
      await sleep(100);
    }

    const restartedMs = since();
    const second = await startTaskService({ ...taskServiceEnv, REPLICA_ID: 'chaos-after-restart' });
    processes.push(second.process);
    const restartReadyMs = since();
    progress(`task-service restarted on the same ports (pid ${String(second.process.pid)})`);

    // The worker and the ingress were left alone: watch them come back by themselves.
    const readyAt = Date.now();
    const workerBack = worker
      .waitForOutput(/\breconnected\b/, options.deadlineMs)
      .then(() => Date.now() - readyAt)
      .catch(() => null);
    const ingressProbeErrors: string[] = [];
    const ingressBack = probeIngress(
      rpc,
      taskIds[0] ?? '',
      options.deadlineMs,
      ingressProbeErrors,
    ).then((ok) => (ok ? Date.now() - readyAt : null));

    const checkAt = readyAt + options.leaseTtlMs + options.marginMs;
    while (Date.now() < checkAt) {
      await record('after restart');
      await sleep(250);
    }
    const checkAMs = since();
    const workingAtCheck = (await record('check (a)')).states['TASK_STATE_WORKING'] ?? 0;
    const atCheck = await staleLeases(pool);
    let stuck: StaleLease[] = atCheck;
    if (atCheck.length > 0) {
      progress(
        `check (a): ${atCheck.length} WORKING tasks without a live lease; watching them for up to ${SETTLE_MS} ms`,
      );
    }
    // A task leaves `stuck` once it has a live lease again or its stream moved on.
    const settleUntil = Date.now() + SETTLE_MS;
    while (stuck.length > 0 && Date.now() < settleUntil) {
      await sleep(250);
      const again = new Map((await staleLeases(pool)).map((s) => [s.taskId, s]));
      stuck = stuck.filter((s) => again.get(s.taskId)?.version === s.version);
    }

    const deadline = readyAt + options.deadlineMs;
    let last = await record('draining');
    let allTerminalMs: number | null = null;
    for (;;) {
      const open = Object.entries(last.states)
        .filter(([state]) => !TERMINAL_STATES.has(state))
        .reduce((sum, [, n]) => sum + n, 0);
      if (open === 0) {
        allTerminalMs = last.atMs;
        break;
      }
      if (Date.now() > deadline) {
        break;
      }
      await sleep(250);
      last = await record('draining');
    }

    const workerReconnectedAfterMs = await workerBack;
    const ingressServedAfterMs = await ingressBack;
    const events = await eventStats(pool);
    const problems = await streamProblems(pool);
    const streams = await streamCount(pool);
    const viewMismatches = await versionMismatches(pool);
    const checkA = {
      passed: stuck.length === 0,
      workingAtCheck,
      atCheck,
      stuck,
      settleMs: SETTLE_MS,
    };
    const checkB = { passed: problems.length === 0, streams, problems };
    const allTerminal = allTerminalMs !== null;
    return {
      options,
      taskIds,
      samples,
      times: { allSubmittedMs, killedMs, restartedMs, restartReadyMs, checkAMs, allTerminalMs },
      workingAtKill,
      preconditionMet,
      workerReconnectedAfterMs,
      ingressServedAfterMs,
      ingressProbeErrors,
      events,
      finalStates: last.states,
      allTerminal,
      checkA,
      checkB,
      viewMismatches,
      logs: {
        taskServiceBeforeKill: first.process.log,
        taskServiceAfterRestart: second.process.log,
        ingress: ingress.process.log,
        worker: worker.log,
      },
      passed: preconditionMet && checkA.passed && checkB.passed && allTerminal,
    };
  } finally {
    for (const proc of processes.reverse()) {
      await proc.stop().catch(() => undefined);
    }
    await db?.drop().catch(() => undefined);
  }
}

async function seedDemoTenant(pool: Pool): Promise<void> {
  await seedTenant(pool, {
    tenantId: TENANT,
    displayName: 'Demo tenant',
    apiKeys: [{ keyId: `${TENANT}-default`, principalId: 'demo-user', secret: API_KEY }],
    agents: (['echo', 'interview', 'countdown'] as const).map((agentId) => ({
      agentId,
      profile: AGENT_PROFILES[agentId],
      onLeaseLost: 'redispatch' as const,
      maxAttempts: 3,
      workerSecret: `${WORKER_SECRET}:${agentId}`,
    })),
  });
}

interface JsonRpcReply {
  /** SendMessage answers `{ task }`; GetTask answers the task itself. */
  result?: { task?: { id?: string }; id?: string };
  error?: { code?: number; message?: string };
}

async function jsonRpc(url: string, method: string, params: unknown): Promise<JsonRpcReply> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', 'X-API-Key': API_KEY },
    body: JSON.stringify({ jsonrpc: '2.0', id: randomUUID(), method, params }),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  if (!response.ok) {
    throw new Error(`${method}: HTTP ${response.status}: ${text.slice(0, 200)}`);
  }
  return JSON.parse(text) as JsonRpcReply;
}

async function submitCountdown(url: string, count: number, stepMs: number): Promise<string> {
  const reply = await jsonRpc(url, 'SendMessage', {
    message: {
      messageId: randomUUID(),
      role: 'ROLE_USER',
      parts: [{ text: String(count) }],
      metadata: { stepMs },
    },
    configuration: { returnImmediately: true },
  });
  const id = reply.result?.task?.id;
  if (!id) {
    throw new Error(`SendMessage returned no task: ${JSON.stringify(reply)}`);
  }
  return id;
}

/** GetTask through the ingress until it answers; collects the distinct errors seen on the way. */
async function probeIngress(
  url: string,
  taskId: string,
  timeoutMs: number,
  errors: string[],
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const reply = await jsonRpc(url, 'GetTask', { id: taskId });
      if (reply.result?.id === taskId) {
        return true;
      }
      remember(errors, `unexpected GetTask reply: ${JSON.stringify(reply).slice(0, 200)}`);
    } catch (error) {
      remember(errors, error instanceof Error ? error.message : String(error));
    }
    await sleep(100);
  }
  return false;
}

function remember(errors: string[], error: string): void {
  if (!errors.includes(error) && errors.length < 10) {
    errors.push(error);
  }
}

async function counts(pool: Pool): Promise<Pick<Sample, 'states' | 'leased' | 'queued'>> {
  const states = await pool.query<{ state: string; n: string }>(
    'SELECT state, count(*) AS n FROM read.task_view WHERE tenant_id = $1 GROUP BY state ORDER BY state',
    [TENANT],
  );
  const work = await pool.query<{ status: string; n: string }>(
    'SELECT status, count(*) AS n FROM ops.task_work WHERE tenant_id = $1 GROUP BY status',
    [TENANT],
  );
  const byStatus = new Map(work.rows.map((r) => [r.status, Number(r.n)]));
  return {
    states: Object.fromEntries(states.rows.map((r) => [r.state, Number(r.n)])),
    leased: byStatus.get('leased') ?? 0,
    queued: byStatus.get('queued') ?? 0,
  };
}

function sameCounts(a: Sample, b: Sample): boolean {
  return (
    JSON.stringify([a.states, a.leased, a.queued]) ===
    JSON.stringify([b.states, b.leased, b.queued])
  );
}

/** WORKING tasks whose lease is absent (no work row, or no lease on it) or already expired. */
async function staleLeases(pool: Pool): Promise<StaleLease[]> {
  const result = await pool.query<{
    task_id: string;
    version: number;
    status: string | null;
    lease_epoch: string | null;
    overdue_ms: number | null;
  }>(
    `SELECT v.task_id, v.version, w.status, w.lease_epoch,
            (extract(epoch FROM now() - w.lease_expires_at) * 1000)::float8 AS overdue_ms
       FROM read.task_view v
       LEFT JOIN ops.task_work w ON w.tenant_id = v.tenant_id AND w.task_id = v.task_id
      WHERE v.tenant_id = $1 AND v.state = 'TASK_STATE_WORKING'
        AND (w.lease_expires_at IS NULL OR w.lease_expires_at < now())
      ORDER BY v.task_id`,
    [TENANT],
  );
  return result.rows.map((r) => ({
    taskId: r.task_id,
    version: r.version,
    workStatus: r.status,
    leaseEpoch: r.lease_epoch === null ? null : Number(r.lease_epoch),
    overdueMs: r.overdue_ms === null ? null : Math.round(r.overdue_ms),
  }));
}

async function eventStats(pool: Pool): Promise<KillScenarioReport['events']> {
  const result = await pool.query<{
    granted: string;
    expired: string;
    redispatched: string;
    max_attempt: number | null;
    total: string;
  }>(
    `WITH grants AS (
       SELECT stream_id, count(*) AS n, max((data->>'attempt')::int) AS attempt
         FROM events.messages WHERE event_type = 'TaskLeaseGranted' GROUP BY stream_id)
     SELECT
       (SELECT count(*) FROM events.messages WHERE event_type = 'TaskLeaseGranted') AS granted,
       (SELECT count(*) FROM events.messages WHERE event_type = 'TaskLeaseExpired') AS expired,
       (SELECT count(*) FROM grants WHERE n > 1) AS redispatched,
       (SELECT max(attempt) FROM grants) AS max_attempt,
       (SELECT count(*) FROM events.messages) AS total`,
  );
  const row = result.rows[0];
  return {
    leaseGranted: Number(row?.granted ?? 0),
    leaseExpired: Number(row?.expired ?? 0),
    redispatchedTasks: Number(row?.redispatched ?? 0),
    maxAttempt: row?.max_attempt ?? 0,
    total: Number(row?.total ?? 0),
  };
}

/** Check (b): every stream's versions are 1..n, each once. */
async function streamProblems(pool: Pool): Promise<StreamProblem[]> {
  const result = await pool.query<{
    stream_id: string;
    n: string;
    max_version: number;
    distinct_versions: string;
  }>(
    `SELECT stream_id, count(*) AS n, max(stream_version) AS max_version,
            count(DISTINCT stream_version) AS distinct_versions
       FROM events.messages GROUP BY tenant_id, stream_id
     HAVING count(*) <> max(stream_version) OR count(DISTINCT stream_version) <> count(*)
      ORDER BY stream_id`,
  );
  return result.rows.map((r) => ({
    streamId: r.stream_id,
    events: Number(r.n),
    maxVersion: r.max_version,
    distinctVersions: Number(r.distinct_versions),
  }));
}

async function streamCount(pool: Pool): Promise<number> {
  const result = await pool.query<{ n: string }>(
    'SELECT count(*) AS n FROM (SELECT DISTINCT tenant_id, stream_id FROM events.messages) s',
  );
  return Number(result.rows[0]?.n ?? 0);
}

async function versionMismatches(pool: Pool): Promise<KillScenarioReport['viewMismatches']> {
  const result = await pool.query<{
    task_id: string;
    view_version: number | null;
    stream_version: number | null;
    log_version: number;
  }>(
    `SELECT split_part(m.stream_id, ':', 3) AS task_id, v.version AS view_version, s.version AS stream_version,
            max(m.stream_version) AS log_version
       FROM events.messages m
       LEFT JOIN events.streams s ON s.tenant_id = m.tenant_id AND s.stream_id = m.stream_id
       LEFT JOIN read.task_view v ON v.tenant_id = m.tenant_id AND v.task_id = split_part(m.stream_id, ':', 3)
      GROUP BY m.tenant_id, m.stream_id, v.version, s.version
     HAVING v.version IS DISTINCT FROM max(m.stream_version) OR s.version IS DISTINCT FROM max(m.stream_version)`,
  );
  return result.rows.map((r) => ({
    taskId: r.task_id,
    viewVersion: r.view_version,
    streamVersion: r.stream_version,
    logVersion: r.log_version,
  }));
}

const SHORT_STATE: Record<string, string> = {
  TASK_STATE_SUBMITTED: 'SUBMITTED',
  TASK_STATE_WORKING: 'WORKING',
  TASK_STATE_COMPLETED: 'COMPLETED',
  TASK_STATE_FAILED: 'FAILED',
  TASK_STATE_CANCELED: 'CANCELED',
  TASK_STATE_REJECTED: 'REJECTED',
  TASK_STATE_INPUT_REQUIRED: 'INPUT_REQUIRED',
  TASK_STATE_AUTH_REQUIRED: 'AUTH_REQUIRED',
};

function formatStates(states: Record<string, number>): string {
  return Object.entries(states)
    .map(([state, n]) => `${SHORT_STATE[state] ?? state}=${n}`)
    .join(' ');
}

function seconds(ms: number): string {
  return `${(ms / 1_000).toFixed(2)} s`;
}

export function formatSample(sample: Sample): string {
  return (
    `+${seconds(sample.atMs).padStart(8)}  ${sample.phase.padEnd(13)} ${formatStates(sample.states)}` +
    `  | task_work leased=${sample.leased} queued=${sample.queued}`
  );
}

/**
 * Lines of a process log worth showing (warnings, errors, (re)connections, sessions, leases), with timestamps,
 * pids and ids masked so that repeats collapse into one line with a count and the time of the first one.
 */
function notableLines(log: string, max = 15): string[] {
  const groups = new Map<string, { count: number; first: string }>();
  for (const raw of log.split('\n')) {
    const line = raw.trim();
    if (!/WARN|ERROR|reconnect|connected|serves|session|lease|failed|refused/i.test(line)) {
      continue;
    }
    const time = /\d{4}-\d\d-\d\dT(\d\d:\d\d:\d\d\.\d+)Z|(\d{1,2}:\d\d:\d\d [AP]M)/.exec(line);
    const key = line
      .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<time>')
      .replace(/\d{1,2}\/\d{1,2}\/\d{4}, \d{1,2}:\d\d:\d\d [AP]M/g, '<time>')
      .replace(/\[Nest\] \d+/g, '[Nest]')
      .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>')
      .replace(/vm-\d+|pid[= ]\d+/g, '<pid>')
      .slice(0, 240);
    const group = groups.get(key);
    if (group) {
      group.count++;
    } else {
      groups.set(key, { count: 1, first: time?.[1] ?? time?.[2] ?? '?' });
    }
  }
  const lines = [...groups].map(
    ([key, g]) => `    ${String(g.count).padStart(3)} x (first ${g.first}) ${key}`,
  );
  return lines.length > max
    ? [...lines.slice(0, max), `    … ${lines.length - max} more kinds of line`]
    : lines;
}

/** The report as printable text. */
export function formatReport(report: KillScenarioReport): string {
  const { options: o, times: t, events: e, checkA, checkB } = report;
  const out: string[] = [];
  out.push('# Chaos: SIGKILL the task-service with slow tasks in flight');
  out.push(
    `K=${o.tasks} countdown tasks (N=${o.countdown}, stepMs=${o.stepMs}); LEASE_TTL_MS=${o.leaseTtlMs}, ` +
      `HEARTBEAT_INTERVAL_MS=${o.heartbeatIntervalMs}, SWEEP_INTERVAL_MS=${o.sweepIntervalMs}; down for ${o.downMs} ms`,
  );
  out.push('');
  out.push('## Timeline (ms since the first task was sent; a row whenever the counts change)');
  out.push(...report.samples.map(formatSample));
  out.push('');
  out.push('## Milestones');
  out.push(`all ${o.tasks} tasks accepted:           +${seconds(t.allSubmittedMs)}`);
  out.push(
    `task-service SIGKILLed:             +${seconds(t.killedMs)} (${report.workingAtKill} tasks WORKING` +
      `${report.preconditionMet ? '' : `; fewer than the ${Math.ceil(o.workingShare * o.tasks)} wanted: the run is invalid`})`,
  );
  out.push(
    `restart started / ready:            +${seconds(t.restartedMs)} / +${seconds(t.restartReadyMs)}`,
  );
  out.push(
    `worker reconnected (by itself):     ${report.workerReconnectedAfterMs === null ? 'NEVER' : `${report.workerReconnectedAfterMs} ms after ready`}`,
  );
  out.push(
    `ingress served GetTask again:       ${report.ingressServedAfterMs === null ? 'NEVER' : `${report.ingressServedAfterMs} ms after ready`}` +
      (report.ingressProbeErrors.length > 0
        ? ` (errors on the way: ${report.ingressProbeErrors.join(' | ')})`
        : ''),
  );
  out.push(
    `check (a) at:                       +${seconds(t.checkAMs)} (ready + LEASE_TTL_MS + ${o.marginMs} ms)`,
  );
  out.push(
    `all tasks terminal:                 ${t.allTerminalMs === null ? `NO (deadline: ready + ${o.deadlineMs} ms)` : `+${seconds(t.allTerminalMs)} (${seconds(t.allTerminalMs - t.killedMs)} after the kill)`}`,
  );
  out.push('');
  out.push('## Re-dispatch (events.messages)');
  out.push(
    `TaskLeaseGranted: ${e.leaseGranted}; TaskLeaseExpired: ${e.leaseExpired}; tasks granted more than once: ` +
      `${e.redispatchedTasks}; highest attempt: ${e.maxAttempt}; events in all: ${e.total}`,
  );
  out.push(`final states: ${formatStates(report.finalStates)}`);
  out.push('');
  out.push('## Checks');
  out.push(
    `(a) WORKING tasks with an absent or expired lease, at ready + LEASE_TTL_MS + margin: ${checkA.atCheck.length} of ` +
      `${checkA.workingAtCheck} WORKING; still so, unchanged, for ${checkA.settleMs} ms: ${checkA.stuck.length} ` +
      `=> ${checkA.passed ? 'PASS' : 'FAIL'}`,
  );
  for (const s of checkA.atCheck) {
    const stuck = checkA.stuck.some((x) => x.taskId === s.taskId);
    out.push(
      `    ${s.taskId} v${s.version} work=${s.workStatus ?? 'none'} epoch=${String(s.leaseEpoch)} ` +
        `${s.overdueMs === null ? 'no lease' : `expired ${s.overdueMs} ms ago`}${stuck ? '  STUCK' : ''}`,
    );
  }
  out.push(
    `(b) stream versions without gaps or duplicates: ${checkB.streams - checkB.problems.length}/${checkB.streams} streams ` +
      `=> ${checkB.passed ? 'PASS' : 'FAIL'}`,
  );
  for (const p of checkB.problems) {
    out.push(
      `    ${p.streamId}: ${p.events} events, max version ${p.maxVersion}, ${p.distinctVersions} distinct`,
    );
  }
  out.push(
    `precondition (>= ${Math.ceil(o.workingShare * o.tasks)} tasks WORKING at the kill): ` +
      `${report.preconditionMet ? 'PASS' : 'FAIL'}; every task terminal: ${report.allTerminal ? 'PASS' : 'FAIL'}; ` +
      `view/stream versions equal to the log (extra): ${report.viewMismatches.length === 0 ? 'yes' : `NO: ${JSON.stringify(report.viewMismatches)}`}`,
  );
  out.push('');
  out.push('## Notable process log lines');
  out.push('task-service before the kill:', ...notableLines(report.logs.taskServiceBeforeKill));
  out.push('task-service after the restart:', ...notableLines(report.logs.taskServiceAfterRestart));
  out.push('ingress:', ...notableLines(report.logs.ingress));
  out.push('countdown worker:', ...notableLines(report.logs.worker));
  out.push('');
  out.push(`RESULT: ${report.passed ? 'PASS' : 'FAIL'}`);
  return out.join('\n');
}
