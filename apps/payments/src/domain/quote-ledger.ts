import type { QuoteAmounts } from './pricing.js';

/** A system account of the ledger (accounts service): may go negative, one per platform and currency. */
export type SystemAccount = 'SETTLEMENT' | 'FEES' | 'FX' | 'CLEARING';

/** One side of a ledger line: an internal account or a system account. */
export type LedgerAccountRef = { internalAccountId: string } | { system: SystemAccount };

/** A signed amount on one account (+ credit, − debit), in one currency. */
export interface LedgerLine {
  account: LedgerAccountRef;
  currency: string;
  amount: bigint;
}

/** Where a quote payment's money comes from. */
export type QuoteFunding =
  /** An internal account: held, then posted to CLEARING when the payment is captured. */
  | { kind: 'ACCOUNT'; accountId: string }
  /** Real-time funding: the payer's money arrives from outside (SETTLEMENT) into CLEARING. */
  | { kind: 'REALTIME_FUNDING' };

/** Where a quote payment's money goes. */
export type QuotePayee =
  /** An internal account of the platform (a book transfer: no rail). */
  | { kind: 'INTERNAL'; accountId: string }
  /** The outside world through a rail (an external account or a UMA address). */
  | { kind: 'OUTSIDE' };

const SETTLEMENT: LedgerAccountRef = { system: 'SETTLEMENT' };
const CLEARING: LedgerAccountRef = { system: 'CLEARING' };
const FEES: LedgerAccountRef = { system: 'FEES' };
const FX: LedgerAccountRef = { system: 'FX' };

const nonZero = (lines: LedgerLine[]): LedgerLine[] => lines.filter((l) => l.amount !== 0n);

/**
 * The ledger entries of a quote payment (T = totalSendingAmount, F =
 * feesIncluded, C = T − F the converted part, R = totalReceivingAmount; A and
 * B the sending and receiving currencies). The money of a payment always
 * passes through CLEARING(A), so every path is a few balanced entries with ids
 * derived from the quote (domain/ids.ts quoteLedgerIds: a retry of any step is a no-op):
 *
 * | step | lines |
 * |---|---|
 * | funding (REALTIME_FUNDING) | SETTLEMENT −T, CLEARING +T (A) |
 * | funding (ACCOUNT) | the hold `quote:<uuid>` on the source towards CLEARING, posted at capture |
 * | capture | CLEARING −T, FEES +F, FX +C (A); FX −R, payee +R (B) — payee = the internal account or SETTLEMENT |
 * | return (payout came back) | the capture negated: fees are given back too |
 * | refund | CLEARING −T, and the source +T (ACCOUNT) or SETTLEMENT +T (REALTIME_FUNDING: back to the payer) |
 * | release (REALTIME_FUNDING failed before capture) | the refund entry |
 *
 * A payment whose refund fails leaves T in CLEARING: money owed to the payer,
 * visible in reconciliation, for an operator to resolve.
 */
export const quoteEntries = {
  /** Real-time funding arrived from outside: SETTLEMENT → CLEARING. */
  funding(a: Pick<QuoteAmounts, 'sendingCurrency' | 'totalSendingAmount'>): LedgerLine[] {
    return [
      { account: SETTLEMENT, currency: a.sendingCurrency, amount: -a.totalSendingAmount },
      { account: CLEARING, currency: a.sendingCurrency, amount: a.totalSendingAmount },
    ];
  },

  /** The conversion and delivery: CLEARING pays the fees, FX converts, the payee receives. */
  capture(a: QuoteAmounts, payee: QuotePayee): LedgerLine[] {
    const A = a.sendingCurrency;
    const B = a.receivingCurrency;
    const to: LedgerAccountRef =
      payee.kind === 'INTERNAL' ? { internalAccountId: payee.accountId } : SETTLEMENT;
    return nonZero([
      { account: CLEARING, currency: A, amount: -a.totalSendingAmount },
      { account: FEES, currency: A, amount: a.feesIncluded },
      { account: FX, currency: A, amount: a.totalSendingAmount - a.feesIncluded },
      { account: FX, currency: B, amount: -a.totalReceivingAmount },
      { account: to, currency: B, amount: a.totalReceivingAmount },
    ]);
  },

  /** A delivered payout came back: the capture undone (fees included), the money back in CLEARING. */
  return(a: QuoteAmounts, payee: QuotePayee): LedgerLine[] {
    return quoteEntries.capture(a, payee).map((l) => ({ ...l, amount: -l.amount }));
  },

  /** The payer gets the whole totalSendingAmount back from CLEARING. */
  refund(
    a: Pick<QuoteAmounts, 'sendingCurrency' | 'totalSendingAmount'>,
    funding: QuoteFunding,
  ): LedgerLine[] {
    const to: LedgerAccountRef =
      funding.kind === 'ACCOUNT' ? { internalAccountId: funding.accountId } : SETTLEMENT;
    return [
      { account: CLEARING, currency: a.sendingCurrency, amount: -a.totalSendingAmount },
      { account: to, currency: a.sendingCurrency, amount: a.totalSendingAmount },
    ];
  },
};

/** True when every currency of the lines sums to zero (what the ledger requires of an entry). */
export function isBalanced(lines: LedgerLine[]): boolean {
  const sums = new Map<string, bigint>();
  for (const l of lines) sums.set(l.currency, (sums.get(l.currency) ?? 0n) + l.amount);
  return [...sums.values()].every((v) => v === 0n);
}
