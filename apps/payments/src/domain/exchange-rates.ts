import { currency } from '@sluice/core';
import { fail } from './errors.js';
import { div, mul, parseDecimal, pow10, type Ratio } from './ratio.js';

/** A rate between two currencies as the provider knows it, exact. */
export interface RateSnapshot {
  from: string;
  to: string;
  /** Receiving major units per sending major unit (1 USD → 0.9259… EUR). */
  majorRate: Ratio;
  /** Receiving minor units per sending minor unit: what amounts are multiplied by. */
  minorRate: Ratio;
  /** Sending minor units → pivot (mSAT) per minor unit, and pivot → receiving minor units. */
  sendingToPivot: Ratio;
  pivotToReceiving: Ratio;
  updatedAt: Date;
}

/**
 * Source of exchange rates. The sandbox uses a fixed table; production plugs a
 * market-data or counterparty feed in behind the same interface.
 */
export interface ExchangeRateProvider {
  /** Currencies the provider quotes. */
  currencies(): readonly string[];
  /** The current rate from `from` to `to`; throws UNSUPPORTED_CURRENCY for a currency it does not quote. */
  rate(from: string, to: string): RateSnapshot;
}

/**
 * The sandbox rate table: the USD value of one major unit of each currency,
 * as exact decimals. Cross rates are ratios of these, so the table is
 * consistent (no triangular arbitrage). Documented in docs/payments.md.
 */
export const SANDBOX_USD_PRICES: Readonly<Record<string, string>> = Object.freeze({
  USD: '1',
  USDC: '1',
  EUR: '1.08',
  GBP: '1.27',
  MXN: '0.058',
  BRL: '0.2',
  BTC: '65000',
});

/** mSAT per BTC: the pivot unit rateDetails multipliers are expressed in. */
const MSAT_PER_BTC = 100_000_000_000n;

/** Fixed-table provider for sandbox platforms (and tests). */
export class SandboxExchangeRateProvider implements ExchangeRateProvider {
  private readonly prices: Map<string, Ratio>;

  constructor(
    prices: Readonly<Record<string, string>> = SANDBOX_USD_PRICES,
    private readonly asOf: Date = new Date('2026-01-01T00:00:00.000Z'),
  ) {
    this.prices = new Map(Object.entries(prices).map(([c, p]) => [c, parseDecimal(p)]));
  }

  currencies(): readonly string[] {
    return [...this.prices.keys()];
  }

  rate(from: string, to: string): RateSnapshot {
    const pf = this.price(from, 'sendingCurrency');
    const pt = this.price(to, 'receivingCurrency');
    const pBtc = this.price('BTC', 'pivot');
    const df = currency(from).decimals;
    const dt = currency(to).decimals;
    const majorRate = div(pf, pt);
    // USD value of one mSAT = pBtc / 1e11.
    const usdPerMsat = div(pBtc, { num: MSAT_PER_BTC, den: 1n });
    const sendingToPivot = div(mul(pf, pow10(-df)), usdPerMsat);
    const pivotToReceiving = div(usdPerMsat, mul(pt, pow10(-dt)));
    return {
      from,
      to,
      majorRate,
      minorRate: mul(majorRate, pow10(dt - df)),
      sendingToPivot,
      pivotToReceiving,
      updatedAt: this.asOf,
    };
  }

  private price(code: string, field: string): Ratio {
    const p = this.prices.get(code);
    if (!p) {
      throw fail('UNSUPPORTED_CURRENCY', `${code} is not supported for cross-currency payments`, {
        field,
        supported: this.currencies(),
      });
    }
    return p;
  }
}

/** Production placeholder until a market-data feed is configured: refuses to price rather than guess. */
export class UnconfiguredExchangeRateProvider implements ExchangeRateProvider {
  currencies(): readonly string[] {
    throw this.unavailable();
  }
  rate(): RateSnapshot {
    throw this.unavailable();
  }
  private unavailable() {
    return fail(
      'EXCHANGE_RATES_UNAVAILABLE',
      'No exchange-rate provider is configured for production on this deployment',
    );
  }
}
