import { BANK_ACCOUNT_TYPES, BENEFICIARY_VERIFICATION_STATUSES, EXTERNAL_ACCOUNT_STATUSES, PIX_KEY_TYPES } from '@sluice/core';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { accounts } from '@sluice/contracts';
import { Timestamp, iso, stringEnum } from '../schema.js';

/**
 * The public ExternalAccount (a bank account or wallet used as a payment
 * destination or source). Its `accountInfo` is one object whose `accountType`
 * selects the variant; the accounts service validates each variant's fields.
 */


const Text = (description: string, maxLength = 200) =>
  Type.String({ minLength: 1, maxLength, description });
const CountryCode = (description: string) => Type.String({ pattern: '^[A-Z]{2}$', description });

export const BeneficiaryAddress = Type.Object(
  {
    line1: Text('Street address line 1'),
    line2: Type.Optional(Text('Street address line 2')),
    city: Type.Optional(Text('City', 100)),
    state: Type.Optional(Text('State/Province/Region', 100)),
    postalCode: Text('Postal/ZIP code', 20),
    country: CountryCode('ISO 3166-1 alpha-2'),
  },
  { additionalProperties: false, $id: 'BeneficiaryAddress' },
);

export const Beneficiary = Type.Object(
  {
    beneficiaryType: stringEnum(['INDIVIDUAL', 'BUSINESS'] as const),
    fullName: Type.Optional(Text('Full name (INDIVIDUAL, required)')),
    legalName: Type.Optional(Text('Legal name (BUSINESS, required)')),
    birthDate: Type.Optional(Type.String({ maxLength: 100, description: 'YYYY-MM-DD (INDIVIDUAL)' })),
    nationality: Type.Optional(Type.String({ maxLength: 100, description: 'ISO 3166-1 alpha-2' })),
    email: Type.Optional(Type.String({ maxLength: 320 })),
    phoneNumber: Type.Optional(Type.String({ maxLength: 100, description: 'E.164' })),
    registrationNumber: Type.Optional(Type.String({ maxLength: 200 })),
    taxId: Type.Optional(Type.String({ maxLength: 200 })),
    countryOfResidence: Type.Optional(Type.String({ maxLength: 100, description: 'ISO 3166-1 alpha-2' })),
    address: Type.Optional(BeneficiaryAddress),
  },
  {
    additionalProperties: false,
    $id: 'Beneficiary',
    description:
      'The account holder. Its name is verified against the account (beneficiaryVerificationStatus); when absent, the customer’s (or platform’s) name is used.',
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
      bankAccountType: opt(stringEnum(BANK_ACCOUNT_TYPES)),
      ...withBeneficiary,
    }),
    variant('EurExternalAccountInfo', 'EUR_ACCOUNT', { iban: S, swiftCode: opt(S), ...withBeneficiary }),
    variant('GbpExternalAccountInfo', 'GBP_ACCOUNT', { sortCode: S, accountNumber: S, ...withBeneficiary }),
    variant('MxnExternalAccountInfo', 'MXN_ACCOUNT', { clabeNumber: S, ...withBeneficiary }),
    variant('BrlExternalAccountInfo', 'BRL_ACCOUNT', {
      pixKey: S,
      pixKeyType: stringEnum(PIX_KEY_TYPES),
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
    status: stringEnum(EXTERNAL_ACCOUNT_STATUSES),
    platformAccountId: Type.Optional(Type.String()),
    currency: Type.String(),
    defaultUmaDepositAccount: Type.Boolean(),
    beneficiaryVerificationStatus: stringEnum(BENEFICIARY_VERIFICATION_STATUSES, {
      $id: 'BeneficiaryVerificationStatus',
    }),
    beneficiaryVerifiedData: Type.Optional(
      Type.Object({ fullName: Type.Optional(Type.String()) }, { $id: 'BeneficiaryVerifiedData' }),
    ),
    accountInfo: ExternalAccountInfo,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'ExternalAccount' },
);
export type ExternalAccount = Static<typeof ExternalAccount>;

const VERIFICATION_FROM_PB: Record<string, ExternalAccount['beneficiaryVerificationStatus']> = {
  [accounts.BeneficiaryVerificationStatus.MATCHED]: 'MATCHED',
  [accounts.BeneficiaryVerificationStatus.PARTIAL_MATCH]: 'PARTIAL_MATCH',
  [accounts.BeneficiaryVerificationStatus.NOT_MATCHED]: 'NOT_MATCHED',
  [accounts.BeneficiaryVerificationStatus.UNSUPPORTED]: 'UNSUPPORTED',
  [accounts.BeneficiaryVerificationStatus.CHECKED_BY_RECEIVING_FI]: 'CHECKED_BY_RECEIVING_FI',
  [accounts.BeneficiaryVerificationStatus.PENDING]: 'PENDING',
};
const STATUS_FROM_PB: Record<string, ExternalAccount['status']> = {
  [accounts.ExternalAccountStatus.ACTIVE]: 'ACTIVE',
  [accounts.ExternalAccountStatus.PENDING]: 'PENDING',
  [accounts.ExternalAccountStatus.UNDER_REVIEW]: 'UNDER_REVIEW',
  [accounts.ExternalAccountStatus.INACTIVE]: 'INACTIVE',
};

/** Keeps the fields that are set (ts-proto leaves absent optional fields undefined). */
function defined<T extends object>(o: T): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null));
}

/** The public ExternalAccount of an accounts.v1 ExternalAccount. */
export function externalAccountJson(a: accounts.ExternalAccount): ExternalAccount {
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
    // The variant is the accounts service's (it validated accountType and the variant's fields).
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
    } as ExternalAccount['accountInfo'],
    createdAt: iso(a.createdAt)!,
    updatedAt: iso(a.updatedAt)!,
  };
}
