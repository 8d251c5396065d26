import { hostname } from 'node:os';
import { z } from 'zod';

const port = z.coerce.number().int().min(0).max(65535);
const ms = z.coerce.number().int().positive();
const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

/** Postgres connection. */
export const postgresSchema = z.object({
  POSTGRES_URL: z.string().default('postgres://postgres@127.0.0.1:5432/a2a'),
  POSTGRES_POOL_SIZE: z.coerce.number().int().positive().default(10),
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

/** The relay: the committed log to Kafka. */
export const relaySchema = z.object({
  KAFKA_BROKERS: z.string().default('127.0.0.1:9092'),
  KAFKA_CLIENT_ID: z.string().default('a2a-platform-relay'),
  /** Topic of the public task-event feed (docs/asyncapi.yaml). */
  TASK_EVENTS_TOPIC: z.string().default('a2a.task-events.v1'),
  /** Name of this relay's checkpoint; relays with the same name elect one leader. */
  RELAY_NAME: z.string().default('task-events'),
  RELAY_BATCH_SIZE: z.coerce.number().int().positive().default(500),
  RELAY_IDLE_POLL_MS: z.coerce.number().int().positive().default(200),
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

/** Test suites: where to create their throw-away databases. */
export const testSchema = z.object({
  TEST_POSTGRES_URL: z.string().default('postgres://postgres@127.0.0.1:5432/postgres'),
});

/** The standalone process (`npm start`). */
export const standaloneSchema = z.object({
  /** Start the example agent workers as child processes. */
  SPAWN_EXAMPLE_WORKERS: bool.default('true'),
  /** Run the Kafka relay in the process (needs a broker at KAFKA_BROKERS). */
  START_RELAY: bool.default('true'),
});

export const platformSchema = postgresSchema
  .merge(taskServiceSchema)
  .merge(ingressSchema)
  .merge(demoSchema)
  .merge(relaySchema)
  .merge(standaloneSchema);

export type PostgresConfig = z.infer<typeof postgresSchema>;
export type TaskServiceConfig = z.infer<typeof taskServiceSchema> & PostgresConfig;
export type IngressConfig = z.infer<typeof ingressSchema>;
export type DemoConfig = z.infer<typeof demoSchema>;
export type RelayConfig = z.infer<typeof relaySchema> & PostgresConfig;
export type WorkerConfig = z.infer<typeof workerSchema>;
export type PlatformConfig = z.infer<typeof platformSchema>;

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
