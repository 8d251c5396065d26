import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { z } from 'zod';

const port = z.coerce.number().int().min(0).max(65535);
const ms = z.coerce.number().int().positive();
const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

/** Postgres connection. */
export const postgresSchema = z.object({
  POSTGRES_URL: z.string().default('postgres://postgres@127.0.0.1:5432/a2a'),
  POSTGRES_POOL_SIZE: z.coerce.number().int().positive().default(10),
  /**
   * What a process does about the database schema before it serves (docs/deploy.md "Upgrades"): `apply`
   * migrates it (`npm start`, tests, a laptop); `wait` never migrates and waits, unready, until the database
   * holds every migration and function file of this release (a cluster: the migrations Job runs them, with
   * the owner's credentials, and the apps connect with a role that cannot change the schema).
   */
  SCHEMA_MIGRATION: z.enum(['apply', 'wait']).default('apply'),
  /**
   * The role the apps connect as where they do not own the schema: `migrate` grants it what they need (use
   * of the platform's schemas, rows of their tables, sequences, functions) and nothing else. Unset: no grant.
   */
  SCHEMA_RUNTIME_ROLE: z.string().min(1).optional(),
});

/** The task-service: worker gRPC API, internal command API, leases and dispatch. */
export const taskServiceSchema = z.object({
  TASK_SERVICE_HOST: z.string().default('127.0.0.1'),
  /** Port of the WorkerService (agent workers connect here). */
  WORKER_GRPC_PORT: port.default(50052),
  /** Port of the internal TaskCommandService (ingress replicas call it). */
  TASK_SERVICE_GRPC_PORT: port.default(50053),
  REPLICA_ID: z.string().default(`${hostname()}-${process.pid}`),
  LEASE_TTL_MS: ms.default(10_000),
  HEARTBEAT_INTERVAL_MS: ms.default(2_000),
  CANCEL_GRACE_MS: ms.default(5_000),
  SWEEP_INTERVAL_MS: ms.default(1_000),
  /** How long a blocking SendMessage waits for a terminal or interrupted state before returning the task. */
  BLOCKING_SEND_TIMEOUT_MS: ms.default(60_000),
  /**
   * Write batches (group commits) one replica has committing at once. One gathers the most commands per
   * commit, which cost least per request on a small host (docs/benchmarks-history.md); more overlap a commit's wait
   * with deciding the next batch, for hosts whose cores would otherwise idle.
   */
  WRITER_BATCHES_IN_FLIGHT: z.coerce.number().int().min(1).max(8).default(1),
  /**
   * How often a replica writes its connected workers to `ops.worker_sessions` (one statement for all of them;
   * also soon after a registration or a disconnect). Its rows are stale after three missed refreshes.
   */
  WORKER_SESSIONS_REFRESH_MS: ms.default(5_000),
  /** How long the stale rows of a replica that died stay visible before any replica's refresh deletes them. */
  WORKER_SESSIONS_RETAIN_STALE_MS: ms.default(300_000),
});

/** The ingress: A2A bindings and agent cards. */
export const ingressSchema = z.object({
  INGRESS_HOST: z.string().default('127.0.0.1'),
  INGRESS_PORT: port.default(8080),
  /** Base URL clients use to reach the ingress (behind a proxy, set the public one). */
  PUBLIC_BASE_URL: z.string().url().optional(),
  /** Listen address of the A2A gRPC binding (`lf.a2a.v1.A2AService`). */
  A2A_GRPC_HOST: z.string().default('127.0.0.1'),
  A2A_GRPC_PORT: port.default(50051),
  /**
   * `host:port` clients dial for the gRPC binding, written into agent cards. Default: the host of the public
   * base URL (or of the card request) with A2A_GRPC_PORT.
   */
  PUBLIC_GRPC_ADDRESS: z
    .string()
    .regex(/^[^\s/:]+:\d{1,5}$|^\[[0-9a-fA-F:.]+\]:\d{1,5}$/, 'must be host:port')
    .optional(),
  /**
   * PEM file with the private key (EC P-256 or RSA, PKCS#8) that signs agent cards. Unset: a key generated at
   * start-up (fine for one replica; replicas behind one name need the same key).
   */
  AGENT_CARD_SIGNING_KEY_FILE: z.string().optional(),
  /** `Cache-Control: max-age` of agent cards and the JWKS, in seconds. */
  AGENT_CARD_MAX_AGE_S: z.coerce.number().int().min(0).default(300),
  /** Comma-separated host:port list of task-service replicas (internal command API). */
  TASK_SERVICE_URLS: z.string().default('127.0.0.1:50053'),
  /** Agent served at /.well-known/agent-card.json, as tenant/agent. */
  DEFAULT_AGENT: z.string().default('demo/echo'),
  /**
   * Spec §10.1: a request without A2A-Version means 0.3, which this 1.0 server rejects. Clients that send no
   * version header (some test kits) can be served as 1.0 by setting this to true.
   */
  A2A_ASSUME_V1_WHEN_MISSING: bool.default('false'),
  /**
   * Comma-separated `<tenant>/<agent>` served without an API key (public agents, e.g. one a conformance kit
   * that sends no credentials is pointed at). Callers without a key share the principal `anonymous`; callers
   * with one are authenticated as usual. Their cards list no security requirement.
   */
  ANONYMOUS_AGENTS: z
    .string()
    .default('')
    .transform((list) =>
      list
        .split(',')
        .map((entry) => entry.trim())
        .filter((entry) => entry.length > 0),
    )
    .pipe(z.array(z.string().regex(/^[^/\s]+\/[^/\s]+$/, 'must be <tenant>/<agent>'))),
  MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(4 * 1024 * 1024),
  /** Events a stream subscriber may have waiting before it is cut off (it can resume with Last-Event-ID). */
  STREAM_MAX_PENDING_EVENTS: z.coerce.number().int().positive().default(1_000),
  /** How long a subscriber may leave its full buffer untouched before it is cut off. */
  STREAM_STALL_MS: z.coerce.number().int().positive().default(10_000),
});

/**
 * A file the process reads at start (a CA bundle, a mounted Secret): read once when the configuration is
 * loaded, so that a wrong path or an empty file stops the process before it waits for anything else. The
 * error names the path and why, never the content.
 */
const readableFile = z
  .string()
  .min(1)
  // Piped: an empty value is one problem, not also a file that cannot be read.
  .pipe(
    z.string().superRefine((path, ctx) => {
      let problem: string | undefined;
      try {
        problem = readFileSync(path).length === 0 ? `${path} is empty` : undefined;
      } catch (error) {
        problem = `cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
      }
      if (problem) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, message: problem });
      }
    }),
  );

/** SASL mechanisms the Kafka clients offer (kafkajs's names; Kafka's upper-case names are accepted too). */
export const KAFKA_SASL_MECHANISMS = ['plain', 'scram-sha-256', 'scram-sha-512'] as const;

/**
 * How every Kafka client of the platform reaches the brokers (the relay, the push dispatcher, the standalone
 * process that hosts them): plaintext by default; TLS and SASL for a secured cluster, such as Strimzi's TLS
 * listener with SCRAM-SHA-512 users. Schemas that include it check it with {@link kafkaClientRules};
 * `@lib/kafka`'s `createKafka` turns it into kafkajs's options.
 */
export const kafkaClientSchema = z.object({
  /** Comma-separated `host:port` list of the bootstrap brokers. */
  KAFKA_BROKERS: z.string().default('127.0.0.1:9092'),
  /** Connect with TLS; the brokers' certificates are checked against Node's CAs, or KAFKA_TLS_CA_FILE's. */
  KAFKA_TLS: bool.default('false'),
  /**
   * PEM file of the CAs that sign the brokers' certificates (Strimzi: the cluster CA's `ca.crt`), trusted
   * instead of Node's; setting it implies KAFKA_TLS. A file that cannot be read stops the start.
   */
  KAFKA_TLS_CA_FILE: readableFile.optional(),
  /** SASL mechanism; SASL needs it, KAFKA_SASL_USERNAME and a password (inline or a file), or none of them. */
  KAFKA_SASL_MECHANISM: z
    .string()
    .trim()
    .toLowerCase()
    .pipe(z.enum(KAFKA_SASL_MECHANISMS))
    .optional(),
  KAFKA_SASL_USERNAME: z.string().min(1).optional(),
  /** The SASL password itself (never logged); or KAFKA_SASL_PASSWORD_FILE. */
  KAFKA_SASL_PASSWORD: z.string().min(1).optional(),
  /**
   * A file holding the SASL password, e.g. a mounted Secret (Strimzi's KafkaUser Secret, key `password`).
   * One trailing line break is not part of the password; a file that cannot be read stops the start.
   */
  KAFKA_SASL_PASSWORD_FILE: readableFile.optional(),
});

/**
 * The rules of {@link kafkaClientSchema} across its variables, for `.superRefine` on every schema that
 * includes it (zod cannot merge an object schema that carries its own refinement): SASL is all or nothing,
 * and its password comes from one place.
 */
export function kafkaClientRules(config: KafkaClientConfig, ctx: z.RefinementCtx): void {
  const sasl: [name: string, value: string | undefined][] = [
    ['KAFKA_SASL_MECHANISM', config.KAFKA_SASL_MECHANISM],
    ['KAFKA_SASL_USERNAME', config.KAFKA_SASL_USERNAME],
    config.KAFKA_SASL_PASSWORD_FILE !== undefined
      ? ['KAFKA_SASL_PASSWORD_FILE', config.KAFKA_SASL_PASSWORD_FILE]
      : config.KAFKA_SASL_PASSWORD !== undefined
        ? ['KAFKA_SASL_PASSWORD', config.KAFKA_SASL_PASSWORD]
        : ['KAFKA_SASL_PASSWORD or KAFKA_SASL_PASSWORD_FILE', undefined],
  ];
  const set = sasl.filter(([, value]) => value !== undefined).map(([name]) => name);
  if (set.length > 0 && set.length < sasl.length) {
    for (const [name] of sasl.filter(([, value]) => value === undefined)) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: [name],
        message: `required with ${set.join(' and ')} (SASL takes a mechanism, a user name and a password, or none of them)`,
      });
    }
  }
  if (config.KAFKA_SASL_PASSWORD !== undefined && config.KAFKA_SASL_PASSWORD_FILE !== undefined) {
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      path: ['KAFKA_SASL_PASSWORD_FILE'],
      message: 'set KAFKA_SASL_PASSWORD or KAFKA_SASL_PASSWORD_FILE, not both',
    });
  }
}

/** The relay: the committed log to Kafka. */
export const relaySchema = kafkaClientSchema.extend({
  KAFKA_CLIENT_ID: z.string().default('a2a-platform-relay'),
  /** Topic of the public task-event feed (docs/asyncapi.yaml). */
  TASK_EVENTS_TOPIC: z.string().default('a2a.task-events.v1'),
  /** Name of this relay's checkpoint; relays with the same name elect one leader. */
  RELAY_NAME: z.string().default('task-events'),
  RELAY_BATCH_SIZE: z.coerce.number().int().positive().default(500),
  /**
   * The relay reads the log again this long after a read that found nothing, doubling up to
   * RELAY_IDLE_POLL_MAX_MS while nothing comes; a task notice (every append sends one) wakes it at once. The
   * poll finds what a notice cannot announce: rows held back behind a transaction that was running.
   */
  RELAY_IDLE_POLL_MS: z.coerce.number().int().positive().default(200),
  RELAY_IDLE_POLL_MAX_MS: z.coerce.number().int().positive().default(1_000),
});

/** An entry of PUSH_ALLOWLIST or UPSTREAM_ALLOWLIST: a host name, an IP address, or an IPv4 / IPv6 CIDR. */
const allowlistEntry = z.string().refine(
  (entry) => {
    const [address = '', prefix, extra] = entry.split('/');
    if (prefix !== undefined) {
      const width = isIP(address) === 4 ? 32 : isIP(address) === 6 ? 128 : 0;
      return extra === undefined && /^\d{1,3}$/.test(prefix) && Number(prefix) <= width;
    }
    return isIP(entry) !== 0 || /^(?=.{1,253}$)[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?$/i.test(entry);
  },
  { message: 'must be a host name, an IP address or a CIDR' },
);

/** A JSON object of tenant → host names and CIDRs (PUSH_ALLOWLIST, UPSTREAM_ALLOWLIST). */
const tenantAllowlist = z
  .string()
  .default('{}')
  .transform((text, ctx): unknown => {
    try {
      return JSON.parse(text);
    } catch {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: 'must be a JSON object' });
      return z.NEVER;
    }
  })
  .pipe(z.record(z.string(), z.array(allowlistEntry)));

/**
 * The push dispatcher (ADR 0010): webhook attempts, backoff, timeouts and the SSRF allowlist. The dispatcher
 * composes it with `postgresSchema`, `kafkaClientSchema` and the topic of `relaySchema` (see
 * PushDispatcherConfig).
 */
export const pushDispatcherSchema = z.object({
  /** Attempts of one delivery before it is dead (the first included). */
  PUSH_MAX_ATTEMPTS: z.coerce.number().int().positive().default(8),
  /** Backoff before the second attempt; it doubles per attempt, with full jitter. */
  PUSH_BACKOFF_BASE_MS: ms.default(1_000),
  /** Longest wait between two attempts, also the longest `Retry-After` honoured. */
  PUSH_BACKOFF_CAP_MS: ms.default(300_000),
  /** Name resolution, TCP and TLS of a new connection to a receiver. */
  PUSH_CONNECT_TIMEOUT_MS: ms.default(5_000),
  /** From the connection being ready to the receiver's response headers. */
  PUSH_RESPONSE_TIMEOUT_MS: ms.default(10_000),
  /** From the response headers to the end of the response body (the status decides the outcome). */
  PUSH_BODY_TIMEOUT_MS: ms.default(5_000),
  /** Lane jobs one dispatcher replica runs at once (each holds at most one POST). */
  PUSH_WORKER_CONCURRENCY: z.coerce.number().int().positive().default(64),
  /** Sends at once per destination host; a lane whose host is at the limit is re-queued. */
  PUSH_HOST_CONCURRENCY: z.coerce.number().int().positive().default(16),
  /** Response bytes read at most; the rest is not read and the connection is closed. */
  PUSH_RESPONSE_BODY_LIMIT_BYTES: z.coerce.number().int().positive().default(65_536),
  /**
   * JSON object: tenant → host names and CIDRs its webhooks may reach although they are reserved (loopback,
   * private, link-local, …), e.g. `{"acme":["hooks.acme.internal","10.20.0.0/16"]}`.
   */
  PUSH_ALLOWLIST: tenantAllowlist,
  /**
   * How long a claimed delivery stays claimed: after it, another run may send it again. Keep it above one
   * whole attempt (PUSH_CONNECT_TIMEOUT_MS + PUSH_RESPONSE_TIMEOUT_MS + PUSH_BODY_TIMEOUT_MS), or a slow
   * attempt can be doubled.
   */
  PUSH_CLAIM_TIMEOUT_MS: ms.default(60_000),
  /** How often every replica re-schedules, from Postgres, the deliveries Redis lost. */
  PUSH_RECONCILE_INTERVAL_MS: ms.default(60_000),
  /** Kafka consumer group of the feed consumers. */
  PUSH_CONSUMER_GROUP: z.string().min(1).default('push-dispatcher'),
  /**
   * Prefix of the dispatcher's BullMQ keys in Redis: platforms that share a Redis need their own (their lane
   * jobs would otherwise run against each other's databases). The admin API schedules redriven deliveries
   * under it too.
   */
  PUSH_QUEUE_PREFIX: z.string().min(1).default('a2a-push'),
  /** BullMQ's Redis (schedules attempts; the truth is in Postgres). */
  REDIS_URL: z.string().default('redis://127.0.0.1:6379'),
});

/**
 * Agents imported from existing A2A servers (docs/upstream.md): the admin API fetches their cards, the bridge
 * calls them. Both hold the key that seals the credentials the bridge uses.
 */
export const upstreamSchema = z.object({
  /**
   * 32 bytes, base64: seals (AES-256-GCM) each imported agent's upstream credentials and the bridge's worker
   * secret at rest. Unset: importing is refused with a clear error, and the bridge does not start.
   */
  UPSTREAM_SECRETS_KEY: z
    .string()
    .refine((text) => Buffer.from(text, 'base64').length === 32, 'must be 32 bytes in base64')
    .optional(),
  /**
   * JSON object: tenant → host names and CIDRs its upstream agents may be reached at although they are
   * reserved (loopback, private, link-local, …), e.g. `{"acme":["agents.acme.internal","10.20.0.0/16"]}`.
   */
  UPSTREAM_ALLOWLIST: tenantAllowlist,
  /** The whole fetch of an upstream agent card, from name resolution to its last byte. */
  UPSTREAM_CARD_TIMEOUT_MS: ms.default(5_000),
  /** Bytes of an upstream agent card read at most; a larger card is refused. */
  UPSTREAM_CARD_LIMIT_BYTES: z.coerce.number().int().positive().default(262_144),
  /**
   * The admin API reads every imported agent's card again this often (a change is a new version of its
   * definition, audited); 0: only `agents sync` does.
   */
  UPSTREAM_SYNC_INTERVAL_MS: z.coerce.number().int().min(0).default(3_600_000),
});

/** Tenant quotas, enforced by every ingress replica (counted in Redis, shared). */
export const quotaSchema = z.object({
  /** Requests per second of a tenant whose own quota is not set; unset: no limit. */
  TENANT_DEFAULT_REQUESTS_PER_SECOND: z.coerce.number().int().positive().optional(),
  /** Non-terminal tasks of a tenant whose own quota is not set; unset: no limit. */
  TENANT_DEFAULT_MAX_ACTIVE_TASKS: z.coerce.number().int().positive().optional(),
  /** Where request rates are counted (the same Redis as the push dispatcher's is fine). */
  REDIS_URL: z.string().default('redis://127.0.0.1:6379'),
});

/**
 * OIDC issuers of tenants (`@lib/tenancy` oidc): the admin API registers them, the ingress fetches their
 * JWK Sets.
 */
export const oidcSchema = z.object({
  /**
   * Local identity providers (tests, development): accept `http` issuer and JWKS URLs on loopback hosts, and
   * fetch JWK Sets from loopback addresses. Any other host always needs `https`, and no other reserved
   * address (private, link-local, metadata, …) is ever fetched from.
   */
  OIDC_ALLOW_INSECURE_LOOPBACK: bool.default('false'),
});

/**
 * The admin API: tenants, agents, credentials, issuers, audit, webhook deliveries (`apps/admin-api`). It
 * schedules redriven deliveries on the push dispatcher's queue: see {@link AdminApiConfig}.
 */
export const adminApiSchema = z
  .object({
    /** Port of the admin API when it runs as its own process (the standalone serves it on INGRESS_PORT). */
    ADMIN_API_PORT: port.default(8070),
    ADMIN_API_HOST: z.string().default('127.0.0.1'),
    /**
     * A platform-admin bearer token accepted from configuration, for the first start (before any admin key
     * exists) and for automation that holds a secret store. Unset: only admin keys issued through the API.
     */
    ADMIN_BOOTSTRAP_TOKEN: z.string().min(24).optional(),
    /**
     * The built web console (`dist/console/`: index.html, playground.html, assets/) served at `/console/`.
     * Unset: `dist/console` of the build the process runs from; a folder that does not exist answers 404.
     */
    ADMIN_CONSOLE_DIR: z.string().min(1).optional(),
  })
  .merge(oidcSchema)
  .merge(upstreamSchema);

/** The operators' command line over the admin API (`npm run admin`). */
export const adminClientSchema = z.object({
  /** Where the admin API is served: the standalone process, or an admin-api process. */
  ADMIN_API_URL: z.string().url().default('http://127.0.0.1:8080'),
  /** A platform-admin token (ADMIN_BOOTSTRAP_TOKEN or an admin key), or a tenant key with tenant:admin. */
  ADMIN_TOKEN: z.string().min(1),
});

/** The demo tenant seeded on start-up. */
export const demoSchema = z.object({
  DEMO_TENANT: z.string().default('demo'),
  A2A_DEMO_API_KEY: z.string().min(1).default('demo-key'),
  A2A_DEMO_WORKER_SECRET: z.string().min(1).default('demo-worker-secret'),
});

/** An agent worker process. */
export const workerSchema = z.object({
  WORKER_TARGET: z.string().default('127.0.0.1:50052'),
  WORKER_SECRET: z.string().optional(),
  /** Tasks one worker process runs at once; each example agent has its own default when unset. */
  WORKER_CONCURRENCY: z.coerce.number().int().positive().optional(),
});

/**
 * The bridge (`apps/bridge`): one worker per imported agent, calling its upstream A2A server. Composed with
 * `postgresSchema` and `upstreamSchema` (BridgeConfig).
 */
export const bridgeSchema = z.object({
  WORKER_TARGET: z.string().default('127.0.0.1:50052'),
  /** How often the bridge reads the imported agents (a new, changed or removed one is served after it). */
  BRIDGE_POLL_MS: ms.default(2_000),
  /** Tasks of one imported agent this bridge runs at once. */
  BRIDGE_CONCURRENCY: z.coerce.number().int().positive().default(32),
  /** Connecting to an upstream (name resolution, TCP, TLS). */
  UPSTREAM_CONNECT_TIMEOUT_MS: ms.default(10_000),
  /** From a request sent upstream to its response headers (a stream's first bytes). */
  UPSTREAM_RESPONSE_TIMEOUT_MS: ms.default(60_000),
  /**
   * How long calls to an upstream that does not answer (no connection, 5xx, a broken stream) are retried,
   * counted from the task's last progress; after it the task fails, saying so.
   */
  UPSTREAM_RETRY_BUDGET_MS: ms.default(60_000),
  /** The first wait between two retries or GetTask polls; it doubles up to UPSTREAM_MAX_WAIT_MS. */
  UPSTREAM_FIRST_WAIT_MS: ms.default(200),
  UPSTREAM_MAX_WAIT_MS: ms.default(5_000),
  /**
   * Bytes of one upstream event (an SSE event, a JSON answer, a gRPC message) the bridge takes at most; a
   * larger one fails its task, saying so. At most 3 MiB: what the bridge passes on must fit the worker
   * protocol's 4 MiB messages.
   */
  UPSTREAM_EVENT_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .max(3 * 1024 * 1024)
    .default(1024 * 1024),
});

/**
 * What every process shares to be seen and run by operators (docs/deploy.md): logs, the ops HTTP listener
 * (`/livez`, `/readyz`, `/metrics`) and the graceful drain on SIGTERM.
 */
export const observabilitySchema = z.object({
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace']).default('info'),
  /** `json`: one JSON object per line (for collectors); `pretty`: for people (`npm start` sets it). */
  LOG_FORMAT: z.enum(['json', 'pretty']).default('json'),
  /** The ops listener: health probes and Prometheus metrics, apart from client traffic. */
  OPS_HOST: z.string().default('127.0.0.1'),
  /** 0 picks a free port (logged at start); the Kubernetes manifests use 9464. */
  OPS_PORT: port.default(0),
  /** How long a draining process waits for in-flight work after SIGTERM before it closes what is left. */
  SHUTDOWN_GRACE_MS: ms.default(20_000),
  /**
   * How often the process checks the shared dependencies it uses (Postgres, Kafka, Redis) for
   * `a2a_dependency_up`, the `/readyz` body and a log line when one goes away or comes back. Their state
   * never makes the process unready (docs/failure-model.md "Readiness").
   */
  DEPENDENCY_CHECK_MS: ms.default(5_000),
  /**
   * Readiness turns 503 (`saturated`) while the event loop was busy at least this share of the time
   * between two probes a second or more apart: a process whose loop never waits takes new traffic worse
   * than its peers would. 1 turns it off.
   */
  READINESS_MAX_EVENT_LOOP_UTILIZATION: z.coerce.number().gt(0).max(1).default(0.99),
});

/**
 * `key=value` pairs separated by commas, values percent-encoded (the OpenTelemetry environment format of
 * OTEL_EXPORTER_OTLP_HEADERS and OTEL_RESOURCE_ATTRIBUTES), as a record. Empty entries are skipped.
 */
const keyValueList = z
  .string()
  .default('')
  .transform((list, ctx) => {
    const pairs: Record<string, string> = {};
    for (const entry of list.split(',')) {
      if (entry.trim() === '') {
        continue;
      }
      const at = entry.indexOf('=');
      const key = at > 0 ? entry.slice(0, at).trim() : '';
      let value: string;
      try {
        value = decodeURIComponent(entry.slice(at + 1).trim());
      } catch {
        value = '';
        ctx.addIssue({ code: z.ZodIssueCode.custom, message: `bad percent-encoding in ${key}` });
      }
      if (key === '') {
        ctx.addIssue({ code: z.ZodIssueCode.custom, message: 'must be key=value pairs' });
      }
      pairs[key] = value;
    }
    return pairs;
  });

/**
 * Tracing with OpenTelemetry, by the standard variables; off unless an OTLP endpoint is set (and
 * OTEL_SDK_DISABLED is not `true`).
 */
export const tracingSchema = z.object({
  OTEL_SDK_DISABLED: bool.default('false'),
  /** Default: `a2a-<app>` (`a2a-ingress`, `a2a-task-service`, `a2a-standalone`, `a2a-agents`, …). */
  OTEL_SERVICE_NAME: z.string().min(1).optional(),
  /** Base URL of an OTLP/HTTP receiver; traces go to `<base>/v1/traces`. */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url().optional(),
  /** The full traces URL; wins over OTEL_EXPORTER_OTLP_ENDPOINT. */
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.string().url().optional(),
  /** `key=value` pairs separated by commas, sent with every export (e.g. an API key of the backend). */
  OTEL_EXPORTER_OTLP_HEADERS: keyValueList,
  /** `key=value` pairs separated by commas, added to the resource. */
  OTEL_RESOURCE_ATTRIBUTES: keyValueList,
  /** Fraction of new traces sampled (parent-based: a sampled caller's trace is always continued). */
  OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0).max(1).default(1),
});

/** Test suites: where to create their throw-away databases. */
export const testSchema = z.object({
  TEST_POSTGRES_URL: z.string().default('postgres://postgres@127.0.0.1:5432/postgres'),
});

/** The standalone process (`npm start`). */
export const standaloneSchema = z.object({
  /** Start the example agent workers as child processes. */
  SPAWN_EXAMPLE_WORKERS: bool.default('true'),
  /**
   * Run the Kafka relay in the process (needs a broker at KAFKA_BROKERS: without one that answers at start,
   * the relay stays off).
   */
  START_RELAY: bool.default('true'),
  /**
   * Run the push dispatcher in the process (needs the broker and Redis at REDIS_URL: without both answering
   * at start, it stays off and the agent cards declare no push notifications). `false` leaves the delivery
   * to a dispatcher elsewhere: push notifications stay on.
   */
  START_PUSH_DISPATCHER: bool.default('true'),
  /** Run the bridge (apps/bridge) as a child process: it serves the imported agents (needs UPSTREAM_SECRETS_KEY). */
  START_BRIDGE: bool.default('false'),
  /**
   * Run the example A2A server (examples/upstream-agent) as a child process and import it as the demo
   * tenant's `upstream-example` (`npm start` does; needs the bridge to serve it).
   */
  START_UPSTREAM_EXAMPLE: bool.default('false'),
  /** The example A2A server's ports: JSON-RPC, HTTP+JSON and its card; gRPC. */
  UPSTREAM_EXAMPLE_PORT: port.default(41301),
  UPSTREAM_EXAMPLE_GRPC_PORT: port.default(41302),
});

/**
 * How the standalone process finds its Postgres (apps/standalone `local-servers.ts`): the server of
 * POSTGRES_URL when it is set (never the embedded one); else the server libpq would use by default
 * (PGHOST, PGPORT) when one answers there; else the embedded Postgres of the project, which it starts.
 * Not part of `platformSchema`: that one gives POSTGRES_URL a default, this one asks whether it is set.
 */
export const localPostgresSchema = z.object({
  POSTGRES_URL: z.string().min(1).optional(),
  /** Host name, IP address or Unix-socket directory of the default local server (libpq's variable). */
  PGHOST: z.string().min(1).default('127.0.0.1'),
  PGPORT: port.default(5432),
  /**
   * Folder of the embedded Postgres: its cluster (`data/`) and server log (`server.log`), kept across
   * restarts. A relative path is taken from the project root.
   */
  EMBEDDED_POSTGRES_DIR: z.string().min(1).default('.data/postgres'),
  /** Port of the embedded Postgres on 127.0.0.1. */
  EMBEDDED_POSTGRES_PORT: port.default(54329),
});

/**
 * What the platform offers its clients beyond what every deployment has. Deployments of the separate apps
 * offer everything; the standalone process switches off what an absent server (Kafka, Redis) cannot do, so
 * that agent cards and capability checks tell the truth.
 */
export interface PlatformFeatures {
  /** Webhooks are delivered: cards may declare `capabilities.pushNotifications`. */
  pushNotifications: boolean;
  /** Tenants' request rates are counted (in Redis) and their rate quotas enforced. */
  requestRateQuotas: boolean;
}

/** Everything on: what each app offers unless the process that composes it says otherwise. */
export const ALL_PLATFORM_FEATURES: Readonly<PlatformFeatures> = Object.freeze({
  pushNotifications: true,
  requestRateQuotas: true,
});

export const platformSchema = postgresSchema
  .merge(taskServiceSchema)
  .merge(ingressSchema)
  .merge(demoSchema)
  .merge(relaySchema)
  .merge(pushDispatcherSchema)
  .merge(adminApiSchema)
  .merge(quotaSchema)
  .merge(observabilitySchema)
  .merge(tracingSchema)
  .merge(standaloneSchema)
  .superRefine(kafkaClientRules);

export type PostgresConfig = z.infer<typeof postgresSchema>;
export type TaskServiceConfig = z.infer<typeof taskServiceSchema> & PostgresConfig;
export type IngressConfig = z.infer<typeof ingressSchema>;
export type DemoConfig = z.infer<typeof demoSchema>;
export type RelayConfig = z.infer<typeof relaySchema> & PostgresConfig;
export type WorkerConfig = z.infer<typeof workerSchema>;
export type UpstreamConfig = z.infer<typeof upstreamSchema>;
export type BridgeConfig = z.infer<typeof bridgeSchema> & UpstreamConfig & PostgresConfig;
export type KafkaClientConfig = z.infer<typeof kafkaClientSchema>;
/** Read with `postgresSchema.merge(relaySchema.pick({TASK_EVENTS_TOPIC})).merge(kafkaClientSchema)`. */
export type PushDispatcherConfig = z.infer<typeof pushDispatcherSchema> &
  PostgresConfig &
  KafkaClientConfig &
  Pick<z.infer<typeof relaySchema>, 'TASK_EVENTS_TOPIC'>;
export type QuotaConfig = z.infer<typeof quotaSchema>;
export type OidcConfig = z.infer<typeof oidcSchema>;
/**
 * Read with `postgresSchema.merge(adminApiSchema).merge(quotaSchema)` and the dispatcher's
 * PUSH_QUEUE_PREFIX (a redrive adds a lane job to its queue, in the REDIS_URL the quotas use).
 */
export type AdminApiConfig = z.infer<typeof adminApiSchema> &
  PostgresConfig &
  QuotaConfig &
  Pick<z.infer<typeof pushDispatcherSchema>, 'PUSH_QUEUE_PREFIX'>;
export type PlatformConfig = z.infer<typeof platformSchema>;
export type ObservabilityConfig = z.infer<typeof observabilitySchema>;
export type TracingConfig = z.infer<typeof tracingSchema>;
export type LocalPostgresConfig = z.infer<typeof localPostgresSchema>;

/**
 * Reads and validates configuration from the environment (the only place that reads `process.env`).
 * Boot fails on the first invalid value.
 */
export function loadConfig<T>(
  schema: z.ZodType<T, z.ZodTypeDef, unknown>,
  env: Record<string, string | undefined> = process.env,
): T {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`invalid configuration: ${problems}`);
  }
  return parsed.data;
}

/** Environment of the current process, for handing on to child processes. */
export function processEnv(): Record<string, string | undefined> {
  return { ...process.env };
}
