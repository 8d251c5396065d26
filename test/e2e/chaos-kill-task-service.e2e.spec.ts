import { describe, expect, it } from 'vitest';
import {
  formatReport,
  runKillTaskServiceScenario,
} from '../../scripts/chaos/kill-task-service.scenario';

// Runs the processes from dist/: `npm run build` first (npm run test:e2e does).
describe('chaos: SIGKILL the task-service with tasks in flight', () => {
  it('recovers: every task ends, no WORKING task is left without a live lease, stream versions stay gap-free', async () => {
    const report = await runKillTaskServiceScenario({ tasks: 8, deadlineMs: 60_000 });
    const summary = formatReport(report);

    expect(report.preconditionMet, summary).toBe(true);
    expect(report.workerReconnectedAfterMs, summary).not.toBeNull();
    expect(report.ingressServedAfterMs, summary).not.toBeNull();
    expect(report.checkA.stuck, summary).toEqual([]);
    expect(report.checkA.passed, summary).toBe(true);
    expect(report.checkB.problems, summary).toEqual([]);
    expect(report.checkB.streams, summary).toBe(8);
    expect(report.allTerminal, summary).toBe(true);
    const ended = Object.entries(report.finalStates)
      .filter(([state]) =>
        [
          'TASK_STATE_COMPLETED',
          'TASK_STATE_FAILED',
          'TASK_STATE_CANCELED',
          'TASK_STATE_REJECTED',
        ].includes(state),
      )
      .reduce((sum, [, n]) => sum + n, 0);
    expect(ended, summary).toBe(8);
    expect(report.passed, summary).toBe(true);
  });
});
