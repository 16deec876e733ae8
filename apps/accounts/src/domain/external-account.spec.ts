import { describe, expect, it } from 'vitest';
import {
  EXTERNAL_ACCOUNT_TYPES,
  EXTERNAL_ACCOUNT_VARIANTS,
  isDomainError,
  paymentRailsOf,
  type ExternalAccountType,
} from '@sluice/core';
import {
  BUSINESS_BENEFICIARY,
  EXTERNAL_ACCOUNT_EXAMPLES,
  exampleWith,
  INDIVIDUAL_BENEFICIARY,
  individualWith,
  withSuffix,
} from '@sluice/testing/external-accounts';
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

const ex = exampleWith;
const cur = (type: ExternalAccountType) => EXTERNAL_ACCOUNT_EXAMPLES[type].currency;
const person = individualWith;

describe('the variant table', () => {
  it('has a row for each of the 43 account types, each with an example', () => {
    expect(EXTERNAL_ACCOUNT_TYPES).toHaveLength(43);
    expect(Object.keys(EXTERNAL_ACCOUNT_VARIANTS).sort()).toEqual([...EXTERNAL_ACCOUNT_TYPES].sort());
    expect(Object.keys(EXTERNAL_ACCOUNT_EXAMPLES).sort()).toEqual([...EXTERNAL_ACCOUNT_TYPES].sort());
    // every identifier and dedupe field is a field of its variant
    for (const v of Object.values(EXTERNAL_ACCOUNT_VARIANTS))
      for (const f of [...v.identifiers, ...(v.dedupe ?? []), ...Object.values(v.rails).flat()])
        expect(v.fields[f], `${v.accountType}.${f}`).toBeDefined();
  });
});

describe('validateAccountInfo: every variant', () => {
  it.each(EXTERNAL_ACCOUNT_TYPES)(
    'accepts the %s example: fields, rails, beneficiary, primary identifier',
    (type) => {
      const { currency, accountInfo } = EXTERNAL_ACCOUNT_EXAMPLES[type];
      const variant = EXTERNAL_ACCOUNT_VARIANTS[type];
      const v = validateAccountInfo(currency, accountInfo, NOW);
      const bank = paymentRailsOf(type).length > 0;
      const { beneficiary, ...fields } = accountInfo;
      // the rails whose fields the example has (all of them, but for the bank-or-mobile variants)
      const rails = Object.entries(variant.rails)
        .filter(([, needs]) => needs.every((f) => accountInfo[f] !== undefined))
        .map(([r]) => r);
      expect(rails.length > 0).toBe(bank);
      expect(v.info).toEqual({ ...fields, ...(bank ? { paymentRails: rails, beneficiary } : {}) });
      const primary = variant.identifiers.find((f) => accountInfo[f] !== undefined)!;
      expect(v.primaryField).toBe(`accountInfo.${primary}`);
      expect(v.primaryIdentifier).toBe(accountInfo[primary]);
      expect(v.dedupeKey.startsWith(`${type}:`)).toBe(true);
    },
  );

  it.each(EXTERNAL_ACCOUNT_TYPES.filter((t) => paymentRailsOf(t).length > 0))(
    '%s: the sandbox suffix of the primary identifier (withSuffix keeps it valid)',
    (type) => {
      const { currency, accountInfo } = withSuffix(type, '103');
      const v = validateAccountInfo(currency, accountInfo, NOW);
      expect(v.primaryIdentifier.replace(/@.*$/, '').slice(-3)).toBe('103');
    },
  );
});

describe('validateAccountInfo: normalization and keys', () => {
  it.each([
    [
      'EUR_ACCOUNT',
      { iban: 'de89 3704 0044 0532 0130 00', swiftCode: 'cobadeff' },
      { iban: 'DE89370400440532013000', swiftCode: 'COBADEFF' },
    ],
    ['GBP_ACCOUNT', { sortCode: '04-00-75' }, { sortCode: '040075' }],
    [
      'BRL_ACCOUNT',
      { pixKey: '529.982.247-25', pixKeyType: 'CPF', taxId: '11.222.333/0001-81' },
      { pixKey: '52998224725', taxId: '11222333000181' },
    ],
    ['BRL_ACCOUNT', { pixKey: 'Maria102@Example.com' }, { pixKey: 'maria102@example.com' }],
    ['KES_ACCOUNT', { phoneNumber: '+254 712-345 678' }, { phoneNumber: '+254712345678' }],
    ['INR_ACCOUNT', { vpa: 'Ada.Lovelace@OKAXIS' }, { vpa: 'ada.lovelace@okaxis' }],
    ['CAD_ACCOUNT', { accountNumber: '123 4567' }, { accountNumber: '1234567' }],
    ['LIGHTNING', { lightningAddress: 'Ada@Wallet.Example' }, { lightningAddress: 'ada@wallet.example' }],
  ] as const)('%s %o', (type, over, expected) => {
    expect(validateAccountInfo(cur(type), ex(type, over), NOW).info).toMatchObject(expected);
  });

  it.each([
    ['USD_ACCOUNT', 'USD_ACCOUNT:021000021:12345678901'],
    ['GBP_ACCOUNT', 'GBP_ACCOUNT:040075:57443718'],
    ['CAD_ACCOUNT', 'CAD_ACCOUNT:001:00012:1234567'],
    ['JMD_ACCOUNT', 'JMD_ACCOUNT:12345:123456789'],
    ['EUR_ACCOUNT', 'EUR_ACCOUNT:DE89370400440532013000'],
    ['POLYGON_WALLET', 'POLYGON_WALLET:0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed'],
  ] as const)('%s duplicates are detected by %s', (type, key) => {
    expect(validateAccountInfo(cur(type), ex(type), NOW).dedupeKey).toBe(key);
  });
});

describe('validateAccountInfo: payment rails', () => {
  it('takes the rails a request selects', () => {
    expect(
      validateAccountInfo('USD', ex('USD_ACCOUNT', { paymentRails: ['WIRE', 'ACH'] }), NOW).info.paymentRails,
    ).toEqual(['ACH', 'WIRE']);
  });
  it('derives the rails of a bank-or-mobile variant from the fields given; the primary identifier follows', () => {
    const mobile = validateAccountInfo(
      'BDT',
      ex('BDT_ACCOUNT', {
        accountNumber: undefined,
        branchCode: undefined,
        swiftCode: undefined,
        phoneNumber: '+8801712345678',
      }),
      NOW,
    );
    expect(mobile.info.paymentRails).toEqual(['MOBILE_MONEY']);
    expect(mobile.primaryField).toBe('accountInfo.phoneNumber');
    expect(validateAccountInfo('GHS', ex('GHS_ACCOUNT'), NOW).info.paymentRails).toEqual([
      'BANK_TRANSFER',
      'MOBILE_MONEY',
    ]);
    const slv = validateAccountInfo(
      'USD',
      ex('SLV_ACCOUNT', { bankAccountType: undefined, phoneNumber: '+50371234567' }),
      NOW,
    );
    expect(slv.info.paymentRails).toEqual(['MOBILE_MONEY']); // BANK_TRANSFER needs bankAccountType too
  });
  it.each([
    [
      'USD_ACCOUNT',
      { paymentRails: ['UPI'] },
      'accountInfo.paymentRails',
      'must be among ACH, WIRE, RTP, FEDNOW for USD_ACCOUNT, not UPI',
    ],
    ['USD_ACCOUNT', { paymentRails: ['ACH', 'ACH'] }, 'accountInfo.paymentRails', 'must not repeat a rail'],
    ['USD_ACCOUNT', { paymentRails: 'ACH' }, 'accountInfo.paymentRails', 'must be a list of payment rails'],
    [
      'SOLANA_WALLET',
      { paymentRails: ['ACH'] },
      'accountInfo.paymentRails',
      'does not apply to SOLANA_WALLET',
    ],
    [
      'BDT_ACCOUNT',
      { accountNumber: undefined },
      'accountInfo.accountNumber',
      'is required (BANK_TRANSFER), or give phoneNumber (MOBILE_MONEY)',
    ],
    [
      'COP_ACCOUNT',
      { phoneNumber: undefined },
      'accountInfo.accountNumber',
      'is required (BANK_TRANSFER), or give phoneNumber (MOBILE_MONEY)',
    ],
    [
      'PKR_ACCOUNT',
      { paymentRails: ['MOBILE_MONEY'], bankName: undefined },
      'accountInfo.bankName',
      'is required for the MOBILE_MONEY rail',
    ],
    [
      'SLV_ACCOUNT',
      { paymentRails: ['BANK_TRANSFER'], bankAccountType: undefined },
      'accountInfo.bankAccountType',
      'is required for the BANK_TRANSFER rail',
    ],
  ] as const)('%s %o → %s', (type, over, field, message) => {
    expect(fieldErrors(cur(type), ex(type, over))).toContainEqual({ field, message });
  });
});

describe('validateAccountInfo: field-level errors, one kind of fault each', () => {
  it.each([
    // ABA routing numbers, account number lengths
    ['USD_ACCOUNT', { routingNumber: '021000022' }, 'accountInfo.routingNumber', 'checksum does not match'],
    [
      'USD_ACCOUNT',
      { routingNumber: '990000000' },
      'accountInfo.routingNumber',
      'is not a valid routing number prefix',
    ],
    ['USD_ACCOUNT', { accountNumber: undefined }, 'accountInfo.accountNumber', 'is required'],
    ['USD_ACCOUNT', { accountNumber: '123' }, 'accountInfo.accountNumber', 'must be 4 to 17 digits'],
    [
      'USD_ACCOUNT',
      { bankAccountType: 'BROKERAGE' },
      'accountInfo.bankAccountType',
      'must be one of CHECKING, SAVINGS',
    ],
    ['GBP_ACCOUNT', { sortCode: '0400' }, 'accountInfo.sortCode', 'must be 6 digits'],
    ['NGN_ACCOUNT', { accountNumber: '012345678' }, 'accountInfo.accountNumber', 'must be 10 digits'],
    ['PHP_ACCOUNT', { accountNumber: '1234567' }, 'accountInfo.accountNumber', 'must be 8 to 16 digits'],
    ['ZAR_ACCOUNT', { accountNumber: '12345678' }, 'accountInfo.accountNumber', 'must be 9 to 13 digits'],
    ['HKD_ACCOUNT', { accountNumber: '12-34A' }, 'accountInfo.accountNumber', 'must be 6 to 14 digits'],
    // Canadian institution and transit numbers, branch codes
    ['CAD_ACCOUNT', { bankCode: '01' }, 'accountInfo.bankCode', 'must be 3 digits'],
    ['CAD_ACCOUNT', { branchCode: '0001A' }, 'accountInfo.branchCode', 'must be 5 digits'],
    ['JMD_ACCOUNT', { branchCode: undefined }, 'accountInfo.branchCode', 'is required'],
    // IBANs: checksum, country, length, national format
    ['EUR_ACCOUNT', { iban: 'DE89370400440532013001' }, 'accountInfo.iban', 'checksum does not match'],
    [
      'EUR_ACCOUNT',
      { iban: 'US89370400440532013000' },
      'accountInfo.iban',
      'country US is not supported for EUR accounts',
    ],
    ['DKK_ACCOUNT', { iban: 'DE89370400440532013000' }, 'accountInfo.iban', 'must be an IBAN of DK, not DE'],
    ['AED_ACCOUNT', { iban: 'AE07033123456789012345' }, 'accountInfo.iban', 'must be 23 characters for AE'],
    [
      'PKR_ACCOUNT',
      { iban: 'PK36SC1L0000001123456702' },
      'accountInfo.iban',
      'is not in the IBAN format of PK',
    ],
    ['EGP_ACCOUNT', { iban: 'EG380019000500000000263180003' }, 'accountInfo.iban', 'checksum does not match'],
    // SWIFT/BIC: format and the account's country
    [
      'EUR_ACCOUNT',
      { swiftCode: 'BNPAFRPP' },
      'accountInfo.swiftCode',
      'country FR does not match the IBAN country DE',
    ],
    [
      'HKD_ACCOUNT',
      { swiftCode: 'DBSSSGSG' },
      'accountInfo.swiftCode',
      'country SG does not match the account country HK',
    ],
    [
      'SGD_ACCOUNT',
      { swiftCode: 'DBS1SGSG' },
      'accountInfo.swiftCode',
      'must be a BIC of 8 or 11 characters (e.g. DEUTDEFF or DEUTDEFF500)',
    ],
    ['THB_ACCOUNT', { swiftCode: undefined }, 'accountInfo.swiftCode', 'is required'],
    // CLABE, PIX, CPF/CNPJ
    [
      'MXN_ACCOUNT',
      { clabeNumber: '032180000118359718' },
      'accountInfo.clabeNumber',
      'check digit does not match',
    ],
    [
      'BRL_ACCOUNT',
      { pixKey: '52998224726', pixKeyType: 'CPF' },
      'accountInfo.pixKey',
      'CPF check digits do not match',
    ],
    [
      'BRL_ACCOUNT',
      { pixKey: '+15551234567', pixKeyType: 'PHONE' },
      'accountInfo.pixKey',
      'must be a Brazilian phone number in E.164 form (+55, area code, 8 or 9 digits)',
    ],
    [
      'BRL_ACCOUNT',
      { pixKeyType: 'IBAN' },
      'accountInfo.pixKeyType',
      'must be one of CPF, CNPJ, EMAIL, PHONE, RANDOM',
    ],
    ['BRL_ACCOUNT', { taxId: '12345678900' }, 'accountInfo.taxId', 'CPF check digits do not match'],
    ['BRL_ACCOUNT', { taxId: '11222333000182' }, 'accountInfo.taxId', 'CNPJ check digits do not match'],
    // UPI
    ['INR_ACCOUNT', { vpa: 'ada.lovelace' }, 'accountInfo.vpa', 'must be a UPI address (handle@psp)'],
    // mobile money: the country's calling code and length, the region, the provider
    [
      'KES_ACCOUNT',
      { phoneNumber: '+255712345678' },
      'accountInfo.phoneNumber',
      'must be a phone number of KE (+254)',
    ],
    [
      'KES_ACCOUNT',
      { phoneNumber: '+25471234567' },
      'accountInfo.phoneNumber',
      'must have 9 digits after +254 (KE)',
    ],
    [
      'KES_ACCOUNT',
      { phoneNumber: '0712345678' },
      'accountInfo.phoneNumber',
      'must be a phone number in E.164 form (+254 and the number)',
    ],
    ['KES_ACCOUNT', { provider: undefined }, 'accountInfo.provider', 'is required'],
    ['IDR_ACCOUNT', { phoneNumber: undefined }, 'accountInfo.phoneNumber', 'is required'],
    ['XOF_ACCOUNT', { region: 'CI' }, 'accountInfo.phoneNumber', 'must be a number of the region CI (+225)'],
    ['XOF_ACCOUNT', { region: 'GH' }, 'accountInfo.region', 'must be one of BJ, CI, SN, TG'],
    ['XAF_ACCOUNT', { region: undefined }, 'accountInfo.region', 'is required'],
    ['HTG_ACCOUNT', { provider: 'Digicel' }, 'accountInfo.provider', 'does not apply to HTG_ACCOUNT'],
    // wallets
    [
      'ETHEREUM_WALLET',
      { address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD' },
      'accountInfo.address',
      'EIP-55 checksum does not match',
    ],
    [
      'TRON_WALLET',
      { address: 'XBCBMJNZTXwsMfgHKfsSSPcreaWJkeqY1o' },
      'accountInfo.address',
      'must be a base58 Tron address (34 characters starting with T)',
    ],
    [
      'LIGHTNING',
      { lightningAddress: undefined },
      'accountInfo',
      'exactly one of invoice, bolt12 or lightningAddress is required',
    ],
    // currency and variant
    ['USD_ACCOUNT', { iban: 'DE89370400440532013000' }, 'accountInfo.iban', 'does not apply to USD_ACCOUNT'],
    [
      'USD_ACCOUNT',
      { accountType: 'CHF_ACCOUNT' },
      'accountInfo.accountType',
      expect.stringContaining('must be one of GBP_ACCOUNT'),
    ],
    [
      'SPARK_WALLET',
      { beneficiary: INDIVIDUAL_BENEFICIARY },
      'accountInfo.beneficiary',
      'does not apply to SPARK_WALLET',
    ],
  ] as const)('%s %o → %s', (type, over, field, message) => {
    expect(
      fieldErrors(cur(type as ExternalAccountType), ex(type as ExternalAccountType, over)),
    ).toContainEqual({ field, message });
  });

  it.each([
    ['EUR', 'USD_ACCOUNT', 'currency', 'USD_ACCOUNT accounts hold USD, not EUR'],
    ['KES', 'UGX_ACCOUNT', 'currency', 'UGX_ACCOUNT accounts hold UGX, not KES'],
    ['DOGE', 'SPARK_WALLET', 'currency', 'unknown currency "DOGE"'],
    ['SLV', 'SLV_ACCOUNT', 'currency', 'unknown currency "SLV"'],
  ] as const)('currency %s for %s', (currency, type, field, message) => {
    expect(fieldErrors(currency, ex(type))).toContainEqual({ field, message });
  });

  it('requires accountInfo and names every fault at once', () => {
    expect(fieldErrors('USD', undefined)).toEqual([{ field: 'accountInfo', message: 'is required' }]);
    expect(fieldErrors('', { accountType: 'USD_ACCOUNT' }).map((e) => e.field)).toEqual([
      'currency',
      'accountInfo.accountNumber',
      'accountInfo.routingNumber',
      'accountInfo.beneficiary',
    ]);
  });
});

describe('validateAccountInfo: the beneficiary', () => {
  it('keeps a valid individual beneficiary, trimmed', () => {
    const v = validateAccountInfo(
      'USD',
      ex('USD_ACCOUNT', { beneficiary: person({ fullName: ' John Doe ' }) }),
      NOW,
    );
    expect(v.info.beneficiary).toEqual({ ...INDIVIDUAL_BENEFICIARY, fullName: 'John Doe' });
  });
  it('accepts a business beneficiary (no address needed, even for EUR)', () => {
    const { address: _a, ...business } = BUSINESS_BENEFICIARY;
    expect(
      validateAccountInfo('EUR', ex('EUR_ACCOUNT', { beneficiary: business }), NOW).info.beneficiary,
    ).toEqual(business);
  });
  it('CAD individuals may carry a registration number', () => {
    const v = validateAccountInfo(
      'CAD',
      ex('CAD_ACCOUNT', { beneficiary: person({ registrationNumber: 'SIN-1' }) }),
      NOW,
    );
    expect(v.info.beneficiary?.registrationNumber).toBe('SIN-1');
  });
  it.each([
    ['USD_ACCOUNT', undefined, 'accountInfo.beneficiary', 'is required for USD_ACCOUNT'],
    [
      'USD_ACCOUNT',
      { fullName: 'A' },
      'accountInfo.beneficiary.beneficiaryType',
      'must be INDIVIDUAL or BUSINESS',
    ],
    ['USD_ACCOUNT', { beneficiaryType: 'INDIVIDUAL' }, 'accountInfo.beneficiary.fullName', 'is required'],
    ['USD_ACCOUNT', { beneficiaryType: 'BUSINESS' }, 'accountInfo.beneficiary.legalName', 'is required'],
    [
      'USD_ACCOUNT',
      person({ taxId: '123' }),
      'accountInfo.beneficiary.taxId',
      'does not apply to INDIVIDUAL beneficiaries of USD_ACCOUNT',
    ],
    [
      'USD_ACCOUNT',
      person({ registrationNumber: 'R1' }),
      'accountInfo.beneficiary.registrationNumber',
      'does not apply to INDIVIDUAL beneficiaries of USD_ACCOUNT',
    ],
    [
      'USD_ACCOUNT',
      { ...BUSINESS_BENEFICIARY, birthDate: '1990-01-01' },
      'accountInfo.beneficiary.birthDate',
      'does not apply to BUSINESS beneficiaries of USD_ACCOUNT',
    ],
    [
      'USD_ACCOUNT',
      person({ birthDate: '2030-01-01' }),
      'accountInfo.beneficiary.birthDate',
      'must be in the past',
    ],
    [
      'USD_ACCOUNT',
      person({ birthDate: '1990-02-30' }),
      'accountInfo.beneficiary.birthDate',
      'must be a date YYYY-MM-DD',
    ],
    [
      'USD_ACCOUNT',
      person({ nationality: 'usa' }),
      'accountInfo.beneficiary.nationality',
      'must be at most 2 characters',
    ],
    [
      'USD_ACCOUNT',
      person({ email: 'not-an-email' }),
      'accountInfo.beneficiary.email',
      'must be an e-mail address',
    ],
    [
      'USD_ACCOUNT',
      person({ phoneNumber: '555-1234' }),
      'accountInfo.beneficiary.phoneNumber',
      'must be in E.164 form (+ and 7 to 15 digits)',
    ],
    [
      'USD_ACCOUNT',
      person({ address: { line1: 'x', postalCode: '1', country: 'usa' } }),
      'accountInfo.beneficiary.address.country',
      'must be at most 2 characters',
    ],
    ['EUR_ACCOUNT', person({ address: undefined }), 'accountInfo.beneficiary.address', 'is required'],
    ['AED_ACCOUNT', person({ address: undefined }), 'accountInfo.beneficiary.address', 'is required'],
    [
      'EGP_ACCOUNT',
      person({ countryOfResidence: undefined }),
      'accountInfo.beneficiary.countryOfResidence',
      'is required',
    ],
    ['GTQ_ACCOUNT', person({ phoneNumber: undefined }), 'accountInfo.beneficiary.phoneNumber', 'is required'],
    ['JMD_ACCOUNT', person({ address: undefined }), 'accountInfo.beneficiary.address', 'is required'],
  ] as const)('%s %o → %s', (type, beneficiary, field, message) => {
    const info = ex(type, {
      beneficiary:
        beneficiary && Object.fromEntries(Object.entries(beneficiary).filter(([, v]) => v !== undefined)),
    });
    expect(fieldErrors(cur(type), info)).toContainEqual({ field, message });
  });
});

describe('validatePlatformAccountId', () => {
  it('is optional, 1 to 255 printable characters', () => {
    expect(validatePlatformAccountId('ext_acc_123')).toBe('ext_acc_123');
    expect(validatePlatformAccountId(undefined)).toBeUndefined();
    expect(() => validatePlatformAccountId('x'.repeat(256))).toThrow(/platformAccountId/);
  });
});
