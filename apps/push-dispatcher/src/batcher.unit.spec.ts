import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { Batcher } from './batcher';

/** A batch function whose batches end when the test says so; it answers each call with its double. */
function controlled(): {
  run: (calls: readonly number[]) => Promise<number[]>;
  batches: number[][];
  finish: (index: number, error?: Error) => void;
} {
  const batches: number[][] = [];
  const endings: ((error?: Error) => void)[] = [];
  return {
    batches,
    run: (calls) =>
      new Promise((resolve, reject) => {
        batches.push([...calls]);
        endings.push((error) => (error ? reject(error) : resolve(calls.map((c) => c * 2))));
      }),
    finish: (index, error) => endings[index]?.(error),
  };
}

/** Lets the event loop turn a few times: whatever the batcher launches meanwhile is launched. */
async function turns(): Promise<void> {
  for (let n = 0; n < 3; n++) {
    await nextTurn();
  }
}

describe('Batcher', () => {
  it('puts the calls of one turn of the event loop in one batch, answering each with its result', async () => {
    const fn = controlled();
    const batcher = new Batcher(fn.run, { maxBatch: 10, maxInFlight: 2 });
    const answers = Promise.all([1, 2, 3].map((n) => batcher.submit(n)));
    await turns();
    expect(fn.batches).toStrictEqual([[1, 2, 3]]);
    fn.finish(0);
    expect(await answers).toStrictEqual([2, 4, 6]);
  });

  it('holds calls while maxInFlight batches run, then sends them together, at most maxBatch at a time', async () => {
    const fn = controlled();
    const batcher = new Batcher(fn.run, { maxBatch: 3, maxInFlight: 2 });
    const first = batcher.submit(1);
    await turns();
    const second = batcher.submit(2);
    await turns();
    expect(fn.batches).toStrictEqual([[1], [2]]);

    const waiting = [3, 4, 5, 6, 7].map((n) => batcher.submit(n));
    await turns();
    expect(fn.batches).toHaveLength(2);

    fn.finish(0);
    expect(await first).toBe(2);
    await turns();
    expect(fn.batches.slice(2)).toStrictEqual([[3, 4, 5]]);
    fn.finish(1);
    expect(await second).toBe(4);
    await turns();
    expect(fn.batches.slice(3)).toStrictEqual([[6, 7]]);
    fn.finish(2);
    fn.finish(3);
    expect(await Promise.all(waiting)).toStrictEqual([6, 8, 10, 12, 14]);
  });

  it('rejects every call of a failed batch, and goes on with the next', async () => {
    const fn = controlled();
    const batcher = new Batcher(fn.run, { maxBatch: 10, maxInFlight: 1 });
    const failing = [1, 2].map((n) => batcher.submit(n));
    await turns();
    const later = batcher.submit(3);
    fn.finish(0, new Error('connection lost'));
    for (const call of failing) {
      await expect(call).rejects.toThrow('connection lost');
    }
    await turns();
    expect(fn.batches).toStrictEqual([[1, 2], [3]]);
    fn.finish(1);
    expect(await later).toBe(6);
  });

  it('rejects the calls of a batch answered with the wrong number of results', async () => {
    const batcher = new Batcher(() => Promise.resolve([1]), { maxBatch: 10, maxInFlight: 1 });
    const calls = [batcher.submit(1), batcher.submit(2)];
    for (const call of calls) {
      await expect(call).rejects.toThrow('a batch of 2 calls got 1 results');
    }
  });
});
