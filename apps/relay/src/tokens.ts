/** Injection token of the relay configuration. */
export const RELAY_CONFIG = Symbol('RELAY_CONFIG');
/** Injection token of the relay's Postgres pool. */
export const RELAY_PG_POOL = Symbol('RELAY_PG_POOL');
