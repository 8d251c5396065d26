/** Injection tokens of the admin API. */
export const ADMIN_CONFIG = Symbol('ADMIN_CONFIG');
export const ADMIN_PG_POOL = Symbol('ADMIN_PG_POOL');
