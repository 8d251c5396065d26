/**
 * `pg_terminate_backend` of each kind of platform connection in turn, under load (issue #8): the pools of the
 * task-service, the ingress and the relay (the relay's log reader), the one LISTEN connection the process's
 * listeners share (task notices for the task-service, the ingress and the relay, configuration changes for the
 * ingress and the task-service; ADR 0016) and the relay's leader connection. Every connection says what it is
 * in `application_name` (`<app>:<role>`; the shared LISTEN connection has the name of the listener that opened
 * it), so one kind at a time is cut. The long-lived ones (LISTEN, leader) must come back by themselves.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startFaultPlatform, type FaultPlatform } from './support/fault-platform';
import { runFault, sleep } from './support/fault-run';

const KINDS = [
  'a2a-task-service:pool',
  'a2a-task-service:listen',
  'a2a-ingress:pool',
  'a2a-relay:pool',
  'a2a-relay:leader',
] as const;
/** Connections the platform holds all the time (pools open theirs on demand). */
const LONG_LIVED = KINDS.filter((kind) => !kind.endsWith(':pool'));
/** How long a cut long-lived connection may take to come back: only one that never does misses it. */
const BACK_WITHIN_MS = 30_000;

describe('platform connections terminated one kind at a time, under load', () => {
  let platform: FaultPlatform | null = null;

  afterEach(async () => {
    await platform?.close();
    platform = null;
  });

  it('each kind is re-established (LISTEN re-subscribes, the relay re-elects itself), clients see only retryable answers', async () => {
    platform = await startFaultPlatform('pg-terminate');
    const { postgres } = platform;
    const terminated: Record<string, number> = {};
    const backAfterMs: Record<string, number | null> = {};
    await runFault({
      label: 'pg_terminate_backend of each connection kind',
      platform,
      // A terminated pool connection fails the one request that was using it: UNAVAILABLE.
      allowedFailures:
        /^(HTTP 503 JSON-RPC -32000 UNAVAILABLE|HTTP 503 REST UNAVAILABLE|gRPC UNAVAILABLE UNAVAILABLE)$/,
      inject: async () => {
        const faultAt = Date.now();
        for (const kind of KINDS) {
          terminated[kind] = await postgres.terminateBackends(kind);
          const cutAt = Date.now();
          backAfterMs[kind] = null;
          // Pools open connections on demand: they are watched for a while, not waited for.
          const watchMs = LONG_LIVED.includes(kind) ? BACK_WITHIN_MS : 10_000;
          while (Date.now() - cutAt < watchMs) {
            const groups = await postgres.backends();
            if (groups.some((g) => g.applicationName === kind && g.count > 0)) {
              backAfterMs[kind] = Date.now() - cutAt;
              break;
            }
            await sleep(50);
          }
          await sleep(1_500);
        }
        return { faultAt, returnedAt: Date.now() };
      },
    });
    console.log(
      `[fault] connections terminated per kind ${JSON.stringify(terminated)}; back after (ms) ${JSON.stringify(backAfterMs)}`,
    );
    for (const kind of KINDS) {
      expect(terminated[kind], `${kind} connections existed and were terminated`).toBeGreaterThan(
        0,
      );
    }
    for (const kind of LONG_LIVED) {
      expect(backAfterMs[kind], `${kind} came back by itself`).not.toBeNull();
    }
    // One LISTEN connection for the whole process, back after its cut.
    expect(
      (await postgres.backends()).filter((group) =>
        /:(listen|config)$/.test(group.applicationName),
      ),
    ).toEqual([{ applicationName: 'a2a-task-service:listen', count: 1 }]);
    const log = platform.process.log;
    // Its listeners with a log of their own (task-service, ingress, relay) each say so.
    expect(log.match(/notice connection re-established/g)?.length ?? 0).toBeGreaterThanOrEqual(3);
    // The relay noticed the lost leader connection and took the lead again by itself.
    expect(log).toMatch(/relay interrupted/);
    expect(log).toMatch(/relay resumed after/);
  });
});
