// The jobs of the durable scheduler: their kinds and the ids that make scheduling idempotent
// (an id already scheduled is kept as it is). Both are stable strings: rows written by older
// releases carry them.

/** The kind of every job the service schedules. */
export const JOB_KINDS = {
  /** Hands a PENDING/CREATED transfer to its rail: the safety net after a crash between insert and submission. */
  transferSubmit: 'transfer.submit',
  /** Asks the rail for the outcome of a PROCESSING transfer and settles it in the ledger. */
  transferSettle: 'transfer.settle',
  /** Drives a claimed quote payment (PENDING) to its rail or books it: the safety net after a crash. */
  quotePaymentSubmit: 'quote-payment.submit',
  /** Asks the payout rail for the outcome of a PROCESSING payout and captures or releases the funds. */
  quotePaymentSettle: 'quote-payment.settle',
  /** Asks the payout rail whether a delivered payout came back (sandbox suffix 005). */
  quotePaymentReturnCheck: 'quote-payment.return-check',
  /** Completes the refund of a payment whose money came back (or a real-time funding that cannot be used). */
  quotePaymentRefund: 'quote-payment.refund',
  /** Marks a quote still PENDING at its expiry EXPIRED and releases its hold. */
  quoteExpire: 'quote.expire',
  /** Credits an incoming payment that is PENDING without approval, or PROCESSING (approved or resumed). */
  incomingComplete: 'incoming.complete',
  /** Fails an incoming payment still awaiting approval when its answer or approval window elapses. */
  incomingApprovalTimeout: 'incoming.approval-timeout',
  /** Removes receiver lookups expired for more than a day; reschedules itself hourly. */
  lookupsPurge: 'receiver-lookups.purge',
} as const;

/** The kinds of the jobs that drive a quote payment after its claim. */
export type QuotePaymentJobKind =
  | typeof JOB_KINDS.quotePaymentSubmit
  | typeof JOB_KINDS.quotePaymentSettle
  | typeof JOB_KINDS.quotePaymentReturnCheck
  | typeof JOB_KINDS.quotePaymentRefund;

/** The id of each job: one job per purpose, whoever schedules it. */
export const jobIds = {
  transferSubmit: (transactionId: string): string => `${JOB_KINDS.transferSubmit}:${transactionId}`,
  /** The `check`-th look at a transfer's outcome (1, 2, … while the rail says pending). */
  transferSettle: (transactionId: string, check: number): string =>
    `${JOB_KINDS.transferSettle}:${transactionId}:${check}`,
  /** A step of a quote payment; the safety-net submission is check 0. */
  quotePayment: (kind: QuotePaymentJobKind, transactionId: string, check: number): string =>
    `${kind}:${transactionId}:${check}`,
  quoteExpire: (quoteId: string): string => `${JOB_KINDS.quoteExpire}:${quoteId}`,
  incomingComplete: (transactionId: string): string => `${JOB_KINDS.incomingComplete}:${transactionId}`,
  incomingApprovalTimeout: (transactionId: string): string =>
    `${JOB_KINDS.incomingApprovalTimeout}:${transactionId}`,
  /** The end of the window a 202 answer opened (same kind: it times the payment out if still undecided). */
  incomingApprovalWindow: (transactionId: string): string =>
    `${JOB_KINDS.incomingApprovalTimeout}:${transactionId}:window`,
  /** The purge of one hour (hours since the epoch), so concurrent replicas schedule it once. */
  lookupsPurge: (hour: number): string => `${JOB_KINDS.lookupsPurge}:${hour}`,
};
