import { credentials, Metadata } from '@grpc/grpc-js';
import {
  decodeTaskCommand,
  taskCommandCall,
  taskCommandOutcome,
  taskPb,
  type TaskCommandMethod,
} from '@lib/a2a-protocol';
import { CLIENT_SCOPES } from '@lib/authz';
import { postgresSchema, taskServiceSchema, type TaskServiceConfig } from '@lib/config';
import { seedTenant } from '@lib/tenancy';
import type { TestDatabase } from '@lib/testing';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { GrpcServers } from '../src/grpc/grpc-servers';
import { TaskServiceModule } from '../src/task-service.module';

export const WORKER_SECRET = 'test-worker-secret';

/** A task-service replica running in this process against the test database, on free ports. */
export async function startReplica(
  db: TestDatabase,
  overrides: Partial<Record<string, string>> = {},
): Promise<{
  app: INestApplicationContext;
  config: TaskServiceConfig;
  workerTarget: string;
  commandTarget: string;
}> {
  const config = postgresSchema.merge(taskServiceSchema).parse({
    POSTGRES_URL: db.url,
    WORKER_GRPC_PORT: '0',
    TASK_SERVICE_GRPC_PORT: '0',
    LEASE_TTL_MS: '800',
    HEARTBEAT_INTERVAL_MS: '200',
    SWEEP_INTERVAL_MS: '100',
    CANCEL_GRACE_MS: '600',
    BLOCKING_SEND_TIMEOUT_MS: '10000',
    REPLICA_ID: `replica-${Math.random().toString(36).slice(2, 8)}`,
    ...overrides,
  });
  const app = await NestFactory.createApplicationContext(TaskServiceModule.forRoot(config), {
    logger: ['error'],
  });
  await app.init();
  const servers = app.get(GrpcServers);
  return {
    app,
    config,
    workerTarget: `127.0.0.1:${servers.workerPort}`,
    commandTarget: `127.0.0.1:${servers.commandPort}`,
  };
}

/** Seeds a tenant with agents and one worker credential per agent (`<WORKER_SECRET>:<agent>`). */
export async function seedTestTenant(
  db: TestDatabase,
  tenantId: string,
  agents: {
    agentId: string;
    onLeaseLost?: 'redispatch' | 'fail';
    maxAttempts?: number;
    /** The agent's lease TTL, instead of the harness's short one. */
    leaseTtlMs?: number;
    /** The agent may answer with a bare Message (profile `messageReplies`). */
    messageReplies?: boolean;
    /** The agent allows webhooks (profile `pushNotifications`). */
    pushNotifications?: boolean;
  }[],
): Promise<void> {
  await seedTenant(db.pool, {
    tenantId,
    displayName: tenantId,
    apiKeys: [
      { keyId: `${tenantId}-key`, principalId: `${tenantId}-user`, secret: `${tenantId}-key` },
    ],
    agents: agents.map(({ messageReplies, pushNotifications, ...a }) => ({
      ...a,
      workerSecret: workerSecret(a.agentId, tenantId),
      profile: {
        name: a.agentId,
        description: `${a.agentId} agent`,
        version: '1.0.0',
        ...(messageReplies ? { messageReplies } : {}),
        ...(pushNotifications ? { pushNotifications } : {}),
      },
    })),
  });
}

export function workerSecret(agentId: string, tenantId = 'acme'): string {
  return `${WORKER_SECRET}:${tenantId}/${agentId}`;
}

export interface Caller {
  tenantId: string;
  agentId: string;
  principalId: string;
  /** A client key's scopes when not given. */
  scopes?: readonly string[];
  /** The A2A method the client called, as the ingress passes it (none when not given). */
  method?: string;
  /** The credential that authenticated the call (none when not given). */
  credentialId?: string;
}

/** The call context an ingress would send for `caller`. */
export function callerContext(caller: Caller): taskPb.CallContext {
  return {
    tenantId: caller.tenantId,
    agentId: caller.agentId,
    principalId: caller.principalId,
    scopes: [...(caller.scopes ?? CLIENT_SCOPES)],
    credentialId: caller.credentialId ?? '',
    method: caller.method ?? '',
    binding: 'JSONRPC',
    protocolVersion: '1.0',
    traceparent: '',
    requestId: 'test',
    sourceAddress: '',
  };
}

/** Calls the internal TaskCommandService as an ingress replica would; A2A errors are thrown as A2aError. */
export class CommandClient {
  private readonly client: taskPb.TaskCommandServiceClient;

  constructor(target: string) {
    this.client = new taskPb.TaskCommandServiceClient(target, credentials.createInsecure());
  }

  /** An operation with its request document, decoded and sent as protobuf as the ingress sends it. */
  call<T>(method: TaskCommandMethod, caller: Caller, params: unknown): Promise<T> {
    const request = decodeTaskCommand(method, params);
    return this.send<T>(method, taskCommandCall(method, request, callerContext(caller)));
  }

  /** One OperationCall as given; the response document, or its A2A error thrown as A2aError. */
  async send<T>(method: TaskCommandMethod, call: taskPb.OperationCall): Promise<T> {
    const { result } = taskCommandOutcome(method, await this.result(method, call));
    return result as T;
  }

  /** One OperationCall as given, and the OperationResult as it came back. */
  result(method: TaskCommandMethod, call: taskPb.OperationCall): Promise<taskPb.OperationResult> {
    return new Promise((resolve, reject) => {
      this.client[method](call, new Metadata(), (error, result) =>
        error ? reject(error) : resolve(result),
      );
    });
  }

  close(): void {
    this.client.close();
  }
}

export function userMessage(
  text: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    messageId: `m-${Math.random().toString(36).slice(2)}`,
    role: 'ROLE_USER',
    parts: [{ text }],
    ...extra,
  };
}

export async function eventually<T>(
  probe: () => Promise<T>,
  accept: (value: T) => boolean,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (accept(value) || Date.now() > deadline) {
      return value;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
