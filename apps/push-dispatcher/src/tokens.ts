/** Injection token of the push dispatcher's configuration. */
export const PUSH_CONFIG = Symbol('PUSH_CONFIG');
/** Injection token of the push dispatcher's Postgres pool. */
export const PUSH_PG_POOL = Symbol('PUSH_PG_POOL');
/** Injection token of the key that signs webhook bodies (the agent-card key, published in the JWKS). */
export const PUSH_SIGNING_KEY = Symbol('PUSH_SIGNING_KEY');
