import { readdirSync, readFileSync } from 'node:fs';

/** Linux clock ticks per second (`getconf CLK_TCK`; 100 on every mainstream kernel build). */
export const CLOCK_TICKS = 100;

/** CPU used (user + system, in ticks) by one process so far; null when /proc does not have it. */
export function processTicks(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 of /proc/<pid>/stat (utime, stime); the slice starts at field 3.
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return null;
  }
}

/** The figures of /proc/stat's `cpu` line (ticks of all CPUs: user, nice, system, idle, iowait, irq, softirq, steal, …). */
function machineCpuTicks(): number[] | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    const [, ...values] = line.trim().split(/\s+/);
    return values.map(Number);
  } catch {
    return null;
  }
}

/**
 * Ticks of the whole machine that a virtual machine's host gave to others while this one wanted them
 * (`steal`, counted in {@link machineBusyTicks} too); null off Linux.
 */
export function machineStealTicks(): number | null {
  const steal = machineCpuTicks()?.[7];
  return steal !== undefined && Number.isFinite(steal) ? steal : null;
}

/** Busy ticks of the whole machine (all CPUs), from /proc/stat; null off Linux. */
export function machineBusyTicks(): number | null {
  const ticks = machineCpuTicks();
  if (ticks === null) {
    return null;
  }
  const total = ticks.slice(0, 8).reduce((sum, n) => sum + n, 0);
  return total - (ticks[3] ?? 0) - (ticks[4] ?? 0);
}

/** CPU seconds used between two tick samples of the same processes (one seen only at the end counts from 0). */
export function cpuSecondsBetween(before: Map<number, number>, after: Map<number, number>): number {
  let ticks = 0;
  for (const [pid, end] of after) {
    ticks += end - (before.get(pid) ?? 0);
  }
  return ticks / CLOCK_TICKS;
}

/** CPU ticks of each of `pids` that /proc still knows. */
export function ticksByPid(pids: readonly number[]): Map<number, number> {
  return new Map(
    pids.flatMap((pid) => {
      const ticks = processTicks(pid);
      return ticks === null ? [] : [[pid, ticks] as [number, number]];
    }),
  );
}

/** Resident memory (VmRSS) of a process in MiB; null when /proc does not have it. */
export function rssMiB(pid: number): number | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
    return kib === undefined ? null : Number(kib) / 1024;
  } catch {
    return null;
  }
}

/** The command line of `pid`, its arguments joined by spaces ('' once it is gone). */
export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
  } catch {
    return '';
  }
}

/** Pids of the direct children of `parent` whose command line contains `needle`; empty off Linux. */
export function childPids(parent: number, needle: string): number[] {
  try {
    return readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name))
      .map(Number)
      .filter((pid) => {
        try {
          const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
          // Field 4 of /proc/<pid>/stat (ppid); the slice starts at field 3.
          const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
          return ppid === parent && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(needle);
        } catch {
          return false;
        }
      });
  } catch {
    return [];
  }
}
