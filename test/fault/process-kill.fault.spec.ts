/**
 * SIGKILL of `npm start`'s process under load, twice (issue #8): its worker processes must die with it (no
 * orphans, and no more workers after each restart), and once it is started again on the same database every
 * accepted task is processed: the leases of the dead workers expire and their tasks are re-dispatched.
 */
import { EXAMPLE_AGENT_IDS } from '@lib/worker-sdk';
import { afterEach, describe, expect, it } from 'vitest';
import {
  childProcesses,
  startFaultPlatform,
  stillAlive,
  type FaultPlatform,
} from './support/fault-platform';
import { runFault, sleep } from './support/fault-run';

/** While the process is down nobody answers; while it starts, the database may not be ready for it yet. */
const PLATFORM_AWAY =
  /^(no answer \(\w+\)|gRPC UNAVAILABLE \(transport\)|gRPC UNAVAILABLE UNAVAILABLE|HTTP 503 JSON-RPC -32000 UNAVAILABLE|HTTP 503 REST UNAVAILABLE)$/;

describe('SIGKILL of the platform process under load', () => {
  let platform: FaultPlatform | null = null;

  afterEach(async () => {
    await platform?.close();
    platform = null;
  });

  it('leaves no orphan worker, and after each restart the backlog is processed', async () => {
    platform = await startFaultPlatform('process-kill');
    const current = platform;
    const cycles: { workers: number[]; orphans: number[]; goneAfterMs: number | null }[] = [];
    await runFault({
      label: 'SIGKILL of the platform process (twice), restarted on the same database',
      platform: current,
      allowedFailures: PLATFORM_AWAY,
      leasesMayExpire: true,
      inject: async () => {
        const faultAt = Date.now();
        for (let cycle = 0; cycle < 2; cycle++) {
          const workers = childProcesses(current.process.pid ?? -1);
          const killedAt = Date.now();
          await current.kill();
          let orphans = stillAlive(workers);
          while (orphans.length > 0 && Date.now() - killedAt < 10_000) {
            await sleep(50);
            orphans = stillAlive(workers);
          }
          cycles.push({
            workers,
            orphans,
            goneAfterMs: orphans.length === 0 ? Date.now() - killedAt : null,
          });
          await sleep(2_000);
          await current.restart();
          if (cycle === 0) {
            await sleep(4_000);
          }
        }
        return { faultAt, returnedAt: Date.now() };
      },
    });
    const now = childProcesses(current.process.pid ?? -1);
    console.log(
      `[fault] worker processes per cycle ${JSON.stringify(cycles.map((c) => c.workers.length))}; ` +
        `orphans ${JSON.stringify(cycles.map((c) => c.orphans.length))}; gone after (ms) ` +
        `${JSON.stringify(cycles.map((c) => c.goneAfterMs))}; workers now ${now.length}`,
    );
    for (const cycle of cycles) {
      expect(cycle.workers, 'the platform ran all its example workers').toHaveLength(
        EXAMPLE_AGENT_IDS.length,
      );
      expect(cycle.orphans, 'no worker outlived the killed platform').toEqual([]);
    }
    expect(now, 'still all workers after two restarts').toHaveLength(EXAMPLE_AGENT_IDS.length);
  });
});
