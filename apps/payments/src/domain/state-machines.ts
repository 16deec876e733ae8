import { fail } from './errors.js';

export type QuoteStatus = 'PENDING' | 'PROCESSING' | 'COMPLETED' | 'FAILED' | 'EXPIRED';
export type TransactionType = 'INCOMING' | 'OUTGOING';
export type TransactionStatus =
  'CREATED' | 'PENDING' | 'PROCESSING' | 'COMPLETED' | 'REJECTED' | 'FAILED' | 'REFUNDED' | 'EXPIRED';

export const QUOTE_STATUSES: readonly QuoteStatus[] = [
  'PENDING',
  'PROCESSING',
  'COMPLETED',
  'FAILED',
  'EXPIRED',
];
export const TRANSACTION_STATUSES: readonly TransactionStatus[] = [
  'CREATED',
  'PENDING',
  'PROCESSING',
  'COMPLETED',
  'REJECTED',
  'FAILED',
  'REFUNDED',
  'EXPIRED',
];

/** A state machine as an explicit table: state → states it may move to. */
export type TransitionTable<S extends string> = Readonly<Record<S, readonly S[]>>;

/**
 * Quote: created PENDING; execute (or, for a REALTIME_FUNDING source, the
 * funds arriving) moves it to PROCESSING and the payment's outcome to
 * COMPLETED or FAILED; a payment the receiving bank returns after completing
 * moves it from COMPLETED to FAILED; an unexecuted quote past expiresAt
 * becomes EXPIRED. A quote follows its transaction (see quoteStatusFor).
 */
export const QUOTE_TRANSITIONS: TransitionTable<QuoteStatus> = {
  PENDING: ['PROCESSING', 'EXPIRED'],
  PROCESSING: ['COMPLETED', 'FAILED'],
  COMPLETED: ['FAILED'],
  FAILED: [],
  EXPIRED: [],
};

/**
 * OUTGOING transaction (a quote execution or a transfer-out):
 * CREATED (lookup made) → PENDING (quote created / awaiting funding) →
 * PROCESSING (funds held, handed to the rail) → COMPLETED. A payment that never
 * gets funded EXPIREs; a failed one is FAILED, then REFUNDED once the hold is
 * voided or the refund entry posted; REJECTED when the receiving institution
 * refuses (refunded). A COMPLETED payment the receiving bank returns becomes
 * FAILED (then REFUNDED).
 */
export const OUTGOING_TRANSITIONS: TransitionTable<TransactionStatus> = {
  CREATED: ['PENDING', 'EXPIRED', 'FAILED'],
  PENDING: ['PROCESSING', 'EXPIRED', 'FAILED'],
  PROCESSING: ['COMPLETED', 'FAILED', 'REJECTED'],
  COMPLETED: ['FAILED'],
  FAILED: ['REFUNDED'],
  REJECTED: [],
  REFUNDED: [],
  EXPIRED: [],
};

/**
 * INCOMING transaction (an incoming UMA payment or a transfer-in):
 * CREATED → PENDING (awaiting the platform's approval) → PROCESSING (approved,
 * being credited) → COMPLETED. The platform may reject a PENDING payment
 * (REJECTED, refunded to the sender); an approval that times out or a
 * webhook error is FAILED; funds that never arrive EXPIRE.
 */
export const INCOMING_TRANSITIONS: TransitionTable<TransactionStatus> = {
  CREATED: ['PENDING', 'PROCESSING', 'FAILED', 'EXPIRED'],
  PENDING: ['PROCESSING', 'REJECTED', 'FAILED', 'EXPIRED'],
  PROCESSING: ['COMPLETED', 'FAILED'],
  COMPLETED: [],
  FAILED: [],
  REJECTED: [],
  REFUNDED: [],
  EXPIRED: [],
};

/**
 * The status a quote takes when its transaction reaches `status`, if any:
 * COMPLETED → COMPLETED; FAILED, REJECTED, REFUNDED → FAILED; EXPIRED →
 * EXPIRED (an unfunded real-time-funding quote).
 */
export function quoteStatusFor(status: TransactionStatus): QuoteStatus | undefined {
  if (status === 'COMPLETED') return 'COMPLETED';
  if (status === 'FAILED' || status === 'REJECTED' || status === 'REFUNDED') return 'FAILED';
  if (status === 'EXPIRED') return 'EXPIRED';
  return undefined;
}

/**
 * A quote as it is once its transaction reached `t` (what `QuoteRepository.follow` writes in the same
 * database transaction): its status and updatedAt follow when the table allows the move.
 */
export function quoteFollowing<Q extends { status: QuoteStatus; updatedAt: Date }>(
  quote: Q,
  t: { status: TransactionStatus; updatedAt: Date },
): Q {
  const to = quoteStatusFor(t.status);
  if (!to || !predecessors(QUOTE_TRANSITIONS, to).includes(quote.status)) return quote;
  return { ...quote, status: to, updatedAt: t.updatedAt };
}

/** The states the table allows to move to `to`. */
export function predecessors<S extends string>(table: TransitionTable<S>, to: S): S[] {
  return (Object.keys(table) as S[]).filter((from) => table[from].includes(to));
}

/** True when the table allows from → to. */
export function canTransition<S extends string>(table: TransitionTable<S>, from: S, to: S): boolean {
  return (table[from] ?? []).includes(to);
}

/** True when no transition leaves the state. */
export function isTerminal<S extends string>(table: TransitionTable<S>, state: S): boolean {
  return (table[state] ?? []).length === 0;
}

function assertTransition<S extends string>(what: string, table: TransitionTable<S>, from: S, to: S): S {
  if (!canTransition(table, from, to)) {
    throw fail('ILLEGAL_STATE_TRANSITION', `${what} cannot move from ${from} to ${to}`, { from, to });
  }
  return to;
}

/** The next quote status, or ILLEGAL_STATE_TRANSITION. */
export function transitionQuote(from: QuoteStatus, to: QuoteStatus): QuoteStatus {
  return assertTransition('A quote', QUOTE_TRANSITIONS, from, to);
}

/** The next transaction status under the machine of its type, or ILLEGAL_STATE_TRANSITION. */
export function transitionTransaction(
  type: TransactionType,
  from: TransactionStatus,
  to: TransactionStatus,
): TransactionStatus {
  return assertTransition(
    `An ${type.toLowerCase()} transaction`,
    type === 'OUTGOING' ? OUTGOING_TRANSITIONS : INCOMING_TRANSITIONS,
    from,
    to,
  );
}
