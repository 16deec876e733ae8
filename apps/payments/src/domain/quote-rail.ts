import {
  SANDBOX_SETTLE_MS,
  sandboxSuffix,
  type PaymentRail,
  type RailPayment,
  type RailStatus,
  type RailSubmission,
} from './payment-rail.js';

/** Sandbox time a quote payout to an account ending in 003 stays pending (before SANDBOX_TIME_SCALE). */
export const SANDBOX_QUOTE_SLOW_MS = 360_000;

/**
 * Sandbox suffixes of the quote outcome table this version does not simulate
 * (005 completed then returned, 006 user cancellation, 007 payout and refund
 * failed): executing such a quote is refused rather than silently succeeding.
 */
export const UNSIMULATED_QUOTE_SUFFIXES: readonly string[] = ['005', '006', '007'];

/**
 * The sandbox rail of quote payouts, by the last 3 digits of the external
 * account's primary identifier: 002 execution failed (refused at submission →
 * QUOTE_EXECUTION_FAILED, hold voided); 003 settles after about 6 minutes; 004
 * counterparty delivery failed (→ COUNTERPARTY_POST_TX_FAILED, hold voided);
 * anything else settles after about 1 s.
 */
export class SandboxQuoteRail implements PaymentRail {
  async submit(p: RailPayment): Promise<RailSubmission> {
    const suffix = sandboxSuffix(p.counterpartyIdentifier);
    if (suffix === '002') return { accepted: false, detail: 'ACCOUNT_CLOSED' };
    return { accepted: true, checkAfterMs: suffix === '003' ? SANDBOX_QUOTE_SLOW_MS : SANDBOX_SETTLE_MS };
  }

  /** Asked once the submission's checkAfterMs (time-scaled by the scheduler) has passed. */
  async status(p: RailPayment): Promise<RailStatus> {
    const suffix = sandboxSuffix(p.counterpartyIdentifier);
    if (suffix === '004') return { state: 'FAILED', detail: 'REJECTED_BY_BANK' };
    return { state: 'SETTLED' };
  }
}

/**
 * Routes quote payouts to the quote rail and every other payment to the base
 * rail (same-currency transfers keep their own sandbox table).
 */
export class QuoteAwareRail implements PaymentRail {
  constructor(
    private readonly base: PaymentRail,
    private readonly quotes: PaymentRail,
    private readonly isQuotePayment: (p: RailPayment) => Promise<boolean>,
  ) {}

  get configured(): boolean | undefined {
    return (this.base as { configured?: boolean }).configured;
  }

  async submit(p: RailPayment): Promise<RailSubmission> {
    return ((await this.isQuotePayment(p)) ? this.quotes : this.base).submit(p);
  }

  async status(p: RailPayment, ageMs: number): Promise<RailStatus> {
    return ((await this.isQuotePayment(p)) ? this.quotes : this.base).status(p, ageMs);
  }
}
