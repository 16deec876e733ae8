import { Type, type Static } from '@sinclair/typebox';
import type { accounts } from '@sluice/contracts';
import { EXTERNAL_ACCOUNT_TYPES, EXTERNAL_ACCOUNT_VARIANTS } from '@sluice/core';
import { accountInfoVariantSchema, BeneficiaryInput, ExternalAccount, Id, Page } from '@sluice/api';
import { discriminated, PageQuery } from './common.js';

/**
 * Request schemas of external accounts. `accountInfo` is one of the variants of core's
 * EXTERNAL_ACCOUNT_VARIANTS chosen by `accountType` (its fields, `paymentRails`, the
 * `beneficiary` of bank variants chosen by `beneficiaryType`): unknown fields and a missing
 * required field are refused here, naming the field; the accounts service validates meaning
 * (checksums, bank codes, countries) and answers field-level 400s (`accountInfo.iban`:
 * "checksum does not match").
 */
const variants = discriminated(
  'accountType',
  EXTERNAL_ACCOUNT_TYPES.map((t) => accountInfoVariantSchema(EXTERNAL_ACCOUNT_VARIANTS[t], 'request')),
);
export const ExternalAccountCreateInfo = Type.Unsafe<Static<typeof variants>>({
  $id: 'ExternalAccountCreateInfoOneOf',
  description:
    'The account or wallet, by accountType (see each variant); bank variants name their beneficiary',
  allOf: [
    variants,
    {
      type: 'object',
      properties: { beneficiary: discriminated('beneficiaryType', BeneficiaryInput) },
    },
  ],
});

const CurrencyCode = Type.String({
  pattern: '^[A-Z]{3,5}$',
  description: 'Currency code (USD, EUR, USDC, BTC, ...)',
});
const PlatformAccountId = Type.String({
  minLength: 1,
  maxLength: 255,
  description: 'Your identifier for the account',
});

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

/** A platform's own account: no customer, never the default UMA deposit account. */
export const PlatformExternalAccountCreateRequest = Type.Omit(
  CustomerExternalAccountCreateRequest,
  ['customerId', 'defaultUmaDepositAccount'],
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

/** One list schema for customer and platform external accounts, as the reference names it. */
export const CustomerExternalAccountList = Page(ExternalAccount, 'ExternalAccountListResponse');
export const PlatformExternalAccountList = CustomerExternalAccountList;

/** Request `accountInfo` JSON → proto (validation is the accounts service's). */
export function accountInfoPb(info: Static<typeof ExternalAccountCreateInfo>): accounts.ExternalAccountInfo {
  const { beneficiary, paymentRails, ...rest } = info as Record<string, unknown> & {
    accountType: string;
    paymentRails?: string[];
    beneficiary?: accounts.Beneficiary;
  };
  return {
    ...rest,
    paymentRails: paymentRails ?? [],
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

/** GET /discoveries filters (shape only; accounts checks the codes, 400 naming the field). */
export const DiscoveriesQuery = Type.Object(
  {
    country: Type.Optional(
      Type.String({ minLength: 1, maxLength: 8, description: 'ISO 3166-1 alpha-2 country code (e.g. PH)' }),
    ),
    currency: Type.Optional(
      Type.String({ minLength: 1, maxLength: 10, description: 'ISO 4217 currency code (e.g. PHP)' }),
    ),
  },
  { additionalProperties: false },
);
export type DiscoveriesQuery = Static<typeof DiscoveriesQuery>;

export const Discovery = Type.Object(
  {
    bankName: Type.String({
      description: 'Canonical name of the institution: pass it as `bankName` when creating an external account',
    }),
    displayName: Type.String({ description: 'Human-friendly name of the institution' }),
    country: Type.String({ description: 'ISO 3166-1 alpha-2 country code' }),
    currency: Type.String({ description: 'ISO 4217 currency code' }),
  },
  { $id: 'Discovery' },
);

/** Every matching institution in one page (`hasMore` false), the project's list envelope. */
export const DiscoveryList = Page(Discovery, 'DiscoveryListResponse');

/** The REST Discovery of the proto message. */
export function discoveryJson(d: accounts.Discovery): Static<typeof Discovery> {
  return { bankName: d.bankName, displayName: d.displayName, country: d.country, currency: d.currency };
}
