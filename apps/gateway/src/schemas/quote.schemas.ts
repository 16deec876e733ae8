import { Type, type Static } from '@sinclair/typebox';
import type { payments } from '@sluice/contracts';
import { currencyView } from '@sluice/core';
import { Currency, Id, Timestamp, iso } from './common.js';

const PURPOSES = [
  'GIFT',
  'SELF',
  'GOODS_OR_SERVICES',
  'EDUCATION',
  'HEALTH_OR_MEDICAL',
  'REAL_ESTATE_PURCHASE',
  'TAX_PAYMENT',
  'LOAN_PAYMENT',
  'UTILITY_BILL',
  'DONATION',
  'TRAVEL',
  'OTHER',
] as const;

const QuoteSource = Type.Object(
  {
    sourceType: Type.Literal('ACCOUNT', {
      description: 'ACCOUNT (an internal account of the platform); REALTIME_FUNDING is not available yet',
    }),
    accountId: Id('InternalAccount'),
    customerId: Type.Optional(Id('Customer')),
  },
  { additionalProperties: false, description: 'The internal account paying (and, optionally, its owner)' },
);

const QuoteDestination = Type.Object(
  {
    destinationType: Type.Union([Type.Literal('ACCOUNT'), Type.Literal('UMA_ADDRESS')]),
    accountId: Type.Optional(
      Type.String({ description: 'ACCOUNT: an InternalAccount or ExternalAccount id of the platform' }),
    ),
    umaAddress: Type.Optional(Type.String({ description: 'UMA_ADDRESS: the receiver ($name@domain)' })),
    currency: Type.Optional(
      Type.String({ description: "UMA_ADDRESS: receiving currency (default: the receiver's first)" }),
    ),
  },
  { additionalProperties: false },
);

export const QuoteRequest = Type.Object(
  {
    lookupId: Type.Optional(
      Type.String({ description: 'Lookup id of GET /receiver/...; required for UMA_ADDRESS destinations' }),
    ),
    source: QuoteSource,
    destination: QuoteDestination,
    lockedCurrencySide: Type.Union([Type.Literal('SENDING'), Type.Literal('RECEIVING')]),
    lockedCurrencyAmount: Type.Integer({
      minimum: 1,
      maximum: 9_000_000_000_000_000,
      description: 'Smallest units of the locked side’s currency',
    }),
    immediatelyExecute: Type.Optional(Type.Boolean({ default: false })),
    description: Type.Optional(Type.String({ maxLength: 1000 })),
    purposeOfPayment: Type.Optional(Type.Union(PURPOSES.map((p) => Type.Literal(p)))),
    senderCustomerInfo: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description: 'Every mandatory requiredPayerDataFields entry of the lookup, by field name',
      }),
    ),
  },
  { additionalProperties: false },
);
export type QuoteRequest = Static<typeof QuoteRequest>;

export const QuoteParams = Type.Object({ quoteId: Id('Quote') }, { additionalProperties: false });

const RateDetails = Type.Object({
  counterpartyMultiplier: Type.Number({ description: 'Receiving minor units per mSAT' }),
  counterpartyFixedFee: Type.Integer(),
  gridApiMultiplier: Type.Number({ description: 'mSAT per sending minor unit, variable fee included' }),
  gridApiFixedFee: Type.Integer(),
  gridApiVariableFeeRate: Type.Number(),
  gridApiVariableFeeAmount: Type.Integer(),
});

export const Quote = Type.Object(
  {
    id: Id('Quote'),
    status: Type.Union(
      ['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED', 'EXPIRED'].map((s) => Type.Literal(s)),
    ),
    createdAt: Timestamp,
    expiresAt: Timestamp,
    source: Type.Object({
      sourceType: Type.Literal('ACCOUNT'),
      accountId: Type.String(),
      customerId: Type.Optional(Type.String()),
    }),
    destination: Type.Object({
      destinationType: Type.Union([Type.Literal('ACCOUNT'), Type.Literal('UMA_ADDRESS')]),
      accountId: Type.Optional(Type.String()),
      umaAddress: Type.Optional(Type.String()),
      currency: Type.Optional(Type.String()),
    }),
    sendingCurrency: Currency,
    receivingCurrency: Currency,
    totalSendingAmount: Type.Integer({
      description: 'What the sender pays, fees included (sending minor units)',
    }),
    totalReceivingAmount: Type.Integer({ description: 'What the receiver gets (receiving minor units)' }),
    exchangeRate: Type.Number({ description: 'Sending units per receiving unit (fees excluded)' }),
    feesIncluded: Type.Integer({ description: 'Fees within totalSendingAmount (sending minor units)' }),
    lockedCurrencySide: Type.Union([Type.Literal('SENDING'), Type.Literal('RECEIVING')]),
    lockedCurrencyAmount: Type.Integer(),
    transactionId: Type.Optional(Type.String({ description: 'Set once the quote is executed' })),
    lookupId: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    purposeOfPayment: Type.Optional(Type.String()),
    counterpartyInformation: Type.Record(Type.String(), Type.String()),
    rateDetails: RateDetails,
    payloadToSign: Type.Optional(
      Type.String({
        description:
          'EMBEDDED_WALLET sources: stamp it byte for byte with a session key of the wallet and send the stamp as header Service-Wallet-Signature of POST /quotes/{quoteId}/execute',
      }),
    ),
  },
  { $id: 'Quote' },
);
export type Quote = Static<typeof Quote>;

/** The REST Quote of a proto Quote. */
export function quoteJson(q: payments.Quote): Quote {
  const src = q.source!;
  const dst = q.destination!;
  const d = q.rateDetails!;
  return {
    id: q.id,
    status: q.status as Quote['status'],
    createdAt: iso(q.createdAt)!,
    expiresAt: iso(q.expiresAt)!,
    source: {
      sourceType: 'ACCOUNT',
      accountId: src.accountId ?? '',
      ...(q.customerId ? { customerId: q.customerId } : {}),
    },
    destination: {
      destinationType: dst.kind as Quote['destination']['destinationType'],
      ...(dst.accountId ? { accountId: dst.accountId } : {}),
      ...(dst.umaAddress ? { umaAddress: dst.umaAddress } : {}),
      currency: dst.currency,
    },
    sendingCurrency: currencyView(src.currency),
    receivingCurrency: currencyView(dst.currency),
    totalSendingAmount: Number(q.totalSendingAmount),
    totalReceivingAmount: Number(q.totalReceivingAmount),
    exchangeRate: Number(q.exchangeRate),
    feesIncluded: Number(q.feesIncluded),
    lockedCurrencySide: q.lockedCurrencySide as Quote['lockedCurrencySide'],
    lockedCurrencyAmount: Number(q.lockedCurrencyAmount),
    ...(q.transactionId ? { transactionId: q.transactionId } : {}),
    ...(q.lookupId ? { lookupId: q.lookupId } : {}),
    ...(q.description !== undefined ? { description: q.description } : {}),
    ...(q.purposeOfPayment ? { purposeOfPayment: q.purposeOfPayment } : {}),
    counterpartyInformation: q.counterpartyInformation,
    ...(q.payloadToSign ? { payloadToSign: q.payloadToSign } : {}),
    rateDetails: {
      counterpartyMultiplier: Number(d.counterpartyMultiplier),
      counterpartyFixedFee: Number(d.counterpartyFixedFee),
      gridApiMultiplier: Number(d.gridApiMultiplier),
      gridApiFixedFee: Number(d.gridApiFixedFee),
      gridApiVariableFeeRate: Number(d.gridApiVariableFeeRate),
      gridApiVariableFeeAmount: Number(d.gridApiVariableFeeAmount),
    },
  };
}
