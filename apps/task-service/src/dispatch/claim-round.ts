/** One round of a claim run: leases sought for queued tasks of one agent, for the room its local workers have. */
export interface ClaimRound {
  /** Free places on the agent's workers connected here. */
  free: number;
  /** Queued tasks looked for: `free`, or fewer when the agent's lease cap leaves fewer slots. */
  asked: number;
  /** Queued tasks found (at most `asked`). */
  found: number;
  /** Leases granted to workers here. */
  leased: number;
}

/**
 * What a claim run does after a round: `drained` — every queued task was tried (until work is queued again,
 * a lease ending here need not look); `more` — room was the only bound and leases were granted, so another
 * round may find more; `done` — otherwise (no slot left under the cap, or the tasks went elsewhere).
 */
export function afterRound(round: ClaimRound): 'drained' | 'more' | 'done' {
  if (round.found < round.asked) {
    return 'drained';
  }
  return round.leased > 0 && round.asked === round.free ? 'more' : 'done';
}

/** Slots a lease cap leaves for new leases, for workers with `free` places. */
export function openSlots(limit: number, leased: number, free: number): number {
  return Math.max(0, Math.min(free, limit - leased));
}
