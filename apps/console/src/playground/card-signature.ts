import type { CardCheck } from './card-check';
import { isObject } from './card-check';

const NAME = 'Signature verifies';

/** The algorithms the console verifies, as WebCrypto names them. */
const ALGORITHMS: Readonly<
  Record<
    string,
    { key: EcKeyImportParams | RsaHashedImportParams; verify: EcdsaParams | Algorithm }
  >
> = {
  ES256: {
    key: { name: 'ECDSA', namedCurve: 'P-256' },
    verify: { name: 'ECDSA', hash: 'SHA-256' },
  },
  RS256: {
    key: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
    verify: { name: 'RSASSA-PKCS1-v1_5' },
  },
};

/**
 * Verifies the card's first signature (spec digest §10.12): the detached JWS over the JCS (RFC 8785) of the
 * card without `signatures`, with the key its protected header names (`kid`) from the JWK Set of this
 * origin (`jku` when it is on this origin, else `/.well-known/jwks.json`; the console may call no other).
 */
export async function verifyCardSignature(card: unknown): Promise<CardCheck> {
  const record = isObject(card) ? card : {};
  const signatures = Array.isArray(record['signatures']) ? (record['signatures'] as unknown[]) : [];
  const signature = signatures[0];
  if (
    !isObject(signature) ||
    typeof signature['protected'] !== 'string' ||
    typeof signature['signature'] !== 'string'
  ) {
    return { name: NAME, ok: false, detail: 'no signature to verify' };
  }
  if (!globalThis.crypto?.subtle) {
    return {
      name: NAME,
      ok: false,
      detail: 'cannot verify here: the page is not a secure context',
    };
  }
  try {
    const header = JSON.parse(
      new TextDecoder().decode(fromBase64Url(signature['protected'])),
    ) as Record<string, unknown>;
    const alg = String(header['alg']);
    const algorithm = ALGORITHMS[alg];
    if (!algorithm) {
      return { name: NAME, ok: false, detail: `algorithm ${alg} is not one the console verifies` };
    }
    const jwksUrl = sameOriginUrl(header['jku']) ?? '/.well-known/jwks.json';
    const jwks = (await (
      await fetch(jwksUrl, { headers: { accept: 'application/json' } })
    ).json()) as {
      keys?: (JsonWebKey & { kid?: string })[];
    };
    const jwk = (jwks.keys ?? []).find((key) => key.kid === header['kid']);
    if (!jwk) {
      return { name: NAME, ok: false, detail: `key ${String(header['kid'])} is not in ${jwksUrl}` };
    }
    const { signatures: _signatures, ...unsigned } = record;
    const payload = toBase64Url(new TextEncoder().encode(canonicalJson(unsigned)));
    const key = await crypto.subtle.importKey('jwk', jwk, algorithm.key, false, ['verify']);
    const valid = await crypto.subtle.verify(
      algorithm.verify,
      key,
      fromBase64Url(signature['signature']),
      new TextEncoder().encode(`${signature['protected']}.${payload}`),
    );
    return valid
      ? { name: NAME, ok: true, detail: `with ${alg} key ${String(header['kid'])} of ${jwksUrl}` }
      : {
          name: NAME,
          ok: false,
          detail: `the signature does not match the card (key ${String(header['kid'])})`,
        };
  } catch (error) {
    return {
      name: NAME,
      ok: false,
      detail: `cannot verify: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}

/** RFC 8785 JSON Canonicalization: object members sorted by UTF-16 code units, no whitespace. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) {
    return `[${value.map(canonicalJson).join(',')}]`;
  }
  if (isObject(value)) {
    return `{${Object.keys(value)
      .filter((key) => value[key] !== undefined)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`)
      .join(',')}}`;
  }
  // ECMAScript's number and string serialisation is the one JCS prescribes.
  return JSON.stringify(value);
}

function sameOriginUrl(value: unknown): string | null {
  if (typeof value !== 'string') {
    return null;
  }
  try {
    const url = new URL(value, location.href);
    return url.origin === location.origin ? url.href : null;
  } catch {
    return null;
  }
}

function fromBase64Url(text: string): Uint8Array<ArrayBuffer> {
  const base64 = text.replace(/-/g, '+').replace(/_/g, '/');
  const binary = atob(base64.padEnd(Math.ceil(base64.length / 4) * 4, '='));
  return Uint8Array.from(binary, (char) => char.charCodeAt(0));
}

function toBase64Url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) {
    binary += String.fromCharCode(byte);
  }
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}
