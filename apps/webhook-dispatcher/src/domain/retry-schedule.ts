/**
 * Retry schedule of webhook deliveries (Standard Webhooks' schedule). The first
 * attempt is made as soon as the event arrives; after the n-th failed attempt
 * the next one waits `schedule[n-1]` (± jitter; × SANDBOX_TIME_SCALE for sandbox
 * platforms; at least what the endpoint's Retry-After asked). When the schedule
 * is exhausted the delivery is FAILED. The default: immediately, 5 s, 5 min,
 * 30 min, 2 h, 5 h, 10 h, 10 h — 8 attempts over about 27.6 hours.
 */
export const DEFAULT_RETRY_SCHEDULE = '5s,5m,30m,2h,5h,10h,10h';

/** The longest Retry-After honoured (a longer one waits this long). */
export const MAX_RETRY_AFTER_MS = 10 * 3_600_000;

/**
 * The delay a Retry-After header asks for (delta-seconds or an HTTP date, relative to `now`),
 * capped at MAX_RETRY_AFTER_MS; undefined when absent or unreadable.
 */
export function retryAfterMs(header: string | undefined, now: Date): number | undefined {
  if (!header) return undefined;
  const text = header.trim();
  let ms: number;
  if (/^\d+$/.test(text)) ms = Number(text) * 1000;
  else {
    const at = Date.parse(text);
    if (Number.isNaN(at)) return undefined;
    ms = at - now.getTime();
  }
  return Math.min(Math.max(0, ms), MAX_RETRY_AFTER_MS);
}

/**
 * The wait before the next attempt after `attemptsMade` failed ones, or undefined when the
 * schedule is exhausted: the scheduled delay (± jitter) × `scale` (SANDBOX_TIME_SCALE for a
 * sandbox platform, 1 otherwise), and never less than the endpoint's Retry-After.
 */
export function retryDelay(
  attemptsMade: number,
  schedule: readonly number[],
  o: { scale?: number; retryAfterMs?: number; random?: () => number } = {},
): number | undefined {
  const base = nextRetryDelay(attemptsMade, schedule, o.random);
  if (base === undefined) return undefined;
  const scaled = Math.max(1, Math.round(base * (o.scale ?? 1)));
  return Math.max(scaled, o.retryAfterMs ?? 0);
}

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
