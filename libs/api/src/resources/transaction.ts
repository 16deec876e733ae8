import { Type, type Static } from '@sinclair/typebox';
import type { payments } from '@sluice/contracts';
import { currencyView } from '@sluice/core';
import { Amount, Currency, Id, Timestamp, iso } from '../schema.js';
import { PaymentInstructions, paymentInstructionJson } from './internal-account.js';

/** The fee and rate breakdown of a quote or its payment (reference OutgoingRateDetails). */
export const RateDetails = Type.Object(
  {
    counterpartyMultiplier: Type.Number({ description: 'Receiving minor units per mSAT' }),
    counterpartyFixedFee: Type.Integer(),
    gridApiMultiplier: Type.Number({ description: 'mSAT per sending minor unit, variable fee included' }),
    gridApiFixedFee: Type.Integer(),
    gridApiVariableFeeRate: Type.Number(),
    gridApiVariableFeeAmount: Type.Integer(),
  },
  { $id: 'OutgoingRateDetails' },
);
export type RateDetails = Static<typeof RateDetails>;

/** The REST rateDetails of the proto QuoteRateDetails (decimal strings rendered as JSON numbers). */
export function rateDetailsJson(d: payments.QuoteRateDetails): RateDetails {
  return {
    counterpartyMultiplier: Number(d.counterpartyMultiplier),
    counterpartyFixedFee: Number(d.counterpartyFixedFee),
    gridApiMultiplier: Number(d.gridApiMultiplier),
    gridApiFixedFee: Number(d.gridApiFixedFee),
    gridApiVariableFeeRate: Number(d.gridApiVariableFeeRate),
    gridApiVariableFeeAmount: Number(d.gridApiVariableFeeAmount),
  };
}

/**
 * The rate and fees of a transaction: an OUTGOING payment of a quote carries its quote's
 * breakdown (reference OutgoingRateDetails, every field); an INCOMING payment carries the
 * reference IncomingRateDetails (the four gridApi* fields, in the receiving currency). Sluice
 * converts nothing on the way in and takes no fee, so an INCOMING payment says rate 1 and zero fees.
 */
export const TransactionRateDetails = Type.Object(
  {
    counterpartyMultiplier: Type.Optional(
      Type.Number({ description: 'OUTGOING only: receiving minor units per mSAT' }),
    ),
    counterpartyFixedFee: Type.Optional(Type.Integer({ description: 'OUTGOING only' })),
    gridApiMultiplier: Type.Number({
      description:
        'OUTGOING: mSAT per sending minor unit, variable fee included. INCOMING: receiving minor units per minor unit the payment arrived in (1: no conversion)',
    }),
    gridApiFixedFee: Type.Integer({ description: 'OUTGOING: sending minor units; INCOMING: receiving minor units (0)' }),
    gridApiVariableFeeRate: Type.Number({ description: 'INCOMING: 0' }),
    gridApiVariableFeeAmount: Type.Integer({ description: 'INCOMING: 0' }),
  },
  { $id: 'TransactionRateDetails' },
);
export type TransactionRateDetails = Static<typeof TransactionRateDetails>;

/** The REST rateDetails of an INCOMING payment (proto IncomingRateDetails; decimals as JSON numbers). */
function incomingRateDetailsJson(d: payments.IncomingRateDetails): TransactionRateDetails {
  return {
    gridApiMultiplier: Number(d.gridApiMultiplier),
    gridApiFixedFee: Number(d.gridApiFixedFee),
    gridApiVariableFeeRate: Number(d.gridApiVariableFeeRate),
    gridApiVariableFeeAmount: Number(d.gridApiVariableFeeAmount),
  };
}

const Refund = Type.Object(
  {
    reference: Type.String({ description: 'Unique reference of the refund' }),
    initiatedAt: Timestamp,
    settledAt: Type.Optional(Timestamp),
    status: Type.Union([Type.Literal('PENDING'), Type.Literal('COMPLETED'), Type.Literal('FAILED')]),
    reason: Type.Union([
      Type.Literal('TRANSACTION_FAILED'),
      Type.Literal('USER_CANCELLATION'),
      Type.Literal('TIMEOUT'),
    ]),
  },
  {
    $id: 'Refund',
    description:
      'The refund of a payment whose money had left the payer: PENDING, then COMPLETED (the transaction is REFUNDED) or FAILED (the transaction stays FAILED)',
  },
);

/** Currency and amount as the reference's CurrencyAmount. */
const CurrencyAmount = Type.Object({ amount: Amount, currency: Currency });

const TransactionSource = Type.Object(
  {
    sourceType: Type.Union([
      Type.Literal('ACCOUNT'),
      Type.Literal('UMA_ADDRESS'),
      Type.Literal('REALTIME_FUNDING'),
    ]),
    accountId: Type.Optional(Type.String()),
    umaAddress: Type.Optional(Type.String()),
    customerId: Type.Optional(
      Type.String({ description: 'REALTIME_FUNDING: the customer on whose behalf the payment is funded' }),
    ),
    currency: Type.String(),
  },
  { description: 'Where the money came from' },
);

const TransactionDestination = Type.Object(
  {
    destinationType: Type.Union([Type.Literal('ACCOUNT'), Type.Literal('UMA_ADDRESS')]),
    accountId: Type.Optional(Type.String()),
    paymentRail: Type.Optional(
      Type.String({ description: 'a quote payout to an external account: its rail' }),
    ),
    umaAddress: Type.Optional(Type.String()),
    currency: Type.String(),
  },
  { description: 'Where the money went' },
);

export const TransactionStatus = Type.Union(
  ['CREATED', 'PENDING', 'PROCESSING', 'COMPLETED', 'REJECTED', 'FAILED', 'REFUNDED', 'EXPIRED'].map((s) =>
    Type.Literal(s),
  ),
  { description: 'Status of the payment' },
);

/**
 * The public Transaction (the INCOMING and OUTGOING variants of the reference in
 * one object: `sentAmount`, `exchangeRate`, `fees`, `quoteId` are OUTGOING only;
 * `rateDetails` is OutgoingRateDetails on a quote's payment, IncomingRateDetails on INCOMING).
 */
export const Transaction = Type.Object(
  {
    id: Id('Transaction'),
    status: TransactionStatus,
    type: Type.Union([Type.Literal('INCOMING'), Type.Literal('OUTGOING')]),
    source: TransactionSource,
    destination: TransactionDestination,
    customerId: Type.String({
      description: 'Sender (OUTGOING) or recipient (INCOMING); the platform id for platform accounts',
    }),
    platformCustomerId: Type.String(),
    sentAmount: Type.Optional(CurrencyAmount),
    receivedAmount: CurrencyAmount,
    exchangeRate: Type.Optional(
      Type.Number({ description: 'Sending units per receiving unit (1 for transfers)' }),
    ),
    fees: Type.Optional(
      Type.Integer({ minimum: 0, description: 'Fees in the smallest unit of the sending currency' }),
    ),
    quoteId: Type.Optional(Type.String()),
    rateDetails: Type.Optional(TransactionRateDetails),
    paymentInstructions: Type.Optional(
      Type.Array(PaymentInstructions, {
        description: 'OUTGOING REALTIME_FUNDING payments: how to pay sentAmount (with the reference), as on the quote',
      }),
    ),
    refund: Type.Optional(Refund),
    reconciliationInstructions: Type.Object({ reference: Type.String() }),
    counterpartyInformation: Type.Record(Type.String(), Type.String()),
    description: Type.Optional(Type.String()),
    agentId: Type.Optional(Id('Agent')),
    failureReason: Type.Optional(Type.String()),
    failureDetail: Type.Optional(
      Type.String({
        description:
          'Sluice extension, finer than failureReason: INSUFFICIENT_FUNDS, ACCOUNT_CLOSED, EXECUTION_FAILED, REJECTED_BY_BANK, TIMED_OUT, COMPLIANCE_CHECK_FAILED, RETURNED_BY_BANK, USER_CANCELLED, PAYOUT_FAILED, CREDIT_REFUSED (the receiving account could not be credited, e.g. its balance would exceed the maximum)',
      }),
    ),
    settledAt: Type.Optional(Timestamp),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'Transaction' },
);
export type Transaction = Static<typeof Transaction>;

/** The REST Transaction of a proto Transaction. */
export function transactionJson(t: payments.Transaction): Transaction {
  const src = t.source!;
  const dst = t.destination!;
  const out: Transaction = {
    id: t.id,
    status: t.status as Transaction['status'],
    type: t.type as Transaction['type'],
    source: {
      sourceType: src.kind as Transaction['source']['sourceType'],
      ...(src.accountId ? { accountId: src.accountId } : {}),
      ...(src.umaAddress ? { umaAddress: src.umaAddress } : {}),
      ...(src.kind === 'REALTIME_FUNDING' && t.customerId.startsWith('Customer:') ? { customerId: t.customerId } : {}),
      currency: src.currency,
    },
    destination: {
      destinationType: dst.kind as Transaction['destination']['destinationType'],
      ...(dst.accountId ? { accountId: dst.accountId } : {}),
      ...(dst.paymentRail ? { paymentRail: dst.paymentRail } : {}),
      ...(dst.umaAddress ? { umaAddress: dst.umaAddress } : {}),
      currency: dst.currency,
    },
    customerId: t.customerId,
    platformCustomerId: t.platformCustomerId,
    receivedAmount: { amount: Number(t.receivedAmount), currency: currencyView(dst.currency) },
    reconciliationInstructions: { reference: t.reference },
    counterpartyInformation: t.counterpartyInformation,
    ...(t.description !== undefined ? { description: t.description } : {}),
    ...(t.agentId ? { agentId: t.agentId } : {}),
    ...(t.failureReason ? { failureReason: t.failureReason } : {}),
    ...(t.failureDetail ? { failureDetail: t.failureDetail } : {}),
    ...(t.settledAt ? { settledAt: iso(t.settledAt)! } : {}),
    createdAt: iso(t.createdAt)!,
    updatedAt: iso(t.updatedAt)!,
  };
  if (t.type === 'INCOMING' && t.incomingRateDetails) out.rateDetails = incomingRateDetailsJson(t.incomingRateDetails);
  if (t.type === 'OUTGOING') {
    out.sentAmount = { amount: Number(t.sentAmount), currency: currencyView(src.currency) };
    out.exchangeRate = Number(t.exchangeRate);
    out.fees = Number(t.fees);
    if (t.quoteId) out.quoteId = t.quoteId;
    if (t.rateDetails) out.rateDetails = rateDetailsJson(t.rateDetails);
    if (t.paymentInstructions.length) out.paymentInstructions = t.paymentInstructions.map(paymentInstructionJson);
    if (t.refund) {
      out.refund = {
        reference: t.refund.reference,
        initiatedAt: iso(t.refund.initiatedAt)!,
        ...(t.refund.settledAt ? { settledAt: iso(t.refund.settledAt)! } : {}),
        status: t.refund.status as 'PENDING',
        reason: t.refund.reason as 'TRANSACTION_FAILED',
      };
    }
  }
  return out;
}
