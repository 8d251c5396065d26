import type { LocalPostgresConfig, PlatformConfig, PlatformFeatures } from '@lib/config';
import { connect } from 'node:net';
import { join, resolve } from 'node:path';
import { EmbeddedPostgres } from './embedded-postgres';

/** Where a server is dialled: a TCP host and port, or a Unix socket file. */
export type ServerAddress = { host: string; port: number } | { path: string };

/** How long a probe waits for a server to accept a connection: a start-up must not hang on absent servers. */
const PROBE_TIMEOUT_MS = 1_000;

/** The Postgres the standalone process uses, and why. */
export type PostgresChoice =
  | { kind: 'configured'; url: string }
  | { kind: 'local'; url: string; address: ServerAddress }
  | { kind: 'embedded'; address: ServerAddress };

/** What the standalone process runs and offers, given which optional servers answer. */
export interface StandalonePlan {
  relay: boolean;
  pushDispatcher: boolean;
  features: PlatformFeatures;
  /** One line per absent server that something asked for: what is off because of it. */
  notices: string[];
}

/** The servers of the standalone process, chosen and started: see {@link startLocalServers}. */
export interface LocalServers {
  postgresUrl: string;
  /** The Postgres this process started (and stops when it exits); null for a server of someone else. */
  embedded: EmbeddedPostgres | null;
  plan: StandalonePlan;
}

/**
 * Picks Postgres (POSTGRES_URL, else the server libpq would use by default if it answers, else the embedded
 * one, started here) and finds out which optional servers (Kafka for the relay and the push dispatcher,
 * Redis for the dispatcher and the request-rate quotas) answer, saying in one line each what it chose and
 * what is off. Servers are probed once, here: one that comes up later is used after a restart.
 */
export async function startLocalServers(
  config: PlatformConfig,
  postgres: LocalPostgresConfig,
  projectRoot: string,
  log: (message: string) => void,
): Promise<LocalServers> {
  const needsKafka = config.START_RELAY || config.START_PUSH_DISPATCHER;
  const [choice, kafka, redis] = await Promise.all([
    choosePostgres(postgres),
    needsKafka ? anyAnswers(kafkaAddresses(config.KAFKA_BROKERS)) : Promise.resolve(false),
    anyAnswers(redisAddresses(config.REDIS_URL)),
  ]);
  log(describeChoice(choice, postgres));
  const plan = planStandalone(config, { kafka, redis });
  plan.notices.forEach((notice) => log(notice));
  if (choice.kind !== 'embedded') {
    return { postgresUrl: choice.url, embedded: null, plan };
  }
  const embedded = await EmbeddedPostgres.start({
    dir: resolve(projectRoot, postgres.EMBEDDED_POSTGRES_DIR),
    port: postgres.EMBEDDED_POSTGRES_PORT,
    log,
  });
  log(
    `embedded PostgreSQL ${embedded.version} ready on 127.0.0.1:${postgres.EMBEDDED_POSTGRES_PORT} ` +
      `(data in ${embedded.dataDir})`,
  );
  return { postgresUrl: embedded.url('a2a'), embedded, plan };
}

async function choosePostgres(config: LocalPostgresConfig): Promise<PostgresChoice> {
  if (config.POSTGRES_URL !== undefined) {
    return { kind: 'configured', url: config.POSTGRES_URL };
  }
  const address = defaultPostgresAddress(config);
  return (await answers(address))
    ? { kind: 'local', url: defaultPostgresUrl(config), address }
    : { kind: 'embedded', address };
}

/** The one line that says which Postgres was chosen and why. */
export function describeChoice(choice: PostgresChoice, config: LocalPostgresConfig): string {
  switch (choice.kind) {
    case 'configured':
      return `Postgres: ${redacted(choice.url)} (POSTGRES_URL)`;
    case 'local':
      return (
        `Postgres: ${redacted(choice.url)}: POSTGRES_URL is unset and a server answers at ` +
        `${describeAddress(choice.address)} (PGHOST/PGPORT)`
      );
    case 'embedded':
      return (
        `Postgres: the embedded one on 127.0.0.1:${config.EMBEDDED_POSTGRES_PORT}: POSTGRES_URL is unset ` +
        `and no server answers at ${describeAddress(choice.address)} (PGHOST/PGPORT)`
      );
  }
}

/**
 * What runs and what is offered: the relay needs Kafka; the push dispatcher needs Kafka and Redis; push
 * notifications are off only when the dispatcher was asked for and cannot run (START_PUSH_DISPATCHER=false
 * leaves delivery to a dispatcher elsewhere); request-rate quotas need Redis.
 */
export function planStandalone(
  config: Pick<
    PlatformConfig,
    'START_RELAY' | 'START_PUSH_DISPATCHER' | 'KAFKA_BROKERS' | 'REDIS_URL'
  >,
  reachable: { kafka: boolean; redis: boolean },
): StandalonePlan {
  const relay = config.START_RELAY && reachable.kafka;
  const pushDispatcher = config.START_PUSH_DISPATCHER && reachable.kafka && reachable.redis;
  const notices: string[] = [];
  if (!reachable.kafka && (config.START_RELAY || config.START_PUSH_DISPATCHER)) {
    const off = [
      ...(config.START_RELAY ? [KAFKA_FEED] : []),
      ...(config.START_PUSH_DISPATCHER ? [PUSH_NOTIFICATIONS] : []),
    ];
    notices.push(`Kafka not reachable at ${config.KAFKA_BROKERS}: ${listOff(off)}`);
  }
  if (!reachable.redis) {
    const off = [...(config.START_PUSH_DISPATCHER ? [PUSH_NOTIFICATIONS] : []), RATE_QUOTAS];
    notices.push(`Redis not reachable at ${redacted(config.REDIS_URL)}: ${listOff(off)}`);
  }
  return {
    relay,
    pushDispatcher,
    features: {
      pushNotifications: pushDispatcher || !config.START_PUSH_DISPATCHER,
      requestRateQuotas: reachable.redis,
    },
    notices,
  };
}

/** The server libpq would use by default: PGHOST (a host, or the directory of its Unix socket) and PGPORT. */
export function defaultPostgresAddress(
  config: Pick<LocalPostgresConfig, 'PGHOST' | 'PGPORT'>,
): ServerAddress {
  return config.PGHOST.startsWith('/')
    ? { path: join(config.PGHOST, `.s.PGSQL.${config.PGPORT}`) }
    : { host: config.PGHOST, port: config.PGPORT };
}

/** The platform's database `a2a`, as user `postgres`, on that server (POSTGRES_URL's default, there). */
export function defaultPostgresUrl(config: Pick<LocalPostgresConfig, 'PGHOST' | 'PGPORT'>): string {
  if (config.PGHOST.startsWith('/')) {
    return `postgres://postgres@localhost:${config.PGPORT}/a2a?host=${encodeURIComponent(config.PGHOST)}`;
  }
  const host = config.PGHOST.includes(':') ? `[${config.PGHOST}]` : config.PGHOST;
  return `postgres://postgres@${host}:${config.PGPORT}/a2a`;
}

/** The brokers of KAFKA_BROKERS (`host:port,…`; IPv6 hosts in brackets); malformed entries are left out. */
export function kafkaAddresses(brokers: string): ServerAddress[] {
  return brokers.split(',').flatMap((entry) => {
    const match = /^\s*\[?([^\]\s]+?)\]?:(\d{1,5})\s*$/.exec(entry);
    return match?.[1] && match[2] ? [{ host: match[1], port: Number(match[2]) }] : [];
  });
}

/** The server of a `redis://` or `rediss://` URL (port 6379 when it names none); none when malformed. */
export function redisAddresses(url: string): ServerAddress[] {
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
      return [];
    }
    const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1') || '127.0.0.1';
    return [{ host, port: parsed.port ? Number(parsed.port) : 6379 }];
  } catch {
    return [];
  }
}

/** A URL without its password, for logs. */
export function redacted(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) {
      parsed.password = '***';
    }
    return parsed.toString();
  } catch {
    return url;
  }
}

function describeAddress(address: ServerAddress): string {
  return 'path' in address ? address.path : `${address.host}:${address.port}`;
}

/** A feature as named in the lines about absent servers. */
interface Feature {
  name: string;
  plural: boolean;
}

const KAFKA_FEED: Feature = { name: 'the Kafka feed', plural: false };
const PUSH_NOTIFICATIONS: Feature = { name: 'push notifications', plural: true };
const RATE_QUOTAS: Feature = { name: 'per-tenant request-rate quotas', plural: true };

function listOff(features: readonly Feature[]): string {
  const names = features.map((feature) => feature.name);
  const last = names.pop() ?? '';
  const plural = names.length > 0 || features.some((feature) => feature.plural);
  return `${names.length > 0 ? `${names.join(', ')} and ${last}` : last} ${plural ? 'are' : 'is'} off`;
}

async function anyAnswers(addresses: ServerAddress[]): Promise<boolean> {
  const results = await Promise.all(addresses.map((address) => answers(address)));
  return results.includes(true);
}

/** Whether a server accepts a connection at `address` within PROBE_TIMEOUT_MS. */
export function answers(address: ServerAddress): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect(address);
    const settle = (answered: boolean): void => {
      socket.destroy();
      done(answered);
    };
    socket.setTimeout(PROBE_TIMEOUT_MS, () => settle(false));
    socket.once('connect', () => settle(true));
    socket.once('error', () => settle(false));
  });
}
