import type { Client } from '@a2a-js/sdk/client';
import {
  destinationRefusal,
  DestinationRefusedError,
  guardedLookup,
  type DestinationPolicy,
} from '@lib/push';
import { grpcUpstreamClient, httpUpstreamClient, type UpstreamBinding } from '@lib/upstream';
import { isIP } from 'node:net';
import { Agent, fetch as undiciFetch } from 'undici';
import { limitedResponse } from './event-limit';

/** How the bridge reaches one upstream: its card, the binding chosen at import, the guard's policy. */
export interface UpstreamEndpoint {
  readonly card: Record<string, unknown>;
  readonly binding: UpstreamBinding;
  readonly endpoint: string;
  /** Reserved destinations the operator allowed for the agent's tenant (UPSTREAM_ALLOWLIST). */
  readonly allows: DestinationPolicy;
  readonly connectTimeoutMs: number;
  /** From a request to its response headers. */
  readonly responseTimeoutMs: number;
  /** An event of a stream, or an answer, is read up to this size (UPSTREAM_EVENT_LIMIT_BYTES). */
  readonly eventLimitBytes: number;
}

/**
 * The official SDK client of an upstream on its chosen binding. HTTP calls go through the webhook guard (a
 * host resolving to a reserved address the operator did not allow is refused at connect time; no redirect is
 * followed) and their answers are cut at the event limit; a gRPC endpoint is checked when the client is made.
 */
export async function upstreamClient(target: UpstreamEndpoint): Promise<{
  client: Client;
  close: () => Promise<void>;
}> {
  if (target.binding === 'GRPC') {
    return { client: await grpcUpstreamClient(target), close: () => Promise.resolve() };
  }
  const host = new URL(target.endpoint).hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host) !== 0) {
    const refusal = destinationRefusal(host, host, target.allows);
    if (refusal !== undefined) {
      throw new DestinationRefusedError(refusal);
    }
  }
  const dispatcher = new Agent({
    connect: { lookup: guardedLookup({ allows: target.allows }), timeout: target.connectTimeoutMs },
    headersTimeout: target.responseTimeoutMs,
    bodyTimeout: 0,
  });
  const fetchImpl = (async (input: Parameters<typeof fetch>[0], init?: RequestInit) =>
    limitedResponse(
      (await undiciFetch(input as string, {
        ...(init as object),
        dispatcher,
        redirect: 'manual',
      })) as unknown as Response,
      target.eventLimitBytes,
    )) as typeof fetch;
  return {
    client: await httpUpstreamClient(target.card, target.binding, fetchImpl),
    close: () => dispatcher.close(),
  };
}
