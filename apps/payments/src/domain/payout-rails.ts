import type { PAYMENT_RAILS } from '@sluice/core';

/**
 * Payout rails of external-account destinations (reference PaymentRail). A quote to an
 * external account may name `destination.paymentRail`; it must be one of the rails of the
 * account's type, and when absent the type's default (the first) is used and shown on the
 * quote. Wallet and Lightning destinations move on their own networks, not on a PaymentRail;
 * internal accounts are booked in the ledger.
 */
export type PaymentRailName = (typeof PAYMENT_RAILS)[number];

/** The rails each external account type is paid out on; the first is the default. */
export const ACCOUNT_TYPE_RAILS: Readonly<Record<string, readonly PaymentRailName[]>> = {
  USD_ACCOUNT: ['ACH', 'WIRE', 'RTP', 'FEDNOW'],
  EUR_ACCOUNT: ['SEPA_INSTANT', 'SEPA'],
  GBP_ACCOUNT: ['FASTER_PAYMENTS'],
  MXN_ACCOUNT: ['SPEI'],
  BRL_ACCOUNT: ['PIX'],
};

/**
 * The rail a payout to an external account of `accountType` uses: `requested` when the type
 * supports it, else the type's default (none for wallets). `error` says why a requested rail
 * cannot be used (an INVALID_INPUT message for `destination.paymentRail`).
 */
export function payoutRail(
  accountType: string,
  requested: string | undefined,
): { rail?: PaymentRailName; error?: string } {
  const rails = ACCOUNT_TYPE_RAILS[accountType] ?? [];
  if (requested === undefined) return rails[0] ? { rail: rails[0] } : {};
  if (rails.includes(requested as PaymentRailName)) return { rail: requested as PaymentRailName };
  return {
    error: rails.length
      ? `must be one of the rails of a ${accountType}: ${rails.join(', ')}`
      : `a ${accountType} is paid on its own network; no paymentRail applies`,
  };
}
