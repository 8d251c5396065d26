import type { AuditEntry } from '@lib/audit';
import type { BridgeConfig } from '@lib/config';
import { guardedFetch, PushAllowlist } from '@lib/push';
import type { AgentRef } from '@lib/tenancy';
import {
  OAuthTokens,
  openHeaders,
  sealContext,
  SecretBox,
  type UpstreamRow,
  type UpstreamStore,
} from '@lib/upstream';
import { AgentWorker, type WorkerLogger } from '@lib/worker-sdk';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { upstreamClient } from './upstream-client';
import { UpstreamExecutor } from './upstream-executor';

/** A token endpoint's answer is read up to this size. */
const TOKEN_ANSWER_LIMIT_BYTES = 65_536;

interface Served {
  readonly version: number;
  readonly worker: AgentWorker;
  readonly running: Promise<void>;
  readonly close: () => Promise<void>;
}

/**
 * Serves every imported agent (docs/upstream.md): one worker session per agent, registered with the agent's
 * bridge credential, whose executor calls the upstream. It reads `ops.agent_upstreams` every BRIDGE_POLL_MS
 * and starts, restarts (a new version) or stops workers to match. Several bridges may run: each registers
 * its own sessions and the platform spreads the tasks.
 */
export class Bridge {
  private readonly served = new Map<string, Served>();
  private readonly box: SecretBox;
  private readonly allowlist: PushAllowlist;
  private stopping = false;
  /** The imported agents were read at least once. */
  readOnce = false;
  private readonly stopped = new AbortController();

  constructor(
    private readonly config: BridgeConfig & { UPSTREAM_SECRETS_KEY: string },
    private readonly store: UpstreamStore,
    private readonly logger: WorkerLogger,
    /** Records the bridge's use of an agent's upstream credentials in the tenant's audit chain. */
    private readonly audit: (entry: AuditEntry) => Promise<void>,
  ) {
    this.box = SecretBox.fromBase64(config.UPSTREAM_SECRETS_KEY);
    this.allowlist = new PushAllowlist(config.UPSTREAM_ALLOWLIST);
  }

  /** Reconciles until {@link shutdown}; a failed read of the imported agents is retried at the next poll. */
  async run(): Promise<void> {
    while (!this.stopping) {
      try {
        await this.reconcile();
      } catch (error) {
        this.logger.warn(`imported agents not read: ${String(error)}`);
      }
      await sleep(this.config.BRIDGE_POLL_MS, undefined, { signal: this.stopped.signal }).catch(
        () => undefined,
      );
    }
  }

  /** Starts, restarts and stops workers to match the imported agents. */
  async reconcile(): Promise<void> {
    const versions = await this.store.versions();
    this.readOnce = true;
    const wanted = new Set<string>();
    for (const { ref, version } of versions) {
      const key = keyOf(ref);
      wanted.add(key);
      const current = this.served.get(key);
      if (current?.version === version || this.stopping) {
        continue;
      }
      const row = await this.store.get(ref);
      if (!row) {
        continue; // deleted since: the next poll stops its worker
      }
      if (current) {
        await this.stop(key);
      }
      try {
        await this.start(row);
      } catch (error) {
        this.logger.error(`cannot serve imported agent ${key}: ${String(error)}`);
      }
    }
    for (const key of [...this.served.keys()].filter((k) => !wanted.has(k))) {
      this.logger.info(`imported agent ${key} is gone: its worker stops`);
      await this.stop(key);
    }
  }

  /** Stops every worker (each hands its tasks back); again, it does nothing more. */
  async shutdown(): Promise<void> {
    this.stopping = true;
    this.stopped.abort();
    await Promise.all([...this.served.keys()].map((key) => this.stop(key)));
  }

  private async start(row: UpstreamRow): Promise<void> {
    const key = keyOf(row.ref);
    const headers = openHeaders(this.box, row);
    const credential = this.box.open(row.workerSecretSealed, sealContext(row.ref, 'worker-secret'));
    const tokens =
      row.oauth2 && row.oauth2SecretSealed
        ? new OAuthTokens(
            row.oauth2,
            this.box.open(row.oauth2SecretSealed, sealContext(row.ref, 'oauth2-secret')),
            guardedFetch({
              allows: (host, address) => this.allowlist.allowed(row.ref.tenantId, host, address),
              bodyLimitBytes: TOKEN_ANSWER_LIMIT_BYTES,
              timeoutMs: this.config.UPSTREAM_CONNECT_TIMEOUT_MS,
            }),
            (outcome, reason) => void this.record(row, 'bridge.upstream.token', outcome, reason),
          )
        : undefined;
    if (row.headerNames.length > 0 || tokens) {
      // The headers are about to be sent upstream (OAuth tokens are recorded as they are fetched).
      await this.record(row, 'bridge.upstream.credentials', 'ok', null);
    }
    const { client, close } = await upstreamClient({
      card: row.card,
      binding: row.binding,
      endpoint: row.endpoint,
      allows: (host, address) => this.allowlist.allowed(row.ref.tenantId, host, address),
      connectTimeoutMs: this.config.UPSTREAM_CONNECT_TIMEOUT_MS,
      responseTimeoutMs: this.config.UPSTREAM_RESPONSE_TIMEOUT_MS,
      eventLimitBytes: this.config.UPSTREAM_EVENT_LIMIT_BYTES,
    });
    const executor = new UpstreamExecutor(
      {
        name: typeof row.card['name'] === 'string' ? row.card['name'] : key,
        client,
        streaming: row.streaming,
        measureEvents: row.binding === 'GRPC',
        headers: async () =>
          tokens ? { ...headers, Authorization: `Bearer ${await tokens.token()}` } : headers,
      },
      {
        retryBudgetMs: this.config.UPSTREAM_RETRY_BUDGET_MS,
        firstWaitMs: this.config.UPSTREAM_FIRST_WAIT_MS,
        maxWaitMs: this.config.UPSTREAM_MAX_WAIT_MS,
        eventLimitBytes: this.config.UPSTREAM_EVENT_LIMIT_BYTES,
      },
      this.logger,
    );
    const worker = AgentWorker.create({
      target: this.config.WORKER_TARGET,
      credential,
      executor,
      maxConcurrentTasks: this.config.BRIDGE_CONCURRENCY,
      identity: `bridge:${key}@${hostname()}-${process.pid}`,
      logger: this.logger,
    });
    const running = worker.run().catch(async (error: unknown) => {
      // The platform refused the credential (e.g. a replica that has not seen a new import yet): the next
      // poll starts the agent's worker again.
      this.logger.error(`the worker of imported agent ${key} stopped: ${String(error)}`);
      if (this.served.get(key) === served) {
        this.served.delete(key);
        await close();
      }
    });
    const served: Served = { version: row.version, worker, running, close };
    this.served.set(key, served);
    this.logger.info(
      `bridge serves ${key} (version ${row.version}) from ${row.endpoint} over ${row.binding}`,
    );
  }

  private async record(
    row: UpstreamRow,
    operation: string,
    outcome: 'ok' | 'failed',
    reason: string | null,
  ): Promise<void> {
    await this.audit({
      tenantId: row.ref.tenantId,
      principalId: `bridge:${hostname()}`,
      credentialId: row.workerCredentialId,
      sourceAddress: null,
      operation,
      binding: 'WORKER',
      resource: `agent/${row.ref.agentId}`,
      outcome,
      reason,
      traceId: null,
      occurredAt: new Date(),
    }).catch((error: unknown) => {
      this.logger.error(`audit record of ${operation} not written: ${String(error)}`);
    });
  }

  private async stop(key: string): Promise<void> {
    const served = this.served.get(key);
    if (!served) {
      return;
    }
    this.served.delete(key);
    await served.worker.shutdown();
    await served.running;
    await served.close();
  }
}

function keyOf(ref: AgentRef): string {
  return `${ref.tenantId}/${ref.agentId}`;
}
