import { createRequire } from 'node:module';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { stopIdleRequestQueueLoop } from './kafka-client';

/** kafkajs's per-connection request queue, as far as these tests drive it. */
interface RequestQueue {
  pending: unknown[];
  inflight: Map<number, unknown>;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  maybeThrottle(milliseconds: number): void;
  checkPendingRequests(): void;
}
type RequestQueueClass = new (options: {
  maxInFlightRequests: number;
  requestTimeout: number;
  enforceRequestTimeout: boolean;
  clientId: string;
  broker: string;
  logger: Record<'debug' | 'info' | 'warn' | 'error', () => void>;
}) => RequestQueue;

const load = createRequire(require.resolve('kafkajs'));
const RequestQueueOfKafkajs = load('./src/network/requestQueue') as RequestQueueClass;
const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

describe("kafkajs's request queue without its idle loop", () => {
  const queues: RequestQueue[] = [];
  const queue = (): RequestQueue => {
    const created = new RequestQueueOfKafkajs({
      maxInFlightRequests: 1,
      requestTimeout: 30_000,
      enforceRequestTimeout: false,
      clientId: 'test',
      broker: '127.0.0.1:9092',
      logger: quiet,
    });
    queues.push(created);
    return created;
  };

  beforeAll(() => {
    stopIdleRequestQueueLoop();
    stopIdleRequestQueueLoop();
  });

  afterEach(() => {
    queues.splice(0).forEach((q) => clearTimeout(q.throttleCheckTimeoutId ?? undefined));
  });

  it('arms no timer after a check that found nothing queued and no throttle', () => {
    const idle = queue();
    idle.checkPendingRequests();
    expect(idle.throttleCheckTimeoutId).toBeNull();
  });

  it('still arms one when the broker throttles the connection', () => {
    const throttled = queue();
    throttled.maybeThrottle(60_000);
    throttled.checkPendingRequests();
    expect(throttled.throttleCheckTimeoutId).not.toBeNull();
  });

  it('still arms one while requests wait for a free in-flight slot', () => {
    const busy = queue();
    busy.inflight.set(1, {});
    busy.pending.push({});
    busy.checkPendingRequests();
    expect(busy.pending).toHaveLength(1);
    expect(busy.throttleCheckTimeoutId).not.toBeNull();
  });
});
