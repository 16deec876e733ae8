import { Type, type Static } from '@sinclair/typebox';
import type { payments } from '@sluice/contracts';
import { Amount, Currency, Id, Page, Timestamp, stringEnum } from '@sluice/api';
import { MAX_AMOUNT, UMA_ADDRESS_MAX_LENGTH } from '@sluice/core';
import { PageQuery } from './common.js';

/**
 * REST schemas of the payments reads (receiver lookups, exchange rates, UMA
 * providers) and the proto → JSON mapping. Rates travel as exact decimal
 * strings over gRPC and leave the API as JSON numbers (display only: amounts
 * are always the exact integers the payments service computed).
 */

const CurrencyCode = (description: string) =>
  Type.String({ minLength: 1, maxLength: 10, pattern: '^[A-Za-z]+$', description });

/** An UMA address to look up: bounded here; its grammar is payments' (400 INVALID_UMA_ADDRESS). */
const UmaAddress = (description: string) =>
  Type.String({ minLength: 1, maxLength: UMA_ADDRESS_MAX_LENGTH, description });

export const ReceiverUmaParams = Type.Object(
  {
    receiverUmaAddress: UmaAddress(
      'UMA address of the intended recipient, e.g. `$success.usd@sandbox.sluice.local`',
    ),
  },
  { additionalProperties: false },
);

export const ReceiverUmaQuery = Type.Object(
  {
    senderUmaAddress: Type.Optional(
      UmaAddress('UMA address of the sender (optional if customerId is provided)'),
    ),
    customerId: Type.Optional(Id('Customer')),
    sendingCurrency: Type.Optional(
      CurrencyCode(
        'Currency the sender will pay in; estimated rates are quoted from it (default USD). Sluice extension.',
      ),
    ),
  },
  { additionalProperties: false },
);

export const CurrencyPreference = Type.Object(
  {
    currency: Currency,
    estimatedExchangeRate: Type.Number({
      exclusiveMinimum: 0,
      description: 'Sending-currency units per unit of this currency (not locked; the quote fixes the rate)',
    }),
    min: Type.Integer({
      minimum: 1,
      description: 'Minimum receivable amount, smallest unit of this currency',
    }),
    max: Type.Integer({
      minimum: 1,
      description: 'Maximum receivable amount, smallest unit of this currency',
    }),
  },
  { $id: 'CurrencyPreference' },
);

export const CounterpartyFieldDefinition = Type.Object(
  {
    name: Type.String({ description: 'CustomerInfoFieldName: FULL_NAME, BIRTH_DATE, NATIONALITY, …' }),
    mandatory: Type.Boolean(),
  },
  { $id: 'PayerDataFieldDefinition' },
);

const lookupProps = {
  supportedCurrencies: Type.Array(CurrencyPreference),
  requiredPayerDataFields: Type.Array(CounterpartyFieldDefinition, {
    description:
      'Payer fields the receiving institution requires; mandatory ones must be in the quote’s senderCustomerInfo',
  }),
  lookupId: Type.String({ description: '`Lookup:<uuid>`, needed by POST /quotes; valid until expiresAt' }),
  expiresAt: Timestamp,
};

export const ReceiverUmaLookupResponse = Type.Object(
  {
    receiverUmaAddress: Type.String({
      description: 'The UMA address that was looked up (normalized to lower case)',
    }),
    ...lookupProps,
  },
  { $id: 'ReceiverUmaLookupResponse' },
);

export const ReceiverExternalAccountParams = Type.Object(
  { accountId: Id('ExternalAccount') },
  { additionalProperties: false },
);

export const ReceiverExternalAccountLookupResponse = Type.Object(
  {
    accountId: Type.String({ description: 'The external account that was looked up' }),
    ...lookupProps,
  },
  { $id: 'ReceiverExternalAccountLookupResponse' },
);

export const ExchangeRatesQuery = Type.Object(
  {
    sourceCurrency: Type.Optional(CurrencyCode('Only corridors from this currency')),
    destinationCurrency: Type.Optional(
      Type.Array(CurrencyCode('Destination currency'), {
        maxItems: 20,
        description: 'Only corridors to these currencies; repeat the parameter for several',
      }),
    ),
    sendingAmount: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: Number(MAX_AMOUNT),
        default: 10000,
        description: 'Sending amount in the smallest unit of the source currency (default 10000)',
      }),
    ),
  },
  { additionalProperties: false },
);

export const ExchangeRate = Type.Object(
  {
    sourceCurrency: Currency,
    destinationCurrency: Currency,
    destinationPaymentRail: Type.String({
      description: 'Rail of the destination, e.g. SEPA_INSTANT, SPEI, PIX',
    }),
    sendingAmount: Amount,
    minSendingAmount: Amount,
    maxSendingAmount: Amount,
    receivingAmount: Type.Integer({
      minimum: 0,
      description: 'What sendingAmount delivers after fees (0 if it does not cover them)',
    }),
    exchangeRate: Type.Number({
      exclusiveMinimum: 0,
      description: 'Sending-currency units per receiving-currency unit',
    }),
    fees: Type.Object(
      {
        fixed: Type.Integer({ minimum: 0, description: 'Fixed fee, smallest unit of the source currency' }),
        variableRate: Type.Number({
          minimum: 0,
          description: 'Variable fee rate on the sending amount (0.003 = 0.3 %). Sluice extension.',
        }),
      },
      { $id: 'ExchangeRateFees' },
    ),
    updatedAt: Timestamp,
  },
  { $id: 'ExchangeRate' },
);

export const UmaProvidersQuery = Type.Object(
  {
    countryCode: Type.Optional(
      Type.String({ pattern: '^[A-Za-z]{2}$', description: 'ISO 3166-1 alpha-2: providers operating there' }),
    ),
    currencyCode: Type.Optional(CurrencyCode('ISO 4217: providers supporting the currency')),
    hasBlockedProviders: Type.Optional(
      Type.Boolean({
        description: 'false: only providers on your allowlist. Default: blocked providers are included',
      }),
    ),
    sortOrder: Type.Optional(stringEnum(['asc', 'desc'] as const, { default: 'desc', description: 'By name' })),
    ...PageQuery,
  },
  { additionalProperties: false },
);

export const ExchangeRateList = Page(ExchangeRate, 'ExchangeRateListResponse');

export const UmaProvider = Type.Object(
  {
    name: Type.String(),
    supportedRegions: Type.Array(Type.String(), { description: 'ISO 3166-1 alpha-2 codes' }),
    domain: Type.String({ description: 'Domain of the provider’s UMA addresses' }),
    logoUrl: Type.Optional(Type.String({ format: 'uri' })),
    supportedCurrencies: Type.Array(Currency),
    lei: Type.Optional(Type.String({ description: 'Legal Entity Identifier' })),
    allowListStatus: Type.Boolean({ description: 'Whether the provider is on your allowlist' }),
  },
  { $id: 'UmaProvider' },
);

/** The API form of a decimal-string rate. */
const rateNumber = (s: string): number => Number(s);

const currencyJson = (c: payments.Currency | undefined) => ({
  code: c?.code ?? '',
  name: c?.name ?? '',
  symbol: c?.symbol ?? '',
  decimals: c?.decimals ?? 0,
});

function lookupFields(l: payments.ReceiverLookup) {
  return {
    supportedCurrencies: l.supportedCurrencies.map((p) => ({
      currency: currencyJson(p.currency),
      estimatedExchangeRate: rateNumber(p.estimatedExchangeRate),
      min: Number(p.min),
      max: Number(p.max),
    })),
    requiredPayerDataFields: l.requiredPayerDataFields.map((f) => ({ name: f.name, mandatory: f.mandatory })),
    lookupId: l.id,
    expiresAt: (l.expiresAt ?? new Date(0)).toISOString(),
  };
}

/** The REST answer of an UMA receiver lookup. */
export function umaLookupJson(l: payments.ReceiverLookup): Static<typeof ReceiverUmaLookupResponse> {
  return { receiverUmaAddress: l.receiverUmaAddress ?? '', ...lookupFields(l) };
}

/** The REST answer of an external-account receiver lookup. */
export function externalAccountLookupJson(
  l: payments.ReceiverLookup,
): Static<typeof ReceiverExternalAccountLookupResponse> {
  return { accountId: l.externalAccountId ?? '', ...lookupFields(l) };
}

export function exchangeRateJson(r: payments.ExchangeRate) {
  return {
    sourceCurrency: currencyJson(r.sourceCurrency),
    destinationCurrency: currencyJson(r.destinationCurrency),
    destinationPaymentRail: r.destinationPaymentRail,
    sendingAmount: Number(r.sendingAmount),
    minSendingAmount: Number(r.minSendingAmount),
    maxSendingAmount: Number(r.maxSendingAmount),
    receivingAmount: Number(r.receivingAmount),
    exchangeRate: rateNumber(r.exchangeRate),
    fees: { fixed: Number(r.fixedFee), variableRate: rateNumber(r.variableFeeRate) },
    updatedAt: (r.updatedAt ?? new Date(0)).toISOString(),
  };
}

export function umaProviderJson(p: payments.UmaProvider) {
  return {
    name: p.name,
    supportedRegions: p.supportedRegions,
    domain: p.domain,
    ...(p.logoUrl ? { logoUrl: p.logoUrl } : {}),
    supportedCurrencies: p.supportedCurrencies.map(currencyJson),
    ...(p.lei ? { lei: p.lei } : {}),
    allowListStatus: p.allowListStatus,
  };
}

export const UmaProviderList = Page(UmaProvider, 'UmaProviderListResponse');

/** POST /crypto/estimate-withdrawal-fee: the shape; payments checks the meaning (network, currency, address). */
export const EstimateCryptoWithdrawalFeeRequest = Type.Object(
  {
    internalAccountId: Id('InternalAccount'),
    currency: CurrencyCode('The currency code of the asset to withdraw (USDC, USDT on SOLANA, TRON, POLYGON, BASE, ETHEREUM; BTC on SPARK, LIGHTNING)'),
    cryptoNetwork: Type.String({
      minLength: 1,
      maxLength: 32,
      description: 'The blockchain network: SOLANA, TRON, POLYGON, BASE, ETHEREUM, SPARK or LIGHTNING',
    }),
    amount: Type.Integer({
      minimum: 1,
      maximum: Number(MAX_AMOUNT),
      description: 'The amount to withdraw in the smallest unit of the currency',
    }),
    destinationAddress: Type.String({
      minLength: 1,
      maxLength: 2048,
      description:
        "The address to withdraw to, by the network's grammar (the one external-account wallets are checked with): a base58 Solana or Tron address, an EVM 0x address (EIP-55 checksum when mixed case), a Spark address, or for LIGHTNING a BOLT11 invoice, BOLT12 offer or lightning address",
    }),
  },
  { additionalProperties: false, $id: 'EstimateCryptoWithdrawalFeeRequest' },
);
export type EstimateCryptoWithdrawalFeeRequest = Static<typeof EstimateCryptoWithdrawalFeeRequest>;

export const EstimateCryptoWithdrawalFeeResponse = Type.Object(
  {
    networkFee: Type.Integer({
      minimum: 0,
      description: 'The estimated network fee in the smallest unit of networkFeeAsset (lamports, wei, sun, sats): informational, not in the withdrawal currency',
    }),
    networkFeeAsset: Type.String({ description: 'The asset the network fee is paid in (SOL, ETH, TRX, POL, BTC)' }),
    applicationFee: Type.Integer({ minimum: 0, description: 'Sluice charges none: 0' }),
    totalFee: Type.Integer({
      minimum: 0,
      description: 'The network fee converted to the withdrawal currency plus applicationFee, smallest unit of the currency',
    }),
    netAmount: Type.Integer({ minimum: 1, description: 'amount − totalFee: what the destination receives' }),
  },
  { $id: 'EstimateCryptoWithdrawalFeeResponse' },
);

/** The REST estimate of the proto answer. */
export function withdrawalFeeJson(
  r: payments.EstimateCryptoWithdrawalFeeResponse,
): Static<typeof EstimateCryptoWithdrawalFeeResponse> {
  return {
    networkFee: Number(r.networkFee),
    networkFeeAsset: r.networkFeeAsset,
    applicationFee: Number(r.applicationFee),
    totalFee: Number(r.totalFee),
    netAmount: Number(r.netAmount),
  };
}
