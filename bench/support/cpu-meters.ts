/**
 * CPU time per process group between two moments, from Linux /proc, for benchmarks that share the machine
 * with servers (Postgres, Redis, Kafka) and possibly with other people's work: each meter names the processes
 * it counts (one pid, a server found by the port it listens on and its children, the Postgres backends of
 * some connections), and the machine's own busy time shows what the named ones leave to everything else.
 * Ticks are counted per pid, so a process that starts in between counts from zero and one that ends is lost.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type { Pool } from 'pg';
import { fmt, table } from './figures';
import { childPids, CLOCK_TICKS, machineBusyTicks, ticksByPid } from './proc-stats';

/** CPU ticks per pid at one moment. */
export type Ticks = Map<number, number>;

/** One process group whose CPU time is reported. */
export interface Meter {
  label: string;
  /** Its ticks now, per pid. */
  read: () => Promise<Ticks>;
  /**
   * Part of another meter's processes (shown, but not subtracted again from the machine's busy time), or the
   * machine itself.
   */
  kind?: 'part' | 'machine';
}

/** The socket inodes listening on TCP `port` (IPv4 and IPv6), from /proc/net/tcp{,6}. */
function listeningInodes(port: number): Set<string> {
  const inodes = new Set<string>();
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address is ADDR:PORT; state 0A = LISTEN; field 10 = inode
      if (fields[1]?.endsWith(`:${hexPort}`) && fields[3] === '0A' && fields[9]) {
        inodes.add(fields[9]);
      }
    }
  }
  return inodes;
}

function numericEntries(dir: string): number[] {
  try {
    return readdirSync(dir)
      .filter((name) => /^\d+$/.test(name))
      .map(Number);
  } catch {
    return [];
  }
}

/** The process listening on TCP `port` of this machine; null when none is found (or /proc hides it). */
export function listeningPid(port: number): number | null {
  const inodes = listeningInodes(port);
  if (inodes.size === 0) {
    return null;
  }
  for (const pid of numericEntries('/proc')) {
    for (const fd of numericEntries(`/proc/${pid}/fd`)) {
      try {
        const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
        const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
        if (inode !== undefined && inodes.has(inode)) {
          return pid;
        }
      } catch {
        // closed meanwhile
      }
    }
  }
  return null;
}

/** A meter of one process, by a getter (the process may not have started when the meter is made). */
export function pidMeter(label: string, pid: () => number | undefined): Meter {
  return {
    label,
    read: () => {
      const p = pid();
      return Promise.resolve(p === undefined ? new Map() : ticksByPid([p]));
    },
  };
}

/** A meter of the server listening on `port` and its children; null when no such process is found. */
export function serverMeter(label: string, port: number): Meter | null {
  const pid = listeningPid(port);
  return pid === null
    ? null
    : {
        label: `${label} (pid ${pid})`,
        read: () => Promise.resolve(ticksByPid([pid, ...childPids(pid, '')])),
      };
}

/**
 * The backends serving the connections of `pool`'s database whose `application_name` starts with `prefix`
 * (the server must be on this machine): part of the Postgres server's time.
 */
export function backendMeter(label: string, pool: Pool, prefix: string): Meter {
  return {
    label,
    kind: 'part',
    read: async () => {
      const result = await pool.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity
          WHERE datname = current_database() AND starts_with(application_name, $1)`,
        [prefix],
      );
      return ticksByPid(result.rows.map((r) => r.pid));
    },
  };
}

/** The whole machine's busy time (all CPUs). */
export const machineMeter: Meter = {
  label: 'machine, all processes',
  kind: 'machine',
  read: () => {
    const busy = machineBusyTicks();
    return Promise.resolve(new Map(busy === null ? [] : [[0, busy]]));
  },
};

export type Snapshot = Ticks[];

export function snapshot(meters: readonly Meter[]): Promise<Snapshot> {
  return Promise.all(meters.map((m) => m.read().catch(() => new Map<number, number>())));
}

/** CPU seconds between two snapshots of one meter: per pid, from zero for a pid that was not there. */
function cpuSeconds(from: Ticks | undefined, to: Ticks | undefined): number | null {
  if (!to || to.size === 0) {
    return null;
  }
  let ticks = 0;
  for (const [pid, t] of to) {
    ticks += Math.max(0, t - (from?.get(pid) ?? 0));
  }
  return ticks / CLOCK_TICKS;
}

/**
 * A Markdown table of CPU seconds, share of one core and ms per unit of work, one row per meter, with a row for
 * the rest of the machine (its busy time minus the meters that are not part of another).
 */
export function cpuTable(
  meters: readonly Meter[],
  from: Snapshot,
  to: Snapshot,
  seconds: number,
  units: number,
  unit: string,
): string {
  const values = meters.map((_, i) => cpuSeconds(from[i], to[i]));
  const row = (label: string, cpu: number | null): string[] => [
    label,
    fmt(cpu, 2),
    fmt(cpu === null ? null : (100 * cpu) / seconds, 0),
    fmt(cpu === null ? null : (1_000 * cpu) / units, 3),
  ];
  const rows: string[][] = [];
  let named = 0;
  let machine: number | null = null;
  for (const [i, meter] of meters.entries()) {
    const cpu = values[i] ?? null;
    if (meter.kind === 'machine') {
      machine = cpu;
    } else {
      named += meter.kind === 'part' ? 0 : (cpu ?? 0);
      rows.push(row(meter.kind === 'part' ? `  of which ${meter.label}` : meter.label, cpu));
    }
  }
  if (machine !== null) {
    rows.push(row('everything else on the machine', Math.max(0, machine - named)));
    rows.push(row(machineMeter.label, machine));
  }
  return table(['process', 'CPU s', '% of one core', `CPU ms per ${unit}`], rows, [0]);
}
