/** Injection tokens of the bridge. */
export const BRIDGE_CONFIG = Symbol('BRIDGE_CONFIG');
export const BRIDGE_PG_POOL = Symbol('BRIDGE_PG_POOL');
