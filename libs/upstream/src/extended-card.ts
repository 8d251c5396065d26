import { AgentCard } from '@a2a-js/sdk';
import { DestinationRefusedError, type DestinationPolicy, type GuardedFetch } from '@lib/push';
import { UpstreamCardError, type UpstreamBinding } from './upstream-card';
import { describeUpstreamError, grpcUpstreamClient, httpUpstreamClient } from './upstream-client';

/** Where and how an upstream's extended card is read: as its public card, with the upstream's credentials. */
export interface ExtendedCardSource {
  /** The upstream's public card (ProtoJSON), which names the interface of `binding`. */
  readonly card: Record<string, unknown>;
  readonly binding: UpstreamBinding;
  /** The URL of the chosen interface (`host:port` for gRPC). */
  readonly endpoint: string;
  /** The card fetch (guard, size and time limits): the HTTP bindings call through it. */
  readonly fetch: GuardedFetch;
  /** Reserved destinations the tenant may reach (a gRPC host is checked against it). */
  readonly allows: DestinationPolicy;
  /** The upstream's headers and, with OAuth 2, its bearer token. */
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  readonly limitBytes: number;
}

/**
 * Reads an upstream's extended card: GetExtendedAgentCard with the official SDK client on the binding it was
 * imported on, with its credentials, within the card's time and size limits (on gRPC, read whole up to
 * grpc-js's 4 MiB, then measured in its JSON form). Each failure is an {@link UpstreamCardError} on
 * `extendedCard` that says what went wrong.
 */
export async function fetchExtendedCard(
  source: ExtendedCardSource,
): Promise<Record<string, unknown>> {
  const signal = AbortSignal.timeout(source.timeoutMs);
  let card: AgentCard;
  try {
    const client =
      source.binding === 'GRPC'
        ? await grpcUpstreamClient(source)
        : await httpUpstreamClient(
            source.card,
            source.binding,
            source.fetch as unknown as typeof fetch,
          );
    card = await client.getAgentCard({ serviceParameters: { ...source.headers }, signal });
  } catch (error) {
    throw new UpstreamCardError(
      `GetExtendedAgentCard on ${source.binding} failed: ${failure(error, signal)}`,
      'extendedCard',
    );
  }
  const json = AgentCard.toJSON(card) as Record<string, unknown>;
  if (Buffer.byteLength(JSON.stringify(json), 'utf8') > source.limitBytes) {
    throw new UpstreamCardError(
      `the extended card exceeds ${source.limitBytes} bytes (UPSTREAM_CARD_LIMIT_BYTES)`,
      'extendedCard',
    );
  }
  return json;
}

function failure(error: unknown, signal: AbortSignal): string {
  if (signal.aborted) {
    return 'it took too long (UPSTREAM_CARD_TIMEOUT_MS)';
  }
  if (error instanceof DestinationRefusedError) {
    return `${error.message} (an operator may allow the host in UPSTREAM_ALLOWLIST)`;
  }
  return describeUpstreamError(error);
}
