import { fail } from './errors.js';
import { SANDBOX_SETTLE_MS, sandboxSuffix, type RailPayment, type RailSubmission } from './payment-rail.js';
import type { FailureDetail, RefundReason } from './transaction.js';
import { sandboxReceiverBehavior } from './uma.js';

/** Sandbox time a quote payout to an account ending in 003 (or a long-pending UMA receiver) stays pending. */
export const SANDBOX_QUOTE_SLOW_MS = 360_000;
/** Sandbox time after which a delivered 005 payout is returned by the receiving bank. */
export const SANDBOX_RETURN_AFTER_MS = 5_000;

/** What a payout rail says of a payout it accepted. */
export type PayoutStatus =
  | { state: 'PENDING'; checkAfterMs: number }
  /** Delivered. `returnCheckAfterMs`: the rail may still return it; ask `returned` after this long. */
  | { state: 'SETTLED'; returnCheckAfterMs?: number }
  /** Failed before any money left: the funds are released. */
  | { state: 'FAILED'; detail: FailureDetail }
  /** The money left and came back (cancelled or undeliverable): it is refunded to the payer. */
  | { state: 'RETURNED'; detail: FailureDetail; reason: RefundReason };

/** The fate of a refund (money going back to the payer). */
export type RefundStatus =
  { state: 'PENDING'; checkAfterMs: number } | { state: 'COMPLETED' } | { state: 'FAILED' };

/**
 * The rail of quote payouts (to an external account or a UMA address):
 * submission, the payout's outcome, a late return of a delivered payout, and
 * the refund of a payout whose money came back. Every call is idempotent on
 * the transaction id.
 */
export interface PayoutRail {
  submit(p: RailPayment): Promise<RailSubmission>;
  status(p: RailPayment, ageMs: number): Promise<PayoutStatus>;
  /** Asked `returnCheckAfterMs` after a delivery: the return, if the payout came back. */
  returned(p: RailPayment): Promise<{ detail: FailureDetail; reason: RefundReason } | undefined>;
  refund(p: RailPayment): Promise<RefundStatus>;
}

/**
 * Sandbox payouts to external accounts, by the last 3 digits of the account's
 * primary identifier (the specification's quote table):
 *
 * | suffix | outcome |
 * |---|---|
 * | 002 | execution failed: refused at submission |
 * | 003 | delivered after about 6 minutes |
 * | 004 | counterparty delivery failed (before any money left) |
 * | 005 | delivered, then returned by the receiving bank; refunded |
 * | 006 | cancelled by the user after the money left; refunded |
 * | 007 | payout failed after the money left, and the refund failed too |
 * | other | delivered after about 1 s |
 */
export class SandboxQuoteRail implements PayoutRail {
  async submit(p: RailPayment): Promise<RailSubmission> {
    const suffix = sandboxSuffix(p.counterpartyIdentifier);
    if (suffix === '002') return { accepted: false, detail: 'EXECUTION_FAILED' };
    return { accepted: true, checkAfterMs: suffix === '003' ? SANDBOX_QUOTE_SLOW_MS : SANDBOX_SETTLE_MS };
  }

  async status(p: RailPayment): Promise<PayoutStatus> {
    switch (sandboxSuffix(p.counterpartyIdentifier)) {
      case '004':
        return { state: 'FAILED', detail: 'REJECTED_BY_BANK' };
      case '005':
        return { state: 'SETTLED', returnCheckAfterMs: SANDBOX_RETURN_AFTER_MS };
      case '006':
        return { state: 'RETURNED', detail: 'USER_CANCELLED', reason: 'USER_CANCELLATION' };
      case '007':
        return { state: 'RETURNED', detail: 'PAYOUT_FAILED', reason: 'TRANSACTION_FAILED' };
      default:
        return { state: 'SETTLED' };
    }
  }

  async returned(p: RailPayment): Promise<{ detail: FailureDetail; reason: RefundReason } | undefined> {
    return sandboxSuffix(p.counterpartyIdentifier) === '005'
      ? { detail: 'RETURNED_BY_BANK', reason: 'TRANSACTION_FAILED' }
      : undefined;
  }

  async refund(p: RailPayment): Promise<RefundStatus> {
    return sandboxSuffix(p.counterpartyIdentifier) === '007' ? { state: 'FAILED' } : { state: 'COMPLETED' };
  }
}

/**
 * Sandbox payouts to UMA addresses, by the sandbox receiver (the
 * specification's table): `$success.*` delivered after about 1 s;
 * `$pending.long.usd` after about 6 minutes; `$fail.compliance.usd` refused by
 * the receiving institution's compliance check at submission.
 */
export class SandboxUmaRail implements PayoutRail {
  async submit(p: RailPayment): Promise<RailSubmission> {
    const behavior = sandboxReceiverBehavior(p.counterpartyIdentifier);
    if (behavior === 'COMPLIANCE_FAILURE') return { accepted: false, detail: 'COMPLIANCE_CHECK_FAILED' };
    if (!behavior) return { accepted: false, detail: 'EXECUTION_FAILED' };
    return {
      accepted: true,
      checkAfterMs: behavior === 'LONG_PENDING' ? SANDBOX_QUOTE_SLOW_MS : SANDBOX_SETTLE_MS,
    };
  }

  async status(): Promise<PayoutStatus> {
    return { state: 'SETTLED' };
  }

  async returned(): Promise<undefined> {
    return undefined;
  }

  async refund(): Promise<RefundStatus> {
    return { state: 'COMPLETED' };
  }
}

/** Production has no payout rail connected yet: RAIL_UNAVAILABLE (503) rather than a simulated outcome. */
export class UnconfiguredPayoutRail implements PayoutRail {
  readonly configured = false;
  private unavailable(): never {
    throw fail('RAIL_UNAVAILABLE', 'No payment rail is configured for production platforms yet');
  }
  async submit(): Promise<RailSubmission> {
    this.unavailable();
  }
  async status(): Promise<PayoutStatus> {
    this.unavailable();
  }
  async returned(): Promise<undefined> {
    this.unavailable();
  }
  async refund(): Promise<RefundStatus> {
    this.unavailable();
  }
}
