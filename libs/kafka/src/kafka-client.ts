import type { KafkaClientConfig } from '@lib/config';
import { Kafka, type KafkaConfig } from 'kafkajs';
import { createRequire } from 'node:module';
import { kafkaConnection, type KafkaConnection } from './kafka-connection';

/** The part of kafkajs's per-connection request queue that its re-scheduling reads. */
interface RequestQueueInternals {
  pending: unknown[];
  /** Epoch ms until which the broker asked the client to hold its requests; -1 when it never did. */
  throttledUntil: number;
  scheduleCheckPendingRequests: (this: RequestQueueInternals) => void;
}

let idleLoopStopped = false;

/**
 * kafkajs 2.2.4 (its last release) re-arms a timer after every check of a connection's request queue, even
 * with nothing queued and no throttle, with a negative delay that Node runs after 1 ms: each open connection
 * wakes its process a thousand times a second for nothing (tulios/kafkajs#1556, #1704; unfixed upstream).
 * This wraps the re-arming so that it does nothing when there is nothing to check. kafkajs still checks the
 * queue when a request is queued (it re-arms then, with requests pending), when one completes, and when a
 * throttle ends (a throttle's timer is armed as before). Idempotent.
 */
export function stopIdleRequestQueueLoop(): void {
  if (idleLoopStopped) {
    return;
  }
  idleLoopStopped = true;
  const load = createRequire(require.resolve('kafkajs'));
  const queue = load('./src/network/requestQueue') as { prototype: RequestQueueInternals };
  const rearm = queue.prototype.scheduleCheckPendingRequests;
  queue.prototype.scheduleCheckPendingRequests = function (this: RequestQueueInternals): void {
    if (this.pending.length === 0 && this.throttledUntil <= Date.now()) {
      return;
    }
    rearm.call(this);
  };
}

/**
 * A kafkajs client for the platform's producers and consumers, without the idle loop: the brokers, TLS and
 * SASL from the Kafka client settings (`kafkaConnection`, which throws on a file it cannot read), the rest
 * (client id, logging, retries) from `options`.
 */
export function createKafka(
  settings: KafkaClientConfig,
  options: Omit<KafkaConfig, keyof KafkaConnection>,
): Kafka {
  stopIdleRequestQueueLoop();
  return new Kafka({ ...options, ...kafkaConnection(settings) });
}
