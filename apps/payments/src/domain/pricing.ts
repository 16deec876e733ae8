import { currency, MAX_AMOUNT } from '@sluice/core';
import { fail } from './errors.js';
import type { RateSnapshot } from './exchange-rates.js';
import { ceilMul, div, floorMul, mul, ratio, sub, type Ratio } from './ratio.js';

export type LockedCurrencySide = 'SENDING' | 'RECEIVING';

/** The fee terms of one corridor. */
export interface FeeTerms {
  /** Fixed fee Sluice charges, in sending minor units. */
  gridApiFixedFee: bigint;
  /** Variable fee rate Sluice charges on the total sending amount, 0 <= rate < 1 (e.g. 3/1000 = 0.3 %). */
  gridApiVariableFeeRate: Ratio;
  /** Fixed fee the counterparty deducts, in receiving minor units. */
  counterpartyFixedFee: bigint;
}

/** Where fee terms come from (per platform / corridor in production; a fixed table in the sandbox). */
export interface FeeSchedule {
  terms(sendingCurrency: string, receivingCurrency: string): FeeTerms;
}

/** Min and max amount per currency in minor units (sending and receiving). */
export interface AmountLimits {
  min: bigint;
  max: bigint;
}

/**
 * Sandbox fees: 0.30 % variable on the total sending amount, a fixed fee of
 * 0.10 in the sending currency (10 cents; 0.10 USDC; 100 sats for BTC), and no
 * counterparty fee.
 */
export class SandboxFeeSchedule implements FeeSchedule {
  terms(sendingCurrency: string): FeeTerms {
    const fixed: Record<string, bigint> = { USDC: 100_000n, BTC: 100n };
    return {
      gridApiFixedFee: fixed[sendingCurrency] ?? 10n,
      gridApiVariableFeeRate: ratio(3n, 1000n),
      counterpartyFixedFee: 0n,
    };
  }
}

/** Per-currency limits (sandbox and default): 1.00 to 10,000,000.00 fiat; 1 to 10,000,000 USDC; 1000 sats to 100 BTC. */
export function amountLimits(code: string): AmountLimits {
  const table: Record<string, AmountLimits> = {
    USDC: { min: 1_000_000n, max: 10_000_000_000_000n },
    BTC: { min: 1_000n, max: 10_000_000_000n },
  };
  const d = currency(code).decimals;
  return table[code] ?? { min: 10n ** BigInt(d), max: 10_000_000n * 10n ** BigInt(d) };
}

export interface RateDetails {
  /** Receiving minor units per pivot unit (mSAT), as the counterparty applies it. */
  counterpartyMultiplier: Ratio;
  counterpartyFixedFee: bigint;
  /** Pivot units (mSAT) per sending minor unit, net of the variable fee rate. */
  gridApiMultiplier: Ratio;
  gridApiFixedFee: bigint;
  gridApiVariableFeeRate: Ratio;
  gridApiVariableFeeAmount: bigint;
}

export interface QuoteAmounts {
  sendingCurrency: string;
  receivingCurrency: string;
  lockedCurrencySide: LockedCurrencySide;
  lockedCurrencyAmount: bigint;
  /** What the sender pays, fees included (sending minor units). */
  totalSendingAmount: bigint;
  /** What the receiver gets, counterparty fee deducted (receiving minor units). */
  totalReceivingAmount: bigint;
  /** gridApiFixedFee + gridApiVariableFeeAmount (sending minor units). */
  feesIncluded: bigint;
  /** The part of totalSendingAmount converted: totalSendingAmount − feesIncluded. */
  convertedSendingAmount: bigint;
  /** Sending major units per receiving major unit, the conversion rate applied (fees excluded). */
  exchangeRate: Ratio;
  rateDetails: RateDetails;
  /**
   * What Sluice adds from its own pocket to round in the customer's favour, in
   * receiving minor units (0 <= value < one sending minor unit's worth).
   */
  roundingAbsorbed: Ratio;
}

/**
 * Computes the amounts of a quote exactly (integers in minor units, rates as
 * rationals). Rounding rule — every rounding favours the customer and Sluice
 * absorbs the remainder:
 *
 * - variable fee = floor(totalSendingAmount × rate) (rounded down);
 * - SENDING locked: totalSendingAmount = locked amount; receiving =
 *   ceil(converted × rate) − counterparty fee (rounded up);
 * - RECEIVING locked: totalReceivingAmount = locked amount; converted =
 *   floor((receiving + counterparty fee) ÷ rate) (rounded down), and
 *   totalSendingAmount is the smallest total whose fees leave exactly that
 *   converted amount.
 *
 * Throws AMOUNT_OUT_OF_RANGE when nothing would be received (or nothing
 * converted), and beyond the platform-wide maximum.
 */
export function computeQuoteAmounts(input: {
  side: LockedCurrencySide;
  amount: bigint;
  rate: RateSnapshot;
  fees: FeeTerms;
}): QuoteAmounts {
  const { side, amount, rate, fees } = input;
  const r = fees.gridApiVariableFeeRate;
  if (r.num < 0n || r.num >= r.den) throw new Error('variable fee rate must be in [0, 1)');
  if (fees.gridApiFixedFee < 0n || fees.counterpartyFixedFee < 0n) throw new Error('fees must be >= 0');
  const field = 'lockedCurrencyAmount';
  if (amount < 1n) throw fail('AMOUNT_OUT_OF_RANGE', 'lockedCurrencyAmount must be at least 1', { field });
  if (amount > MAX_AMOUNT) {
    throw fail('AMOUNT_OUT_OF_RANGE', `lockedCurrencyAmount must be at most ${MAX_AMOUNT}`, { field });
  }
  const m = rate.minorRate;
  let total: bigint;
  let converted: bigint;
  let variableFee: bigint;
  let receiving: bigint;
  if (side === 'SENDING') {
    total = amount;
    variableFee = floorMul(total, r);
    converted = total - fees.gridApiFixedFee - variableFee;
    if (converted <= 0n) {
      throw fail('AMOUNT_OUT_OF_RANGE', 'The sending amount does not cover the fees', {
        field,
        feesIncluded: String(total - converted),
      });
    }
    receiving = ceilMul(converted, m) - fees.counterpartyFixedFee;
    if (receiving <= 0n)
      throw fail('AMOUNT_OUT_OF_RANGE', 'The receiver would get nothing after fees', { field });
  } else {
    receiving = amount;
    converted = floorMul(receiving + fees.counterpartyFixedFee, div(ratio(1n), m));
    if (converted <= 0n) {
      throw fail(
        'AMOUNT_OUT_OF_RANGE',
        'The receiving amount is worth less than one minor unit of the sending currency',
        { field },
      );
    }
    const target = converted + fees.gridApiFixedFee;
    // Smallest total with total − floor(total × r) >= target; that function steps by 0 or 1, so it hits target exactly.
    total = ceilMul(target, div(ratio(1n), sub(ratio(1n), r)));
    while (total - 1n - floorMul(total - 1n, r) >= target) total -= 1n;
    variableFee = floorMul(total, r);
    if (total - variableFee - fees.gridApiFixedFee !== converted) throw new Error('fee inversion failed');
  }
  if (total > MAX_AMOUNT || receiving > MAX_AMOUNT) {
    throw fail('AMOUNT_OUT_OF_RANGE', `Amounts must be at most ${MAX_AMOUNT} minor units`, { field });
  }
  const feesIncluded = fees.gridApiFixedFee + variableFee;
  return {
    sendingCurrency: rate.from,
    receivingCurrency: rate.to,
    lockedCurrencySide: side,
    lockedCurrencyAmount: amount,
    totalSendingAmount: total,
    totalReceivingAmount: receiving,
    feesIncluded,
    convertedSendingAmount: converted,
    exchangeRate: div(ratio(1n), rate.majorRate),
    rateDetails: {
      counterpartyMultiplier: rate.pivotToReceiving,
      counterpartyFixedFee: fees.counterpartyFixedFee,
      gridApiMultiplier: mul(rate.sendingToPivot, sub(ratio(1n), r)),
      gridApiFixedFee: fees.gridApiFixedFee,
      gridApiVariableFeeRate: r,
      gridApiVariableFeeAmount: variableFee,
    },
    roundingAbsorbed: sub(ratio(receiving + fees.counterpartyFixedFee), mul(ratio(converted), m)),
  };
}
