/**
 * The closed-loop load generator: N clients, each running one pair after
 * another (no think time) until the warm-up and the measured window are over.
 * Pairs in flight when the window closes are awaited (so nothing bleeds into
 * the next case) but do not count (see `aggregate`).
 */
import { performance } from 'node:perf_hooks';
import type { LoadRun, PairOutcome } from './stats.js';

export type PairFn = (client: number, seq: number) => Promise<Omit<PairOutcome, 'startedAt' | 'endedAt'>>;

export async function runLoad(o: {
  clients: number;
  warmupMs: number;
  durationMs: number;
  pair: PairFn;
  /** Pause after a failed pair, so a broken system is not spun on at full speed. */
  failurePauseMs?: number;
  /** Called when the measured window opens and closes (e.g. to sample CPU and database counters). */
  onWindowStart?: () => void;
  onWindowEnd?: () => void;
  now?: () => number;
}): Promise<LoadRun> {
  const now = o.now ?? (() => performance.now());
  const t0 = now();
  const windowStart = t0 + o.warmupMs;
  const windowEnd = windowStart + o.durationMs;
  const outcomes: PairOutcome[] = [];
  const timers = [
    setTimeout(() => o.onWindowStart?.(), o.warmupMs),
    setTimeout(() => o.onWindowEnd?.(), o.warmupMs + o.durationMs),
  ];
  await Promise.all(
    Array.from({ length: o.clients }, async (_, client) => {
      for (let seq = 0; now() < windowEnd; seq++) {
        const startedAt = now();
        let r: Omit<PairOutcome, 'startedAt' | 'endedAt'>;
        try {
          r = await o.pair(client, seq);
        } catch (err) {
          r = {
            ok: false,
            payer: -1,
            error: `exception:${(err as Error).message?.slice(0, 80) ?? String(err)}`,
          };
        }
        outcomes.push({ ...r, startedAt, endedAt: now() });
        if (!r.ok) await new Promise((res) => setTimeout(res, o.failurePauseMs ?? 20));
      }
    }),
  );
  // Clients stop once the window has closed; the timers have fired by then (or fire now).
  await new Promise((r) => setTimeout(r, Math.max(0, windowEnd - now())));
  for (const t of timers) clearTimeout(t);
  return { clients: o.clients, windowStart, windowEnd, outcomes };
}
