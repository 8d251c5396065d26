#!/usr/bin/env node
// Example consumer of the platform's task-event feed (contract: docs/asyncapi.yaml).
//
//   node examples/task-events-consumer/consumer.mjs
//
// Plain Node ESM, no build step; kafkajs comes from the repository's node_modules. Environment (all optional):
//   KAFKA_BROKERS      comma-separated host:port list           (default 127.0.0.1:9092)
//   TASK_EVENTS_TOPIC  the feed's topic                         (default a2a.task-events.v1)
//   CONSUMER_GROUP     Kafka consumer group id                  (default task-events-example)
//   FROM_BEGINNING     a new group starts at the oldest record  (default true; false = only new records)
//   MAX_EVENTS         exit after handling this many events     (default: run until Ctrl-C)
//
// Delivery is at-least-once and ordered per task, so a consumer dedupes on (taskId, generation): a record
// whose generation is not above the highest one already handled for its task is a duplicate and is skipped.
/* global console, setImmediate, setTimeout */
import kafkajs from 'kafkajs';
import process, { env } from 'node:process';

const { Kafka, logLevel } = kafkajs;

/**
 * The fields of the record value this example uses (all of them: docs/asyncapi.yaml, TaskEventRecordValue).
 * @typedef {{
 *   schema: string,
 *   schemaVersion: number,
 *   eventId: string,
 *   tenantId: string,
 *   taskId: string,
 *   generation: number,
 *   type: string,
 *   streamResponse: Record<string, { status?: { state?: string } }> | null,
 * }} TaskEventRecordValue
 */

const brokers = (env['KAFKA_BROKERS'] ?? '127.0.0.1:9092')
  .split(',')
  .map((b) => b.trim())
  .filter(Boolean);
const topic = env['TASK_EVENTS_TOPIC'] ?? 'a2a.task-events.v1';
const groupId = env['CONSUMER_GROUP'] ?? 'task-events-example';
const fromBeginning = (env['FROM_BEGINNING'] ?? 'true') !== 'false';
const maxEvents = env['MAX_EVENTS'] ? Number(env['MAX_EVENTS']) : Infinity;

/**
 * The dedupe mark: the highest generation handled per task. Generations of a task arrive in increasing order
 * (duplicates aside), so one number per task is enough.
 *
 * Kept in memory here, so it is empty after a restart, and records the group had not committed yet are then
 * handled again. A real consumer persists the mark in the same transaction as the effect of the record, e.g.
 * in Postgres
 *
 *   INSERT INTO task_marks (task_id, generation) VALUES ($1, $2)
 *   ON CONFLICT (task_id) DO UPDATE SET generation = EXCLUDED.generation
 *   WHERE task_marks.generation < EXCLUDED.generation
 *
 * and applies the effect only when that statement changed a row (rowCount 1). Bound the map (or table) in a
 * long-running consumer, e.g. by forgetting tasks some time after their terminal status.
 * @type {Map<string, number>}
 */
const handledUpTo = new Map();

let handled = 0;
let duplicates = 0;
let unreadable = 0;

/**
 * What an A2A client streaming the task saw: the StreamResponse member, with the state where there is one.
 * @param {TaskEventRecordValue['streamResponse']} streamResponse
 */
function streamKind(streamResponse) {
  if (!streamResponse) {
    return '-';
  }
  const [kind = '-'] = Object.keys(streamResponse);
  const state = streamResponse[kind]?.status?.state;
  return state ? `${kind} ${state}` : kind;
}

/**
 * @param {string} text
 * @returns {TaskEventRecordValue | null}
 */
function parseValue(text) {
  try {
    /** @type {unknown} */
    const parsed = JSON.parse(text);
    return /** @type {TaskEventRecordValue | null} */ (parsed);
  } catch {
    return null;
  }
}

/** @param {import('kafkajs').KafkaMessage} message */
function handle(message) {
  const value = parseValue(message.value?.toString('utf8') ?? '');
  if (value?.schema !== 'a2a-platform.task-event') {
    unreadable++;
    console.warn(`skipping a record that is not a task event at offset ${message.offset}`);
    return;
  }
  // Unknown fields and unknown event types are fine (docs/asyncapi.yaml, "Compatibility and versioning").
  const { taskId, generation, tenantId, type, streamResponse } = value;
  if (generation <= (handledUpTo.get(taskId) ?? 0)) {
    duplicates++;
    return;
  }
  // ---- the consumer's own work goes here; this example prints one line per event ----
  console.log(
    `${tenantId}\t${taskId}\tgeneration ${generation}\t${type}\t${streamKind(streamResponse)}`,
  );
  handledUpTo.set(taskId, generation);
  handled++;
}

const kafka = new Kafka({ clientId: 'task-events-example', brokers, logLevel: logLevel.WARN });
const consumer = kafka.consumer({ groupId });
let stopping = false;

/** @param {number} code */
async function stop(code) {
  if (stopping) {
    return;
  }
  stopping = true;
  await consumer.disconnect().catch(() => undefined);
  console.error(
    `task-events consumer: ${handled} events handled, ${duplicates} duplicates skipped` +
      (unreadable ? `, ${unreadable} unreadable records skipped` : ''),
  );
  process.exit(code);
}

process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));

/** The topic appears with the relay's first record; until then, subscribing fails. */
async function subscribe() {
  for (let attempt = 1; ; attempt++) {
    try {
      await consumer.subscribe({ topic, fromBeginning });
      return;
    } catch (error) {
      const type = /** @type {{ type?: string }} */ (error).type;
      if (type !== 'UNKNOWN_TOPIC_OR_PARTITION' && type !== 'LEADER_NOT_AVAILABLE') {
        throw error;
      }
      if (attempt === 1) {
        console.error(`task-events consumer: waiting for topic ${topic} to exist`);
      }
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }
}

try {
  await consumer.connect();
  await subscribe();
  console.error(
    `task-events consumer: group ${groupId} on ${topic} at ${brokers.join(',')}` +
      ` (${fromBeginning ? 'from the beginning' : 'new records only'}); Ctrl-C to stop`,
  );
  await consumer.run({
    // The group's offset moves on after eachMessage returns: a crash before that redelivers the record, and
    // the (persisted) dedupe mark absorbs it.
    eachMessage: ({ message }) => {
      handle(message);
      if (handled >= maxEvents) {
        setImmediate(() => void stop(0));
      }
      return Promise.resolve();
    },
  });
} catch (error) {
  console.error(
    `task-events consumer failed: ${error instanceof Error ? error.stack : String(error)}`,
  );
  await stop(1);
}
