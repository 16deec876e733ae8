import { describe, expect, it } from 'vitest';
import type { ExternalAccountInfo } from '../app/ports.js';
import { CachedCustomerDirectory, CachedExternalAccounts } from './kept-parties.js';

// The caching rules themselves are KeptWhileLive's (libs/events/src/kept.spec.ts); these are what
// payments keeps with them.

const account = (status: ExternalAccountInfo['status']): ExternalAccountInfo => ({
  id: 'ExternalAccount:1',
  currency: 'EUR',
  status,
  accountType: 'EUR_ACCOUNT',
  primaryIdentifier: 'DE89370400440532013000',
});

describe('CachedExternalAccounts', () => {
  it('keeps an ACTIVE external account: the next read asks accounts nothing', async () => {
    let calls = 0;
    const cache = new CachedExternalAccounts(
      { getExternalAccount: async () => (calls++, account('ACTIVE')) },
      { live: () => true },
    );
    expect((await cache.getExternalAccount('Platform:a', 'ExternalAccount:1')).status).toBe('ACTIVE');
    expect(await cache.getExternalAccount('Platform:a', 'ExternalAccount:1')).toEqual(account('ACTIVE'));
    expect(calls).toBe(1);
  });

  it('does not keep an account that is not ACTIVE (quote creation refuses it; accounts is asked each time)', async () => {
    let calls = 0;
    const cache = new CachedExternalAccounts(
      { getExternalAccount: async () => (calls++, account('PENDING')) },
      { live: () => true },
    );
    await cache.getExternalAccount('Platform:a', 'ExternalAccount:1');
    await cache.getExternalAccount('Platform:a', 'ExternalAccount:1');
    expect(calls).toBe(2);
    expect(cache.kept.size).toBe(0);
  });
});

describe('CachedCustomerDirectory', () => {
  it("keeps a customer's platformCustomerId; UMA address lookups are not kept", async () => {
    const calls = { id: 0, uma: 0 };
    const cache = new CachedCustomerDirectory(
      {
        platformCustomerId: async (_p, c) => (calls.id++, `pc-${c}`),
        customerByUmaAddress: async () => (calls.uma++, undefined),
      },
      { live: () => true },
    );
    expect(await cache.platformCustomerId('Platform:a', 'Customer:1')).toBe('pc-Customer:1');
    expect(await cache.platformCustomerId('Platform:a', 'Customer:1')).toBe('pc-Customer:1');
    await cache.customerByUmaAddress('Platform:a', '$a@x');
    await cache.customerByUmaAddress('Platform:a', '$a@x');
    expect(calls).toEqual({ id: 1, uma: 2 });
  });
});
