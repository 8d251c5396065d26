import type { RelayConfig } from '@lib/config';
import { createKafka } from '@lib/kafka';
import { Inject, Injectable } from '@nestjs/common';
import { CompressionTypes, logLevel, type Kafka, type Producer } from 'kafkajs';
import { TaskEventPublisher } from './task-event-publisher';
import type { TaskEventRecord } from './task-event-record';
import { RELAY_CONFIG } from './tokens';

/**
 * TaskEventPublisher on kafkajs: an idempotent producer (acks from all in-sync replicas, one in-flight
 * request so retries cannot reorder a key's records).
 */
@Injectable()
export class KafkajsTaskEventPublisher extends TaskEventPublisher {
  private readonly kafka: Kafka;
  private producer: Producer | null = null;

  constructor(@Inject(RELAY_CONFIG) config: RelayConfig) {
    super();
    this.kafka = createKafka(config, {
      clientId: config.KAFKA_CLIENT_ID,
      logLevel: logLevel.ERROR,
      retry: { retries: 8, initialRetryTime: 200, maxRetryTime: 5_000 },
    });
  }

  async connect(): Promise<void> {
    if (this.producer) {
      return;
    }
    const producer = this.kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: true,
    });
    await producer.connect();
    this.producer = producer;
  }

  async publish(topic: string, records: readonly TaskEventRecord[]): Promise<void> {
    if (!this.producer) {
      await this.connect();
    }
    await this.producer?.send({
      topic,
      acks: -1,
      compression: CompressionTypes.None,
      messages: records.map((r) => ({ key: r.key, value: r.value, headers: r.headers })),
    });
  }

  async disconnect(): Promise<void> {
    const producer = this.producer;
    this.producer = null;
    await producer?.disconnect();
  }
}
