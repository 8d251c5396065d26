import type { ClientError, FollowedStream } from './load';
import type { ReplicaEvent, Shutdown } from './replica';

/** Everything the drill measured, for the verdict and the printout. */
export interface DrillResult {
  migrations: {
    exitCode: number | null;
    ms: number;
    /** The replicas seen waiting for their schema before the Job ran. */
    waitedForSchema: string[];
    /** The replicas that were ready before the Job ran (none may be). */
    readyBeforeJob: string[];
  };
  replicas: Record<string, number>;
  sent: number;
  adminCalls: number;
  accepted: number;
  /** Accepted tasks that never reached a terminal state, or that GetTask no longer knows. */
  lost: { taskId: string; how: string; state: string | null }[];
  abandoned: string[];
  errors: ClientError[];
  streams: FollowedStream[];
  /** Per stream: generations of its replay missing from what the client saw after its first event. */
  gaps: { taskId: string; missing: number[]; duplicates: number[] }[];
  unreplayed: string[];
  shutdowns: Shutdown[];
  kills: string[];
  events: ReplicaEvent[];
  /** `a2a_worker_sessions` of each task-service replica at the end (where the workers ended up). */
  workerSessions: Record<string, number | null>;
}

/** Stream generations after the first one the client saw that it never saw, and those it saw twice. */
export function streamGaps(
  seen: number[],
  replay: number[],
): { missing: number[]; duplicates: number[] } {
  const first = seen[0];
  const counts = new Map<number, number>();
  seen.forEach((id) => counts.set(id, (counts.get(id) ?? 0) + 1));
  return {
    missing: first === undefined ? [] : replay.filter((id) => id > first && !counts.has(id)),
    duplicates: [...counts].filter(([, n]) => n > 1).map(([id]) => id),
  };
}

/** The rules the drill enforces; each broken one is a line of the verdict. */
export function brokenRules(result: DrillResult): string[] {
  const broken: string[] = [];
  const rule = (ok: boolean, what: string): void => {
    if (!ok) {
      broken.push(what);
    }
  };
  rule(result.migrations.exitCode === 0, `the migrations Job exited ${result.migrations.exitCode}`);
  const replicaCount = Object.values(result.replicas).reduce((n, r) => n + r, 0);
  rule(
    result.migrations.waitedForSchema.length === replicaCount,
    `${replicaCount - result.migrations.waitedForSchema.length} replicas did not say they wait for the schema before the migrations Job`,
  );
  rule(
    result.migrations.readyBeforeJob.length === 0,
    `${result.migrations.readyBeforeJob.length} replicas were ready before the migrations Job ran: ${result.migrations.readyBeforeJob.join(', ')}`,
  );
  const disallowed = result.errors.filter((e) => !e.allowed);
  rule(
    disallowed.length === 0,
    `${disallowed.length} client-visible errors that are not retryable`,
  );
  rule(result.abandoned.length === 0, `${result.abandoned.length} operations never succeeded`);
  rule(result.lost.length === 0, `${result.lost.length} tasks lost`);
  const gaps = result.gaps.reduce((n, g) => n + g.missing.length, 0);
  const duplicates = result.gaps.reduce((n, g) => n + g.duplicates.length, 0);
  const afterEnd = result.streams.reduce((n, s) => n + s.afterEnd, 0);
  rule(gaps === 0, `${gaps} stream events missed after a resume`);
  rule(duplicates + afterEnd === 0, `${duplicates + afterEnd} stream events delivered twice`);
  rule(result.unreplayed.length === 0, `${result.unreplayed.length} streams could not be replayed`);
  const failedStreams = result.streams.filter((s) => s.failure !== null);
  rule(failedStreams.length === 0, `${failedStreams.length} streams failed`);
  const late = result.shutdowns.filter((s) => s.killedAtDeadline || s.exitCode !== 0);
  rule(
    late.length === 0,
    `${late.length} replicas did not exit 0 within terminationGracePeriodSeconds`,
  );
  rule(result.events.length === 0, `${result.events.length} kubelet events (see above)`);
  rule(result.accepted > 0 && result.streams.length > 0, 'the load did not run');
  return broken;
}

function countBy<T>(items: T[], key: (item: T) => string): [string, number][] {
  const counts = new Map<string, number>();
  items.forEach((item) => counts.set(key(item), (counts.get(key(item)) ?? 0) + 1));
  return [...counts].sort((a, b) => b[1] - a[1]);
}

const seconds = (ms: number): string => `${(ms / 1_000).toFixed(1)} s`;

export function formatReport(result: DrillResult): string {
  const lines: string[] = [];
  const streams = result.streams;
  lines.push(
    `before the Job: ${result.migrations.waitedForSchema.length} replicas waited for their schema, unready; ${result.migrations.readyBeforeJob.length} ready`,
    `migrations Job a2a-migrate: exit ${result.migrations.exitCode} in ${seconds(result.migrations.ms)}`,
    `replicas: ${Object.entries(result.replicas)
      .map(([name, n]) => `${name} ${n}`)
      .join(', ')}`,
    `load: ${result.sent} SendMessage, ${result.accepted} tasks accepted; ${streams.length} streams ` +
      `(${streams.filter((s) => s.resumes > 0).length} resumed, ${streams.reduce((n, s) => n + s.resumes, 0)} resumptions, ` +
      `${streams.filter((s) => s.completed).length} resubscribed after their end); ` +
      `${result.adminCalls} admin API reads`,
    '',
    'client-visible errors by kind:',
  );
  const kinds = countBy(result.errors, (e) => `${e.kind}${e.allowed ? '' : '  [NOT ALLOWED]'}`);
  lines.push(
    ...(kinds.length === 0
      ? ['  none']
      : kinds.map(([kind, n]) => `  ${String(n).padStart(5)}  ${kind}`)),
  );
  for (const error of result.errors.filter((e) => !e.allowed).slice(0, 10)) {
    lines.push(`         e.g. ${error.detail}`);
  }
  const gaps = result.gaps.reduce((n, g) => n + g.missing.length, 0);
  const duplicates =
    result.gaps.reduce((n, g) => n + g.duplicates.length, 0) +
    streams.reduce((n, s) => n + s.afterEnd, 0);
  lines.push(
    '',
    `tasks lost: ${result.lost.length} of ${result.accepted} accepted` +
      (result.abandoned.length > 0 ? `; operations abandoned: ${result.abandoned.length}` : ''),
    ...result.lost.slice(0, 10).map((t) => `  ${t.taskId} (${t.how}): ${t.state ?? 'unknown'}`),
    ...result.abandoned.slice(0, 10).map((what) => `  abandoned: ${what}`),
    `stream gaps after resume: ${gaps}; events delivered twice: ${duplicates}` +
      (result.unreplayed.length > 0 ? `; not replayable: ${result.unreplayed.length}` : ''),
    ...result.gaps
      .filter((g) => g.missing.length + g.duplicates.length > 0)
      .slice(0, 10)
      .map((g) => `  ${g.taskId}: missing ${g.missing.join(',')} twice ${g.duplicates.join(',')}`),
    '',
    'graceful shutdowns (rolling restart: preStop, then SIGTERM to exit):',
    ...result.shutdowns.map(
      (s) =>
        `  ${s.replica.padEnd(24)} preStop ${seconds(s.preStopMs)}, exit after ${seconds(s.exitMs)}` +
        (s.reportedMs === null ? '' : ` (the app: ${s.reportedMs} ms)`) +
        `, code ${s.exitCode}${s.killedAtDeadline ? ', KILLED at the grace deadline' : ''}`,
    ),
    `SIGKILLed and restarted: ${result.kills.join(', ')}`,
    `worker sessions at the end: ${Object.entries(result.workerSessions)
      .map(([replica, n]) => `${replica} ${n ?? '?'}`)
      .join(', ')}`,
    `kubelet events: ${result.events.length === 0 ? 'none' : ''}`,
    ...result.events.map(
      (e) => `  ${e.replica}: ${e.what} (${e.detail.slice(-300).replace(/\s+/g, ' ')})`,
    ),
  );
  return lines.join('\n');
}
