import swc from 'unplugin-swc';
import { defineConfig } from 'vitest/config';

// SWC compiles the TypeScript (with decorator metadata, which Nest's DI needs); Vite's own transform is off.
const shared = {
  plugins: [swc.vite({ module: { type: 'es6' } })],
  oxc: false as const,
  resolve: { tsconfigPaths: true },
};

// Tiers that wait on real servers: an `expect.poll` without its own timeout waits up to 15 s (Vitest's default,
// 1 s, is a wall-clock bound that a busy machine fails). The test waits for the outcome, not for a speed.
const generousPoll = { poll: { timeout: 15_000 } };

export default defineConfig({
  test: {
    projects: [
      {
        ...shared,
        test: {
          name: 'unit',
          sequence: { groupOrder: 0 },
          include: [
            'apps/**/*.unit.spec.ts',
            'libs/**/*.unit.spec.ts',
            'k8s/**/*.unit.spec.ts',
            'scripts/**/*.unit.spec.ts',
          ],
          testTimeout: 5_000,
        },
      },
      {
        ...shared,
        test: {
          name: 'int',
          // Tiers run one after another: integration and end-to-end suites share Postgres and the broker.
          sequence: { groupOrder: 1 },
          include: ['apps/**/*.int.spec.ts', 'libs/**/*.int.spec.ts'],
          testTimeout: 30_000,
          expect: generousPoll,
          hookTimeout: 60_000,
          fileParallelism: false,
        },
      },
      {
        ...shared,
        test: {
          name: 'e2e',
          sequence: { groupOrder: 2 },
          include: ['test/e2e/**/*.e2e.spec.ts'],
          testTimeout: 120_000,
          expect: generousPoll,
          hookTimeout: 180_000,
          fileParallelism: false,
        },
      },
      {
        ...shared,
        test: {
          // Faults of the platform's dependencies, injected into private Postgres and Kafka servers of the
          // suite's own (docs/failure-model.md): nothing else on the machine is disturbed.
          name: 'fault',
          sequence: { groupOrder: 3 },
          include: ['test/fault/**/*.fault.spec.ts'],
          testTimeout: 300_000,
          expect: generousPoll,
          hookTimeout: 180_000,
          fileParallelism: false,
        },
      },
      {
        ...shared,
        test: {
          // The web console in a real Chromium (playwright-core, the machine's browser) against the whole
          // platform: pages, live updates, A2UI, accessibility (axe-core) and screenshots (docs/console/).
          name: 'browser',
          sequence: { groupOrder: 4 },
          include: ['test/browser/**/*.browser.spec.ts'],
          testTimeout: 120_000,
          expect: generousPoll,
          hookTimeout: 180_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
