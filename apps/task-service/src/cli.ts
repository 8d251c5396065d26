import { loadConfig, postgresSchema } from '@lib/config';
import { createPool, grantRuntimeRole, migrate } from '@lib/event-store';
import { diffRebuiltTaskView, rebuildTaskView } from './projections/task-view.rebuild';

const USAGE = `usage: cli <command>
  migrate                       apply pending database migrations (then grant SCHEMA_RUNTIME_ROLE, if set,
                                what the apps need)
  rebuild-task-view             rebuild read.task_view from the event log (in place, one transaction)
  rebuild-task-view --verify    rebuild into a scratch table and compare it with the live view`;

/** Operator commands of the task-service. Exit code 0 on success, 1 on failure or a mismatch. */
async function main(args: string[]): Promise<number> {
  const config = loadConfig(postgresSchema);
  const [command, flag] = args;
  if (command === 'migrate') {
    await migrate(config.POSTGRES_URL, (line) => console.log(line));
    if (config.SCHEMA_RUNTIME_ROLE) {
      await grantRuntimeRole(config.POSTGRES_URL, config.SCHEMA_RUNTIME_ROLE);
      console.log(`> granted the runtime privileges to ${config.SCHEMA_RUNTIME_ROLE}`);
    }
    return 0;
  }
  if (command === 'rebuild-task-view') {
    await migrate(config.POSTGRES_URL);
    const pool = createPool(config.POSTGRES_URL, { max: 2, applicationName: 'a2a-cli' });
    try {
      const verify = flag === '--verify';
      const report = await rebuildTaskView(pool, verify ? 'scratch' : 'live');
      console.log(`rebuilt ${report.streams} task streams from ${report.events} events`);
      if (!verify) {
        return 0;
      }
      const diff = await diffRebuiltTaskView(pool);
      console.log(
        `rows only in live view: ${diff.onlyLive}; only in rebuilt view: ${diff.onlyRebuilt}`,
      );
      return diff.onlyLive === 0 && diff.onlyRebuilt === 0 ? 0 : 1;
    } finally {
      await pool.end();
    }
  }
  console.error(USAGE);
  return 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
