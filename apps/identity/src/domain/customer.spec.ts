import { describe, expect, it } from 'vitest';
import {
  applyCustomerUpdate,
  newCustomer,
  umaDomainFor,
  validateCustomerFilter,
  validateNewCustomer,
  type Customer,
} from './customer.js';
import { errorOf, fieldNames as fields } from '../../test/support/errors.js';

const ctx = {
  supportedCurrencies: ['USD', 'USDC', 'EUR'],
  today: new Date('2026-01-10T12:00:00Z'),
  selfVerifying: false,
};

describe('kycStatus / kybStatus set by the platform', () => {
  const individual = { customerType: 'INDIVIDUAL' as const, currencies: [] };
  const business = { customerType: 'BUSINESS' as const, currencies: [], businessInfo: { legalName: 'Acme' } };

  it('is refused from a platform that is not a regulated financial institution, named per type', () => {
    const e = errorOf(() => validateNewCustomer({ ...individual, verificationStatus: 'APPROVED' }, ctx));
    expect(e.details!.errors).toEqual([
      { field: 'kycStatus', message: expect.stringContaining('regulated financial institution') },
    ]);
    const b = errorOf(() => validateNewCustomer({ ...business, verificationStatus: 'APPROVED' }, ctx));
    expect(fields(b)).toEqual(['kybStatus']);
  });

  it('is kept for a regulated platform, and the new customer still starts UNVERIFIED', () => {
    const own = { ...ctx, selfVerifying: true };
    const d = validateNewCustomer({ ...business, verificationStatus: 'PENDING' }, own);
    expect(d.verificationStatus).toBe('PENDING');
    const c = newCustomer(d, {
      id: 'Customer:019542f5-b3e7-7d02-8000-000000000001',
      platformId: 'Platform:1',
      umaAddress: '$a@b.c',
      now: ctx.today,
    });
    expect(c.verificationStatus).toBe('UNVERIFIED');
    expect(c).not.toHaveProperty('verificationStatus', 'PENDING');
  });

  it('is checked on update with the other fields, and left for the caller to apply', () => {
    const current = newCustomer(validateNewCustomer(individual, ctx), {
      id: 'Customer:019542f5-b3e7-7d02-8000-000000000001',
      platformId: 'Platform:1',
      umaAddress: '$a@b.c',
      now: ctx.today,
    });
    const e = errorOf(() =>
      applyCustomerUpdate(
        current,
        { customerType: 'INDIVIDUAL', verificationStatus: 'REJECTED', email: 'x' },
        ctx,
      ),
    );
    expect(fields(e).sort()).toEqual(['email', 'kycStatus']);
    const next = applyCustomerUpdate(
      current,
      { customerType: 'INDIVIDUAL', verificationStatus: 'REJECTED' },
      { ...ctx, selfVerifying: true },
    );
    expect(next.verificationStatus).toBe('UNVERIFIED');
  });
});

describe('validateNewCustomer', () => {
  it('defaults currencies to the platform’s and keeps given values', () => {
    const d = validateNewCustomer(
      { customerType: 'INDIVIDUAL', currencies: [], fullName: 'Ana', umaAddress: '$Ana@Example.com' },
      ctx,
    );
    expect(d).toEqual({
      customerType: 'INDIVIDUAL',
      currencies: ['USD', 'USDC', 'EUR'],
      fullName: 'Ana',
      umaAddress: '$ana@example.com',
    });
  });

  it('refuses currencies the platform does not support', () => {
    const e = errorOf(() => validateNewCustomer({ customerType: 'INDIVIDUAL', currencies: ['MXN'] }, ctx));
    expect(e.details!.errors).toEqual([
      { field: 'currencies[0]', message: expect.stringContaining('not a supported currency') },
    ]);
  });

  it('accepts a birth date of today and refuses tomorrow, impossible dates and pre-1900', () => {
    expect(
      validateNewCustomer({ customerType: 'INDIVIDUAL', currencies: [], birthDate: '2026-01-10' }, ctx)
        .birthDate,
    ).toBe('2026-01-10');
    for (const birthDate of ['2026-01-11', '2025-02-29', '1899-12-31', '10-01-1990']) {
      expect(
        fields(
          errorOf(() => validateNewCustomer({ customerType: 'INDIVIDUAL', currencies: [], birthDate }, ctx)),
        ),
      ).toEqual(['birthDate']);
    }
  });

  it('keeps individual and business fields apart', () => {
    expect(
      fields(
        errorOf(() =>
          validateNewCustomer(
            { customerType: 'BUSINESS', currencies: [], nationality: 'US', businessInfo: { legalName: 'A' } },
            ctx,
          ),
        ),
      ),
    ).toEqual(['nationality']);
    expect(
      fields(errorOf(() => validateNewCustomer({ customerType: 'BUSINESS', currencies: [] }, ctx))),
    ).toEqual(['businessInfo.legalName']);
  });

  it('refuses control characters and blank text', () => {
    expect(
      fields(
        errorOf(() =>
          validateNewCustomer(
            { customerType: 'INDIVIDUAL', currencies: [], fullName: 'A\u0000B', platformCustomerId: ' ' },
            ctx,
          ),
        ),
      ),
    ).toEqual(['platformCustomerId', 'fullName']);
  });
});

describe('applyCustomerUpdate', () => {
  const current: Customer = {
    id: 'Customer:0193a0c0-0000-7000-8000-000000000001',
    platformId: 'Platform:0193a0c0-0000-7000-8000-000000000002',
    platformCustomerId: 'c1',
    customerType: 'INDIVIDUAL',
    currencies: ['USD', 'GBP'],
    umaAddress: '$c1@example.com',
    verificationStatus: 'UNVERIFIED',
    createdAt: new Date('2026-01-01T00:00:00Z'),
    updatedAt: new Date('2026-01-01T00:00:00Z'),
  };

  it('lets a customer keep a currency the platform dropped, but not add one', () => {
    expect(
      applyCustomerUpdate(current, { customerType: 'INDIVIDUAL', currencies: ['GBP', 'EUR'] }, ctx)
        .currencies,
    ).toEqual(['GBP', 'EUR']);
    expect(
      fields(
        errorOf(() => applyCustomerUpdate(current, { customerType: 'INDIVIDUAL', currencies: ['JPY'] }, ctx)),
      ),
    ).toEqual(['currencies[0]']);
  });

  it('requires the customer’s own type and refuses a deleted customer', () => {
    expect(fields(errorOf(() => applyCustomerUpdate(current, { customerType: 'BUSINESS' }, ctx)))).toEqual([
      'customerType',
    ]);
    expect(
      errorOf(() =>
        applyCustomerUpdate({ ...current, deletedAt: new Date() }, { customerType: 'INDIVIDUAL' }, ctx),
      ).code,
    ).toBe('CUSTOMER_DELETED');
  });

  it('returns an equal customer when nothing changes', () => {
    expect(
      applyCustomerUpdate(current, { customerType: 'INDIVIDUAL', umaAddress: '$C1@EXAMPLE.COM' }, ctx),
    ).toEqual(current);
  });
});

describe('validateCustomerFilter', () => {
  it('normalizes the UMA address and checks ranges', () => {
    expect(validateCustomerFilter({ includeDeleted: false, umaAddress: '$A@B.com' }).umaAddress).toBe(
      '$a@b.com',
    );
    const e = errorOf(() =>
      validateCustomerFilter({
        includeDeleted: false,
        createdAfter: new Date('2026-01-02'),
        createdBefore: new Date('2026-01-01'),
        currency: 'usd',
      }),
    );
    expect(fields(e)).toEqual(['createdBefore', 'currency']);
  });

  it('accepts equal bounds (inclusive range)', () => {
    const d = new Date('2026-01-01T00:00:00Z');
    expect(validateCustomerFilter({ includeDeleted: true, createdAfter: d, createdBefore: d })).toMatchObject(
      { createdAfter: d, createdBefore: d },
    );
  });
});

describe('umaDomainFor', () => {
  it('uses the platform domain, else the sandbox domain for sandbox platforms only', () => {
    expect(umaDomainFor('PRODUCTION', 'pay.acme.com', 'sandbox.test')).toBe('pay.acme.com');
    expect(umaDomainFor('SANDBOX', undefined, 'Sandbox.Test')).toBe('sandbox.test');
    expect(errorOf(() => umaDomainFor('PRODUCTION', undefined, 'sandbox.test')).code).toBe(
      'UMA_DOMAIN_NOT_CONFIGURED',
    );
  });
});
