import { Type, type Static } from '@sinclair/typebox';
import type { payments } from '@sluice/contracts';
import { currencyView } from '@sluice/core';
import { Currency, Id, Timestamp, iso, stringEnum } from '../schema.js';
import { PaymentInstructions, paymentInstructionJson } from './internal-account.js';
import { RateDetails, rateDetailsJson } from './transaction.js';

export const QUOTE_STATUSES = ['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED', 'EXPIRED'] as const;
export const QUOTE_SOURCE_TYPES = ['ACCOUNT', 'REALTIME_FUNDING'] as const;
export const QUOTE_DESTINATION_TYPES = ['ACCOUNT', 'UMA_ADDRESS'] as const;
export const LOCKED_CURRENCY_SIDES = ['SENDING', 'RECEIVING'] as const;

/** The public Quote: the locked rate, amounts and fees of a cross-currency payment. */
export const Quote = Type.Object(
  {
    id: Id('Quote'),
    status: stringEnum(QUOTE_STATUSES),
    createdAt: Timestamp,
    expiresAt: Timestamp,
    source: Type.Object({
      sourceType: stringEnum(QUOTE_SOURCE_TYPES),
      accountId: Type.Optional(Type.String()),
      customerId: Type.Optional(Type.String()),
      currency: Type.Optional(Type.String()),
    }),
    destination: Type.Object({
      destinationType: stringEnum(QUOTE_DESTINATION_TYPES),
      accountId: Type.Optional(Type.String()),
      paymentRail: Type.Optional(Type.String({ description: 'external accounts: the payout rail used' })),
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
    lockedCurrencySide: stringEnum(LOCKED_CURRENCY_SIDES),
    lockedCurrencyAmount: Type.Integer(),
    transactionId: Type.String({
      description:
        'The OUTGOING transaction of this payment: created with the quote (PENDING), carried through execution, EXPIRED with an unexecuted quote',
    }),
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

/** The public Quote of a payments.v1 Quote. */
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
      ...(dst.paymentRail ? { paymentRail: dst.paymentRail } : {}),
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
    transactionId: q.transactionId ?? '',
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
