/**
 * Reads a task-event topic back with a plain kafkajs consumer and compares it with the log: every event of the
 * log present, nothing else, each task on one partition with its generations in increasing order (exact
 * duplicates aside), and headers and value exactly as documented in docs/asyncapi.yaml.
 */
import type { StreamResponse } from '@lib/a2a-protocol';
import { toStreamResponse, type TaskEvent } from '@lib/task-domain';
import { Kafka, logLevel, type IHeaders } from 'kafkajs';
import { randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { LogEntry, LogTask } from './task-log';

/** One record as a consumer sees it. */
export interface TopicRecord {
  partition: number;
  offset: string;
  key: string | null;
  headers: Record<string, string>;
  /** The parsed JSON value (null when it did not parse). */
  value: Record<string, unknown> | null;
  raw: string;
}

function kafkaFor(brokers: string[], clientId: string): Kafka {
  return new Kafka({
    clientId,
    brokers,
    logLevel: logLevel.NOTHING,
    retry: { retries: 10, initialRetryTime: 200, maxRetryTime: 2_000 },
  });
}

/** Creates `topic` with `partitions` partitions (replication 1: the single development broker). */
export async function createTopic(brokers: string[], topic: string, partitions = 3): Promise<void> {
  const admin = kafkaFor(brokers, 'relay-test-admin').admin();
  await admin.connect();
  try {
    await admin.createTopics({
      topics: [{ topic, numPartitions: partitions, replicationFactor: 1 }],
      waitForLeaders: true,
    });
  } finally {
    await admin.disconnect();
  }
}

export async function deleteTopic(brokers: string[], topic: string): Promise<void> {
  const admin = kafkaFor(brokers, 'relay-test-admin').admin();
  try {
    await admin.connect();
    await admin.deleteTopics({ topics: [topic], timeout: 10_000 });
  } catch {
    // best effort: a leftover test topic is harmless
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/** Records on the topic now (sum over partitions of high − low watermark). */
export async function topicSize(brokers: string[], topic: string): Promise<number> {
  const admin = kafkaFor(brokers, 'relay-test-admin').admin();
  await admin.connect();
  try {
    const offsets = await admin.fetchTopicOffsets(topic);
    return offsets.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
  } finally {
    await admin.disconnect();
  }
}

export function headersOf(headers: IHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    const last = Array.isArray(value) ? value[value.length - 1] : value;
    if (last !== undefined) {
      out[name] = last.toString();
    }
  }
  return out;
}

function parse(raw: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * Everything on `topic` up to its high watermarks at the time of the call, in (partition, offset) order,
 * read by a consumer group of its own from the beginning. Throws after `timeoutMs`.
 */
export async function readTopic(
  brokers: string[],
  topic: string,
  timeoutMs = 60_000,
): Promise<TopicRecord[]> {
  const kafka = kafkaFor(brokers, 'relay-test-reader');
  const admin = kafka.admin();
  await admin.connect();
  let targets: Map<number, number>;
  try {
    const offsets = await admin.fetchTopicOffsets(topic);
    targets = new Map(
      offsets
        .filter((p) => Number(p.high) > Number(p.low))
        .map((p) => [p.partition, Number(p.high)] as const),
    );
  } finally {
    await admin.disconnect();
  }
  if (targets.size === 0) {
    return [];
  }
  const records: TopicRecord[] = [];
  const reached = new Map<number, number>();
  const consumer = kafka.consumer({
    groupId: `relay-test-reader-${randomBytes(6).toString('hex')}`,
    maxWaitTimeInMs: 200,
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      timer = setTimeout(() => {
        const progress = [...targets].map(
          ([p, high]) => `p${p}: ${(reached.get(p) ?? -1) + 1}/${high}`,
        );
        reject(new Error(`reading ${topic} took over ${timeoutMs} ms (${progress.join(', ')})`));
      }, timeoutMs);
      const done = (): boolean =>
        [...targets].every(([partition, high]) => (reached.get(partition) ?? -1) >= high - 1);
      consumer
        .run({
          eachMessage: ({ partition, message }) => {
            const raw = message.value?.toString('utf8') ?? '';
            const offset = Number(message.offset);
            if (offset < (targets.get(partition) ?? 0)) {
              records.push({
                partition,
                offset: message.offset,
                key: message.key?.toString('utf8') ?? null,
                headers: headersOf(message.headers),
                value: parse(raw),
                raw,
              });
            }
            reached.set(partition, Math.max(reached.get(partition) ?? -1, offset));
            if (done()) {
              resolve();
            }
            return Promise.resolve();
          },
        })
        .catch(reject);
    });
  } finally {
    clearTimeout(timer);
    await consumer.disconnect().catch(() => undefined);
  }
  return records.sort((a, b) => a.partition - b.partition || Number(a.offset) - Number(b.offset));
}

/** The record the relay must write for a log entry (docs/asyncapi.yaml), given the task's view. */
export function expectedRecord(
  entry: LogEntry,
  task: Pick<LogTask, 'contextId' | 'agentId'> | undefined,
): { key: string; headers: Record<string, string>; value: Record<string, unknown> } {
  const contextId = task?.contextId ?? null;
  const streamResponse: StreamResponse | null = contextId
    ? toStreamResponse({ type: entry.type, data: entry.data } as TaskEvent, {
        taskId: entry.taskId,
        contextId,
      })
    : null;
  const headers: Record<string, string> = {
    ce_specversion: '1.0',
    ce_id: entry.eventId,
    ce_type: `dev.a2a-platform.task.${entry.type}.v${entry.schemaVersion}`,
    ce_source: 'a2a-platform',
    ce_subject: entry.taskId,
    ce_time: entry.recordedAt,
    ce_datacontenttype: 'application/json',
    tenant: entry.tenantId,
    generation: String(entry.generation),
  };
  if (entry.metadata.traceparent) {
    headers['traceparent'] = entry.metadata.traceparent;
  }
  return {
    key: entry.taskId,
    headers,
    value: {
      schema: 'a2a-platform.task-event',
      schemaVersion: 1,
      eventId: entry.eventId,
      tenantId: entry.tenantId,
      agentId: task?.agentId ?? null,
      taskId: entry.taskId,
      contextId,
      generation: entry.generation,
      globalPosition: entry.globalPosition,
      type: entry.type,
      eventSchemaVersion: entry.schemaVersion,
      occurredAt: entry.recordedAt,
      actor: entry.metadata.actor,
      data: entry.data,
      streamResponse,
    },
  };
}

/** The outcome of comparing a topic with the log; `ok` when nothing is missing, unknown or out of order. */
export interface TopicVsLog {
  logEvents: number;
  records: number;
  /** Distinct (taskId, generation) pairs on the topic. */
  distinct: number;
  /** `tenant/task#generation` of log events not on the topic. */
  missing: string[];
  /** Records that are not an event of the log (unknown key, or another event id under a known key). */
  unknown: string[];
  /** Extra copies of events already seen (allowed: at-least-once), per event. */
  duplicates: { event: string; copies: number; offsets: string[] }[];
  duplicateRecords: number;
  /** A new generation arrived after a higher one of the same task (first occurrences only). */
  outOfOrder: string[];
  /** Tasks whose records are on more than one partition. */
  splitTasks: string[];
  /** Records whose key, headers or value differ from the documented record of their log event. */
  mismatched: string[];
  ok: boolean;
}

/**
 * Compares the topic with the log. `tasks` gives each task's context and agent (what the relay joins in);
 * `checkRecords` also compares every record's key, headers and value with {@link expectedRecord}.
 */
export function compareTopicToLog(
  log: readonly LogEntry[],
  records: readonly TopicRecord[],
  tasks: ReadonlyMap<string, Pick<LogTask, 'contextId' | 'agentId'>> = new Map(),
  checkRecords = true,
): TopicVsLog {
  const name = (taskId: string, generation: unknown) => `${taskId}#${String(generation)}`;
  const byKey = new Map(log.map((e) => [name(e.taskId, e.generation), e]));
  const seen = new Map<string, { copies: number; offsets: string[] }>();
  const highest = new Map<string, number>();
  const partitionOf = new Map<string, Set<number>>();
  const unknown: string[] = [];
  const outOfOrder: string[] = [];
  const mismatched: string[] = [];
  // Per partition in offset order: the order a consumer of that partition sees.
  for (const record of records) {
    const where = `p${record.partition}@${record.offset}`;
    const taskId = typeof record.value?.['taskId'] === 'string' ? record.value['taskId'] : null;
    const generation = record.value?.['generation'];
    const key = taskId ? name(taskId, generation) : null;
    const entry = key ? byKey.get(key) : undefined;
    if (!taskId || !key || !entry || entry.eventId !== record.value?.['eventId']) {
      unknown.push(`${where} ${record.raw.slice(0, 160)}`);
      continue;
    }
    (partitionOf.get(taskId) ?? partitionOf.set(taskId, new Set()).get(taskId)!).add(
      record.partition,
    );
    const copies = seen.get(key);
    if (copies) {
      copies.copies++;
      copies.offsets.push(where);
      continue;
    }
    seen.set(key, { copies: 1, offsets: [where] });
    const before = highest.get(taskId) ?? 0;
    if (entry.generation <= before) {
      outOfOrder.push(`${entry.tenantId}/${key} at ${where} after generation ${before}`);
    }
    highest.set(taskId, Math.max(before, entry.generation));
    if (checkRecords && mismatched.length < 20) {
      const expected = expectedRecord(entry, tasks.get(taskId));
      if (record.key !== expected.key) {
        mismatched.push(`${where} key ${String(record.key)} != ${expected.key}`);
      }
      if (!isDeepStrictEqual(record.headers, expected.headers)) {
        mismatched.push(
          `${where} headers ${JSON.stringify(record.headers)} != ${JSON.stringify(expected.headers)}`,
        );
      }
      if (!isDeepStrictEqual(record.value, expected.value)) {
        mismatched.push(
          `${where} value ${record.raw} != ${JSON.stringify(expected.value)}`.slice(0, 2_000),
        );
      }
    }
  }
  const missing = log
    .filter((e) => !seen.has(name(e.taskId, e.generation)))
    .map((e) => `${e.tenantId}/${name(e.taskId, e.generation)}`);
  const duplicates = [...seen]
    .filter(([, s]) => s.copies > 1)
    .map(([event, s]) => ({ event, copies: s.copies, offsets: s.offsets }));
  const splitTasks = [...partitionOf]
    .filter(([, partitions]) => partitions.size > 1)
    .map(([taskId, partitions]) => `${taskId} on partitions ${[...partitions].join(',')}`);
  return {
    logEvents: log.length,
    records: records.length,
    distinct: seen.size,
    missing,
    unknown,
    duplicates,
    duplicateRecords: duplicates.reduce((sum, d) => sum + d.copies - 1, 0),
    outOfOrder,
    splitTasks,
    mismatched,
    ok:
      missing.length === 0 &&
      unknown.length === 0 &&
      outOfOrder.length === 0 &&
      splitTasks.length === 0 &&
      mismatched.length === 0,
  };
}

/** A short human summary of a comparison (printed by the tests; the first few problems of each kind). */
export function describeComparison(result: TopicVsLog): string {
  const few = (items: readonly string[]) =>
    items.length === 0 ? '' : `: ${items.slice(0, 5).join('; ')}${items.length > 5 ? ' …' : ''}`;
  return [
    `log ${result.logEvents} events, topic ${result.records} records (${result.distinct} distinct)`,
    `missing ${result.missing.length}${few(result.missing)}`,
    `unknown ${result.unknown.length}${few(result.unknown)}`,
    `duplicates ${result.duplicateRecords}${few(result.duplicates.map((d) => `${d.event} ×${d.copies} at ${d.offsets.join(' ')}`))}`,
    `out of order ${result.outOfOrder.length}${few(result.outOfOrder)}`,
    `split over partitions ${result.splitTasks.length}${few(result.splitTasks)}`,
    `mismatched ${result.mismatched.length}${few(result.mismatched)}`,
  ].join('\n');
}
