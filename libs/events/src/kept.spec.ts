import { describe, expect, it } from 'vitest';
import { KeptWhileLive } from './kept.js';

const MAX_AGE = 60_000;

/** An owner that counts its reads, answers `v-<key>` and lets a test hold a read in flight. */
function owner() {
  let calls = 0;
  let hold: Promise<void> | undefined;
  return {
    read: (key: string) => async () => {
      calls++;
      const answer = `v-${key}`;
      await hold;
      return answer;
    },
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

function setup(o: { keep?: (v: string) => boolean } = {}) {
  const source = owner();
  const state = { live: true, now: 1_000_000 };
  const kept = new KeptWhileLive<string>({ live: () => state.live, now: () => state.now, maxAgeMs: MAX_AGE, ...o });
  const get = (platformId: string, key: string) => kept.get(platformId, key, source.read(key));
  return { source, state, kept, get };
}

describe('KeptWhileLive', () => {
  it('keeps an answer per key and platform', async () => {
    const { source, get } = setup();
    expect(await get('Platform:a', 'Customer:1')).toBe('v-Customer:1');
    expect(await get('Platform:a', 'Customer:1')).toBe('v-Customer:1');
    expect(source.calls).toBe(1);
    // Another platform naming the same id is the owner's to answer (not found there).
    await get('Platform:b', 'Customer:1');
    expect(source.calls).toBe(2);
  });

  it('trusts an entry at most the maximum age', async () => {
    const { source, state, get } = setup();
    await get('Platform:a', 'Customer:1');
    state.now += MAX_AGE - 1;
    await get('Platform:a', 'Customer:1');
    expect(source.calls).toBe(1);
    state.now += 1;
    await get('Platform:a', 'Customer:1');
    expect(source.calls).toBe(2);
  });

  it('keeps and trusts nothing while not live', async () => {
    const { source, state, kept, get } = setup();
    await get('Platform:a', 'Customer:1');
    state.live = false;
    await get('Platform:a', 'Customer:1');
    await get('Platform:a', 'Customer:1');
    expect(source.calls).toBe(3);
    expect(kept.size).toBe(0);
  });

  it('forgets a record; a read in flight when it was forgotten is not kept', async () => {
    const { source, kept, get } = setup();
    await get('Platform:a', 'Customer:1');
    kept.forget('Customer:1');
    const release = source.holdNext();
    const inFlight = get('Platform:a', 'Customer:1');
    kept.forget('Customer:1'); // its DELETED event arrives before the owner's answer
    release();
    await inFlight;
    expect(kept.size).toBe(0);
    await get('Platform:a', 'Customer:1');
    expect(source.calls).toBe(3);
  });

  it('clear forgets everything, and a read in flight then is not kept', async () => {
    const { source, kept, get } = setup();
    await get('Platform:a', 'Customer:1');
    await get('Platform:a', 'Customer:2');
    const release = source.holdNext();
    const inFlight = get('Platform:a', 'Customer:3');
    kept.clear();
    release();
    await inFlight;
    expect(kept.size).toBe(0);
  });

  it('a read that ends after the subscription went down is not kept', async () => {
    const { state, source, kept, get } = setup();
    const release = source.holdNext();
    const inFlight = get('Platform:a', 'Customer:1');
    state.live = false;
    release();
    await inFlight;
    expect(kept.size).toBe(0);
  });

  it('does not keep a refusal, nor an answer `keep` declines', async () => {
    const { kept } = setup();
    await expect(kept.get('Platform:a', 'Customer:1', () => Promise.reject(new Error('NOT_FOUND')))).rejects.toThrow('NOT_FOUND');
    expect(kept.size).toBe(0);
    const { source, kept: choosy, get } = setup({ keep: (v) => v !== 'v-Customer:2' });
    await get('Platform:a', 'Customer:1');
    await get('Platform:a', 'Customer:2');
    await get('Platform:a', 'Customer:2');
    expect(choosy.size).toBe(1);
    expect(source.calls).toBe(3);
  });
});
