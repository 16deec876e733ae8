import { describe, expect, it } from 'vitest';
import { isDomainError } from '@sluice/core';
import { validateAccountInfo, validatePlatformAccountId } from './external-account.js';

const NOW = new Date('2026-05-01T00:00:00Z');

function fieldErrors(currency: unknown, info: unknown): { field: string; message: string }[] {
  try {
    validateAccountInfo(currency, info, NOW);
  } catch (e) {
    if (isDomainError(e) && e.code === 'INVALID_INPUT') return (e.details as { errors: never[] }).errors;
    throw e;
  }
  throw new Error('expected INVALID_INPUT');
}

describe('validateAccountInfo: valid variants', () => {
  it.each([
    ['USD', { accountType: 'USD_ACCOUNT', accountNumber: '12345678901', routingNumber: '021000021', bankAccountType: 'CHECKING' }, '12345678901', 'USD_ACCOUNT:021000021:12345678901'],
    ['EUR', { accountType: 'EUR_ACCOUNT', iban: 'de89 3704 0044 0532 0130 00', swiftCode: 'cobadeff' }, 'DE89370400440532013000', 'EUR_ACCOUNT:DE89370400440532013000'],
    ['GBP', { accountType: 'GBP_ACCOUNT', sortCode: '04-00-75', accountNumber: '57443718' }, '57443718', 'GBP_ACCOUNT:040075:57443718'],
    ['MXN', { accountType: 'MXN_ACCOUNT', clabeNumber: '032180000118359719' }, '032180000118359719', 'MXN_ACCOUNT:032180000118359719'],
    ['BRL', { accountType: 'BRL_ACCOUNT', pixKey: '529.982.247-25', pixKeyType: 'CPF', taxId: '52998224725' }, '52998224725', 'BRL_ACCOUNT:52998224725'],
    ['BRL', { accountType: 'BRL_ACCOUNT', pixKey: 'Maria102@Example.com', pixKeyType: 'EMAIL', taxId: '11.222.333/0001-81' }, 'maria102@example.com', 'BRL_ACCOUNT:maria102@example.com'],
    ['BTC', { accountType: 'SPARK_WALLET', address: 'spark1pgssyuuuhnrrdjswal5c3s3rafw9w3y5dd4cjy3duxlf7hjzkp0rqx6dj6mrhu' }, 'spark1pgssyuuuhnrrdjswal5c3s3rafw9w3y5dd4cjy3duxlf7hjzkp0rqx6dj6mrhu', undefined],
    ['BTC', { accountType: 'LIGHTNING', lightningAddress: 'John.Doe@wallet.example' }, 'john.doe@wallet.example', undefined],
    ['USDC', { accountType: 'SOLANA_WALLET', address: '4Nd1m6Qkq7RfKuE5vQ9qP9Tn6H94Ueqb4xXHzsAbd8Wg' }, '4Nd1m6Qkq7RfKuE5vQ9qP9Tn6H94Ueqb4xXHzsAbd8Wg', undefined],
    ['USDT', { accountType: 'TRON_WALLET', address: 'TBCBMJNZTXwsMfgHKfsSSPcreaWJkeqY1o' }, 'TBCBMJNZTXwsMfgHKfsSSPcreaWJkeqY1o', undefined],
    ['USDC', { accountType: 'BASE_WALLET', address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed' }, '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', 'BASE_WALLET:0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed'],
  ])('%s %o', (currency, info, primary, dedupe) => {
    const v = validateAccountInfo(currency, info, NOW);
    expect(v.primaryIdentifier).toBe(primary);
    if (dedupe) expect(v.dedupeKey).toBe(dedupe);
    expect(v.info.accountType).toBe(info.accountType);
  });

  it('keeps a valid beneficiary and normalizes', () => {
    const v = validateAccountInfo(
      'USD',
      {
        accountType: 'USD_ACCOUNT',
        accountNumber: '12345678',
        routingNumber: '021000021',
        beneficiary: {
          beneficiaryType: 'INDIVIDUAL',
          fullName: ' John Doe ',
          birthDate: '1990-01-15',
          address: { line1: '1 Main St', postalCode: '94105', country: 'US' },
        },
      },
      NOW,
    );
    expect(v.info.beneficiary).toEqual({
      beneficiaryType: 'INDIVIDUAL',
      fullName: 'John Doe',
      birthDate: '1990-01-15',
      address: { line1: '1 Main St', postalCode: '94105', country: 'US' },
    });
  });
});

describe('validateAccountInfo: field-level errors', () => {
  it.each([
    ['USD', { accountType: 'USD_ACCOUNT', accountNumber: '12345678', routingNumber: '021000022' }, 'accountInfo.routingNumber', 'checksum does not match'],
    ['USD', { accountType: 'USD_ACCOUNT', routingNumber: '021000021' }, 'accountInfo.accountNumber', 'is required'],
    ['USD', { accountType: 'USD_ACCOUNT', accountNumber: '12345678', routingNumber: '021000021', bankAccountType: 'BROKERAGE' }, 'accountInfo.bankAccountType', 'must be CHECKING or SAVINGS'],
    ['EUR', { accountType: 'EUR_ACCOUNT', iban: 'DE89370400440532013001' }, 'accountInfo.iban', 'checksum does not match'],
    ['EUR', { accountType: 'EUR_ACCOUNT', iban: 'DE89370400440532013000', swiftCode: 'BNPAFRPP' }, 'accountInfo.swiftCode', 'country FR does not match the IBAN country DE'],
    ['GBP', { accountType: 'GBP_ACCOUNT', sortCode: '0400', accountNumber: '57443718' }, 'accountInfo.sortCode', 'must be 6 digits'],
    ['MXN', { accountType: 'MXN_ACCOUNT', clabeNumber: '032180000118359718' }, 'accountInfo.clabeNumber', 'check digit does not match'],
    ['BRL', { accountType: 'BRL_ACCOUNT', pixKey: '52998224726', pixKeyType: 'CPF', taxId: '52998224725' }, 'accountInfo.pixKey', 'CPF check digits do not match'],
    ['BRL', { accountType: 'BRL_ACCOUNT', pixKey: '+15551234567', pixKeyType: 'PHONE', taxId: '52998224725' }, 'accountInfo.pixKey', 'must be a Brazilian phone number in E.164 form (+55, area code, 8 or 9 digits)'],
    ['BRL', { accountType: 'BRL_ACCOUNT', pixKey: 'x', pixKeyType: 'IBAN', taxId: '52998224725' }, 'accountInfo.pixKeyType', 'must be one of CPF, CNPJ, EMAIL, PHONE, RANDOM'],
    ['BRL', { accountType: 'BRL_ACCOUNT', pixKey: 'a@b.com', pixKeyType: 'EMAIL', taxId: '12345678900' }, 'accountInfo.taxId', 'CPF check digits do not match'],
    ['USDC', { accountType: 'ETHEREUM_WALLET', address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD' }, 'accountInfo.address', 'EIP-55 checksum does not match'],
    ['BTC', { accountType: 'LIGHTNING' }, 'accountInfo', 'exactly one of invoice, bolt12 or lightningAddress is required'],
    ['EUR', { accountType: 'USD_ACCOUNT', accountNumber: '12345678', routingNumber: '021000021' }, 'currency', 'USD_ACCOUNT accounts hold USD, not EUR'],
    ['DOGE', { accountType: 'SPARK_WALLET', address: 'spark1pgssyuuuhnrrdjswal5c3s3rafw9w3y5dd4cjy3duxlf7hjzkp0rqx6dj6mrhu' }, 'currency', 'unknown currency "DOGE"'],
    ['USD', { accountType: 'USD_ACCOUNT', accountNumber: '12345678', routingNumber: '021000021', iban: 'DE89370400440532013000' }, 'accountInfo.iban', 'does not apply to USD_ACCOUNT'],
    ['USD', { accountType: 'CHF_ACCOUNT' }, 'accountInfo.accountType', expect.stringContaining('must be one of USD_ACCOUNT')],
    ['USD', { accountType: 'USD_ACCOUNT', accountNumber: '12345678', routingNumber: '021000021', beneficiary: { beneficiaryType: 'INDIVIDUAL' } }, 'accountInfo.beneficiary.fullName', 'is required'],
    ['USD', { accountType: 'USD_ACCOUNT', accountNumber: '12345678', routingNumber: '021000021', beneficiary: { beneficiaryType: 'BUSINESS', legalName: 'Acme', address: { line1: 'x', postalCode: '1', country: 'usa' } } }, 'accountInfo.beneficiary.address.country', 'must be at most 2 characters'],
    ['USD', { accountType: 'USD_ACCOUNT', accountNumber: '12345678', routingNumber: '021000021', beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'A', birthDate: '2030-01-01' } }, 'accountInfo.beneficiary.birthDate', 'must be in the past'],
  ])('%s %o → %s', (currency, info, field, message) => {
    expect(fieldErrors(currency, info)).toContainEqual({ field, message });
  });

  it('requires accountInfo and names every fault at once', () => {
    expect(fieldErrors('USD', undefined)).toEqual([{ field: 'accountInfo', message: 'is required' }]);
    expect(fieldErrors('', { accountType: 'USD_ACCOUNT' }).map((e) => e.field)).toEqual([
      'currency',
      'accountInfo.accountNumber',
      'accountInfo.routingNumber',
    ]);
  });

  it('platformAccountId', () => {
    expect(validatePlatformAccountId('ext_acc_123')).toBe('ext_acc_123');
    expect(validatePlatformAccountId(undefined)).toBeUndefined();
    expect(() => validatePlatformAccountId('x'.repeat(256))).toThrow(/platformAccountId/);
  });
});
