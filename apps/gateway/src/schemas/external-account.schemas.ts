import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { accounts } from '@sluice/contracts';
import { Id, iso, PageQuery, Timestamp } from './common.js';

/**
 * REST schemas of external accounts and the proto <-> JSON mapping. Requests take
 * `accountInfo` as one object whose `accountType` selects the variant; the accounts
 * service validates the variant's fields (required fields, checksums) and answers
 * field-level 400s (`accountInfo.iban`: "checksum does not match"). Responses document
 * each variant.
 */

function stringEnum<T extends string>(values: readonly T[], options: Record<string, unknown> = {}) {
  return Type.Unsafe<T>({ type: 'string', enum: [...values], ...options });
}

export const EXTERNAL_ACCOUNT_TYPES = [
  'USD_ACCOUNT',
  'EUR_ACCOUNT',
  'GBP_ACCOUNT',
  'MXN_ACCOUNT',
  'BRL_ACCOUNT',
  'SPARK_WALLET',
  'LIGHTNING',
  'SOLANA_WALLET',
  'TRON_WALLET',
  'POLYGON_WALLET',
  'BASE_WALLET',
  'ETHEREUM_WALLET',
] as const;

const VERIFICATION = ['MATCHED', 'PARTIAL_MATCH', 'NOT_MATCHED', 'UNSUPPORTED', 'CHECKED_BY_RECEIVING_FI', 'PENDING'] as const;

const Str = (description: string, max = 200) => Type.String({ minLength: 1, maxLength: max, description });

export const Address = Type.Object(
  {
    line1: Str('Street address line 1'),
    line2: Type.Optional(Str('Street address line 2')),
    city: Type.Optional(Str('City', 100)),
    state: Type.Optional(Str('State/Province/Region', 100)),
    postalCode: Str('Postal/ZIP code', 20),
    country: Type.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2' }),
  },
  { additionalProperties: false, $id: 'BeneficiaryAddress' },
);

export const Beneficiary = Type.Object(
  {
    beneficiaryType: stringEnum(['INDIVIDUAL', 'BUSINESS'] as const),
    fullName: Type.Optional(Str('Full name (INDIVIDUAL, required)')),
    legalName: Type.Optional(Str('Legal name (BUSINESS, required)')),
    birthDate: Type.Optional(Type.String({ description: 'YYYY-MM-DD (INDIVIDUAL)' })),
    nationality: Type.Optional(Type.String({ description: 'ISO 3166-1 alpha-2' })),
    email: Type.Optional(Type.String()),
    phoneNumber: Type.Optional(Type.String({ description: 'E.164' })),
    registrationNumber: Type.Optional(Type.String()),
    taxId: Type.Optional(Type.String()),
    countryOfResidence: Type.Optional(Type.String({ description: 'ISO 3166-1 alpha-2' })),
    address: Type.Optional(Address),
  },
  {
    additionalProperties: false,
    $id: 'Beneficiary',
    description:
      'The account holder. Its name is verified against the account (beneficiaryVerificationStatus); when absent, the customer’s (or platform’s) name is used.',
  },
);

const fieldProps = {
  accountNumber: Type.Optional(Type.String({ description: 'USD: 4-17 digits; GBP: 8 digits' })),
  routingNumber: Type.Optional(Type.String({ description: 'USD: ABA routing number (9 digits, checksum)' })),
  bankAccountType: Type.Optional(stringEnum(['CHECKING', 'SAVINGS'] as const, { description: 'USD' })),
  bankName: Type.Optional(Type.String({ description: 'USD, EUR, GBP, MXN' })),
  iban: Type.Optional(Type.String({ description: 'EUR: IBAN (mod-97 checksum; spaces allowed)' })),
  swiftCode: Type.Optional(Type.String({ description: 'EUR: BIC (8 or 11 characters)' })),
  sortCode: Type.Optional(Type.String({ description: 'GBP: 6 digits' })),
  clabeNumber: Type.Optional(Type.String({ description: 'MXN: CLABE (18 digits with check digit)' })),
  pixKey: Type.Optional(Type.String({ description: 'BRL: the PIX key, of pixKeyType' })),
  pixKeyType: Type.Optional(stringEnum(['CPF', 'CNPJ', 'EMAIL', 'PHONE', 'RANDOM'] as const, { description: 'BRL' })),
  taxId: Type.Optional(Type.String({ description: 'BRL: CPF (11 digits) or CNPJ (14 digits) of the holder' })),
  address: Type.Optional(Type.String({ description: 'Wallets: the wallet address' })),
  invoice: Type.Optional(Type.String({ description: 'LIGHTNING: BOLT11 invoice' })),
  bolt12: Type.Optional(Type.String({ description: 'LIGHTNING: BOLT12 offer' })),
  lightningAddress: Type.Optional(Type.String({ description: 'LIGHTNING: lightning address user@domain' })),
  beneficiary: Type.Optional(Beneficiary),
};

/** `accountInfo` of a create request: the variant's fields (see the field descriptions). */
export const ExternalAccountCreateInfo = Type.Object(
  { accountType: stringEnum(EXTERNAL_ACCOUNT_TYPES), ...fieldProps },
  {
    additionalProperties: false,
    $id: 'ExternalAccountCreateInfo',
    description:
      'USD_ACCOUNT: accountNumber, routingNumber, bankAccountType?, bankName?, beneficiary?. EUR_ACCOUNT: iban, swiftCode?, bankName?, beneficiary?. GBP_ACCOUNT: sortCode, accountNumber, bankName?, beneficiary?. MXN_ACCOUNT: clabeNumber, bankName?, beneficiary?. BRL_ACCOUNT: pixKey, pixKeyType, taxId, beneficiary?. SPARK_WALLET (BTC), SOLANA_WALLET, TRON_WALLET, POLYGON_WALLET, BASE_WALLET, ETHEREUM_WALLET (USDC, USDT): address. LIGHTNING (BTC): exactly one of invoice, bolt12, lightningAddress.',
  },
);

function variant<P extends Record<string, TSchema>>(id: string, accountType: string, props: P) {
  return Type.Object({ accountType: Type.Literal(accountType), ...props }, { $id: id, title: id });
}
const opt = <T extends TSchema>(s: T) => Type.Optional(s);
const S = Type.String();
const withBeneficiary = { bankName: opt(S), beneficiary: opt(Beneficiary) };

/** `accountInfo` of an ExternalAccount (discriminated by `accountType`). */
export const ExternalAccountInfo = Type.Union(
  [
    variant('UsdExternalAccountInfo', 'USD_ACCOUNT', {
      accountNumber: S,
      routingNumber: S,
      bankAccountType: opt(stringEnum(['CHECKING', 'SAVINGS'] as const)),
      ...withBeneficiary,
    }),
    variant('EurExternalAccountInfo', 'EUR_ACCOUNT', { iban: S, swiftCode: opt(S), ...withBeneficiary }),
    variant('GbpExternalAccountInfo', 'GBP_ACCOUNT', { sortCode: S, accountNumber: S, ...withBeneficiary }),
    variant('MxnExternalAccountInfo', 'MXN_ACCOUNT', { clabeNumber: S, ...withBeneficiary }),
    variant('BrlExternalAccountInfo', 'BRL_ACCOUNT', {
      pixKey: S,
      pixKeyType: stringEnum(['CPF', 'CNPJ', 'EMAIL', 'PHONE', 'RANDOM'] as const),
      taxId: S,
      beneficiary: opt(Beneficiary),
    }),
    variant('SparkWalletExternalAccountInfo', 'SPARK_WALLET', { address: S }),
    variant('LightningExternalAccountInfo', 'LIGHTNING', {
      invoice: opt(S),
      bolt12: opt(S),
      lightningAddress: opt(S),
    }),
    variant('SolanaWalletExternalAccountInfo', 'SOLANA_WALLET', { address: S }),
    variant('TronWalletExternalAccountInfo', 'TRON_WALLET', { address: S }),
    variant('PolygonWalletExternalAccountInfo', 'POLYGON_WALLET', { address: S }),
    variant('BaseWalletExternalAccountInfo', 'BASE_WALLET', { address: S }),
    variant('EthereumWalletExternalAccountInfo', 'ETHEREUM_WALLET', { address: S }),
  ],
  { $id: 'ExternalAccountInfo' },
);

export const ExternalAccount = Type.Object(
  {
    id: Type.String({ description: 'ExternalAccount:<uuid>' }),
    customerId: Type.Optional(Type.String({ description: 'Owning customer; absent for platform accounts' })),
    status: stringEnum(['PENDING', 'ACTIVE', 'UNDER_REVIEW', 'INACTIVE'] as const),
    platformAccountId: Type.Optional(Type.String()),
    currency: Type.String(),
    defaultUmaDepositAccount: Type.Boolean(),
    beneficiaryVerificationStatus: stringEnum(VERIFICATION, { $id: 'BeneficiaryVerificationStatus' }),
    beneficiaryVerifiedData: Type.Optional(
      Type.Object({ fullName: Type.Optional(Type.String()) }, { $id: 'BeneficiaryVerifiedData' }),
    ),
    accountInfo: ExternalAccountInfo,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'ExternalAccount' },
);
export type ExternalAccountJson = Static<typeof ExternalAccount>;

const CurrencyCode = Type.String({ pattern: '^[A-Z]{3,5}$', description: 'Currency code (USD, EUR, USDC, BTC, ...)' });
const PlatformAccountId = Type.String({ minLength: 1, maxLength: 255, description: 'Your identifier for the account' });

export const CustomerExternalAccountCreateRequest = Type.Object(
  {
    customerId: Type.Optional(Id('Customer')),
    currency: CurrencyCode,
    platformAccountId: Type.Optional(PlatformAccountId),
    defaultUmaDepositAccount: Type.Optional(Type.Boolean({ default: false })),
    accountInfo: ExternalAccountCreateInfo,
  },
  { additionalProperties: false, $id: 'ExternalAccountCreateRequest' },
);
export type CustomerExternalAccountCreateRequest = Static<typeof CustomerExternalAccountCreateRequest>;

export const PlatformExternalAccountCreateRequest = Type.Object(
  { currency: CurrencyCode, platformAccountId: Type.Optional(PlatformAccountId), accountInfo: ExternalAccountCreateInfo },
  { additionalProperties: false, $id: 'PlatformExternalAccountCreateRequest' },
);

export const CustomerExternalAccountsQuery = Type.Object(
  { currency: Type.Optional(CurrencyCode), customerId: Type.Optional(Id('Customer')), ...PageQuery },
  { additionalProperties: false },
);
export const PlatformExternalAccountsQuery = Type.Object(
  { currency: Type.Optional(CurrencyCode), ...PageQuery },
  { additionalProperties: false },
);
export const ExternalAccountParams = Type.Object(
  { externalAccountId: Id('ExternalAccount') },
  { additionalProperties: false },
);
export type ExternalAccountParams = Static<typeof ExternalAccountParams>;

const VERIFICATION_FROM_PB: Record<string, (typeof VERIFICATION)[number]> = {
  [accounts.BeneficiaryVerificationStatus.MATCHED]: 'MATCHED',
  [accounts.BeneficiaryVerificationStatus.PARTIAL_MATCH]: 'PARTIAL_MATCH',
  [accounts.BeneficiaryVerificationStatus.NOT_MATCHED]: 'NOT_MATCHED',
  [accounts.BeneficiaryVerificationStatus.UNSUPPORTED]: 'UNSUPPORTED',
  [accounts.BeneficiaryVerificationStatus.CHECKED_BY_RECEIVING_FI]: 'CHECKED_BY_RECEIVING_FI',
  [accounts.BeneficiaryVerificationStatus.PENDING]: 'PENDING',
};
const STATUS_FROM_PB: Record<string, ExternalAccountJson['status']> = {
  [accounts.ExternalAccountStatus.ACTIVE]: 'ACTIVE',
  [accounts.ExternalAccountStatus.PENDING]: 'PENDING',
  [accounts.ExternalAccountStatus.UNDER_REVIEW]: 'UNDER_REVIEW',
  [accounts.ExternalAccountStatus.INACTIVE]: 'INACTIVE',
};

/** Keeps the fields that are set (ts-proto leaves absent optional fields undefined). */
function defined<T extends object>(o: T): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null));
}

/** proto ExternalAccount → public JSON. */
export function externalAccountJson(a: accounts.ExternalAccount): ExternalAccountJson {
  const { beneficiary, ...info } = a.accountInfo!;
  return {
    id: a.id,
    ...(a.customerId ? { customerId: a.customerId } : {}),
    status: STATUS_FROM_PB[a.status] ?? 'ACTIVE',
    ...(a.platformAccountId ? { platformAccountId: a.platformAccountId } : {}),
    currency: a.currency,
    defaultUmaDepositAccount: a.defaultUmaDepositAccount,
    beneficiaryVerificationStatus: VERIFICATION_FROM_PB[a.beneficiaryVerificationStatus] ?? 'UNSUPPORTED',
    ...(a.beneficiaryVerifiedData?.fullName
      ? { beneficiaryVerifiedData: { fullName: a.beneficiaryVerifiedData.fullName } }
      : {}),
    accountInfo: {
      ...defined(info),
      ...(beneficiary
        ? {
            beneficiary: {
              ...defined({ ...beneficiary, address: undefined }),
              ...(beneficiary.address ? { address: defined(beneficiary.address) } : {}),
            },
          }
        : {}),
    } as ExternalAccountJson['accountInfo'],
    createdAt: iso(a.createdAt)!,
    updatedAt: iso(a.updatedAt)!,
  };
}

/** Request `accountInfo` JSON → proto (validation is the accounts service's). */
export function accountInfoPb(info: Static<typeof ExternalAccountCreateInfo>): accounts.ExternalAccountInfo {
  const { beneficiary, ...rest } = info;
  return {
    ...rest,
    ...(beneficiary
      ? {
          beneficiary: {
            ...beneficiary,
            address: beneficiary.address ? { ...beneficiary.address } : undefined,
          },
        }
      : {}),
  } as accounts.ExternalAccountInfo;
}
