import { payments as pb } from '@sluice/contracts';
import { currencyView } from '@sluice/core';
import type { CorridorRate } from '../domain/exchange-rate-table.js';
import { toDecimalString } from '../domain/ratio.js';
import type { ReceiverLookup } from '../domain/receiver-lookup.js';
import type { SandboxReceiverBehavior } from '../domain/uma.js';
import type { UmaProvider } from '../domain/uma-providers.js';
import type { RateDetails } from '../domain/pricing.js';
import { sandboxFundingInstructions, type PaymentInstruction } from '../domain/payment-instructions.js';
import type { Quote } from '../domain/quote.js';
import { incomingRateDetails, type Transaction } from '../domain/transaction.js';

// The one mapping of the service's domain values to and from its proto messages
// (proto/sluice/payments/v1/payments.proto). The webhook data is built from these
// messages too (events/transaction.events.ts), so REST and webhooks agree.

/** A currency code as the proto Currency (code, name, symbol, decimals). */
const currencyToPb = (code: string): pb.Currency => currencyView(code);

const BEHAVIOR: Record<SandboxReceiverBehavior, pb.SandboxReceiverBehavior> = {
  SUCCESS: pb.SandboxReceiverBehavior.SUCCESS,
  LONG_PENDING: pb.SandboxReceiverBehavior.LONG_PENDING,
  COMPLIANCE_FAILURE: pb.SandboxReceiverBehavior.COMPLIANCE_FAILURE,
};

/** A stored receiver lookup as the proto ReceiverLookup. */
export function lookupToPb(l: ReceiverLookup): pb.ReceiverLookup {
  return {
    id: l.id,
    platformId: l.platformId,
    ...(l.receiverUmaAddress ? { receiverUmaAddress: l.receiverUmaAddress } : {}),
    ...(l.externalAccountId ? { externalAccountId: l.externalAccountId } : {}),
    ...(l.senderUmaAddress ? { senderUmaAddress: l.senderUmaAddress } : {}),
    ...(l.customerId ? { customerId: l.customerId } : {}),
    sendingCurrency: l.sendingCurrency,
    supportedCurrencies: l.supportedCurrencies.map((p) => ({
      currency: currencyToPb(p.currency),
      estimatedExchangeRate: toDecimalString(p.estimatedExchangeRate),
      min: p.min,
      max: p.max,
    })),
    requiredPayerDataFields: l.requiredPayerDataFields.map((f) => ({ name: f.name, mandatory: f.mandatory })),
    sandboxBehavior: l.sandboxBehavior ? BEHAVIOR[l.sandboxBehavior] : pb.SandboxReceiverBehavior.UNSPECIFIED,
    createdAt: l.createdAt,
    expiresAt: l.expiresAt,
    ...(l.counterpartyName ? { counterpartyName: l.counterpartyName } : {}),
  };
}

/** One corridor of GET /exchange-rates as the proto ExchangeRate. */
export function corridorToPb(c: CorridorRate): pb.ExchangeRate {
  return {
    sourceCurrency: currencyToPb(c.sourceCurrency),
    destinationCurrency: currencyToPb(c.destinationCurrency),
    destinationPaymentRail: c.destinationPaymentRail,
    sendingAmount: c.sendingAmount,
    minSendingAmount: c.minSendingAmount,
    maxSendingAmount: c.maxSendingAmount,
    receivingAmount: c.receivingAmount,
    exchangeRate: toDecimalString(c.exchangeRate),
    fixedFee: c.fixedFee,
    variableFeeRate: toDecimalString(c.variableFeeRate),
    updatedAt: c.updatedAt,
  };
}

/** A UMA provider as the proto UmaProvider. */
export function providerToPb(p: UmaProvider): pb.UmaProvider {
  return {
    name: p.name,
    domain: p.domain,
    supportedRegions: p.supportedRegions,
    supportedCurrencies: p.supportedCurrencies.map(currencyToPb),
    ...(p.logoUrl ? { logoUrl: p.logoUrl } : {}),
    ...(p.lei ? { lei: p.lei } : {}),
    allowListStatus: p.allowListStatus,
  };
}

/** A fee and rate breakdown as the proto QuoteRateDetails (ratios as decimal strings). */
function rateDetailsToPb(d: RateDetails): pb.QuoteRateDetails {
  return {
    counterpartyMultiplier: toDecimalString(d.counterpartyMultiplier),
    counterpartyFixedFee: d.counterpartyFixedFee,
    gridApiMultiplier: toDecimalString(d.gridApiMultiplier),
    gridApiFixedFee: d.gridApiFixedFee,
    gridApiVariableFeeRate: toDecimalString(d.gridApiVariableFeeRate),
    gridApiVariableFeeAmount: d.gridApiVariableFeeAmount,
  };
}

/** An INCOMING payment's rate and fees (domain/transaction.ts) as the proto IncomingRateDetails. */
function incomingRateDetailsToPb(t: Transaction): pb.IncomingRateDetails {
  const d = incomingRateDetails(t);
  return {
    gridApiMultiplier: toDecimalString(d.gridApiMultiplier),
    gridApiFixedFee: d.gridApiFixedFee,
    gridApiVariableFeeRate: toDecimalString(d.gridApiVariableFeeRate),
    gridApiVariableFeeAmount: d.gridApiVariableFeeAmount,
  };
}

/** The proto Transaction of a domain transaction. */
export function transactionToPb(t: Transaction): pb.Transaction {
  const ep = (e: Transaction['source']): pb.TransactionEndpoint => ({
    kind: e.kind,
    ...(e.accountId ? { accountId: e.accountId } : {}),
    ...(e.umaAddress ? { umaAddress: e.umaAddress } : {}),
    currency: e.currency,
    ...(e.paymentRail ? { paymentRail: e.paymentRail } : {}),
  });
  return {
    id: t.id,
    platformId: t.platformId,
    type: t.type,
    status: t.status,
    source: ep(t.source),
    destination: ep(t.destination),
    customerId: t.customerId ?? t.platformId,
    platformCustomerId: t.platformCustomerId ?? t.platformId,
    sentAmount: t.sentAmount,
    receivedAmount: t.receivedAmount,
    fees: t.fees,
    exchangeRate: t.exchangeRate ? toDecimalString(t.exchangeRate) : '1',
    reference: t.reference,
    ...(t.description !== undefined ? { description: t.description } : {}),
    ...(t.failureReason ? { failureReason: t.failureReason } : {}),
    ...(t.failureDetail ? { failureDetail: t.failureDetail } : {}),
    counterpartyInformation: t.counterpartyInformation,
    ...(t.quoteId ? { quoteId: t.quoteId } : {}),
    ...(t.agentId ? { agentId: t.agentId } : {}),
    ...(t.settledAt ? { settledAt: t.settledAt } : {}),
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
    ...(t.rateDetails ? { rateDetails: rateDetailsToPb(t.rateDetails) } : {}),
    ...(t.type === 'INCOMING' ? { incomingRateDetails: incomingRateDetailsToPb(t) } : {}),
    // A REALTIME_FUNDING payment's instructions are its quote's, derived from what it records.
    paymentInstructions: instructionsToPb(
      t.type === 'OUTGOING' && t.source.kind === 'REALTIME_FUNDING' && t.quoteId
        ? sandboxFundingInstructions(t.quoteId, t.source.currency, t.sentAmount, t.reference)
        : undefined,
    ),
    ...(t.refund
      ? {
          refund: {
            reference: t.refund.reference,
            initiatedAt: t.refund.initiatedAt,
            ...(t.refund.settledAt ? { settledAt: t.refund.settledAt } : {}),
            status: t.refund.status,
            reason: t.refund.reason,
          },
        }
      : {}),
  };
}

/** Payment instructions as the proto FundingPaymentInstruction list. */
function instructionsToPb(list: readonly PaymentInstruction[] | undefined): pb.Transaction['paymentInstructions'] {
  return (list ?? []).map((i) => ({
    accountOrWalletInfo: {
      ...i.accountOrWalletInfo,
      paymentRails: i.accountOrWalletInfo.paymentRails ?? [],
    },
    instructionsNotes: i.instructionsNotes,
    isPlatformAccount: i.isPlatformAccount,
  }));
}

/** The public Quote as the gRPC message. */
export function quoteToPb(q: Quote): pb.Quote {
  const a = q.amounts;
  return {
    id: q.id,
    platformId: q.platformId,
    status: q.status,
    source: q.source,
    destination: q.destination,
    ...(q.customerId ? { customerId: q.customerId } : {}),
    lockedCurrencySide: a.lockedCurrencySide,
    lockedCurrencyAmount: a.lockedCurrencyAmount,
    totalSendingAmount: a.totalSendingAmount,
    totalReceivingAmount: a.totalReceivingAmount,
    exchangeRate: toDecimalString(a.exchangeRate),
    feesIncluded: a.feesIncluded,
    rateDetails: rateDetailsToPb(a.rateDetails),
    ...(q.transactionId ? { transactionId: q.transactionId } : {}),
    ...(q.lookupId ? { lookupId: q.lookupId } : {}),
    ...(q.description !== undefined ? { description: q.description } : {}),
    ...(q.purposeOfPayment ? { purposeOfPayment: q.purposeOfPayment } : {}),
    counterpartyInformation: q.counterpartyInformation,
    ...(q.payloadToSign ? { payloadToSign: q.payloadToSign } : {}),
    ...(q.signingRequestId ? { signingRequestId: q.signingRequestId } : {}),
    paymentInstructions: instructionsToPb(q.paymentInstructions),
    createdAt: q.createdAt,
    expiresAt: q.expiresAt,
    updatedAt: q.updatedAt,
  };
}
