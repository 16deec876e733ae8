import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_SCHEDULE, maxAttempts, nextRetryDelay, parseRetrySchedule } from './retry-schedule.js';

describe('retry schedule', () => {
  it('parses durations with units', () => {
    expect(parseRetrySchedule('250ms, 5s,2m,1h,1.5s')).toEqual([250, 5000, 120_000, 3_600_000, 1500]);
  });

  it('rejects bad entries naming them', () => {
    expect(() => parseRetrySchedule('5s,soon')).toThrow(/"soon"/);
    expect(() => parseRetrySchedule('')).toThrow(/empty/);
    expect(() => parseRetrySchedule('0s')).toThrow(/between/);
    expect(() => parseRetrySchedule('200h')).toThrow(/between/);
  });

  it('default: 11 attempts over roughly a day, growing delays', () => {
    const s = parseRetrySchedule(DEFAULT_RETRY_SCHEDULE);
    expect(maxAttempts(s)).toBe(11);
    const total = s.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(20 * 3_600_000);
    expect(total).toBeLessThanOrEqual(24 * 3_600_000);
    for (let i = 1; i < s.length; i++) expect(s[i]!).toBeGreaterThanOrEqual(s[i - 1]!);
  });

  it('applies ±20 % jitter and gives up after the last delay', () => {
    const s = [1000, 10_000];
    expect(nextRetryDelay(1, s, () => 0)).toBe(800);
    expect(nextRetryDelay(1, s, () => 0.5)).toBe(1000);
    expect(nextRetryDelay(1, s, () => 0.999999)).toBe(1200);
    expect(nextRetryDelay(2, s, () => 0.5)).toBe(10_000);
    expect(nextRetryDelay(3, s, () => 0.5)).toBeUndefined();
  });
});
