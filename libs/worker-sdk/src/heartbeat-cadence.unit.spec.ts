import { describe, expect, it } from 'vitest';
import { HeartbeatCadence, IDLE_HEARTBEAT_TICKS } from './heartbeat-cadence';

/** The ticks, counted from 1, on which `cadence` sends a heartbeat, for each tick's lease state. */
function sent(cadence: HeartbeatCadence, leases: boolean[]): number[] {
  return leases.flatMap((holds, i) => (cadence.due(holds) ? [i + 1] : []));
}

describe('HeartbeatCadence', () => {
  it('sends on every tick while a lease is held', () => {
    expect(sent(new HeartbeatCadence(), Array<boolean>(7).fill(true))).toEqual([
      1, 2, 3, 4, 5, 6, 7,
    ]);
  });

  it(`sends on every ${IDLE_HEARTBEAT_TICKS}th tick while none is`, () => {
    expect(IDLE_HEARTBEAT_TICKS).toBe(5);
    expect(sent(new HeartbeatCadence(), Array<boolean>(12).fill(false))).toEqual([5, 10]);
  });

  it('counts the quiet ticks from the last heartbeat, a lease heartbeat included', () => {
    const leases = [false, false, true, false, false, false, false, false, false];
    expect(sent(new HeartbeatCadence(), leases)).toEqual([3, 8]);
  });

  it('sends at once when asked (a new session), and counts from there', () => {
    const cadence = new HeartbeatCadence();
    expect(cadence.due(false)).toBe(false);
    expect(cadence.due(false, true)).toBe(true);
    expect(sent(cadence, Array<boolean>(5).fill(false))).toEqual([5]);
  });
});
