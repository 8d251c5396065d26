import { pushDispatcherSchema, type PushDispatcherConfig } from '@lib/config';
import type { DeliveryResult, WebhookSender } from '@lib/push';
import { describe, expect, it } from 'vitest';
import type { Claim, ClaimedDelivery, DeliveryStore, FinalOutcome, Lane } from './delivery-store';
import type { LaneQueue, LaneRun } from './lane-queue';
import { LaneRunner } from './lane-runner';

const lane: Lane = { tenantId: 'demo', taskId: 't1', configId: 'c1' };

function delivery(generation: number): ClaimedDelivery {
  return {
    deliveryId: `00000000-0000-4000-8000-00000000000${generation}`,
    lane,
    generation,
    body: '{}',
    attempt: 1,
    url: 'https://hooks.example/',
    token: null,
    authentication: null,
    traceparent: null,
  };
}

/**
 * A lane runner over scripted claims and settlements: `claims` answers its claims in turn (then `empty`),
 * `nexts` its settlements' next claims; every POST is accepted, `sending` awaited before each answer, and
 * `scheduling` called as each run is scheduled.
 */
function runner(script: {
  claims: Claim[];
  nexts: Claim[];
  sending?: () => Promise<void>;
  scheduling?: () => void;
}): {
  runner: LaneRunner;
  calls: string[];
  scheduled: LaneRun[];
} {
  const calls: string[] = [];
  const scheduled: LaneRun[] = [];
  const store = {
    claimHeads: (lanes: readonly Lane[]) => {
      calls.push('claim');
      return Promise.resolve(lanes.map(() => script.claims.shift() ?? { kind: 'empty' }));
    },
    settleAndClaimNextMany: (outcomes: readonly FinalOutcome[]) => {
      calls.push('settle');
      return Promise.resolve(
        outcomes.map(() => ({ settled: true, next: script.nexts.shift() ?? { kind: 'empty' } })),
      );
    },
  } as unknown as DeliveryStore;
  const lanes = {
    schedule: (runs: readonly LaneRun[]) => {
      script.scheduling?.();
      scheduled.push(...runs);
      return Promise.resolve(true);
    },
  } as unknown as LaneQueue;
  const sender = {
    send: async (): Promise<DeliveryResult> => {
      calls.push('post');
      await script.sending?.();
      return { outcome: 'delivered', status: 204, durationMs: 1 };
    },
  } as unknown as WebhookSender;
  const config = {
    ...pushDispatcherSchema.parse({}),
    POSTGRES_URL: 'postgres://unused',
    POSTGRES_POOL_SIZE: 10,
    KAFKA_BROKERS: 'unused:9092',
    TASK_EVENTS_TOPIC: 'unused',
  } as PushDispatcherConfig;
  return { runner: new LaneRunner(config, store, lanes, sender), calls, scheduled };
}

describe('LaneRunner', () => {
  it('after a settlement that finds nothing next, claims once more before the lane is left', async () => {
    // A delivery inserted behind the settled one while the settlement waited has no job of its own.
    const { runner: r, calls } = runner({
      claims: [
        { kind: 'claimed', delivery: delivery(1) },
        { kind: 'claimed', delivery: delivery(2) },
      ],
      nexts: [],
    });
    await r.run(lane, 'a-job-0');
    expect(calls).toStrictEqual(['claim', 'post', 'settle', 'claim', 'post', 'settle', 'claim']);
  });

  it('a job of a lane the replica drives claims nothing; a nudge during a send is seen by the next statement', async () => {
    let sent: () => void = () => undefined;
    const {
      runner: r,
      calls,
      scheduled,
    } = runner({
      claims: [{ kind: 'claimed', delivery: delivery(1) }],
      nexts: [],
      sending: () => new Promise<void>((resolve) => (sent = resolve)),
    });
    const running = r.run(lane, 'a-first-0');
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls).toStrictEqual(['claim', 'post']);
    // A second job of the lane while the first is sending, and the feed consumer's nudge.
    await r.run(lane, 'a-second-0');
    expect(r.nudge(lane)).toBe(true);
    sent();
    await running;
    // The settlement was submitted after the nudges: its statement (and the claim after it) saw the rows.
    expect(calls).toStrictEqual(['claim', 'post', 'settle', 'claim']);
    expect(scheduled).toStrictEqual([]);
    expect(r.nudge(lane)).toBe(false);
  });

  it('a nudge after the last claim, while the run leaves through a wait, schedules the lane once more', async () => {
    const head = {
      lane,
      deliveryId: delivery(1).deliveryId,
      state: 'sending' as const,
      attempts: 1,
      due: new Date(Date.now() + 60_000),
    };
    let r: LaneRunner | null = null;
    const script = runner({
      claims: [{ kind: 'later', at: head.due, head }],
      nexts: [],
      // The claim is answered `later`; the nudge comes while the run schedules the head's next check.
      scheduling: () => r?.nudge(lane),
    });
    r = script.runner;
    await r.run(lane, 'a-first-0');
    expect(script.scheduled.map((run) => run.jobId)).toStrictEqual([
      `c-${head.deliveryId}-1`,
      expect.stringMatching(/^a-first-0-m\d+$/),
    ]);
  });
});
