import { describe, expect, it } from 'vitest';
import { currency, DomainError, MAX_AMOUNT } from '@sluice/core';
import { SandboxExchangeRateProvider, SANDBOX_USD_PRICES } from './exchange-rates.js';
import { amountLimits, computeQuoteAmounts, SandboxFeeSchedule, type FeeTerms } from './pricing.js';
import { ceil, floor, mul, ratio, toDecimalString, type Ratio } from './ratio.js';

const provider = new SandboxExchangeRateProvider();
const CODES = Object.keys(SANDBOX_USD_PRICES);
const PAIRS = CODES.flatMap((a) => CODES.filter((b) => b !== a).map((b) => [a, b] as const));

/** Deterministic PRNG (mulberry32) so a failure reproduces. */
function rng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
/** Amounts spread over every order of magnitude from 1 to 9e15. */
function amounts(rand: () => number, n: number): bigint[] {
  const out: bigint[] = [1n, 2n, 9n, 10n, 11n, 99n, 100n, 101n, 12345n, MAX_AMOUNT];
  for (let i = 0; i < n; i++) {
    const digits = 1 + Math.floor(rand() * 16);
    out.push(1n + ((BigInt(Math.floor(rand() * 1e9)) * 10n ** BigInt(Math.max(0, digits - 9))) % MAX_AMOUNT));
  }
  return out;
}
const FEE_VARIANTS: FeeTerms[] = [
  new SandboxFeeSchedule().terms('USD'),
  { gridApiFixedFee: 0n, gridApiVariableFeeRate: ratio(0n), counterpartyFixedFee: 0n },
  { gridApiFixedFee: 37n, gridApiVariableFeeRate: ratio(7n, 300n), counterpartyFixedFee: 13n },
];
const cmp = (a: Ratio, b: Ratio) => a.num * b.den - b.num * a.den;

function tryCompute(side: 'SENDING' | 'RECEIVING', amount: bigint, from: string, to: string, fees: FeeTerms) {
  try {
    return computeQuoteAmounts({ side, amount, rate: provider.rate(from, to), fees });
  } catch (e) {
    expect(e).toBeInstanceOf(DomainError);
    expect((e as DomainError).code).toBe('AMOUNT_OUT_OF_RANGE');
    return undefined;
  }
}

describe('sandbox exchange rates', () => {
  it('derives consistent cross rates with the currencies’ decimals', () => {
    const usdEur = provider.rate('USD', 'EUR');
    // 1 USD = 1/1.08 EUR; cents → cents keeps the same ratio.
    expect(usdEur.majorRate).toEqual(ratio(100n, 108n));
    expect(usdEur.minorRate).toEqual(ratio(25n, 27n));
    // 1 cent of USD = 1/65000 BTC / 100 = 10^8 / 6_500_000 sats.
    expect(provider.rate('USD', 'BTC').minorRate).toEqual(ratio(100_000_000n, 6_500_000n));
    // USD → USDC: 1 cent = 10_000 micro-USDC.
    expect(provider.rate('USD', 'USDC').minorRate).toEqual(ratio(10_000n));
    for (const [a, b] of PAIRS) {
      const ab = provider.rate(a, b);
      const ba = provider.rate(b, a);
      expect(mul(ab.minorRate, ba.minorRate)).toEqual(ratio(1n));
      expect(mul(ab.sendingToPivot, ab.pivotToReceiving)).toEqual(ab.minorRate);
      expect(currency(a).decimals).toBeGreaterThanOrEqual(0);
    }
  });

  it('refuses currencies outside the table with a field', () => {
    expect(() => provider.rate('USD', 'JPY')).toThrow(
      expect.objectContaining({
        code: 'UNSUPPORTED_CURRENCY',
        details: expect.objectContaining({ field: 'receivingCurrency' }),
      }),
    );
    expect(() => provider.rate('XYZ', 'USD')).toThrow(
      expect.objectContaining({ code: 'UNSUPPORTED_CURRENCY' }),
    );
  });
});

describe('quote amounts', () => {
  it('prices a documented example exactly (USD → EUR, 100.00 USD sent)', () => {
    const q = computeQuoteAmounts({
      side: 'SENDING',
      amount: 10_000n,
      rate: provider.rate('USD', 'EUR'),
      fees: new SandboxFeeSchedule().terms('USD'),
    });
    // fees: 10 fixed + floor(10000 × 0.003) = 30 → 40; converted 9960; 9960 × 25/27 = 9222.2… → 9223 (rounded up).
    expect(q).toMatchObject({
      totalSendingAmount: 10_000n,
      feesIncluded: 40n,
      convertedSendingAmount: 9_960n,
      totalReceivingAmount: 9_223n,
    });
    expect(toDecimalString(q.exchangeRate)).toBe('1.08');
    expect(q.rateDetails.gridApiVariableFeeAmount).toBe(30n);
    const back = computeQuoteAmounts({
      side: 'RECEIVING',
      amount: 9_223n,
      rate: provider.rate('USD', 'EUR'),
      fees: new SandboxFeeSchedule().terms('USD'),
    });
    // 9223 × 27/25 = 9960.84 → 9960 converted (rounded down); 9999 − 10 − floor(9999 × 0.003) = 9960, so 9999 suffices.
    expect(back).toMatchObject({
      totalSendingAmount: 9_999n,
      totalReceivingAmount: 9_223n,
      feesIncluded: 39n,
      convertedSendingAmount: 9_960n,
    });
  });

  it('SENDING: total sent is the locked amount, fees round down, the receiver gets the rounded-up conversion', () => {
    const rand = rng(42);
    let checked = 0;
    for (const [from, to] of PAIRS) {
      for (const fees of FEE_VARIANTS) {
        for (const amount of amounts(rand, 60)) {
          const q = tryCompute('SENDING', amount, from, to, fees);
          if (!q) continue;
          checked++;
          const m = provider.rate(from, to).minorRate;
          expect(q.totalSendingAmount).toBe(amount);
          expect(q.rateDetails.gridApiVariableFeeAmount).toBe(
            floor(mul(ratio(amount), fees.gridApiVariableFeeRate)),
          );
          expect(q.feesIncluded).toBe(fees.gridApiFixedFee + q.rateDetails.gridApiVariableFeeAmount);
          expect(q.convertedSendingAmount).toBe(amount - q.feesIncluded);
          expect(q.totalReceivingAmount).toBe(
            ceil(mul(ratio(q.convertedSendingAmount), m)) - fees.counterpartyFixedFee,
          );
          // Sluice absorbs strictly less than one receiving minor unit, never takes any.
          expect(cmp(q.roundingAbsorbed, ratio(0n))).toBeGreaterThanOrEqual(0);
          expect(cmp(q.roundingAbsorbed, ratio(1n))).toBeLessThan(0);
          expect(q.totalReceivingAmount).toBeGreaterThan(0n);
          expect(q.totalReceivingAmount).toBeLessThanOrEqual(MAX_AMOUNT);
        }
      }
    }
    expect(checked).toBeGreaterThan(2000);
  });

  it('RECEIVING: the receiver gets exactly the locked amount, the sender pays the least total that delivers it', () => {
    const rand = rng(7);
    let checked = 0;
    for (const [from, to] of PAIRS) {
      for (const fees of FEE_VARIANTS) {
        for (const amount of amounts(rand, 60)) {
          const q = tryCompute('RECEIVING', amount, from, to, fees);
          if (!q) continue;
          checked++;
          const m = provider.rate(from, to).minorRate;
          const r = fees.gridApiVariableFeeRate;
          expect(q.totalReceivingAmount).toBe(amount);
          const need = ratio(amount + fees.counterpartyFixedFee);
          const c = ratio(q.convertedSendingAmount);
          // converted × m <= need < (converted + 1) × m: rounded down, by less than one sending minor unit.
          expect(cmp(mul(c, m), need)).toBeLessThanOrEqual(0);
          expect(cmp(mul(ratio(q.convertedSendingAmount + 1n), m), need)).toBeGreaterThan(0);
          const v = floor(mul(ratio(q.totalSendingAmount), r));
          expect(q.rateDetails.gridApiVariableFeeAmount).toBe(v);
          expect(q.totalSendingAmount - v - fees.gridApiFixedFee).toBe(q.convertedSendingAmount);
          // One minor unit less would not cover the converted amount plus fees.
          const t1 = q.totalSendingAmount - 1n;
          expect(t1 - floor(mul(ratio(t1), r)) - fees.gridApiFixedFee).toBeLessThan(q.convertedSendingAmount);
          expect(q.totalSendingAmount).toBeLessThanOrEqual(MAX_AMOUNT);
        }
      }
    }
    expect(checked).toBeGreaterThan(2000);
  });

  it('more sent never means less received', () => {
    const fees = new SandboxFeeSchedule().terms('USD');
    for (const [from, to] of PAIRS) {
      let prev = 0n;
      for (let a = amountLimits(from).min; a < amountLimits(from).min + 400n; a++) {
        const q = tryCompute('SENDING', a, from, to, fees);
        const got = q?.totalReceivingAmount ?? 0n;
        expect(got).toBeGreaterThanOrEqual(prev);
        prev = got;
      }
    }
  });

  it('refuses amounts that do not cover the fees, out of range, or overflow', () => {
    const fees = new SandboxFeeSchedule().terms('USD');
    const rate = provider.rate('USD', 'EUR');
    for (const [amount, code] of [
      [10n, 'AMOUNT_OUT_OF_RANGE'],
      [0n, 'AMOUNT_OUT_OF_RANGE'],
      [MAX_AMOUNT + 1n, 'AMOUNT_OUT_OF_RANGE'],
    ] as const) {
      expect(() => computeQuoteAmounts({ side: 'SENDING', amount, rate, fees })).toThrow(
        expect.objectContaining({
          code,
          details: expect.objectContaining({ field: 'lockedCurrencyAmount' }),
        }),
      );
    }
    // 1 sat of BTC is worth far less than a cent.
    expect(() =>
      computeQuoteAmounts({ side: 'RECEIVING', amount: 1n, rate: provider.rate('USD', 'BTC'), fees }),
    ).toThrow(expect.objectContaining({ code: 'AMOUNT_OUT_OF_RANGE' }));
    // Receiving the maximum of MXN from BTC is fine, but receiving the maximum of BTC paid in MXN overflows.
    expect(() =>
      computeQuoteAmounts({ side: 'RECEIVING', amount: MAX_AMOUNT, rate: provider.rate('MXN', 'BTC'), fees }),
    ).toThrow(expect.objectContaining({ code: 'AMOUNT_OUT_OF_RANGE' }));
  });
});

describe('ratio display', () => {
  it('renders rates as decimals with 12 significant digits', () => {
    expect(toDecimalString(ratio(27n, 25n))).toBe('1.08');
    expect(toDecimalString(ratio(1n, 3n))).toBe('0.333333333333');
    expect(toDecimalString(ratio(2n, 3n))).toBe('0.666666666667');
    expect(toDecimalString(ratio(65000n))).toBe('65000');
    expect(toDecimalString(ratio(1n, 65000n))).toBe('0.0000153846153846');
  });
});
