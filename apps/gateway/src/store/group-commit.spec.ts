import { describe, expect, it } from 'vitest';
import { GroupCommit } from './group-commit.js';

interface Op {
  row: string;
  value: number;
}

/** A GroupCommit over a fake statement that records its batches and is released by hand. */
function harness(o: { maxBatch?: number; fails?: (ops: readonly Op[]) => boolean } = {}) {
  const batches: number[][] = [];
  const gates: (() => void)[] = [];
  const group = new GroupCommit<Op, number>({
    rowOf: (op) => op.row,
    ...(o.maxBatch !== undefined ? { maxBatch: o.maxBatch } : {}),
    run: async (ops) => {
      batches.push(ops.map((op) => op.value));
      await new Promise<void>((resolve) => gates.push(resolve));
      if (o.fails?.(ops)) throw new Error(`batch of ${ops.length} failed`);
      return ops.map((op) => op.value * 10);
    },
  });
  /** Lets every statement started so far finish, and what they release run. */
  const flush = async () => {
    for (;;) {
      await new Promise((r) => setImmediate(r));
      if (gates.length === 0) return;
      gates.splice(0).forEach((open) => open());
    }
  };
  return { group, batches, flush };
}

describe('GroupCommit', () => {
  it('a lone operation runs at once, alone; what arrives while it runs goes out together next', async () => {
    const { group, batches, flush } = harness();
    const first = group.submit({ row: 'a', value: 1 });
    await new Promise((r) => setImmediate(r));
    expect(batches).toEqual([[1]]);
    const later = [2, 3, 4].map((value) => group.submit({ row: `r${value}`, value }));
    await new Promise((r) => setImmediate(r));
    expect(batches).toEqual([[1]]); // waiting for the batch in flight
    await flush();
    expect(await first).toBe(10);
    expect(await Promise.all(later)).toEqual([20, 30, 40]);
    expect(batches).toEqual([[1], [2, 3, 4]]);
  });

  it('a row once per batch, its operations in the order they came; at most maxBatch per batch', async () => {
    const { group, batches, flush } = harness({ maxBatch: 3 });
    const ops: Op[] = [
      { row: 'a', value: 1 },
      { row: 'a', value: 2 },
      { row: 'b', value: 3 },
      { row: 'a', value: 4 },
      { row: 'c', value: 5 },
      { row: 'd', value: 6 },
    ];
    const results = ops.map((op) => group.submit(op));
    await flush();
    expect(await Promise.all(results)).toEqual([10, 20, 30, 40, 50, 60]);
    expect(batches).toEqual([[1, 3, 5], [2, 6], [4]]);
  });

  it('a failed batch runs each operation alone: each caller gets its own result or error', async () => {
    const { group, batches, flush } = harness({ fails: (ops) => ops.length > 1 || ops[0]!.value === 2 });
    const results = Promise.allSettled([1, 2, 3].map((value) => group.submit({ row: `r${value}`, value })));
    await flush();
    expect((await results).map((r) => (r.status === 'fulfilled' ? r.value : String(r.reason)))).toEqual([
      10,
      'Error: batch of 1 failed',
      30,
    ]);
    expect(batches).toEqual([[1, 2, 3], [1], [2], [3]]);
  });
});
