import { describe, expect, it } from 'vitest';
import type { DomainError } from '@sluice/core';
import { checks } from './validation.js';

function errorsOf(fn: () => void): { field: string; message: string }[] {
  try {
    fn();
  } catch (e) {
    expect((e as DomainError).code).toBe('INVALID_INPUT');
    return (e as DomainError).details!.errors as { field: string; message: string }[];
  }
  return [];
}

describe('request checks', () => {
  it('amounts must be integers from 1 to 9000000000000000', () => {
    expect(errorsOf(() => checks().amount('amount', 0n).done())).toEqual([
      { field: 'amount', message: 'must be greater than 0' },
    ]);
    expect(errorsOf(() => checks().amount('amount', -1n).done())).toEqual([
      { field: 'amount', message: 'must be greater than 0' },
    ]);
    expect(errorsOf(() => checks().amount('amount', 9_000_000_000_000_001n).done())).toEqual([
      { field: 'amount', message: 'must be at most 9000000000000000' },
    ]);
    expect(
      errorsOf(() => checks().amount('amount', 1n).amount('amount', 9_000_000_000_000_000n).done()),
    ).toEqual([]);
  });

  it('ids must have the right type prefix', () => {
    const ok = 'Platform:0190c6d2-7a1e-7c4e-9a57-0d1f4b9e2a10';
    expect(errorsOf(() => checks().id('platformId', ok, 'Platform').done())).toEqual([]);
    expect(errorsOf(() => checks().id('platformId', '', 'Platform').done())).toEqual([
      { field: 'platformId', message: 'is required' },
    ]);
    expect(errorsOf(() => checks().id('accountId', ok, 'InternalAccount').done())[0]!.field).toBe(
      'accountId',
    );
    expect(errorsOf(() => checks().optionalId('customerId', undefined, 'Customer').done())).toEqual([]);
  });

  it('names every bad field at once', () => {
    const errors = errorsOf(() =>
      checks()
        .currency('currency', 'XXX')
        .environment('environment', undefined)
        .entryId('entryId', 'has spaces')
        .done(),
    );
    expect(errors.map((e) => e.field)).toEqual(['currency', 'environment', 'entryId']);
  });
});
