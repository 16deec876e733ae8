import type { PaymentRail } from './payment-rails.js';
import type { RateDetails } from './pricing.js';
import { ratio, type Ratio } from './ratio.js';
import type { TransactionStatus, TransactionType } from './state-machines.js';

/** One side of a transaction. */
export interface TransactionEndpoint {
  kind: 'ACCOUNT' | 'UMA_ADDRESS' | 'REALTIME_FUNDING';
  accountId?: string;
  umaAddress?: string;
  currency: string;
  /** The payment rail of an external-account destination (domain/payment-rails.ts). */
  paymentRail?: PaymentRail;
}

/**
 * Why a rail (sandbox or real) failed a payment, finer than the public
 * failureReason: refused at submission (INSUFFICIENT_FUNDS, ACCOUNT_CLOSED,
 * EXECUTION_FAILED), failed at the counterparty before any money left
 * (REJECTED_BY_BANK, TIMED_OUT, COMPLIANCE_CHECK_FAILED), or money sent and
 * come back (RETURNED_BY_BANK, USER_CANCELLED, PAYOUT_FAILED).
 */
export type FailureDetail =
  | 'INSUFFICIENT_FUNDS'
  | 'ACCOUNT_CLOSED'
  | 'EXECUTION_FAILED'
  | 'REJECTED_BY_BANK'
  | 'TIMED_OUT'
  | 'COMPLIANCE_CHECK_FAILED'
  | 'RETURNED_BY_BANK'
  | 'USER_CANCELLED'
  | 'PAYOUT_FAILED'
  /** The ledger refused to credit the receiving account (its balance would exceed the maximum, ...). */
  | 'CREDIT_REFUSED';

/** Why money is being given back (reference Refund.reason). */
export type RefundReason = 'TRANSACTION_FAILED' | 'USER_CANCELLATION' | 'TIMEOUT';

/**
 * The refund of an OUTGOING payment whose money had already left the payer
 * (reference Refund): PENDING while the money comes back, then COMPLETED
 * (the transaction is REFUNDED) or FAILED (the transaction stays FAILED and
 * the funds wait in the CLEARING account for an operator).
 */
export interface Refund {
  reference: string;
  initiatedAt: Date;
  settledAt?: Date;
  status: 'PENDING' | 'COMPLETED' | 'FAILED';
  reason: RefundReason;
}

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
  /** The agent whose action initiated the payment (set by the agents service). */
  agentId?: string;
  /** The external account's primary identifier at creation (what the rail pays to / pulls from). */
  counterpartyIdentifier?: string;
  /** The ledger hold of an OUTGOING transfer. */
  holdId?: string;
  /** Quote payments: sending major units per receiving major unit (fees excluded); 1 when absent. */
  exchangeRate?: Ratio;
  /** Quote payments: the quote's fee and rate breakdown. */
  rateDetails?: RateDetails;
  /** Set once money that had left the payer is being given back. */
  refund?: Refund;
  settledAt?: Date;
  createdAt: Date;
  updatedAt: Date;
}

/** The rate and fees of an INCOMING payment (reference IncomingRateDetails). */
export interface IncomingRateDetails {
  /** Receiving minor units per minor unit the payment arrived in, net of the variable fee. */
  gridApiMultiplier: Ratio;
  /** Receiving minor units. */
  gridApiFixedFee: bigint;
  gridApiVariableFeeRate: Ratio;
  /** Receiving minor units: receivedAmount × gridApiVariableFeeRate. */
  gridApiVariableFeeAmount: bigint;
}

/**
 * The rate and fees of an INCOMING payment, from what it records. Every INCOMING kind (a
 * sandbox UMA receive, a sandbox or real-time funding deposit, a transfer-in) arrives in the
 * currency it credits and Sluice takes no fee on it: the multiplier is receivedAmount ÷
 * sentAmount (1: nothing converted), the fixed fee is the recorded fees (0) and there is no
 * variable fee (rate 0, amount 0). An amount of 0 (never recorded) reads as rate 1.
 */
export function incomingRateDetails(t: Pick<Transaction, 'sentAmount' | 'receivedAmount' | 'fees'>): IncomingRateDetails {
  return {
    gridApiMultiplier: t.sentAmount > 0n ? ratio(t.receivedAmount + t.fees, t.sentAmount) : ratio(1n),
    gridApiFixedFee: t.fees,
    gridApiVariableFeeRate: ratio(0n),
    gridApiVariableFeeAmount: 0n,
  };
}

/**
 * The public failureReason (the specification's enum) of a rail failure: refused
 * at submission → QUOTE_EXECUTION_FAILED (the payment never executed); a UMA
 * receiver's institution refusing the pay request (its compliance check) →
 * PAY_REQUEST_FAILED; a user cancellation → QUOTE_EXECUTION_FAILED; failed or
 * returned at the receiving side → OFFRAMP_FAILED.
 */
export function failureReasonFor(_type: TransactionType, detail: FailureDetail): string {
  switch (detail) {
    case 'INSUFFICIENT_FUNDS':
    case 'ACCOUNT_CLOSED':
    case 'EXECUTION_FAILED':
    case 'USER_CANCELLED':
      return 'QUOTE_EXECUTION_FAILED';
    case 'COMPLIANCE_CHECK_FAILED':
      return 'PAY_REQUEST_FAILED';
    default:
      return 'OFFRAMP_FAILED';
  }
}

/** The webhook event type of a refund's status (OUTGOING_PAYMENT.REFUND_*). */
export function refundWebhookType(status: Refund['status']): string {
  return `OUTGOING_PAYMENT.REFUND_${status}`;
}

/**
 * The webhook event type a status change publishes (the reference WebhookType
 * enum), or undefined when the status has none (CREATED; INCOMING PROCESSING;
 * OUTGOING REFUNDED, which is announced by the refund's own
 * OUTGOING_PAYMENT.REFUND_COMPLETED).
 */
export function webhookTypeFor(type: TransactionType, status: TransactionStatus): string | undefined {
  const outgoing: Partial<Record<TransactionStatus, string>> = {
    PENDING: 'OUTGOING_PAYMENT.PENDING',
    PROCESSING: 'OUTGOING_PAYMENT.PROCESSING',
    COMPLETED: 'OUTGOING_PAYMENT.COMPLETED',
    FAILED: 'OUTGOING_PAYMENT.FAILED',
    REJECTED: 'OUTGOING_PAYMENT.FAILED',
    EXPIRED: 'OUTGOING_PAYMENT.EXPIRED',
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

const BASE32 = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/** A fresh reconciliation reference: `SLC-` + 16 characters of an unambiguous alphabet (80 bits). */
export function newReference(random: (n: number) => Uint8Array): string {
  const bytes = random(16);
  let s = '';
  for (const b of bytes) s += BASE32[b % 32];
  return `SLC-${s}`;
}
