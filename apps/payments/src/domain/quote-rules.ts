import { FieldErrors, invalidInput } from '@sluice/core';
import { fail } from './errors.js';
import { quoteExecutionRequestKey } from './ids.js';
import { amountLimits } from './pricing.js';
import type { Quote } from './quote.js';
import type { CreateQuoteRequest } from './quote-request.js';
import { payerDataProblems, type ReceiverLookup } from './receiver-lookup.js';
import type { Transaction } from './transaction.js';

// The rules of quotes that need more than the request: the payer and receiver found, the
// lookup, the quote itself. Pure; the use cases (app/quote-*.service.ts) gather the facts.

/**
 * `immediatelyExecute` is refused (before anything is written) for an EMBEDDED_WALLET source
 * (it needs the wallet signature) and for a REALTIME_FUNDING source (it executes when its funds
 * arrive).
 */
export function checkImmediateExecution(req: CreateQuoteRequest, embeddedWallet: boolean): void {
  if (!req.immediatelyExecute) return;
  if (embeddedWallet) {
    throw invalidInput([
      {
        field: 'immediatelyExecute',
        message: 'is not available for an EMBEDDED_WALLET source: create the quote, then execute it with the wallet signature',
      },
    ]);
  }
  if (req.source.kind === 'REALTIME_FUNDING') {
    throw invalidInput([
      {
        field: 'immediatelyExecute',
        message: 'is not available for a REALTIME_FUNDING source: the quote executes when its paymentInstructions are paid',
      },
    ]);
  }
}

/** Every mandatory payer-data field of the lookup the sender left out or gave as no value, or nothing. */
export function checkPayerData(lookup: Pick<ReceiverLookup, 'requiredPayerDataFields'>, info: Record<string, unknown>): void {
  const errors = new FieldErrors();
  for (const { name, problem } of payerDataProblems(lookup, info)) {
    errors.add(
      `senderCustomerInfo.${name}`,
      problem === 'missing'
        ? 'is required by the receiver (requiredPayerDataFields of the lookup)'
        : 'must be a non-blank string (or an object for a structured field such as ADDRESS)',
    );
  }
  errors.throwIfAny();
}

/** A lookup made for a customer serves only quotes on that customer's behalf. */
export function checkLookupCustomer(lookup: Pick<ReceiverLookup, 'customerId'>, customerId: string | undefined): void {
  if (lookup.customerId && lookup.customerId !== customerId) {
    throw invalidInput([{ field: 'lookupId', message: 'was made for another customer than the source account’s' }]);
  }
}

/** The amounts a payment may send and receive (AMOUNT_OUT_OF_RANGE on lockedCurrencyAmount). */
export function checkQuoteLimits(from: string, sending: bigint, to: string, receiving: bigint): void {
  const s = amountLimits(from);
  const r = amountLimits(to);
  const field = 'lockedCurrencyAmount';
  if (sending < s.min || receiving < r.min) {
    throw fail(
      'AMOUNT_OUT_OF_RANGE',
      `The payment must send at least ${s.min} ${from} and receive at least ${r.min} ${to} minor units`,
      { field, minSendingAmount: String(s.min), minReceivingAmount: String(r.min) },
    );
  }
  if (sending > s.max || receiving > r.max) {
    throw fail(
      'AMOUNT_OUT_OF_RANGE',
      `The payment may send at most ${s.max} ${from} and receive at most ${r.max} ${to} minor units`,
      { field, maxSendingAmount: String(s.max), maxReceivingAmount: String(r.max) },
    );
  }
}

/** What a sandbox payer pays must be the quote's: its sending currency, its totalSendingAmount (or none given). */
export function checkSandboxPayment(q: Quote, paid: { currencyCode: string; amount?: bigint }): void {
  const errors = new FieldErrors();
  if (paid.currencyCode !== q.source.currency) {
    errors.add('currencyCode', `must be ${q.source.currency}, the quote's sending currency`);
  }
  if (paid.amount !== undefined && paid.amount !== q.amounts.totalSendingAmount) {
    errors.add(
      'currencyAmount',
      `must be ${q.amounts.totalSendingAmount}, the quote's totalSendingAmount (or be omitted)`,
    );
  }
  errors.throwIfAny();
}

/** QUOTE_EXPIRED: the quote can no longer be executed or funded. */
export function quoteExpired(q: Pick<Quote, 'id' | 'expiresAt'>) {
  return fail('QUOTE_EXPIRED', `Quote ${q.id} expired at ${q.expiresAt.toISOString()}; create a new quote`, {
    quoteId: q.id,
    expiresAt: q.expiresAt.toISOString(),
  });
}

/** The OUTGOING transaction of a quote (CREATED; the caller records it and moves it on). */
export function quoteTransaction(
  q: Quote,
  o: {
    id: string;
    reference: string;
    now: Date;
    /** The execution hold of an internal-account source. */
    holdId?: string;
    /** What the rail pays to: the external account's primary identifier or the UMA address. */
    counterpartyIdentifier: string | undefined;
    customer: { customerId: string; platformCustomerId: string } | undefined;
    /** The agent whose approved action executes the quote. */
    agentId?: string;
  },
): Transaction {
  return {
    id: o.id,
    platformId: q.platformId,
    type: 'OUTGOING',
    status: 'CREATED',
    source: q.source,
    destination: q.destination,
    ...(o.customer ?? {}),
    sentAmount: q.amounts.totalSendingAmount,
    receivedAmount: q.amounts.totalReceivingAmount,
    fees: q.amounts.feesIncluded,
    exchangeRate: q.amounts.exchangeRate,
    rateDetails: q.amounts.rateDetails,
    reference: o.reference,
    ...(q.description !== undefined ? { description: q.description } : {}),
    counterpartyInformation: q.counterpartyInformation,
    quoteId: q.id,
    requestKey: quoteExecutionRequestKey(q.id),
    ...(o.agentId ? { agentId: o.agentId } : {}),
    ...(o.counterpartyIdentifier ? { counterpartyIdentifier: o.counterpartyIdentifier } : {}),
    ...(o.holdId ? { holdId: o.holdId } : {}),
    createdAt: o.now,
    updatedAt: o.now,
  };
}
