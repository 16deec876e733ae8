import { describe, expect, it } from 'vitest';
import type { InternalAccountRecord } from '../domain/internal-account.js';
import { publicInternalAccount as toPublicInternalAccount } from './internal-account.events.js';

const base: InternalAccountRecord = {
  id: 'InternalAccount:0190c6d2-7a1e-7c4e-9a57-0d1f4b9e2a11',
  platformId: 'Platform:0190c6d2-7a1e-7c4e-9a57-0d1f4b9e2a10',
  owner: 'CUSTOMER',
  customerId: 'Customer:0190c6d2-7a1e-7c4e-9a57-0d1f4b9e2a13',
  type: 'INTERNAL_FIAT',
  currency: 'USD',
  environment: 'SANDBOX',
  fundingSeq: 42n,
  fundingReference: 'SLUABCDEFGH',
  createdAt: new Date('2026-01-02T03:04:05.678Z'),
  updatedAt: new Date('2026-01-02T03:04:06.000Z'),
  postedBalance: 12_550n,
  pendingDebits: 550n,
  pendingCredits: 0n,
};

describe('public InternalAccount', () => {
  it('has the API shape, with the posted balance and the full currency', () => {
    const pub = toPublicInternalAccount(base);
    expect(Object.keys(pub).sort()).toEqual([
      'balance',
      'createdAt',
      'customerId',
      'fundingPaymentInstructions',
      'id',
      'type',
      'updatedAt',
    ]);
    expect(pub.balance).toEqual({
      amount: 12_550,
      currency: { code: 'USD', name: 'United States Dollar', symbol: '$', decimals: 2 },
    });
    expect(pub.createdAt).toBe('2026-01-02T03:04:05.678Z');
    expect(pub.fundingPaymentInstructions).toHaveLength(1);
  });

  it('omits customerId for platform accounts', () => {
    const pub = toPublicInternalAccount({ ...base, owner: 'PLATFORM', customerId: undefined });
    expect('customerId' in pub).toBe(false);
    expect(pub.fundingPaymentInstructions[0]!.isPlatformAccount).toBe(true);
  });

});
