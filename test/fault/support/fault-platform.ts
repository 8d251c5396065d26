import { createPool } from '@lib/event-store';
import {
  freePort,
  kafkaBrokers,
  PostgresServer,
  startStandalone,
  uniqueTopic,
  type PlatformProcess,
} from '@lib/testing';
import { EXAMPLE_AGENT_IDS } from '@lib/worker-sdk';
import { readdirSync, readFileSync } from 'node:fs';
import type { Pool } from 'pg';
import { createTopic, deleteTopic } from '../../../apps/relay/test/support/topic';

/** The lease settings of the platform under test: the defaults (libs/config), so faults meet real timing. */
const LEASE_TTL_MS = 10_000;

/**
 * The whole platform (`npm start`: ingress, task-service, relay and the example workers as child
 * processes) on a private Postgres server of its own, which the fault tests restart, stop and cut at will
 * without disturbing anything else on the machine. The relay publishes to a topic of its own.
 */
export interface FaultPlatform {
  postgres: PostgresServer;
  /** POSTGRES_URL of the platform. */
  databaseUrl: string;
  /** A pool for the checks (its own application_name, so fault injection never cuts it). */
  checks: Pool;
  brokers: string[];
  topic: string;
  relayName: string;
  process: PlatformProcess;
  baseUrl: string;
  grpcTarget: string;
  /** The process's ops listener (`/livez`, `/readyz`, `/metrics`). */
  opsUrl: string;
  /** SIGKILLs the platform process (nothing else). */
  kill(): Promise<void>;
  /** Starts the platform process again on the same ports and database; resolves when it serves. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export interface FaultPlatformOptions {
  /** Kafka bootstrap servers; default: the ones every test uses (`kafkaBrokers()`). */
  brokers?: string[];
}

export async function startFaultPlatform(
  name: string,
  options: FaultPlatformOptions = {},
): Promise<FaultPlatform> {
  const postgres = await PostgresServer.start({ name });
  const databaseUrl = postgres.url('a2a');
  const brokers = options.brokers ?? (await kafkaBrokers());
  const topic = uniqueTopic(`fault-${name}`);
  const relayName = `fault-${name}`;
  let checks: Pool | null = null;
  try {
    await createTopic(brokers, topic);
    const opsPort = await freePort();
    const started = await startStandalone({
      OPS_PORT: String(opsPort),
      // Seconds, not the default five: the outage tests see the dependency's state turn within their window.
      DEPENDENCY_CHECK_MS: '1000',
      POSTGRES_URL: databaseUrl,
      START_RELAY: 'true',
      KAFKA_BROKERS: brokers.join(','),
      TASK_EVENTS_TOPIC: topic,
      RELAY_NAME: relayName,
      WORKER_CONCURRENCY: '16',
      LEASE_TTL_MS: String(LEASE_TTL_MS),
    });
    const pool = createPool(databaseUrl, { max: 4, applicationName: 'a2a-test:checks' });
    checks = pool;
    return {
      postgres,
      databaseUrl,
      checks: pool,
      brokers,
      topic,
      relayName,
      process: started.process,
      baseUrl: started.baseUrl,
      grpcTarget: started.grpcTarget,
      opsUrl: `http://127.0.0.1:${opsPort}`,
      kill: () => started.process.kill(),
      async restart() {
        started.process.start();
        await waitUntilServing(started.process);
      },
      async close() {
        await started.process.stop();
        await pool.end();
        await deleteTopic(brokers, topic).catch(() => undefined);
        await postgres.destroy();
      },
    };
  } catch (error) {
    await checks?.end();
    await postgres.destroy();
    throw error;
  }
}

/** Waits for the (re)started platform process to be ready with all example workers connected. */
async function waitUntilServing(proc: PlatformProcess): Promise<void> {
  await proc.waitForOutput(/A2A platform ready/, 60_000);
  for (const agent of EXAMPLE_AGENT_IDS) {
    await proc.waitForOutput(new RegExp(`serves ${agent}\\b`), 30_000);
  }
}

/** The live child processes of `pid` (from /proc; zombies count as gone). */
export function childProcesses(pid: number): number[] {
  return livePids().filter((candidate) => parentOf(candidate) === pid);
}

/** Which of `pids` are still alive (zombies count as gone). */
export function stillAlive(pids: readonly number[]): number[] {
  const live = new Set(livePids());
  return pids.filter((pid) => live.has(pid));
}

function livePids(): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => {
      const stat = readStat(pid);
      return stat !== null && stat.state !== 'Z';
    });
}

function parentOf(pid: number): number | null {
  return readStat(pid)?.ppid ?? null;
}

/** `/proc/<pid>/stat`: the state and parent pid (the command name in parentheses may hold spaces). */
function readStat(pid: number): { state: string; ppid: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0] ?? '?', ppid: Number(fields[1]) };
  } catch {
    return null;
  }
}
