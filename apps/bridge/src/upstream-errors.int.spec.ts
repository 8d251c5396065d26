import { Message } from '@a2a-js/sdk';
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { freePort } from '@lib/testing';
import { grpcUpstreamClient } from '@lib/upstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isRetryable } from './upstream-errors';

/** A card whose one interface is gRPC at `endpoint`. */
function grpcCard(endpoint: string): Record<string, unknown> {
  return {
    name: 'probe',
    description: 'an upstream reached over gRPC',
    version: '1.0.0',
    supportedInterfaces: [{ url: endpoint, protocolBinding: 'GRPC', protocolVersion: '1.0' }],
    capabilities: {},
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [],
  };
}

/** What the official SDK client throws for a SendMessage to the gRPC upstream at `endpoint`. */
async function sendError(endpoint: string): Promise<unknown> {
  const client = await grpcUpstreamClient({
    card: grpcCard(endpoint),
    endpoint,
    allows: () => true,
  });
  try {
    await client.sendMessage({
      tenant: '',
      message: Message.fromJSON({
        messageId: 'm-1',
        role: 'ROLE_USER',
        parts: [{ text: 'hello' }],
      }),
      configuration: undefined,
      metadata: undefined,
    });
  } catch (error) {
    return error;
  }
  throw new Error('the call succeeded');
}

describe('isRetryable, on what the SDK gRPC client really throws', () => {
  let server: Server;
  let serving: string;

  beforeAll(async () => {
    // A gRPC server that serves no A2A service: every call is answered UNIMPLEMENTED.
    server = new Server();
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) =>
        error ? reject(error) : resolve(bound),
      ),
    );
    serving = `127.0.0.1:${port}`;
  });

  afterAll(() => new Promise<void>((resolve) => server.tryShutdown(() => resolve())));

  it('retries an upstream that is not listening (UNAVAILABLE)', async () => {
    const error = await sendError(`127.0.0.1:${await freePort()}`);
    expect((error as { status?: unknown }).status).toBe(14);
    expect(isRetryable(error)).toBe(true);
  });

  it('stops at a call the upstream refused (UNIMPLEMENTED)', async () => {
    const error = await sendError(serving);
    expect((error as { status?: unknown }).status).toBe(12);
    expect(isRetryable(error)).toBe(false);
  });
});
