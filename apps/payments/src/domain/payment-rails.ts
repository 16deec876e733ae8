import type { PAYMENT_RAILS } from '@sluice/core';

/**
 * A payment rail (public PaymentRail; the vocabulary is core's): the network a payout to a bank
 * account moves on (ACH, SEPA, SPEI, PIX, ...). Not to be confused with the rail adapters of
 * app/ports.ts (TransferRail, PayoutRail), which hand payments to such networks.
 */
export type PaymentRail = (typeof PAYMENT_RAILS)[number];

/**
 * The payment rails each external account type is paid out on; the first is the default. A quote
 * to an external account may name `destination.paymentRail`; it must be one of its type's rails,
 * and when absent the default is used and shown on the quote. Wallet and Lightning destinations
 * move on their own networks, not on a payment rail; internal accounts are booked in the ledger.
 */
const ACCOUNT_TYPE_PAYMENT_RAILS: Readonly<Record<string, readonly PaymentRail[]>> = {
  USD_ACCOUNT: ['ACH', 'WIRE', 'RTP', 'FEDNOW'],
  EUR_ACCOUNT: ['SEPA_INSTANT', 'SEPA'],
  GBP_ACCOUNT: ['FASTER_PAYMENTS'],
  MXN_ACCOUNT: ['SPEI'],
  BRL_ACCOUNT: ['PIX'],
};

/** True when `value` is a payment rail of the public vocabulary. */
export function isPaymentRail(value: string, rails: readonly string[]): value is PaymentRail {
  return rails.includes(value);
}

/**
 * The payment rail a payout to an external account of `accountType` uses: `requested` when the
 * type supports it, else the type's default (none for wallets). `error` says why a requested rail
 * cannot be used (an INVALID_INPUT message for `destination.paymentRail`).
 */
export function paymentRailFor(
  accountType: string,
  requested: string | undefined,
): { rail?: PaymentRail; error?: string } {
  const rails = ACCOUNT_TYPE_PAYMENT_RAILS[accountType] ?? [];
  if (requested === undefined) return rails[0] ? { rail: rails[0] } : {};
  if (isPaymentRail(requested, rails)) return { rail: requested };
  return {
    error: rails.length
      ? `must be one of the rails of a ${accountType}: ${rails.join(', ')}`
      : `a ${accountType} is paid on its own network; no paymentRail applies`,
  };
}
