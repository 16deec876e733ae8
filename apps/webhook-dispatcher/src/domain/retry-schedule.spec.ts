import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RETRY_SCHEDULE,
  MAX_RETRY_AFTER_MS,
  maxAttempts,
  nextRetryDelay,
  parseRetrySchedule,
  retryAfterMs,
  retryDelay,
} from './retry-schedule.js';

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

  it('default: the Standard Webhooks schedule — immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h', () => {
    const s = parseRetrySchedule(DEFAULT_RETRY_SCHEDULE);
    expect(s).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    expect(maxAttempts(s)).toBe(8);
  });

  it('scales the scheduled delay (sandbox) but never waits less than Retry-After', () => {
    const s = [10_000];
    expect(retryDelay(1, s, { random: () => 0.5 })).toBe(10_000);
    expect(retryDelay(1, s, { random: () => 0.5, scale: 0.01 })).toBe(100);
    expect(retryDelay(1, s, { random: () => 0.5, scale: 0.01, retryAfterMs: 30_000 })).toBe(30_000);
    expect(retryDelay(1, s, { random: () => 0.5, retryAfterMs: 2_000 })).toBe(10_000);
    expect(retryDelay(2, s, { retryAfterMs: 30_000 })).toBeUndefined();
  });

  it('reads Retry-After as seconds or an HTTP date, capped at 10 h', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    expect(retryAfterMs('120', now)).toBe(120_000);
    expect(retryAfterMs(' 0 ', now)).toBe(0);
    expect(retryAfterMs('Thu, 01 Jan 2026 00:01:00 GMT', now)).toBe(60_000);
    expect(retryAfterMs('Wed, 31 Dec 2025 00:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs('999999', now)).toBe(MAX_RETRY_AFTER_MS);
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(retryAfterMs(undefined, now)).toBeUndefined();
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
