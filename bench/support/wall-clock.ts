/**
 * Wall clock with sub-millisecond resolution, comparable with Postgres `clock_timestamp()` on the same
 * machine: `performance.now()` anchored to `Date.now()`.
 */
let wallOffset = Date.now() - performance.now();

/** Anchors performance.now() to the wall clock at the moment Date.now() ticks (at most 5 ms of spinning). */
export function calibrateWallClock(): void {
  const start = Date.now();
  const limit = performance.now() + 5;
  let now = start;
  while (now === start && performance.now() < limit) {
    now = Date.now();
  }
  wallOffset = now - performance.now();
}

/** Milliseconds since the epoch, with sub-millisecond resolution. */
export function wallMs(): number {
  return wallOffset + performance.now();
}
