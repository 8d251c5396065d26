import { AgentCard } from '@a2a-js/sdk';
import {
  ClientFactory,
  JsonRpcTransportFactory,
  RestTransportFactory,
  type Client,
} from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';
import { A2AError } from '@a2a-js/sdk/errors';
import { credentials as grpcCredentials } from '@grpc/grpc-js';
import {
  destinationRefusal,
  DestinationRefusedError,
  isLoopbackAddress,
  type DestinationPolicy,
} from '@lib/push';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';

/** An upstream's gRPC interface: its card, the interface's endpoint, the guard's policy for its host. */
export interface GrpcUpstream {
  readonly card: Record<string, unknown>;
  /** `host:port`, or a URL whose scheme says whether TLS is used. */
  readonly endpoint: string;
  /** Reserved destinations the operator allowed for the agent's tenant (UPSTREAM_ALLOWLIST). */
  readonly allows: DestinationPolicy;
}

/**
 * The official SDK client of an upstream's gRPC interface. gRPC resolves names itself, so the host is checked
 * against the guard's policy here, once; it is dialled with TLS unless the URL says `http://` or the host is
 * a loopback address.
 */
export async function grpcUpstreamClient(target: GrpcUpstream): Promise<Client> {
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
  return factory.createFromAgentCard(AgentCard.fromJSON(target.card));
}

/**
 * The official SDK client of an upstream's JSON-RPC or HTTP+JSON interface, whose every call goes through
 * `fetch` (a fetch behind the SSRF guard, with the caller's limits).
 */
export function httpUpstreamClient(
  card: Record<string, unknown>,
  binding: 'JSONRPC' | 'HTTP+JSON',
  fetch: typeof globalThis.fetch,
): Promise<Client> {
  const factory = new ClientFactory({
    transports: [
      binding === 'JSONRPC'
        ? new JsonRpcTransportFactory({ fetchImpl: fetch })
        : new RestTransportFactory({ fetchImpl: fetch }),
    ],
    preferredTransports: [binding],
  });
  return factory.createFromAgentCard(AgentCard.fromJSON(card));
}

/** What an operator or a client is told about an upstream's error. */
export function describeUpstreamError(error: unknown): string {
  if (error instanceof A2AError) {
    return `${error.reason}: ${error.message}`;
  }
  const text = error instanceof Error ? error.message : String(error);
  // A transport error quotes the whole response body: enough of it to say what it was.
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
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
