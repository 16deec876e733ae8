import { isCurrencyCode } from '@sluice/core';

/**
 * Incoming payments of at least this many minor units of their currency wait for
 * the platform's approval: about 10,000 USD worth in each currency (a fixed table,
 * not a live rate, so an approval rule never moves with the market).
 */
export const DEFAULT_APPROVAL_THRESHOLDS: Readonly<Record<string, bigint>> = Object.freeze({
  USD: 1_000_000n,
  EUR: 1_000_000n,
  GBP: 800_000n,
  MXN: 20_000_000n,
  BRL: 5_000_000n,
  CAD: 1_400_000n,
  INR: 85_000_000n,
  NGN: 1_500_000_000n,
  PHP: 57_000_000n,
  JPY: 1_500_000n,
  USDC: 10_000_000_000n,
  USDT: 10_000_000_000n,
  BTC: 15_000_000n,
});

/** The syntax of INCOMING_APPROVAL_THRESHOLDS: `CUR:minorUnits` pairs separated by commas (may be empty). */
export const APPROVAL_THRESHOLDS_PATTERN = '^([A-Z]{3,4}:[0-9]{1,16}(,[A-Z]{3,4}:[0-9]{1,16})*)?$';

/**
 * The approval threshold of every currency: the defaults overridden by the
 * `CUR:amount` pairs of `spec` (INCOMING_APPROVAL_THRESHOLDS). Throws naming the
 * pair for an unknown currency or an amount below 1.
 */
export function approvalThresholds(spec: string): Record<string, bigint> {
  const out: Record<string, bigint> = { ...DEFAULT_APPROVAL_THRESHOLDS };
  for (const pair of spec.split(',').filter(Boolean)) {
    const [code, amount] = pair.split(':');
    if (!code || !isCurrencyCode(code))
      throw new Error(`INCOMING_APPROVAL_THRESHOLDS: unknown currency in "${pair}"`);
    if (!amount || !/^[0-9]+$/.test(amount) || BigInt(amount) < 1n) {
      throw new Error(`INCOMING_APPROVAL_THRESHOLDS: "${pair}" needs an amount of at least 1 minor unit`);
    }
    out[code] = BigInt(amount);
  }
  return out;
}
