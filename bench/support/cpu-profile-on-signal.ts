/**
 * CPU profiles of a process by intervals, for a process that is stopped by a signal (a Nest app with shutdown
 * hooks dies by the signal it got, so `--cpu-prof` never writes its profile). Loaded with
 * `node --require <this file>` and `BENCH_CPU_PROF_DIR=DIR`, it profiles the process through the inspector
 * (1 ms sampling, as `--cpu-prof`); every {@link CUT_SIGNAL} writes the profile so far as
 * `CPU.<date>.<time>.<pid>.0.<seq>.cpuprofile` into DIR and starts the next one. So a benchmark sends it when
 * its measured interval starts (the profile of the boot is written) and when it ends (the profile of the
 * interval alone).
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

const SAMPLING_INTERVAL_US = 1_000;

/**
 * The signal that cuts the profile: SIGWINCH, ignored by default and by Nest (its shutdown hooks stop the
 * process on SIGUSR2, among others; SIGUSR1 is Node's inspector signal).
 */
export const CUT_SIGNAL = 'SIGWINCH';

let sequence = 0;

function profileName(): string {
  const now = new Date();
  const two = (n: number): string => String(n).padStart(2, '0');
  const date = `${now.getFullYear()}${two(now.getMonth() + 1)}${two(now.getDate())}`;
  const time = `${two(now.getHours())}${two(now.getMinutes())}${two(now.getSeconds())}`;
  sequence++;
  return `CPU.${date}.${time}.${process.pid}.0.${String(sequence).padStart(3, '0')}.cpuprofile`;
}

const dir = process.env['BENCH_CPU_PROF_DIR'];
// Only as a preload (no main module yet), not when a benchmark imports CUT_SIGNAL from here.
if (dir && require.main === undefined) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: SAMPLING_INTERVAL_US });
  session.post('Profiler.start');
  process.on(CUT_SIGNAL, () => {
    // The inspector answers a session of the same thread synchronously.
    session.post('Profiler.stop', (error, result) => {
      if (!error) {
        writeFileSync(join(dir, profileName()), JSON.stringify(result.profile));
      }
      session.post('Profiler.start');
    });
  });
}
