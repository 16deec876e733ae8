import { describe, expect, it } from 'vitest';
import { aggregate, percentile, ratio, sentByPayer, summarize, type PairOutcome } from './stats.js';

describe('percentile (nearest rank)', () => {
  const hundred = Array.from({ length: 100 }, (_, i) => i + 1); // 1..100

  it('is the smallest value with at least p % of the samples at or below it', () => {
    expect(percentile(hundred, 50)).toBe(50);
    expect(percentile(hundred, 99)).toBe(99);
    expect(percentile(hundred, 100)).toBe(100);
    expect(percentile(hundred, 0.5)).toBe(1);
    expect(percentile([10, 20, 30, 40], 50)).toBe(20);
    expect(percentile([10, 20, 30, 40], 51)).toBe(30);
    expect(percentile([10, 20, 30, 40], 99)).toBe(40);
  });

  it('of one sample is that sample; of none is NaN', () => {
    expect(percentile([7], 1)).toBe(7);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 50)).toBeNaN();
  });

  it('refuses p outside (0, 100]', () => {
    expect(() => percentile([1], 0)).toThrow(RangeError);
    expect(() => percentile([1], 101)).toThrow(RangeError);
  });
});

describe('summarize', () => {
  it('sorts, then takes count, mean, percentiles and max', () => {
    const s = summarize([5, 1, 4, 2, 3]);
    expect(s).toEqual({ count: 5, mean: 3, p50: 3, p90: 5, p99: 5, max: 5 });
  });

  it('of nothing is NaN figures with count 0', () => {
    const s = summarize([]);
    expect(s.count).toBe(0);
    expect(s.mean).toBeNaN();
    expect(s.max).toBeNaN();
  });
});

describe('aggregate', () => {
  const pair = (o: Partial<PairOutcome> & Pick<PairOutcome, 'startedAt' | 'endedAt'>): PairOutcome => ({
    ok: true,
    payer: 0,
    createMs: 1,
    executeMs: 2,
    sent: 200n,
    ...o,
  });

  it('counts only pairs that ended inside the measured window', () => {
    const m = aggregate({
      clients: 2,
      windowStart: 1000,
      windowEnd: 3000,
      outcomes: [
        pair({ startedAt: 0, endedAt: 900 }), // warm-up
        pair({ startedAt: 900, endedAt: 1100 }), // started in the warm-up, ended inside: counts
        pair({ startedAt: 1100, endedAt: 1500, createMs: 100, executeMs: 300 }),
        pair({ startedAt: 2000, endedAt: 3000 }),
        pair({ startedAt: 2900, endedAt: 3200 }), // the tail
        pair({ startedAt: 1500, endedAt: 1600, ok: false, error: 'execute:400 INSUFFICIENT_FUNDS' }),
        pair({ startedAt: 1600, endedAt: 1700, ok: false, error: 'execute:400 INSUFFICIENT_FUNDS' }),
        pair({ startedAt: 1700, endedAt: 1800, ok: false, error: 'create:503' }),
      ],
    });
    expect(m.seconds).toBe(2);
    expect(m.attempts).toBe(6);
    expect(m.completions).toBe(3);
    expect(m.completionsPerSec).toBe(1.5);
    expect(m.pair).toMatchObject({ count: 3, p50: 400, max: 1000 });
    expect(m.create.max).toBe(100);
    expect(m.execute.max).toBe(300);
    expect(m.errors).toEqual({ 'execute:400 INSUFFICIENT_FUNDS': 2, 'create:503': 1 });
    expect(m.completionsTotal).toBe(5);
  });

  it('of a run with nothing in the window is 0/s', () => {
    const m = aggregate({ clients: 1, windowStart: 0, windowEnd: 1000, outcomes: [] });
    expect(m.completionsPerSec).toBe(0);
    expect(m.pair.count).toBe(0);
  });
});

describe('sentByPayer', () => {
  it('sums totalSendingAmount of completed pairs per account, failures excluded', () => {
    const base = { startedAt: 0, endedAt: 1 };
    const sums = sentByPayer([
      { ...base, ok: true, payer: 0, sent: 200n },
      { ...base, ok: true, payer: 0, sent: 201n },
      { ...base, ok: true, payer: 3, sent: 5n },
      { ...base, ok: false, payer: 3, error: 'execute:500' },
    ]);
    expect([...sums.entries()]).toEqual([
      [0, 401n],
      [3, 5n],
    ]);
  });
});

describe('ratio', () => {
  it('divides, and is undefined when a side is missing or the divisor is 0', () => {
    expect(ratio(50, 200)).toBe(0.25);
    expect(ratio(undefined, 2)).toBeUndefined();
    expect(ratio(2, undefined)).toBeUndefined();
    expect(ratio(2, 0)).toBeUndefined();
    expect(ratio(Number.NaN, 2)).toBeUndefined();
  });
});
