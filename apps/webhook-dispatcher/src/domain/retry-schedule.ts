/**
 * Retry schedule of webhook deliveries. The first attempt is made as soon as
 * the event arrives; after the n-th failed attempt the next one waits
 * `schedule[n-1]` (± jitter). When the schedule is exhausted the delivery is
 * FAILED. The default spreads 11 attempts over about 24 hours.
 */
export const DEFAULT_RETRY_SCHEDULE = '5s,30s,2m,10m,30m,1h,2h,4h,8h,8h';

/** Fraction by which each delay is randomly stretched or shrunk (0.2 = ±20 %). */
export const RETRY_JITTER = 0.2;

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Parses `5s,30s,2m,1h` (units ms, s, m, h) into milliseconds; throws with the offending entry. */
export function parseRetrySchedule(text: string): number[] {
  const parts = text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  if (parts.length === 0) throw new Error('retry schedule is empty');
  return parts.map((p) => {
    const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(p);
    if (!m) throw new Error(`bad retry delay "${p}" (use e.g. 500ms, 5s, 2m, 1h)`);
    const ms = Math.round(Number(m[1]) * UNIT_MS[m[2]!]!);
    if (ms <= 0 || ms > 7 * 24 * 3_600_000)
      throw new Error(`retry delay "${p}" must be between 1ms and 7 days`);
    return ms;
  });
}

/**
 * Delay before the next attempt after `attemptsMade` failed attempts, or
 * undefined when the delivery has used every attempt and must be FAILED.
 * `random` is in [0, 1) (injectable for tests).
 */
export function nextRetryDelay(
  attemptsMade: number,
  schedule: readonly number[],
  random: () => number = Math.random,
): number | undefined {
  if (attemptsMade < 1) return 0;
  const base = schedule[attemptsMade - 1];
  if (base === undefined) return undefined;
  const factor = 1 - RETRY_JITTER + 2 * RETRY_JITTER * random();
  return Math.max(1, Math.round(base * factor));
}

/** Attempts a delivery gets in total under this schedule (the first plus one per delay). */
export function maxAttempts(schedule: readonly number[]): number {
  return schedule.length + 1;
}
