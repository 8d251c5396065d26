/**
 * A Kafka broker restart under load, with the whole platform running (issue #8; the relay's own suite covers
 * the relay alone). The broker is a private one of this suite (`KafkaBroker`), so nothing else on the machine
 * notices. Kafka is off the request path: clients must see nothing at all, and the feed must end up complete
 * and in order per task.
 */
import { KafkaBroker } from '@lib/testing';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { startFaultPlatform, type FaultPlatform } from './support/fault-platform';
import { runFault } from './support/fault-run';

describe('a Kafka broker restart under load', () => {
  let broker: KafkaBroker;
  let platform: FaultPlatform | null = null;

  beforeAll(async () => {
    broker = await KafkaBroker.start();
  });

  afterAll(async () => {
    await platform?.close();
    await broker.destroy();
  });

  it('clients notice nothing; the relay rides it out and the topic holds the whole log, in order', async () => {
    platform = await startFaultPlatform('kafka-restart', { brokers: [broker.bootstrap] });
    await runFault({
      label: 'Kafka broker restart',
      platform,
      // Nothing a client does waits on Kafka.
      allowedFailures: /(?!)/,
      inject: async () => {
        const faultAt = Date.now();
        await broker.restart();
        return { faultAt, returnedAt: Date.now() };
      },
    });
  });
});
