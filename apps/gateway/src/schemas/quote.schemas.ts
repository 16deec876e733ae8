import { Type, type Static } from '@sinclair/typebox';
import type { payments } from '@sluice/contracts';
import { currencyView } from '@sluice/core';
import { Currency, Id, Timestamp, iso } from './common.js';
import { PaymentInstructions, paymentInstructionJson } from './internal-account.schemas.js';
import { RateDetails, rateDetailsJson } from './transaction.schemas.js';

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
    sourceType: Type.Union([Type.Literal('ACCOUNT'), Type.Literal('REALTIME_FUNDING')], {
      description:
        'ACCOUNT: an internal account of the platform pays. REALTIME_FUNDING: the payer pays the quote’s paymentInstructions (instant rails) before it expires; the quote executes when the funds arrive (sandbox: POST /sandbox/send)',
    }),
    accountId: Type.Optional(Id('InternalAccount')),
    customerId: Type.Optional(Id('Customer')),
    currency: Type.Optional(
      Type.String({ description: 'REALTIME_FUNDING: the currency the payer pays in (required)' }),
    ),
    cryptoNetwork: Type.Optional(
      Type.String({
        description:
          'REALTIME_FUNDING in a stablecoin: the network the payer deposits on (accepted; the sandbox has one network per asset)',
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'ACCOUNT: accountId (required) and, optionally, its owner customerId. REALTIME_FUNDING: currency (required) and the customerId on whose behalf the quote is made (absent: the platform)',
  },
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

export const Quote = Type.Object(
  {
    id: Id('Quote'),
    status: Type.Union(
      ['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED', 'EXPIRED'].map((s) => Type.Literal(s)),
    ),
    createdAt: Timestamp,
    expiresAt: Timestamp,
    source: Type.Object({
      sourceType: Type.Union([Type.Literal('ACCOUNT'), Type.Literal('REALTIME_FUNDING')]),
      accountId: Type.Optional(Type.String()),
      customerId: Type.Optional(Type.String()),
      currency: Type.Optional(Type.String()),
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
    paymentInstructions: Type.Optional(
      Type.Array(PaymentInstructions, {
        description:
          'REALTIME_FUNDING sources: how to pay totalSendingAmount (with the reference) before expiresAt; absent for an internal-account source',
      }),
    ),
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
  return {
    id: q.id,
    status: q.status as Quote['status'],
    createdAt: iso(q.createdAt)!,
    expiresAt: iso(q.expiresAt)!,
    source:
      src.kind === 'REALTIME_FUNDING'
        ? {
            sourceType: 'REALTIME_FUNDING',
            ...(q.customerId ? { customerId: q.customerId } : {}),
            currency: src.currency,
          }
        : {
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
    ...(q.paymentInstructions.length
      ? { paymentInstructions: q.paymentInstructions.map(paymentInstructionJson) }
      : {}),
    rateDetails: rateDetailsJson(q.rateDetails!),
  };
}

/** POST /sandbox/send (reference SandboxSendRequest). */
export const SandboxSendRequest = Type.Object(
  {
    quoteId: Id('Quote'),
    currencyCode: Type.String({ description: 'The quote’s sending currency' }),
    currencyAmount: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 9_000_000_000_000_000,
        description: 'Smallest units; must equal the quote’s totalSendingAmount (default: that amount)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type SandboxSendRequest = Static<typeof SandboxSendRequest>;
