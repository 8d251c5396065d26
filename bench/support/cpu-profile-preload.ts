/**
 * `--cpu-prof` for processes that cannot be given it: Node 20 refuses it in NODE_OPTIONS, and the standalone
 * spawns its workers with the environment only. Loaded with `NODE_OPTIONS=--require <this file>` and
 * `BENCH_CPU_PROF_DIR=DIR`, it profiles the process through the inspector (1 ms sampling, as `--cpu-prof`) and
 * writes `CPU.<date>.<time>.<pid>.0.001.cpuprofile` into DIR when the process exits normally. A process that
 * already runs with `--cpu-prof` is left alone.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

const SAMPLING_INTERVAL_US = 1_000;

function profileName(): string {
  const now = new Date();
  const two = (n: number): string => String(n).padStart(2, '0');
  const date = `${now.getFullYear()}${two(now.getMonth() + 1)}${two(now.getDate())}`;
  const time = `${two(now.getHours())}${two(now.getMinutes())}${two(now.getSeconds())}`;
  return `CPU.${date}.${time}.${process.pid}.0.001.cpuprofile`;
}

const dir = process.env['BENCH_CPU_PROF_DIR'];
if (dir && !process.execArgv.some((arg) => arg.startsWith('--cpu-prof'))) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: SAMPLING_INTERVAL_US });
  session.post('Profiler.start');
  // The inspector answers a session of the same thread synchronously, so this works in an exit handler.
  process.on('exit', () => {
    session.post('Profiler.stop', (error, result) => {
      if (!error) {
        writeFileSync(join(dir, profileName()), JSON.stringify(result.profile));
      }
    });
  });
}
