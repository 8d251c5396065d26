import { jwsSignature, type SigningKey } from './signing-key';

/** A JWS whose payload travels elsewhere (RFC 7515 Appendix F): its two base64url parts. */
export interface DetachedJws {
  /** base64url of the protected header JSON. */
  protected: string;
  /** base64url of the signature over `protected + "." + base64url(payload)`. */
  signature: string;
}

/** Protected header members a caller may add to `{alg, kid, typ}`. */
export interface JwsHeaderExtras {
  /** URL of the JWK Set that holds the key (RFC 7515 §4.1.2). */
  jku?: string;
  /**
   * Facts about the payload that must not be separable from it, signed with it (a private header parameter,
   * RFC 7515 §4.3): webhooks put their delivery id, task id and generation here.
   */
  a2a?: Readonly<Record<string, string | number>>;
}

/**
 * Signs `payload` (RFC 7515 §5.1) with protected header `{alg, kid, typ: "JOSE", ...extras}` and returns the
 * parts without the payload. `typ` "JOSE" is what card signatures carry too (spec digest §10.12 step 4), so a
 * verifier needs one configuration for both.
 */
export function detachedJws(
  payload: Buffer,
  key: SigningKey,
  extras: JwsHeaderExtras = {},
): DetachedJws {
  const header = { alg: key.algorithm, kid: key.kid, typ: 'JOSE', ...extras };
  const protectedHeader = Buffer.from(JSON.stringify(header), 'utf8').toString('base64url');
  const signingInput = Buffer.from(`${protectedHeader}.${payload.toString('base64url')}`, 'ascii');
  return {
    protected: protectedHeader,
    signature: jwsSignature(signingInput, key).toString('base64url'),
  };
}

/**
 * The compact serialization with a detached payload (RFC 7515 Appendix F): `<protected>..<signature>`, the
 * value of a webhook's signature header. A receiver puts base64url(body) between the dots and verifies the
 * result against the key named by `kid` in the JWK Set.
 */
export function signDetached(body: Buffer, key: SigningKey, extras: JwsHeaderExtras = {}): string {
  const jws = detachedJws(body, key, extras);
  return `${jws.protected}..${jws.signature}`;
}
