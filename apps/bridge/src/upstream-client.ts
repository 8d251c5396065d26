import { AgentCard } from '@a2a-js/sdk';
import {
  ClientFactory,
  JsonRpcTransportFactory,
  RestTransportFactory,
  type Client,
} from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';
import { credentials as grpcCredentials } from '@grpc/grpc-js';
import {
  destinationRefusal,
  DestinationRefusedError,
  guardedLookup,
  isLoopbackAddress,
  type DestinationPolicy,
} from '@lib/push';
import type { UpstreamBinding } from '@lib/upstream';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { Agent, fetch as undiciFetch } from 'undici';

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
}

/**
 * The official SDK client of an upstream on its chosen binding. HTTP calls go through the webhook guard (a
 * host resolving to a reserved address the operator did not allow is refused at connect time; no redirect is
 * followed); a gRPC endpoint is checked when the client is made (TLS unless the URL says `http://` or the
 * host is an allowed loopback or private address).
 */
export async function upstreamClient(target: UpstreamEndpoint): Promise<{
  client: Client;
  close: () => Promise<void>;
}> {
  const card = AgentCard.fromJSON(target.card);
  if (target.binding === 'GRPC') {
    const { host, tls } = grpcTarget(target.endpoint);
    await checkHost(host, target.allows);
    const factory = new ClientFactory({
      transports: [
        new GrpcTransportFactory({
          grpcChannelCredentials: tls
            ? grpcCredentials.createSsl()
            : grpcCredentials.createInsecure(),
        }),
      ],
      preferredTransports: ['GRPC'],
    });
    return { client: await factory.createFromAgentCard(card), close: () => Promise.resolve() };
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
  const fetchImpl = ((input: Parameters<typeof fetch>[0], init?: RequestInit) =>
    undiciFetch(input as string, {
      ...(init as object),
      dispatcher,
      redirect: 'manual',
    })) as unknown as typeof fetch;
  const factory = new ClientFactory({
    transports: [
      target.binding === 'JSONRPC'
        ? new JsonRpcTransportFactory({ fetchImpl })
        : new RestTransportFactory({ fetchImpl }),
    ],
    preferredTransports: [target.binding],
  });
  return { client: await factory.createFromAgentCard(card), close: () => dispatcher.close() };
}

/** The host of a gRPC endpoint (`host:port`, or a URL) and whether it is dialled with TLS. */
function grpcTarget(endpoint: string): { host: string; tls: boolean } {
  const match = /^(?:(https?|grpcs?):\/\/)?(\[[^\]]+\]|[^:/]+)/i.exec(endpoint);
  const scheme = match?.[1]?.toLowerCase();
  const host = (match?.[2] ?? endpoint).replace(/^\[(.*)\]$/, '$1');
  return {
    host,
    tls: scheme === 'https' || scheme === 'grpcs' || (scheme === undefined && !isLocal(host)),
  };
}

function isLocal(host: string): boolean {
  return host === 'localhost' || (isIP(host) !== 0 && isLoopbackAddress(host));
}

/** Refuses a host any of whose addresses is reserved and not allowed. */
async function checkHost(host: string, allows: DestinationPolicy): Promise<void> {
  const addresses = isIP(host) !== 0 ? [{ address: host }] : await lookup(host, { all: true });
  for (const { address } of addresses) {
    const refusal = destinationRefusal(host, address, allows);
    if (refusal !== undefined) {
      throw new DestinationRefusedError(refusal);
    }
  }
}
