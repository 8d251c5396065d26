import { canonicalize } from '@lib/a2a-protocol';
import { DestinationRefusedError, type GuardedFetch } from '@lib/push';
import {
  createLocalJWKSet,
  decodeProtectedHeader,
  flattenedVerify,
  type JSONWebKeySet,
} from 'jose';
import { UpstreamCardError } from './upstream-card';

/** An upstream card as fetched: its JSON, and whether one of its signatures was verified. */
export interface FetchedCard {
  readonly json: Record<string, unknown>;
  /** A signature verified with a key of the JWK Set its `jku` names (fetched through the same guard). */
  readonly verified: boolean;
}

interface CardSignature {
  protected?: unknown;
  signature?: unknown;
}

/**
 * Fetches an upstream agent card through the guard (`fetch`: size and time limits, no redirect, no reserved
 * address the operator did not allow) and verifies its signatures where it can. Each failure is an
 * {@link UpstreamCardError} on `cardUrl` that says what went wrong.
 */
export async function fetchUpstreamCard(
  fetch: GuardedFetch,
  cardUrl: string,
  headers: Readonly<Record<string, string>> = {},
): Promise<FetchedCard> {
  const response = await fetch(cardUrl, {
    headers: { Accept: 'application/json', ...headers },
  }).catch((error: unknown) => {
    throw new UpstreamCardError(`the card could not be fetched: ${reason(error)}`, 'cardUrl');
  });
  if (response.status >= 300 && response.status < 400) {
    throw new UpstreamCardError(
      `the card URL answered ${response.status} (a redirect, not followed): give the card's own URL`,
      'cardUrl',
    );
  }
  if (!response.ok) {
    throw new UpstreamCardError(`the card URL answered HTTP ${response.status}`, 'cardUrl');
  }
  let json: unknown;
  try {
    json = JSON.parse(await response.text());
  } catch {
    throw new UpstreamCardError('the card URL did not answer JSON', 'cardUrl');
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new UpstreamCardError('the card URL did not answer a JSON object', 'cardUrl');
  }
  const card = json as Record<string, unknown>;
  return { json: card, verified: await verifiedSignature(fetch, card) };
}

/** Whether one of the card's signatures verifies with a key its `jku` names (RFC 8785 payload, spec §8.4). */
async function verifiedSignature(
  fetch: GuardedFetch,
  card: Record<string, unknown>,
): Promise<boolean> {
  const signatures = Array.isArray(card['signatures'])
    ? (card['signatures'] as CardSignature[])
    : [];
  if (signatures.length === 0) {
    return false;
  }
  const { signatures: _signed, ...unsigned } = card;
  const payload = Buffer.from(canonicalize(unsigned), 'utf8').toString('base64url');
  for (const signature of signatures) {
    if (typeof signature.protected !== 'string' || typeof signature.signature !== 'string') {
      continue;
    }
    try {
      const header = decodeProtectedHeader({
        protected: signature.protected,
        payload,
        signature: signature.signature,
      });
      if (typeof header.jku !== 'string') {
        continue;
      }
      const jwks = (await (await fetch(header.jku)).json()) as JSONWebKeySet;
      await flattenedVerify(
        { protected: signature.protected, payload, signature: signature.signature },
        createLocalJWKSet(jwks),
      );
      return true;
    } catch {
      // This signature does not verify (or its keys cannot be had): another one may.
    }
  }
  return false;
}

function reason(error: unknown): string {
  if (error instanceof DestinationRefusedError) {
    return `${error.message} (an operator may allow the host in UPSTREAM_ALLOWLIST)`;
  }
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    return 'it took too long (UPSTREAM_CARD_TIMEOUT_MS)';
  }
  return error instanceof Error ? error.message : String(error);
}
