import { describe, expect, it } from 'vitest';
import { runLoad } from './load.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('runLoad (closed loop, with a fake pair)', () => {
  it('runs every client until the window closes, awaits the pairs in flight and opens/closes the window once', async () => {
    const events: string[] = [];
    const inFlight = new Set<number>();
    let maxInFlight = 0;
    const run = await runLoad({
      clients: 3,
      warmupMs: 30,
      durationMs: 60,
      onWindowStart: () => events.push('start'),
      onWindowEnd: () => events.push('end'),
      pair: async (client, seq) => {
        const id = client * 1000 + seq;
        inFlight.add(id);
        maxInFlight = Math.max(maxInFlight, inFlight.size);
        await sleep(5);
        inFlight.delete(id);
        if (client === 2 && seq === 0) throw new Error('boom');
        return { ok: true, payer: client, createMs: 2, executeMs: 3, sent: 200n };
      },
      failurePauseMs: 1,
    });
    expect(events).toEqual(['start', 'end']);
    expect(inFlight.size).toBe(0);
    expect(maxInFlight).toBeLessThanOrEqual(3);
    expect(run.windowEnd - run.windowStart).toBeCloseTo(60, 6); // performance.now() values: float sums
    for (const client of [0, 1, 2]) expect(run.outcomes.some((o) => o.payer === client)).toBe(true);
    for (const o of run.outcomes) expect(o.endedAt).toBeGreaterThanOrEqual(o.startedAt);
    // Every client stopped only after the window closed.
    expect(Math.max(...run.outcomes.map((o) => o.endedAt))).toBeGreaterThanOrEqual(run.windowEnd);
    expect(run.outcomes.find((o) => !o.ok)?.error).toBe('exception:boom');
  });
});
