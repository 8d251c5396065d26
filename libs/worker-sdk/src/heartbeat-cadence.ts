/**
 * With no lease to renew, a worker heartbeats every this many ticks (10 s at the platform's default 2 s
 * interval): such a heartbeat renews nothing and only keeps the session's last heartbeat fresh for operators,
 * yet it wakes the worker, the task-service and its event loop; an idle platform's CPU was mostly that
 * (ADR 0016).
 */
export const IDLE_HEARTBEAT_TICKS = 5;

/** Which ticks of a worker's heartbeat timer send a heartbeat. */
export class HeartbeatCadence {
  /** Ticks since the last heartbeat. */
  private quiet = 0;

  /**
   * Whether this tick sends one: every tick while the worker holds a lease, else every
   * {@link IDLE_HEARTBEAT_TICKS}th; always with `atOnce` (a new session is told at once what it holds).
   */
  due(holdsLeases: boolean, atOnce = false): boolean {
    if (!holdsLeases && !atOnce && ++this.quiet < IDLE_HEARTBEAT_TICKS) {
      return false;
    }
    this.quiet = 0;
    return true;
  }
}
