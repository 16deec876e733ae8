import { PAYMENT_RAILS, type ExternalAccountType } from './vocabulary.js';

/**
 * The one table of external account variants (`accountInfo.accountType`): for each, the
 * currencies it holds, the country of its banks, its fields with their formats, the payment
 * rails it is paid on (and the fields each rail needs), the fields that identify it, and what
 * its individual beneficiary must carry. The accounts service validates from it, the public
 * schemas (REST requests and responses, the OpenAPI document) are built from it, and payments
 * chooses rails from it: adding a variant is adding a row.
 */

export type PaymentRail = (typeof PAYMENT_RAILS)[number];

/** Every field an `accountInfo` variant may have (besides accountType, paymentRails, beneficiary). */
export const ACCOUNT_INFO_FIELDS = [
  'accountNumber',
  'routingNumber',
  'bankAccountType',
  'bankName',
  'iban',
  'swiftCode',
  'sortCode',
  'clabeNumber',
  'pixKey',
  'pixKeyType',
  'taxId',
  'bankCode',
  'branchCode',
  'vpa',
  'phoneNumber',
  'provider',
  'region',
  'address',
  'invoice',
  'bolt12',
  'lightningAddress',
] as const;
export type AccountInfoField = (typeof ACCOUNT_INFO_FIELDS)[number];

/**
 * The format of a field. The accounts service normalizes (digits: spaces and hyphens removed;
 * IBAN and BIC: spaces removed, upper case; phone: spaces, hyphens and parentheses removed)
 * and checks each kind (`domain/bank-identifiers.ts`; wallet and Lightning formats: `wallet-addresses.ts`).
 */
export type FieldFormat =
  /** Digits only, `min` to `max` of them. */
  | { kind: 'digits'; min: number; max: number }
  /** US ABA routing number: 9 digits, 3-7-1 checksum, Federal Reserve prefix. */
  | { kind: 'aba' }
  /** IBAN of one of `countries`: country length and BBAN format, mod-97 check digits. */
  | { kind: 'iban'; countries: readonly string[] }
  /** SWIFT/BIC (8 or 11): its country is the variant's `country` (or the IBAN's). */
  | { kind: 'bic' }
  /** Mexican CLABE: 18 digits, 3-7-1 check digit. */
  | { kind: 'clabe' }
  /** A PIX key of `pixKeyType` (CPF/CNPJ check digits, e-mail, +55 phone, EVP uuid). */
  | { kind: 'pixKey' }
  /** Brazilian CPF (11 digits) or CNPJ (14 digits) with their check digits. */
  | { kind: 'brTaxId' }
  /** UPI virtual payment address `handle@psp`. */
  | { kind: 'vpa' }
  /** A mobile number of one of `countries` in E.164 (calling code and national length, PHONE_PLANS). */
  | { kind: 'phone'; countries: readonly string[] }
  | { kind: 'text'; max: number }
  | { kind: 'enum'; values: readonly string[] }
  | { kind: 'wallet'; network: 'SPARK' | 'SOLANA' | 'TRON' | 'EVM' }
  | { kind: 'bolt11' }
  | { kind: 'bolt12' }
  | { kind: 'lightningAddress' };

export interface FieldSpec {
  /** Required in every request (else: optional, or required by a selected rail). */
  required?: true;
  format: FieldFormat;
  description: string;
}

export const BENEFICIARY_TYPES = ['INDIVIDUAL', 'BUSINESS'] as const;
export type BeneficiaryType = (typeof BENEFICIARY_TYPES)[number];

/** Fields of an INDIVIDUAL beneficiary (every variant; CAD adds registrationNumber). */
export const INDIVIDUAL_BENEFICIARY_FIELDS = [
  'fullName',
  'birthDate',
  'nationality',
  'email',
  'phoneNumber',
  'countryOfResidence',
  'address',
] as const;
/** Fields of a BUSINESS beneficiary (the same for every variant). */
export const BUSINESS_BENEFICIARY_FIELDS = [
  'legalName',
  'registrationNumber',
  'taxId',
  'email',
  'phoneNumber',
  'countryOfResidence',
  'address',
] as const;
export type BeneficiaryField =
  (typeof INDIVIDUAL_BENEFICIARY_FIELDS)[number] | (typeof BUSINESS_BENEFICIARY_FIELDS)[number];

export interface ExternalAccountVariant {
  accountType: ExternalAccountType;
  /** Currencies an account of this variant holds. */
  currencies: readonly string[];
  /** ISO 3166-1 country of its banks (BIC country, mobile numbers); absent for EUR (the IBAN's) and wallets. */
  country?: string;
  fields: Readonly<Partial<Record<AccountInfoField, FieldSpec>>>;
  /**
   * Bank variants: the payment rails (the first is the default of a payout) and the fields
   * each rail needs besides the required ones. A request may select some (`paymentRails`);
   * else the account gets every rail whose fields it has. Wallets: none (own network).
   */
  rails: Readonly<Partial<Record<PaymentRail, readonly AccountInfoField[]>>>;
  /** The fields identifying the account, in order: the first present is the primary identifier. */
  identifiers: readonly AccountInfoField[];
  /** Fields that together identify the account for duplicate detection (default: the primary identifier). */
  dedupe?: readonly AccountInfoField[];
  /** Exactly one of these is given (LIGHTNING). */
  exactlyOneOf?: readonly AccountInfoField[];
  /** Bank variants: what an INDIVIDUAL beneficiary must carry besides fullName, and extra fields it may. */
  individual?: { required?: readonly BeneficiaryField[]; extra?: readonly BeneficiaryField[] };
}

/** Mobile numbering plans: calling code and the lengths of the national number. */
export const PHONE_PLANS: Readonly<Record<string, { code: string; lengths: readonly number[] }>> = {
  BD: { code: '880', lengths: [10] },
  BJ: { code: '229', lengths: [8, 10] },
  BW: { code: '267', lengths: [8] },
  CG: { code: '242', lengths: [9] },
  CI: { code: '225', lengths: [10] },
  CM: { code: '237', lengths: [9] },
  CO: { code: '57', lengths: [10] },
  GH: { code: '233', lengths: [9] },
  HT: { code: '509', lengths: [8] },
  ID: { code: '62', lengths: [9, 10, 11, 12] },
  KE: { code: '254', lengths: [9] },
  MW: { code: '265', lengths: [9] },
  PK: { code: '92', lengths: [10] },
  RW: { code: '250', lengths: [9] },
  SN: { code: '221', lengths: [9] },
  SV: { code: '503', lengths: [8] },
  TG: { code: '228', lengths: [8] },
  TZ: { code: '255', lengths: [9] },
  UG: { code: '256', lengths: [9] },
  ZM: { code: '260', lengths: [9] },
};

/** IBAN countries of SEPA (EUR accounts). */
export const SEPA_IBAN_COUNTRIES = [
  'AD',
  'AT',
  'BE',
  'BG',
  'CH',
  'CY',
  'CZ',
  'DE',
  'DK',
  'EE',
  'ES',
  'FI',
  'FR',
  'GB',
  'GI',
  'GR',
  'HR',
  'HU',
  'IE',
  'IS',
  'IT',
  'LI',
  'LT',
  'LU',
  'LV',
  'MC',
  'MT',
  'NL',
  'NO',
  'PL',
  'PT',
  'RO',
  'SE',
  'SI',
  'SK',
  'SM',
  'VA',
] as const;

const STABLECOINS = ['USDC', 'USDT'] as const;
const req = (format: FieldFormat, description: string): FieldSpec => ({
  required: true,
  format,
  description,
});
const opt = (format: FieldFormat, description: string): FieldSpec => ({ format, description });
const text = (max = 255): FieldFormat => ({ kind: 'text', max });
const digits = (min: number, max = min): FieldFormat => ({ kind: 'digits', min, max });
/** An account number where the country has no national length: 4 to 30 digits. */
const ACCOUNT_DIGITS = digits(4, 30);
const BANK_ACCOUNT_TYPE: FieldFormat = { kind: 'enum', values: ['CHECKING', 'SAVINGS'] };

const bankName = (required = true) =>
  required ? req(text(), 'The name of the bank') : opt(text(), 'The name of the bank');
const accountNumber = (format: FieldFormat, description: string, required = true) =>
  required ? req(format, description) : opt(format, description);
const swift = (required = true) =>
  required
    ? req({ kind: 'bic' }, 'The SWIFT/BIC code of the bank')
    : opt({ kind: 'bic' }, 'The SWIFT/BIC code of the bank');

/** A mobile money variant: phone number and provider (and region for the CFA franc zones). */
function mobileMoney(
  accountType: ExternalAccountType,
  currency: string,
  countries: readonly string[],
  withProvider = true,
): ExternalAccountVariant {
  return {
    accountType,
    currencies: [currency],
    ...(countries.length === 1 ? { country: countries[0] } : {}),
    fields: {
      phoneNumber: req({ kind: 'phone', countries }, 'Mobile money phone number (E.164)'),
      ...(withProvider ? { provider: req(text(), 'The mobile money provider name') } : {}),
      ...(countries.length > 1
        ? {
            region: req(
              { kind: 'enum', values: countries },
              'Country of the account within the currency zone',
            ),
          }
        : {}),
    },
    rails: { MOBILE_MONEY: [] },
    identifiers: ['phoneNumber'],
  };
}

/** A variant paid by bank transfer to a named bank's account number with its SWIFT/BIC. */
function swiftBank(
  accountType: ExternalAccountType,
  currency: string,
  country: string,
  extra: ExternalAccountVariant['fields'] = {},
): ExternalAccountVariant {
  return {
    accountType,
    currencies: [currency],
    country,
    fields: {
      bankName: bankName(),
      accountNumber: req(ACCOUNT_DIGITS, 'Bank account number'),
      swiftCode: swift(),
      ...extra,
    },
    rails: { BANK_TRANSFER: [] },
    identifiers: ['accountNumber'],
  };
}

/** Bank transfer or mobile money, chosen by the fields given (or `paymentRails`). */
function bankOrMobile(
  accountType: ExternalAccountType,
  currency: string,
  country: string,
  fields: ExternalAccountVariant['fields'],
  rails: ExternalAccountVariant['rails'] = {
    BANK_TRANSFER: ['accountNumber'],
    MOBILE_MONEY: ['phoneNumber'],
  },
): ExternalAccountVariant {
  return {
    accountType,
    currencies: [currency],
    country,
    fields: {
      accountNumber: accountNumber(ACCOUNT_DIGITS, 'Bank account number (BANK_TRANSFER)', false),
      phoneNumber: opt(
        { kind: 'phone', countries: [country] },
        'Mobile money phone number, E.164 (MOBILE_MONEY)',
      ),
      ...fields,
    },
    rails,
    identifiers: ['accountNumber', 'iban', 'phoneNumber'].filter(
      (f) => f in { accountNumber: 1, phoneNumber: 1, ...fields },
    ) as AccountInfoField[],
  };
}

function wallet(
  accountType: ExternalAccountType,
  currencies: readonly string[],
  network: 'SPARK' | 'SOLANA' | 'TRON' | 'EVM',
): ExternalAccountVariant {
  return {
    accountType,
    currencies,
    fields: { address: req({ kind: 'wallet', network }, 'The wallet address') },
    rails: {},
    identifiers: ['address'],
  };
}

const VARIANT_LIST: readonly ExternalAccountVariant[] = [
  {
    accountType: 'USD_ACCOUNT',
    currencies: ['USD'],
    country: 'US',
    fields: {
      accountNumber: req(digits(4, 17), 'US bank account number (4 to 17 digits)'),
      routingNumber: req({ kind: 'aba' }, 'The ABA routing number (9 digits, checksum)'),
      bankAccountType: opt(BANK_ACCOUNT_TYPE, 'CHECKING or SAVINGS'),
      bankName: bankName(false),
    },
    rails: { ACH: [], WIRE: [], RTP: [], FEDNOW: [] },
    identifiers: ['accountNumber'],
    dedupe: ['routingNumber', 'accountNumber'],
  },
  {
    accountType: 'EUR_ACCOUNT',
    currencies: ['EUR'],
    fields: {
      iban: req({ kind: 'iban', countries: SEPA_IBAN_COUNTRIES }, 'IBAN of a SEPA country (mod-97 checked)'),
      swiftCode: swift(false),
      bankName: bankName(false),
    },
    rails: { SEPA_INSTANT: [], SEPA: [] },
    identifiers: ['iban'],
    individual: { required: ['address'] },
  },
  {
    accountType: 'GBP_ACCOUNT',
    currencies: ['GBP'],
    country: 'GB',
    fields: {
      sortCode: req(digits(6), 'The UK sort code (6 digits)'),
      accountNumber: req(digits(8), 'UK bank account number (8 digits)'),
      bankName: bankName(false),
    },
    rails: { FASTER_PAYMENTS: [] },
    identifiers: ['accountNumber'],
    dedupe: ['sortCode', 'accountNumber'],
  },
  {
    accountType: 'MXN_ACCOUNT',
    currencies: ['MXN'],
    country: 'MX',
    fields: {
      clabeNumber: req({ kind: 'clabe' }, 'The CLABE (18 digits, check digit)'),
      bankName: bankName(false),
    },
    rails: { SPEI: [] },
    identifiers: ['clabeNumber'],
  },
  {
    accountType: 'BRL_ACCOUNT',
    currencies: ['BRL'],
    country: 'BR',
    fields: {
      pixKey: req({ kind: 'pixKey' }, 'The PIX key, of pixKeyType'),
      pixKeyType: req(
        { kind: 'enum', values: ['CPF', 'CNPJ', 'EMAIL', 'PHONE', 'RANDOM'] },
        'The type of PIX key',
      ),
      taxId: req({ kind: 'brTaxId' }, 'The tax ID of the holder (CPF or CNPJ, check digits)'),
    },
    rails: { PIX: [] },
    identifiers: ['pixKey'],
  },
  {
    accountType: 'CAD_ACCOUNT',
    currencies: ['CAD'],
    country: 'CA',
    fields: {
      bankCode: req(digits(3), 'Canadian financial institution number (3 digits)'),
      branchCode: req(digits(5), 'Transit number of the branch (5 digits)'),
      accountNumber: req(digits(7, 12), 'Bank account number (7 to 12 digits)'),
    },
    rails: { BANK_TRANSFER: [] },
    identifiers: ['accountNumber'],
    dedupe: ['bankCode', 'branchCode', 'accountNumber'],
    individual: { extra: ['registrationNumber'] },
  },
  {
    accountType: 'DKK_ACCOUNT',
    currencies: ['DKK'],
    country: 'DK',
    fields: {
      iban: req({ kind: 'iban', countries: ['DK'] }, 'Danish IBAN (DK, 18 characters)'),
      swiftCode: swift(false),
    },
    rails: { SEPA_INSTANT: [], SEPA: [] },
    identifiers: ['iban'],
  },
  swiftBank('HKD_ACCOUNT', 'HKD', 'HK', {
    accountNumber: req(digits(6, 14), 'Hong Kong bank account number (6 to 14 digits)'),
  }),
  swiftBank('IDR_ACCOUNT', 'IDR', 'ID', {
    phoneNumber: req(
      { kind: 'phone', countries: ['ID'] },
      'Indonesian phone number for e-wallet payments (+62)',
    ),
  }),
  {
    accountType: 'INR_ACCOUNT',
    currencies: ['INR'],
    country: 'IN',
    fields: { vpa: req({ kind: 'vpa' }, 'The UPI virtual payment address (handle@psp)') },
    rails: { UPI: [] },
    identifiers: ['vpa'],
  },
  mobileMoney('KES_ACCOUNT', 'KES', ['KE']),
  mobileMoney('MWK_ACCOUNT', 'MWK', ['MW']),
  swiftBank('MYR_ACCOUNT', 'MYR', 'MY'),
  {
    accountType: 'NGN_ACCOUNT',
    currencies: ['NGN'],
    country: 'NG',
    fields: {
      accountNumber: req(digits(10), 'Nigerian NUBAN account number (10 digits)'),
      bankName: bankName(),
    },
    rails: { BANK_TRANSFER: [] },
    identifiers: ['accountNumber'],
  },
  {
    accountType: 'PHP_ACCOUNT',
    currencies: ['PHP'],
    country: 'PH',
    fields: {
      bankName: bankName(),
      accountNumber: req(digits(8, 16), 'Bank account number (8 to 16 digits)'),
    },
    rails: { BANK_TRANSFER: [] },
    identifiers: ['accountNumber'],
  },
  mobileMoney('RWF_ACCOUNT', 'RWF', ['RW']),
  { ...swiftBank('SGD_ACCOUNT', 'SGD', 'SG'), rails: { FAST: [], PAYNOW: [], BANK_TRANSFER: [] } },
  swiftBank('THB_ACCOUNT', 'THB', 'TH'),
  mobileMoney('TZS_ACCOUNT', 'TZS', ['TZ']),
  mobileMoney('UGX_ACCOUNT', 'UGX', ['UG']),
  swiftBank('VND_ACCOUNT', 'VND', 'VN'),
  mobileMoney('XOF_ACCOUNT', 'XOF', ['BJ', 'CI', 'SN', 'TG']),
  {
    accountType: 'ZAR_ACCOUNT',
    currencies: ['ZAR'],
    country: 'ZA',
    fields: {
      accountNumber: req(digits(9, 13), 'South African bank account number (9 to 13 digits)'),
      bankName: bankName(),
    },
    rails: { BANK_TRANSFER: [] },
    identifiers: ['accountNumber'],
  },
  mobileMoney('ZMW_ACCOUNT', 'ZMW', ['ZM']),
  wallet('SPARK_WALLET', ['BTC'], 'SPARK'),
  {
    accountType: 'LIGHTNING',
    currencies: ['BTC'],
    fields: {
      invoice: opt({ kind: 'bolt11' }, 'A one-time BOLT11 invoice'),
      bolt12: opt({ kind: 'bolt12' }, 'A reusable BOLT12 offer (lno1...)'),
      lightningAddress: opt({ kind: 'lightningAddress' }, 'A lightning address (user@domain)'),
    },
    rails: {},
    identifiers: ['lightningAddress', 'invoice', 'bolt12'],
    exactlyOneOf: ['invoice', 'bolt12', 'lightningAddress'],
  },
  wallet('SOLANA_WALLET', STABLECOINS, 'SOLANA'),
  wallet('TRON_WALLET', STABLECOINS, 'TRON'),
  wallet('POLYGON_WALLET', STABLECOINS, 'EVM'),
  wallet('BASE_WALLET', STABLECOINS, 'EVM'),
  wallet('ETHEREUM_WALLET', STABLECOINS, 'EVM'),
  {
    accountType: 'AED_ACCOUNT',
    currencies: ['AED'],
    country: 'AE',
    fields: {
      iban: req({ kind: 'iban', countries: ['AE'] }, 'UAE IBAN (AE, 23 characters)'),
      swiftCode: swift(false),
    },
    rails: { BANK_TRANSFER: [] },
    identifiers: ['iban'],
    individual: { required: ['address'] },
  },
  mobileMoney('BWP_ACCOUNT', 'BWP', ['BW']),
  mobileMoney('XAF_ACCOUNT', 'XAF', ['CM', 'CG']),
  bankOrMobile('BDT_ACCOUNT', 'BDT', 'BD', {
    branchCode: opt(digits(5), 'The branch code (5 digits)'),
    swiftCode: swift(false),
  }),
  bankOrMobile('COP_ACCOUNT', 'COP', 'CO', {}),
  {
    accountType: 'EGP_ACCOUNT',
    currencies: ['EGP'],
    country: 'EG',
    fields: {
      bankName: bankName(),
      accountNumber: req(ACCOUNT_DIGITS, 'Bank account number'),
      iban: opt({ kind: 'iban', countries: ['EG'] }, 'Egyptian IBAN (EG, 29 characters)'),
      swiftCode: swift(false),
    },
    rails: { BANK_TRANSFER: [] },
    identifiers: ['accountNumber'],
    individual: { required: ['address', 'countryOfResidence', 'phoneNumber'] },
  },
  bankOrMobile('GHS_ACCOUNT', 'GHS', 'GH', {}),
  {
    accountType: 'GTQ_ACCOUNT',
    currencies: ['GTQ'],
    country: 'GT',
    fields: {
      accountNumber: req(ACCOUNT_DIGITS, 'Bank account number'),
      bankAccountType: req(BANK_ACCOUNT_TYPE, 'CHECKING or SAVINGS'),
    },
    rails: { BANK_TRANSFER: [] },
    identifiers: ['accountNumber'],
    individual: { required: ['countryOfResidence', 'phoneNumber'] },
  },
  mobileMoney('HTG_ACCOUNT', 'HTG', ['HT'], false),
  {
    accountType: 'JMD_ACCOUNT',
    currencies: ['JMD'],
    country: 'JM',
    fields: {
      accountNumber: req(ACCOUNT_DIGITS, 'Bank account number'),
      branchCode: req(digits(5), 'The branch code (5 digits)'),
      bankAccountType: req(BANK_ACCOUNT_TYPE, 'CHECKING or SAVINGS'),
    },
    rails: { BANK_TRANSFER: [] },
    identifiers: ['accountNumber'],
    dedupe: ['branchCode', 'accountNumber'],
    individual: { required: ['address', 'phoneNumber'] },
  },
  bankOrMobile(
    'PKR_ACCOUNT',
    'PKR',
    'PK',
    {
      iban: opt({ kind: 'iban', countries: ['PK'] }, 'Pakistani IBAN (PK, 24 characters)'),
      bankName: bankName(false),
    },
    { BANK_TRANSFER: ['accountNumber'], MOBILE_MONEY: ['bankName', 'phoneNumber'] },
  ),
  // El Salvador's currency is the US dollar (SLV is the country, not an ISO 4217 code).
  bankOrMobile(
    'SLV_ACCOUNT',
    'USD',
    'SV',
    {
      bankName: opt(text(), 'The name of the bank (BANK_TRANSFER)'),
      bankAccountType: opt(BANK_ACCOUNT_TYPE, 'CHECKING or SAVINGS (BANK_TRANSFER)'),
    },
    { BANK_TRANSFER: ['bankAccountType', 'accountNumber'], MOBILE_MONEY: ['phoneNumber'] },
  ),
];

/** Every variant by accountType. */
export const EXTERNAL_ACCOUNT_VARIANTS = Object.freeze(
  Object.fromEntries(VARIANT_LIST.map((v) => [v.accountType, v])),
) as Readonly<Record<ExternalAccountType, ExternalAccountVariant>>;

/** The variant of an accountType, or undefined when there is none. */
export function externalAccountVariant(accountType: unknown): ExternalAccountVariant | undefined {
  return typeof accountType === 'string' &&
    Object.prototype.hasOwnProperty.call(EXTERNAL_ACCOUNT_VARIANTS, accountType)
    ? EXTERNAL_ACCOUNT_VARIANTS[accountType as ExternalAccountType]
    : undefined;
}

/**
 * The payment rails of an external account type, the default first (none for wallets and
 * Lightning, which move on their own networks; none for an unknown type).
 */
export function paymentRailsOf(accountType: string): readonly PaymentRail[] {
  return Object.keys(externalAccountVariant(accountType)?.rails ?? {}) as PaymentRail[];
}

/** Every currency an external account can hold. */
export const EXTERNAL_ACCOUNT_CURRENCIES: readonly string[] = [
  ...new Set(VARIANT_LIST.flatMap((v) => v.currencies)),
];
