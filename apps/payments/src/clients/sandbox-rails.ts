import type {
  PayoutRail,
  PayoutStatus,
  RailPayment,
  RailSubmission,
  RefundStatus,
  TransferRail,
  TransferStatus,
} from '../app/ports.js';
import { fail } from '../domain/errors.js';
import type { FailureDetail, RefundReason } from '../domain/transaction.js';
import { sandboxReceiverBehavior } from '../domain/uma.js';

// The rail adapters of sandbox platforms: in-process simulations of the payment networks, whose
// outcome follows the specification's sandbox tables. Production platforms get the unconfigured
// adapters (RAIL_UNAVAILABLE) until a real network is connected behind the same ports.

/** Sandbox settlement time of a successful or bank-rejected payment (before SANDBOX_TIME_SCALE). */
const SANDBOX_SETTLE_MS = 1_000;
/** Sandbox time a 005 transfer stays pending before it fails. */
const SANDBOX_LONG_PENDING_MS = 30_000;
/** Sandbox time a quote payout to an account ending in 003 (or a long-pending UMA receiver) stays pending. */
const SANDBOX_QUOTE_SLOW_MS = 360_000;
/** Sandbox time after which a delivered 005 payout is returned by the receiving bank. */
const SANDBOX_RETURN_AFTER_MS = 5_000;

/** The last three digits of an identifier (digits only; for `user@domain` the end of the username). */
export function sandboxSuffix(identifier: string): string | undefined {
  const local = identifier.includes('@') ? identifier.slice(0, identifier.lastIndexOf('@')) : identifier;
  const m = /(\d{3})$/.exec(local.replace(/[^0-9A-Za-z]/g, ''));
  return m?.[1];
}

/**
 * Sandbox transfers (transfer-out, transfer-in): the outcome follows the last three digits of
 * the external account's primary identifier. 002 insufficient funds and 003 account
 * closed/invalid are refused at submission; 004 is accepted then rejected by the bank; 005 stays
 * pending about 30 s then fails; anything else settles.
 */
export class SandboxTransferRail implements TransferRail {
  readonly configured = true;

  async submit(p: RailPayment): Promise<RailSubmission> {
    const suffix = sandboxSuffix(p.counterpartyIdentifier);
    if (suffix === '002') return { accepted: false, detail: 'INSUFFICIENT_FUNDS' };
    if (suffix === '003') return { accepted: false, detail: 'ACCOUNT_CLOSED' };
    return { accepted: true, checkAfterMs: suffix === '005' ? SANDBOX_LONG_PENDING_MS : SANDBOX_SETTLE_MS };
  }

  async status(p: RailPayment): Promise<TransferStatus> {
    const suffix = sandboxSuffix(p.counterpartyIdentifier);
    if (suffix === '004') return { state: 'FAILED', detail: 'REJECTED_BY_BANK' };
    if (suffix === '005') return { state: 'FAILED', detail: 'TIMED_OUT' };
    return { state: 'SETTLED' };
  }
}

/**
 * Sandbox quote payouts to external accounts, by the last 3 digits of the account's primary
 * identifier (the specification's quote table):
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
export class SandboxAccountPayoutRail implements PayoutRail {
  readonly configured = true;

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
 * Sandbox quote payouts to UMA addresses, by the sandbox receiver (the specification's table):
 * `$success.*` delivered after about 1 s; `$pending.long.usd` after about 6 minutes;
 * `$fail.compliance.usd` refused by the receiving institution's compliance check at submission.
 */
export class SandboxUmaPayoutRail implements PayoutRail {
  readonly configured = true;

  async submit(p: RailPayment): Promise<RailSubmission> {
    const behavior = sandboxReceiverBehavior(p.counterpartyIdentifier);
    if (behavior === 'COMPLIANCE_FAILURE') return { accepted: false, detail: 'COMPLIANCE_CHECK_FAILED' };
    if (!behavior) return { accepted: false, detail: 'EXECUTION_FAILED' };
    return { accepted: true, checkAfterMs: behavior === 'LONG_PENDING' ? SANDBOX_QUOTE_SLOW_MS : SANDBOX_SETTLE_MS };
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

/** What every call to a rail adapter that is not connected answers: RAIL_UNAVAILABLE (503). */
async function unavailable(): Promise<never> {
  throw fail('RAIL_UNAVAILABLE', 'No payment rail is configured for production platforms yet');
}

/** Production has no transfer rail connected yet: RAIL_UNAVAILABLE rather than a simulated outcome. */
export class UnconfiguredTransferRail implements TransferRail {
  readonly configured = false;
  readonly submit = unavailable;
  readonly status = unavailable;
}

/** Production has no payout rail connected yet: RAIL_UNAVAILABLE rather than a simulated outcome. */
export class UnconfiguredPayoutRail implements PayoutRail {
  readonly configured = false;
  readonly submit = unavailable;
  readonly status = unavailable;
  readonly returned = unavailable;
  readonly refund = unavailable;
}
