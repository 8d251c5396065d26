/** Injection token of the ingress configuration. */
export const INGRESS_CONFIG = Symbol('INGRESS_CONFIG');
/** Injection token of the ingress's Postgres pool (agents and API keys). */
export const INGRESS_PG_POOL = Symbol('INGRESS_PG_POOL');
