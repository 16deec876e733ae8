import { paymentRailsOf, type PaymentRail } from '@sluice/core';

/**
 * A payment rail (public PaymentRail; the vocabulary and the rails of each external account
 * type are core's, EXTERNAL_ACCOUNT_VARIANTS): the network a payout to a bank account moves on
 * (ACH, SEPA, SPEI, PIX, ...). Not to be confused with the rail adapters of app/ports.ts
 * (TransferRail, PayoutRail), which hand payments to such networks.
 *
 * A quote to an external account may name `destination.paymentRail`; it must be one of the
 * account's rails, and when absent the first (the default) is used and shown on the quote.
 * Wallet and Lightning destinations move on their own networks, not on a payment rail;
 * internal accounts are booked in the ledger.
 */
export type { PaymentRail };

/** True when `value` is a payment rail of the public vocabulary. */
export function isPaymentRail(value: string, rails: readonly string[]): value is PaymentRail {
  return rails.includes(value);
}

/**
 * The payment rail a payout to an external account of `accountType` uses: `requested` when the
 * account supports it, else its default (none for wallets). The account's own rails
 * (`accountRails`, those it was registered with) when known, else every rail of its type.
 * `error` says why a requested rail cannot be used (an INVALID_INPUT message for
 * `destination.paymentRail`).
 */
export function paymentRailFor(
  accountType: string,
  requested: string | undefined,
  accountRails?: readonly string[],
): { rail?: PaymentRail; error?: string } {
  const typeRails = paymentRailsOf(accountType);
  const rails = accountRails?.length ? typeRails.filter((r) => accountRails.includes(r)) : typeRails;
  if (requested === undefined) return rails[0] ? { rail: rails[0] } : {};
  if (isPaymentRail(requested, rails)) return { rail: requested };
  return {
    error: rails.length
      ? `must be one of the rails of a ${accountType}: ${rails.join(', ')}`
      : `a ${accountType} is paid on its own network; no paymentRail applies`,
  };
}
