import { describe, expect, it } from 'vitest';
import { LeaseWrites } from './lease-writes.js';

describe('LeaseWrites', () => {
  it('retries a failing write until it lands, with doubling pauses', async () => {
    const writes = new LeaseWrites({ backoffMs: 10, maxBackoffMs: 40 });
    const at: number[] = [];
    const t0 = Date.now();
    const landed = writes.retry(async () => {
      at.push(Date.now() - t0);
      if (at.length < 4) throw new Error('ECONNREFUSED');
    }, Date.now() + 5_000);
    expect(writes.size).toBe(1);
    expect(await landed).toBe(true);
    expect(at).toHaveLength(4);
    // pauses 10, 20, 40, 40: each try at least the sum of the pauses before it
    expect(at[0]).toBeGreaterThanOrEqual(9);
    expect(at[3]).toBeGreaterThanOrEqual(9 + 20 + 40 + 40 - 4);
    expect(writes.size).toBe(0);
  });

  it('gives up when the next try would come after the deadline, and drain waits for it', async () => {
    const writes = new LeaseWrites({ backoffMs: 20, maxBackoffMs: 20 });
    let tries = 0;
    const t0 = Date.now();
    const landed = writes.retry(async () => {
      tries++;
      throw new Error('still down');
    }, Date.now() + 110);
    await writes.drain();
    expect(await landed).toBe(false);
    expect(Date.now() - t0).toBeLessThan(200);
    expect(tries).toBeGreaterThanOrEqual(4);
    expect(tries).toBeLessThanOrEqual(5);
  });

  it('a deadline already past: no try at all', async () => {
    const writes = new LeaseWrites();
    let tries = 0;
    expect(await writes.retry(async () => void tries++, Date.now() - 1)).toBe(false);
    expect(tries).toBe(0);
  });
});
