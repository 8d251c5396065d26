import type { TaskEventRecord } from './task-event-record';

/**
 * The broker side of the relay. `publish` resolves only when the broker has acknowledged every record
 * (all in-sync replicas), in the order given per key; it rejects otherwise and the relay retries the batch.
 */
export abstract class TaskEventPublisher {
  abstract connect(): Promise<void>;
  abstract publish(topic: string, records: readonly TaskEventRecord[]): Promise<void>;
  abstract disconnect(): Promise<void>;
}
