import { EXTERNAL_ACCOUNT_VARIANTS, type ExternalAccountType } from '@sluice/core';

/**
 * One valid `accountInfo` per external account variant (every checksum right), as a platform
 * would send it, with the currency it holds: the fixtures of the accounts, api and e2e tests.
 * `withSuffix` makes the same account with another sandbox suffix (recomputing IBAN and
 * CLABE check digits).
 */

export type AccountInfoJson = Record<string, unknown> & { accountType: ExternalAccountType };

/** An individual beneficiary carrying everything any variant requires of one. */
export const INDIVIDUAL_BENEFICIARY = {
  beneficiaryType: 'INDIVIDUAL',
  fullName: 'Ada Lovelace',
  birthDate: '1990-12-10',
  nationality: 'GB',
  phoneNumber: '+14155550100',
  countryOfResidence: 'US',
  address: { line1: '1 Main St', city: 'San Francisco', postalCode: '94105', country: 'US' },
} as const;

export const BUSINESS_BENEFICIARY = {
  beneficiaryType: 'BUSINESS',
  legalName: 'Acme Payments Ltd',
  registrationNumber: 'REG-12345',
  taxId: '12-3456789',
  email: 'treasury@acme.example',
  address: { line1: '2 Market St', postalCode: '94105', country: 'US' },
} as const;

const bank = (info: AccountInfoJson): AccountInfoJson => ({ ...info, beneficiary: INDIVIDUAL_BENEFICIARY });

/** [currency, accountInfo] of every variant, in the order of EXTERNAL_ACCOUNT_TYPES' table. */
export const EXTERNAL_ACCOUNT_EXAMPLES: Readonly<
  Record<ExternalAccountType, { currency: string; accountInfo: AccountInfoJson }>
> = {
  USD_ACCOUNT: {
    currency: 'USD',
    accountInfo: bank({
      accountType: 'USD_ACCOUNT',
      accountNumber: '12345678901',
      routingNumber: '021000021',
      bankAccountType: 'CHECKING',
    }),
  },
  EUR_ACCOUNT: {
    currency: 'EUR',
    accountInfo: bank({ accountType: 'EUR_ACCOUNT', iban: 'DE89370400440532013000', swiftCode: 'COBADEFF' }),
  },
  GBP_ACCOUNT: {
    currency: 'GBP',
    accountInfo: bank({ accountType: 'GBP_ACCOUNT', sortCode: '040075', accountNumber: '57443718' }),
  },
  MXN_ACCOUNT: {
    currency: 'MXN',
    accountInfo: bank({ accountType: 'MXN_ACCOUNT', clabeNumber: '032180000118359719' }),
  },
  BRL_ACCOUNT: {
    currency: 'BRL',
    accountInfo: bank({
      accountType: 'BRL_ACCOUNT',
      pixKey: 'maria@example.com',
      pixKeyType: 'EMAIL',
      taxId: '52998224725',
    }),
  },
  CAD_ACCOUNT: {
    currency: 'CAD',
    accountInfo: bank({
      accountType: 'CAD_ACCOUNT',
      bankCode: '001',
      branchCode: '00012',
      accountNumber: '1234567',
    }),
  },
  DKK_ACCOUNT: {
    currency: 'DKK',
    accountInfo: bank({ accountType: 'DKK_ACCOUNT', iban: 'DK5000400440116243', swiftCode: 'DABADKKK' }),
  },
  HKD_ACCOUNT: {
    currency: 'HKD',
    accountInfo: bank({
      accountType: 'HKD_ACCOUNT',
      bankName: 'HSBC Hong Kong',
      accountNumber: '123456789012',
      swiftCode: 'HSBCHKHHHKH',
    }),
  },
  IDR_ACCOUNT: {
    currency: 'IDR',
    accountInfo: bank({
      accountType: 'IDR_ACCOUNT',
      bankName: 'Bank Central Asia',
      accountNumber: '1234567890',
      swiftCode: 'CENAIDJA',
      phoneNumber: '+6281234567890',
    }),
  },
  INR_ACCOUNT: {
    currency: 'INR',
    accountInfo: bank({ accountType: 'INR_ACCOUNT', vpa: 'ada.lovelace@okaxis' }),
  },
  KES_ACCOUNT: {
    currency: 'KES',
    accountInfo: bank({ accountType: 'KES_ACCOUNT', phoneNumber: '+254712345678', provider: 'M-PESA' }),
  },
  MWK_ACCOUNT: {
    currency: 'MWK',
    accountInfo: bank({ accountType: 'MWK_ACCOUNT', phoneNumber: '+265991234567', provider: 'Airtel Money' }),
  },
  MYR_ACCOUNT: {
    currency: 'MYR',
    accountInfo: bank({
      accountType: 'MYR_ACCOUNT',
      bankName: 'Maybank',
      accountNumber: '1234567890',
      swiftCode: 'MBBEMYKL',
    }),
  },
  NGN_ACCOUNT: {
    currency: 'NGN',
    accountInfo: bank({ accountType: 'NGN_ACCOUNT', accountNumber: '0123456789', bankName: 'Access Bank' }),
  },
  PHP_ACCOUNT: {
    currency: 'PHP',
    accountInfo: bank({ accountType: 'PHP_ACCOUNT', bankName: 'BDO Unibank', accountNumber: '001234567890' }),
  },
  RWF_ACCOUNT: {
    currency: 'RWF',
    accountInfo: bank({ accountType: 'RWF_ACCOUNT', phoneNumber: '+250781234567', provider: 'MTN MoMo' }),
  },
  SGD_ACCOUNT: {
    currency: 'SGD',
    accountInfo: bank({
      accountType: 'SGD_ACCOUNT',
      bankName: 'DBS Bank Ltd',
      accountNumber: '0123456789',
      swiftCode: 'DBSSSGSG',
    }),
  },
  THB_ACCOUNT: {
    currency: 'THB',
    accountInfo: bank({
      accountType: 'THB_ACCOUNT',
      bankName: 'Bangkok Bank',
      accountNumber: '1234567890',
      swiftCode: 'BKKBTHBK',
    }),
  },
  TZS_ACCOUNT: {
    currency: 'TZS',
    accountInfo: bank({ accountType: 'TZS_ACCOUNT', phoneNumber: '+255712345678', provider: 'M-Pesa' }),
  },
  UGX_ACCOUNT: {
    currency: 'UGX',
    accountInfo: bank({
      accountType: 'UGX_ACCOUNT',
      phoneNumber: '+256712345678',
      provider: 'MTN Mobile Money',
    }),
  },
  VND_ACCOUNT: {
    currency: 'VND',
    accountInfo: bank({
      accountType: 'VND_ACCOUNT',
      bankName: 'Vietcombank',
      accountNumber: '1234567890',
      swiftCode: 'BFTVVNVX',
    }),
  },
  XOF_ACCOUNT: {
    currency: 'XOF',
    accountInfo: bank({
      accountType: 'XOF_ACCOUNT',
      phoneNumber: '+221771234567',
      provider: 'Orange Money',
      region: 'SN',
    }),
  },
  ZAR_ACCOUNT: {
    currency: 'ZAR',
    accountInfo: bank({ accountType: 'ZAR_ACCOUNT', accountNumber: '1234567890', bankName: 'Standard Bank' }),
  },
  ZMW_ACCOUNT: {
    currency: 'ZMW',
    accountInfo: bank({ accountType: 'ZMW_ACCOUNT', phoneNumber: '+260971234567', provider: 'MTN Money' }),
  },
  SPARK_WALLET: {
    currency: 'BTC',
    accountInfo: {
      accountType: 'SPARK_WALLET',
      address: 'spark1pgssyuuuhnrrdjswal5c3s3rafw9w3y5dd4cjy3duxlf7hjzkp0rqx6dj6mrhu',
    },
  },
  LIGHTNING: {
    currency: 'BTC',
    accountInfo: { accountType: 'LIGHTNING', lightningAddress: 'ada@wallet.example' },
  },
  SOLANA_WALLET: {
    currency: 'USDC',
    accountInfo: { accountType: 'SOLANA_WALLET', address: '4Nd1m6Qkq7RfKuE5vQ9qP9Tn6H94Ueqb4xXHzsAbd8Wg' },
  },
  TRON_WALLET: {
    currency: 'USDT',
    accountInfo: { accountType: 'TRON_WALLET', address: 'TBCBMJNZTXwsMfgHKfsSSPcreaWJkeqY1o' },
  },
  POLYGON_WALLET: {
    currency: 'USDC',
    accountInfo: { accountType: 'POLYGON_WALLET', address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed' },
  },
  BASE_WALLET: {
    currency: 'USDC',
    accountInfo: { accountType: 'BASE_WALLET', address: '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359' },
  },
  ETHEREUM_WALLET: {
    currency: 'USDT',
    accountInfo: { accountType: 'ETHEREUM_WALLET', address: '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB' },
  },
  AED_ACCOUNT: {
    currency: 'AED',
    accountInfo: bank({ accountType: 'AED_ACCOUNT', iban: 'AE070331234567890123456', swiftCode: 'EBILAEAD' }),
  },
  BWP_ACCOUNT: {
    currency: 'BWP',
    accountInfo: bank({ accountType: 'BWP_ACCOUNT', phoneNumber: '+26771234567', provider: 'Orange Money' }),
  },
  XAF_ACCOUNT: {
    currency: 'XAF',
    accountInfo: bank({
      accountType: 'XAF_ACCOUNT',
      phoneNumber: '+237671234567',
      provider: 'MTN MoMo',
      region: 'CM',
    }),
  },
  BDT_ACCOUNT: {
    currency: 'BDT',
    accountInfo: bank({
      accountType: 'BDT_ACCOUNT',
      accountNumber: '1234567890123',
      branchCode: '11111',
      swiftCode: 'BBHOBDDH',
    }),
  },
  COP_ACCOUNT: {
    currency: 'COP',
    accountInfo: bank({ accountType: 'COP_ACCOUNT', phoneNumber: '+573001234567' }),
  },
  EGP_ACCOUNT: {
    currency: 'EGP',
    accountInfo: bank({
      accountType: 'EGP_ACCOUNT',
      bankName: 'National Bank of Egypt',
      accountNumber: '1234567890',
      iban: 'EG380019000500000000263180002',
      swiftCode: 'NBEGEGCX',
    }),
  },
  GHS_ACCOUNT: {
    currency: 'GHS',
    accountInfo: bank({
      accountType: 'GHS_ACCOUNT',
      accountNumber: '1234567890',
      phoneNumber: '+233241234567',
    }),
  },
  GTQ_ACCOUNT: {
    currency: 'GTQ',
    accountInfo: bank({
      accountType: 'GTQ_ACCOUNT',
      accountNumber: '1234567890',
      bankAccountType: 'SAVINGS',
    }),
  },
  HTG_ACCOUNT: {
    currency: 'HTG',
    accountInfo: bank({ accountType: 'HTG_ACCOUNT', phoneNumber: '+50934123456' }),
  },
  JMD_ACCOUNT: {
    currency: 'JMD',
    accountInfo: bank({
      accountType: 'JMD_ACCOUNT',
      accountNumber: '123456789',
      branchCode: '12345',
      bankAccountType: 'CHECKING',
    }),
  },
  PKR_ACCOUNT: {
    currency: 'PKR',
    accountInfo: bank({
      accountType: 'PKR_ACCOUNT',
      accountNumber: '1234567890',
      iban: 'PK36SCBL0000001123456702',
      phoneNumber: '+923001234567',
      bankName: 'Standard Chartered',
    }),
  },
  SLV_ACCOUNT: {
    currency: 'USD',
    accountInfo: bank({
      accountType: 'SLV_ACCOUNT',
      bankName: 'Banco Cuscatlan',
      accountNumber: '0123456789',
      bankAccountType: 'CHECKING',
    }),
  },
};

/** Drops the keys whose value is undefined (a test removes a field with `{ field: undefined }`). */
function withoutUndefined(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

/** The example accountInfo of `type` with fields replaced (undefined removes one). */
export function exampleWith(
  type: ExternalAccountType,
  over: Record<string, unknown> = {},
): Record<string, unknown> {
  return withoutUndefined({ ...EXTERNAL_ACCOUNT_EXAMPLES[type].accountInfo, ...over });
}

/** INDIVIDUAL_BENEFICIARY with fields replaced (undefined removes one). */
export function individualWith(over: Record<string, unknown> = {}): Record<string, unknown> {
  return withoutUndefined({ ...INDIVIDUAL_BENEFICIARY, ...over });
}

/** ISO 7064 mod 97-10 of an IBAN rearranged (letters as 10..35). */
function mod97(s: string): number {
  let rem = 0;
  for (const ch of s) {
    const code = ch.charCodeAt(0);
    for (const d of code >= 65 ? String(code - 55) : ch) rem = (rem * 10 + Number(d)) % 97;
  }
  return rem;
}

/** The IBAN of `country` and `bban` with its check digits. */
export function ibanOf(country: string, bban: string): string {
  return `${country}${String(98 - mod97(`${bban}${country}00`)).padStart(2, '0')}${bban}`;
}

/** A CLABE whose last 3 digits (the check digit included) are `suffix`. */
function clabeEndingIn(clabe: string, suffix: string): string {
  for (let d = 0; d < 10; d++) {
    const body = `${clabe.slice(0, 14)}${d}${suffix.slice(0, 2)}`;
    let sum = 0;
    for (let i = 0; i < 17; i++) sum += (Number(body[i]) * [3, 7, 1][i % 3]!) % 10;
    if ((10 - (sum % 10)) % 10 === Number(suffix[2])) return `${body}${suffix[2]}`;
  }
  throw new Error(`no CLABE ends in ${suffix}`);
}

/**
 * The example of `accountType` whose primary identifier ends in the sandbox `suffix` (3
 * digits): digits replaced at the end (IBAN and CLABE check digits recomputed); for
 * `user@domain` identifiers at the end of the user.
 */
export function withSuffix(
  accountType: ExternalAccountType,
  suffix: string,
): { currency: string; accountInfo: AccountInfoJson } {
  const { currency, accountInfo } = EXTERNAL_ACCOUNT_EXAMPLES[accountType];
  const variant = EXTERNAL_ACCOUNT_VARIANTS[accountType];
  const field = variant.identifiers.find((f) => accountInfo[f] !== undefined)!;
  const value = String(accountInfo[field]);
  const kind = variant.fields[field]!.format.kind;
  let next: string;
  if (kind === 'iban') next = ibanOf(value.slice(0, 2), `${value.slice(4, -3)}${suffix}`);
  else if (kind === 'clabe') next = clabeEndingIn(value, suffix);
  else if (value.includes('@')) next = value.replace('@', `${suffix}@`);
  else next = `${value.slice(0, -3)}${suffix}`;
  return { currency, accountInfo: { ...accountInfo, [field]: next } };
}
