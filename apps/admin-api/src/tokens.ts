/** Injection tokens of the admin API. */
export const ADMIN_CONFIG = Symbol('ADMIN_CONFIG');
export const ADMIN_PG_POOL = Symbol('ADMIN_PG_POOL');
/** The admin API's Redis connection: the quota counters it reads, the lane jobs of redriven deliveries. */
export const ADMIN_REDIS = Symbol('ADMIN_REDIS');
