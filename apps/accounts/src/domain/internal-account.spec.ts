import { describe, expect, it } from 'vitest';
import { DomainError } from '@sluice/core';
import {
  availableBalance,
  holdingAccountType,
  normalizeCurrencies,
  type InternalAccountRecord,
} from './internal-account.js';

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

describe('currency rules', () => {
  it('fiat currencies get INTERNAL_FIAT accounts, stablecoins and crypto INTERNAL_CRYPTO', () => {
    expect(holdingAccountType('USD')).toBe('INTERNAL_FIAT');
    expect(holdingAccountType('JPY')).toBe('INTERNAL_FIAT');
    expect(holdingAccountType('USDC')).toBe('INTERNAL_CRYPTO');
    expect(holdingAccountType('USDT')).toBe('INTERNAL_CRYPTO');
    expect(holdingAccountType('BTC')).toBe('INTERNAL_CRYPTO');
    expect(() => holdingAccountType('XYZ')).toThrow(DomainError);
  });

  it('normalizes currency lists: duplicates dropped, unknown codes named by index', () => {
    expect(normalizeCurrencies(['USD', 'USDC', 'USD'])).toEqual(['USD', 'USDC']);
    expect(normalizeCurrencies([])).toEqual([]);
    try {
      normalizeCurrencies(['USD', 'usd', 'DOGE']);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(DomainError);
      expect((e as DomainError).code).toBe('INVALID_INPUT');
      expect((e as DomainError).details).toEqual({
        errors: [
          { field: 'currencies[1]', message: 'unknown currency "usd"' },
          { field: 'currencies[2]', message: 'unknown currency "DOGE"' },
        ],
      });
    }
  });
});

describe('balances', () => {
  it('available balance is posted minus pending debits', () => {
    expect(availableBalance(base)).toBe(12_000n);
  });
});
