import type { Environment } from '@sluice/core';
import { corridorRates, type CorridorRate, type RatesQuery } from '../domain/exchange-rate-table.js';
import type { ExchangeRateProvider } from '../domain/exchange-rates.js';
import type { FeeSchedule } from '../domain/pricing.js';

/** GET /exchange-rates: every corridor of an environment, priced as quotes are. */
export class ExchangeRatesService {
  constructor(
    private readonly deps: { rates: Record<Environment, ExchangeRateProvider>; fees: FeeSchedule },
  ) {}

  /** The currencies an environment prices (EXCHANGE_RATES_UNAVAILABLE without a provider). */
  currencies(environment: Environment): readonly string[] {
    return this.deps.rates[environment].currencies();
  }

  /** The corridors the query selects, by source then destination code. */
  list(q: RatesQuery): CorridorRate[] {
    // An environment without a provider answers EXCHANGE_RATES_UNAVAILABLE.
    return corridorRates(this.deps.rates[q.environment], this.deps.fees, {
      ...(q.sourceCurrency ? { sourceCurrency: q.sourceCurrency } : {}),
      destinationCurrencies: q.destinationCurrencies,
      ...(q.sendingAmount !== undefined ? { sendingAmount: q.sendingAmount } : {}),
    });
  }
}
