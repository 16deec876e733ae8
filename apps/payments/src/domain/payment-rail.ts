import { fail } from './errors.js';
import type { FailureDetail } from './transaction.js';

/** A payment handed to a rail: a payout to, or a pull from, an external account. */
export interface RailPayment {
  transactionId: string;
  direction: 'PAYOUT' | 'PULL';
  amount: bigint;
  currency: string;
  /** The external account's primary identifier (account number, IBAN, CLABE, address, ...). */
  counterpartyIdentifier: string;
}

/** The rail's answer at submission. */
export type RailSubmission =
  | { accepted: false; detail: FailureDetail }
  | { accepted: true; /** when to ask for the outcome (before time scaling) */ checkAfterMs: number };

/** The rail's view of an accepted payment. */
export type RailStatus =
  | { state: 'PENDING'; checkAfterMs: number }
  | { state: 'SETTLED' }
  | { state: 'FAILED'; detail: FailureDetail };

/**
 * A payment rail (ACH, SEPA, SPEI, PIX, Lightning, ...): takes payments and
 * reports their outcome. Submissions must be idempotent on transactionId.
 */
export interface PaymentRail {
  submit(p: RailPayment): Promise<RailSubmission>;
  status(p: RailPayment, ageMs: number): Promise<RailStatus>;
}

/** Sandbox settlement time of a successful or bank-rejected payment (before SANDBOX_TIME_SCALE). */
export const SANDBOX_SETTLE_MS = 1_000;
/** Sandbox time a 005 payment stays pending before it fails. */
export const SANDBOX_LONG_PENDING_MS = 30_000;

/** The last three digits of an identifier (digits only; for `user@domain` the end of the username). */
export function sandboxSuffix(identifier: string): string | undefined {
  const local = identifier.includes('@') ? identifier.slice(0, identifier.lastIndexOf('@')) : identifier;
  const m = /(\d{3})$/.exec(local.replace(/[^0-9A-Za-z]/g, ''));
  return m?.[1];
}

/**
 * The sandbox rail: the outcome follows the last three digits of the external
 * account's primary identifier. 002 insufficient funds and 003 account
 * closed/invalid are refused at submission; 004 is accepted then rejected by
 * the bank; 005 stays pending about 30 s then fails; anything else settles.
 */
export class SandboxPaymentRail implements PaymentRail {
  async submit(p: RailPayment): Promise<RailSubmission> {
    const suffix = sandboxSuffix(p.counterpartyIdentifier);
    if (suffix === '002') return { accepted: false, detail: 'INSUFFICIENT_FUNDS' };
    if (suffix === '003') return { accepted: false, detail: 'ACCOUNT_CLOSED' };
    return { accepted: true, checkAfterMs: suffix === '005' ? SANDBOX_LONG_PENDING_MS : SANDBOX_SETTLE_MS };
  }

  async status(p: RailPayment): Promise<RailStatus> {
    const suffix = sandboxSuffix(p.counterpartyIdentifier);
    if (suffix === '004') return { state: 'FAILED', detail: 'REJECTED_BY_BANK' };
    if (suffix === '005') return { state: 'FAILED', detail: 'TIMED_OUT' };
    return { state: 'SETTLED' };
  }
}

/** Production has no rail connected yet: RAIL_UNAVAILABLE (503) rather than a simulated outcome. */
export class UnconfiguredPaymentRail implements PaymentRail {
  readonly configured = false;
  async submit(): Promise<RailSubmission> {
    throw fail('RAIL_UNAVAILABLE', 'No payment rail is configured for production platforms yet');
  }
  async status(): Promise<RailStatus> {
    throw fail('RAIL_UNAVAILABLE', 'No payment rail is configured for production platforms yet');
  }
}
