import type { AttemptResult } from './delivery.js';

/**
 * Why a platform's endpoint must be disabled after this attempt, if it must: it answered
 * 410 Gone, or it has failed every attempt since `failingSince` for at least `spanMs`.
 */
export function disableReason(
  r: Pick<AttemptResult, 'ok' | 'status'>,
  failingSince: Date | null,
  now: Date,
  spanMs: number,
): string | undefined {
  if (r.status === 410) return 'the endpoint answered 410 Gone';
  if (r.ok || !failingSince) return undefined;
  const failingMs = now.getTime() - failingSince.getTime();
  if (failingMs < spanMs) return undefined;
  return `every attempt failed for ${formatSpan(failingMs)} (since ${failingSince.toISOString()})`;
}

function formatSpan(ms: number): string {
  if (ms >= 3_600_000) return `${Math.floor(ms / 3_600_000)} h`;
  if (ms >= 60_000) return `${Math.floor(ms / 60_000)} min`;
  return `${Math.floor(ms / 1000)} s`;
}
