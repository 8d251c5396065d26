/**
 * `npm run chaos:kill`: SIGKILL the task-service with slow countdown tasks in flight, restart it on the same
 * ports, and report what happened (see kill-task-service.scenario.ts). Exit code 0 only when every task ended
 * and both checks passed.
 *
 * Options: `--tasks K` (default 20), `--count N` (countdown steps, 20), `--step-ms M` (400),
 * `--down-ms D` (1000), `--deadline-s S` (60), `--logs` (print the full process logs at the end).
 */
import {
  DEFAULT_KILL_SCENARIO,
  formatReport,
  runKillTaskServiceScenario,
  type KillScenarioOptions,
} from './kill-task-service.scenario';

function parseArgs(argv: string[]): { options: Partial<KillScenarioOptions>; fullLogs: boolean } {
  const options: Partial<KillScenarioOptions> = {};
  let fullLogs = false;
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i] ?? '';
    const number = (): number => {
      const value = Number(argv[++i]);
      if (!Number.isFinite(value) || value <= 0) {
        throw new Error(`${flag} needs a positive number`);
      }
      return value;
    };
    switch (flag) {
      case '--tasks':
        options.tasks = Math.round(number());
        break;
      case '--count':
        options.countdown = Math.round(number());
        break;
      case '--step-ms':
        options.stepMs = Math.round(number());
        break;
      case '--down-ms':
        options.downMs = Math.round(number());
        break;
      case '--deadline-s':
        options.deadlineMs = Math.round(number() * 1_000);
        break;
      case '--logs':
        fullLogs = true;
        break;
      default:
        throw new Error(
          `unknown argument ${flag} (known: --tasks K, --count N, --step-ms M, --down-ms D, --deadline-s S, --logs)`,
        );
    }
  }
  return { options, fullLogs };
}

async function main(): Promise<number> {
  const { options, fullLogs } = parseArgs(process.argv.slice(2));
  const effective = { ...DEFAULT_KILL_SCENARIO, ...options };
  console.log(
    `running: K=${effective.tasks}, N=${effective.countdown}, stepMs=${effective.stepMs} ...`,
  );
  const report = await runKillTaskServiceScenario({
    ...options,
    progress: (line) => console.log(`  ${line}`),
  });
  console.log('');
  console.log(formatReport(report));
  if (fullLogs || !report.passed) {
    for (const [name, log] of Object.entries(report.logs)) {
      console.log('');
      console.log(`## Last output of ${name}`);
      console.log(log);
    }
  }
  return report.passed ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exit(1);
  },
);
