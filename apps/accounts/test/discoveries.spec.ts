import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accounts as pb, common } from '@sluice/contracts';
import { EXTERNAL_ACCOUNT_VARIANTS } from '@sluice/core';
import { EXTERNAL_ACCOUNT_EXAMPLES } from '@sluice/testing/external-accounts';
import { PRODUCTION, rejection, SANDBOX, startHarness, type Harness } from './support/harness.js';

// ListDiscoveries (GET /discoveries) over real gRPC, with the real identity service beside accounts:
// the sandbox directory covers every variant that takes a bankName, filters by country and currency,
// names each bad filter, and a discovered bankName is what CreateExternalAccount takes.

let h: Harness;
let platformId: string;

beforeAll(async () => {
  h = await startHarness('accdisc');
  platformId = await h.platform();
});
afterAll(async () => {
  await h?.stop();
});

const list = (over: Partial<pb.ListDiscoveriesRequest> = {}) =>
  h.client.listDiscoveries({ platformId, environment: SANDBOX, ...over }).then((r) => r.discoveries);
const fieldsOf = (e: { details?: Record<string, unknown> }) =>
  ((e.details?.errors ?? []) as { field: string }[]).map((f) => f.field);

describe('ListDiscoveries', () => {
  it('lists institutions for every country and currency whose variant takes a bankName, sorted', async () => {
    const all = await list();
    for (const v of Object.values(EXTERNAL_ACCOUNT_VARIANTS)) {
      if (!v.fields.bankName) continue;
      for (const currency of v.currencies) {
        const matching = all.filter((d) => d.currency === currency && (!v.country || d.country === v.country));
        expect(matching.length, `${v.accountType} ${currency} ${v.country ?? ''}`).toBeGreaterThanOrEqual(2);
      }
    }
    const keys = all.map((d) => `${d.country}|${d.currency}|${d.displayName}`);
    expect(keys).toEqual([...keys].sort((a, b) => a.localeCompare(b)));
  });

  it('filters by country, by currency and by both; a valid filter nothing matches is empty', async () => {
    const ph = await list({ country: 'PH', currency: 'PHP' });
    expect(ph).toContainEqual({ bankName: 'BDO Unibank', displayName: 'BDO Unibank', country: 'PH', currency: 'PHP' });
    expect(ph.every((d) => d.country === 'PH' && d.currency === 'PHP')).toBe(true);
    const usd = await list({ currency: 'USD' });
    expect(new Set(usd.map((d) => d.country))).toEqual(new Set(['US', 'SV']));
    const de = await list({ country: 'DE' });
    expect(de.length).toBeGreaterThan(0);
    expect(de.every((d) => d.currency === 'EUR')).toBe(true);
    expect(await list({ country: 'JP' })).toEqual([]);
    expect(await list({ country: 'PH', currency: 'USD' })).toEqual([]);
  });

  it('names each bad filter: an unassigned country, an unknown currency, no environment; production lists none', async () => {
    const country = await rejection(() => list({ country: 'XX' }));
    expect(country.code).toBe('INVALID_INPUT');
    expect(fieldsOf(country)).toEqual(['country']);
    const both = await rejection(() => list({ country: 'PHL', currency: 'PESO' }));
    expect(fieldsOf(both)).toEqual(['country', 'currency']);
    expect(fieldsOf(await rejection(() => list({ environment: common.Environment.UNSPECIFIED })))).toEqual(['environment']);
    const prod = await h.platform('PRODUCTION');
    expect(await list({ platformId: prod, environment: PRODUCTION })).toEqual([]);
  });

  it('a discovered bankName is what an external account of its country and currency takes', async () => {
    const [bank] = await list({ country: 'NG', currency: 'NGN' });
    const customerId = await h.customer(platformId, 'Ada Obi');
    const { currency, accountInfo } = EXTERNAL_ACCOUNT_EXAMPLES.NGN_ACCOUNT;
    const { account } = await h.client.createExternalAccount({
      platformId,
      environment: SANDBOX,
      customerId,
      currency,
      accountInfo: { paymentRails: [], ...accountInfo, bankName: bank!.bankName } as unknown as pb.ExternalAccountInfo,
    });
    expect(account!.accountInfo!.bankName).toBe(bank!.bankName);
  });
});
