import { Type, type Static } from '@sinclair/typebox';
import type { accounts } from '@sluice/contracts';
import { BANK_ACCOUNT_TYPES, EXTERNAL_ACCOUNT_TYPES, PIX_KEY_TYPES } from '@sluice/core';
import { Beneficiary, ExternalAccount, Id, Page, stringEnum } from '@sluice/api';
import { PageQuery } from './common.js';

/**
 * Request schemas of external accounts. Requests take `accountInfo` as one
 * object whose `accountType` selects the variant; the accounts service
 * validates the variant's fields (required fields, checksums) and answers
 * field-level 400s (`accountInfo.iban`: "checksum does not match").
 */

const Field = (description: string, maxLength = 200) => Type.Optional(Type.String({ maxLength, description }));

/** `accountInfo` of a create request: the variant's fields (see the field descriptions). */
export const ExternalAccountCreateInfo = Type.Object(
  {
    accountType: stringEnum(EXTERNAL_ACCOUNT_TYPES),
    accountNumber: Field('USD: 4-17 digits; GBP: 8 digits', 64),
    routingNumber: Field('USD: ABA routing number (9 digits, checksum)', 64),
    bankAccountType: Type.Optional(stringEnum(BANK_ACCOUNT_TYPES, { description: 'USD' })),
    bankName: Field('USD, EUR, GBP, MXN'),
    iban: Field('EUR: IBAN (mod-97 checksum; spaces allowed)', 64),
    swiftCode: Field('EUR: BIC (8 or 11 characters)', 64),
    sortCode: Field('GBP: 6 digits', 64),
    clabeNumber: Field('MXN: CLABE (18 digits with check digit)', 64),
    pixKey: Field('BRL: the PIX key, of pixKeyType'),
    pixKeyType: Type.Optional(stringEnum(PIX_KEY_TYPES, { description: 'BRL' })),
    taxId: Field('BRL: CPF (11 digits) or CNPJ (14 digits) of the holder', 64),
    address: Field('Wallets: the wallet address'),
    invoice: Field('LIGHTNING: BOLT11 invoice', 4096),
    bolt12: Field('LIGHTNING: BOLT12 offer', 4096),
    lightningAddress: Field('LIGHTNING: lightning address user@domain', 320),
    beneficiary: Type.Optional(Beneficiary),
  },
  {
    additionalProperties: false,
    $id: 'ExternalAccountCreateInfo',
    description:
      'USD_ACCOUNT: accountNumber, routingNumber, bankAccountType?, bankName?, beneficiary?. EUR_ACCOUNT: iban, swiftCode?, bankName?, beneficiary?. GBP_ACCOUNT: sortCode, accountNumber, bankName?, beneficiary?. MXN_ACCOUNT: clabeNumber, bankName?, beneficiary?. BRL_ACCOUNT: pixKey, pixKeyType, taxId, beneficiary?. SPARK_WALLET (BTC), SOLANA_WALLET, TRON_WALLET, POLYGON_WALLET, BASE_WALLET, ETHEREUM_WALLET (USDC, USDT): address. LIGHTNING (BTC): exactly one of invoice, bolt12, lightningAddress.',
  },
);

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
  };
}
