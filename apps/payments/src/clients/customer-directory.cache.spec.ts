import { describe, expect, it } from 'vitest';
import type { CustomerDirectory } from '../app/ports.js';
import { CachedCustomerDirectory, CUSTOMER_ID_MAX_AGE_MS } from './customer-directory.cache.js';

/** An identity that counts its reads, answers `pc-<n>` and lets a test hold a read in flight. */
function identity() {
  let calls = 0;
  let hold: Promise<void> | undefined;
  const inner: CustomerDirectory = {
    async platformCustomerId(_platformId, customerId) {
      calls++;
      const answer = `pc-${customerId}`;
      await hold;
      return answer;
    },
    customerByUmaAddress: async () => undefined,
  };
  return {
    inner,
    get calls() {
      return calls;
    },
    holdNext() {
      let release!: () => void;
      hold = new Promise((r) => (release = r));
      return () => {
        hold = undefined;
        release();
      };
    },
  };
}

function setup(o: { live?: boolean } = {}) {
  const id = identity();
  const state = { live: o.live ?? true, now: 1_000_000 };
  const cache = new CachedCustomerDirectory(id.inner, { live: () => state.live, now: () => state.now });
  return { id, state, cache };
}

describe('CachedCustomerDirectory', () => {
  it('keeps a platformCustomerId per customer and platform', async () => {
    const { id, cache } = setup();
    expect(await cache.platformCustomerId('Platform:a', 'Customer:1')).toBe('pc-Customer:1');
    expect(await cache.platformCustomerId('Platform:a', 'Customer:1')).toBe('pc-Customer:1');
    expect(id.calls).toBe(1);
    // Another platform naming the same customer id is identity's to answer (not found there).
    await cache.platformCustomerId('Platform:b', 'Customer:1');
    expect(id.calls).toBe(2);
  });

  it('trusts an entry at most the maximum age', async () => {
    const { id, state, cache } = setup();
    await cache.platformCustomerId('Platform:a', 'Customer:1');
    state.now += CUSTOMER_ID_MAX_AGE_MS - 1;
    await cache.platformCustomerId('Platform:a', 'Customer:1');
    expect(id.calls).toBe(1);
    state.now += 1;
    await cache.platformCustomerId('Platform:a', 'Customer:1');
    expect(id.calls).toBe(2);
  });

  it('keeps and trusts nothing while not live', async () => {
    const { id, state, cache } = setup();
    await cache.platformCustomerId('Platform:a', 'Customer:1');
    state.live = false;
    await cache.platformCustomerId('Platform:a', 'Customer:1');
    await cache.platformCustomerId('Platform:a', 'Customer:1');
    expect(id.calls).toBe(3);
    expect(cache.size).toBe(0);
  });

  it('forgets a customer; a read in flight when it was forgotten is not kept', async () => {
    const { id, cache } = setup();
    await cache.platformCustomerId('Platform:a', 'Customer:1');
    cache.forget('Customer:1');
    const release = id.holdNext();
    const inFlight = cache.platformCustomerId('Platform:a', 'Customer:1');
    cache.forget('Customer:1'); // its CUSTOMER.DELETED arrives before identity's answer
    release();
    await inFlight;
    expect(cache.size).toBe(0);
    await cache.platformCustomerId('Platform:a', 'Customer:1');
    expect(id.calls).toBe(3);
  });

  it('a read that ends after the subscription went down is not kept', async () => {
    const { state, id, cache } = setup();
    const release = id.holdNext();
    const inFlight = cache.platformCustomerId('Platform:a', 'Customer:1');
    state.live = false;
    release();
    await inFlight;
    expect(cache.size).toBe(0);
  });

  it('does not keep a refusal', async () => {
    const refusing = new CachedCustomerDirectory(
      {
        platformCustomerId: () => Promise.reject(new Error('CUSTOMER_NOT_FOUND')),
        customerByUmaAddress: async () => undefined,
      },
      { live: () => true },
    );
    await expect(refusing.platformCustomerId('Platform:a', 'Customer:1')).rejects.toThrow('CUSTOMER_NOT_FOUND');
    expect(refusing.size).toBe(0);
  });
});
