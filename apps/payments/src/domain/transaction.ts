import { currencyView } from '@sluice/core';
import type { TransactionStatus, TransactionType } from './state-machines.js';

/** One side of a transaction. */
export interface TransactionEndpoint {
  kind: 'ACCOUNT' | 'UMA_ADDRESS' | 'REALTIME_FUNDING';
  accountId?: string;
  umaAddress?: string;
  currency: string;
}

/** Why a sandbox (or real) rail failed a payment, finer than the public failureReason. */
export type FailureDetail = 'INSUFFICIENT_FUNDS' | 'ACCOUNT_CLOSED' | 'REJECTED_BY_BANK' | 'TIMED_OUT';

/** A payment: every money movement of the platform is one. */
export interface Transaction {
  id: string;
  platformId: string;
  type: TransactionType;
  status: TransactionStatus;
  source: TransactionEndpoint;
  destination: TransactionEndpoint;
  /** The customer (sender of OUTGOING, recipient of INCOMING); absent for the platform's own accounts. */
  customerId?: string;
  platformCustomerId?: string;
  sentAmount: bigint;
  receivedAmount: bigint;
  fees: bigint;
  /** Unique reference for reconciliation (`SLC-` + 16 base32 characters). */
  reference: string;
  description?: string;
  failureReason?: string;
  failureDetail?: FailureDetail;
  counterpartyInformation: Record<string, string>;
  quoteId?: string;
  /** The caller's idempotency key (unique per platform). */
  requestKey?: string;
  /** The external account's primary identifier at creation (what the rail pays to / pulls from). */
  counterpartyIdentifier?: string;
  /** The ledger hold of an OUTGOING transfer. */
  holdId?: string;
  settledAt?: Date;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * Public failure reasons (reference enums OutgoingTransactionFailureReason /
 * IncomingTransactionFailureReason) for a rail failure: a payment refused at
 * submission never executed; one failed after acceptance failed at the counterparty.
 */
export function failureReasonFor(type: TransactionType, detail: FailureDetail): string {
  const atSubmission = detail === 'INSUFFICIENT_FUNDS' || detail === 'ACCOUNT_CLOSED';
  if (type === 'OUTGOING') return atSubmission ? 'QUOTE_EXECUTION_FAILED' : 'COUNTERPARTY_POST_TX_FAILED';
  return atSubmission ? 'QUOTE_EXECUTION_FAILED' : 'OFFRAMP_FAILED';
}

/**
 * The webhook event type a status change publishes (the reference WebhookType
 * enum), or undefined when the status has none (CREATED; INCOMING PROCESSING).
 */
export function webhookTypeFor(type: TransactionType, status: TransactionStatus): string | undefined {
  const outgoing: Partial<Record<TransactionStatus, string>> = {
    PENDING: 'OUTGOING_PAYMENT.PENDING',
    PROCESSING: 'OUTGOING_PAYMENT.PROCESSING',
    COMPLETED: 'OUTGOING_PAYMENT.COMPLETED',
    FAILED: 'OUTGOING_PAYMENT.FAILED',
    REJECTED: 'OUTGOING_PAYMENT.FAILED',
    EXPIRED: 'OUTGOING_PAYMENT.EXPIRED',
    REFUNDED: 'OUTGOING_PAYMENT.REFUND_COMPLETED',
  };
  const incoming: Partial<Record<TransactionStatus, string>> = {
    PENDING: 'INCOMING_PAYMENT.PENDING',
    COMPLETED: 'INCOMING_PAYMENT.COMPLETED',
    FAILED: 'INCOMING_PAYMENT.FAILED',
    REJECTED: 'INCOMING_PAYMENT.FAILED',
    EXPIRED: 'INCOMING_PAYMENT.FAILED',
  };
  return (type === 'OUTGOING' ? outgoing : incoming)[status];
}

function endpointJson(e: TransactionEndpoint, side: 'source' | 'destination'): Record<string, unknown> {
  const typeKey = side === 'source' ? 'sourceType' : 'destinationType';
  return {
    [typeKey]: e.kind,
    ...(e.accountId ? { accountId: e.accountId } : {}),
    ...(e.umaAddress ? { umaAddress: e.umaAddress } : {}),
    currency: e.currency,
  };
}

/**
 * The public Transaction JSON (REST responses and webhook `data`): the
 * OUTGOING or INCOMING variant of the reference. Amounts are JSON numbers (all
 * are at most 9e15, exact in a double); for the platform's own accounts
 * customerId and platformCustomerId are the platform id.
 */
export function transactionJson(t: Transaction): Record<string, unknown> {
  const base: Record<string, unknown> = {
    id: t.id,
    status: t.status,
    type: t.type,
    source: endpointJson(t.source, 'source'),
    destination: endpointJson(t.destination, 'destination'),
    customerId: t.customerId ?? t.platformId,
    platformCustomerId: t.platformCustomerId ?? t.platformId,
    receivedAmount: { amount: Number(t.receivedAmount), currency: currencyView(t.destination.currency) },
    reconciliationInstructions: { reference: t.reference },
    counterpartyInformation: t.counterpartyInformation,
    ...(t.settledAt ? { settledAt: t.settledAt.toISOString() } : {}),
    createdAt: t.createdAt.toISOString(),
    updatedAt: t.updatedAt.toISOString(),
    ...(t.description !== undefined ? { description: t.description } : {}),
    ...(t.failureReason ? { failureReason: t.failureReason } : {}),
    ...(t.failureDetail ? { failureDetail: t.failureDetail } : {}),
  };
  if (t.type === 'OUTGOING') {
    base.sentAmount = { amount: Number(t.sentAmount), currency: currencyView(t.source.currency) };
    base.exchangeRate = 1;
    base.fees = Number(t.fees);
    if (t.quoteId) base.quoteId = t.quoteId;
  }
  return base;
}

const BASE32 = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/** A fresh reconciliation reference: `SLC-` + 16 characters of an unambiguous alphabet (80 bits). */
export function newReference(random: (n: number) => Uint8Array): string {
  const bytes = random(16);
  let s = '';
  for (const b of bytes) s += BASE32[b % 32];
  return `SLC-${s}`;
}
