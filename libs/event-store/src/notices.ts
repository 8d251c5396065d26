/** Postgres NOTIFY channel carrying {@link Notice}s between platform processes. */
export const NOTICE_CHANNEL = 'a2a_platform';

/**
 * Postgres NOTIFY channel on which every message means: tenants, agents, credentials or issuers changed (a
 * trigger on their tables sends `{"k":"config"}`), and every replica drops what it cached of them.
 */
export const CONFIG_CHANNEL = 'a2a_config';

/** Cross-process signals; each is a hint backed by durable state, never the state itself. */
export type Notice =
  /** A task stream reached version `v` (wakes waiters, dispatchers of live streams). */
  | { k: 'task'; t: string; id: string; v: number }
  /** Work was queued for an agent (wakes the dispatchers that host its workers). */
  | { k: 'work'; t: string; a: string }
  /** The client asked to cancel; the worker holding lease `e` should stop. */
  | { k: 'cancel'; t: string; id: string; e: number; w: string }
  /** Lease `e` ended without the worker finishing (expired, canceled at the deadline). */
  | { k: 'revoke'; t: string; id: string; e: number; w: string };

export function parseNotice(payload: string): Notice | null {
  try {
    const value = JSON.parse(payload) as Notice;
    return typeof value === 'object' && value !== null && 'k' in value ? value : null;
  } catch {
    return null;
  }
}
