/** The public entry of `@lib/signing`: the platform's signing key and detached JWS signatures. */
export * from './detached-jws';
export {
  loadSigningKey,
  signingKey,
  type PublishedJwk,
  type SigningAlgorithm,
  type SigningKey,
} from './signing-key';
