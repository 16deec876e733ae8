import { FieldErrors, isDomainError, type Environment } from '@sluice/core';
import { checkAmount, checkCurrency, checkEnvironment, checkId } from './field-rules.js';
import type { ExchangeRateProvider } from './exchange-rates.js';
import { paymentRailFor } from './payment-rails.js';
import { amountLimits, computeQuoteAmounts, type FeeSchedule } from './pricing.js';
import type { Ratio } from './ratio.js';

/** The network each crypto currency of the sandbox corridors is paid out on. */
const CRYPTO_NETWORKS: Readonly<Record<string, string>> = { USDC: 'SOLANA', BTC: 'LIGHTNING' };

/**
 * What a corridor's receiving currency is paid out on (public ExchangeRate.destinationPaymentRail):
 * the default payment rail of a bank account in that currency (domain/payment-rails.ts), else the
 * currency's crypto network, else BANK_TRANSFER.
 */
function destinationRail(currency: string): string {
  return paymentRailFor(`${currency}_ACCOUNT`, undefined).rail ?? CRYPTO_NETWORKS[currency] ?? 'BANK_TRANSFER';
}

/** One corridor of GET /exchange-rates. */
export interface CorridorRate {
  sourceCurrency: string;
  destinationCurrency: string;
  destinationPaymentRail: string;
  sendingAmount: bigint;
  minSendingAmount: bigint;
  maxSendingAmount: bigint;
  /** What `sendingAmount` delivers after fees (0 when it does not cover them). */
  receivingAmount: bigint;
  /** Sending-currency units per receiving-currency unit. */
  exchangeRate: Ratio;
  /** Fixed fee in sending minor units. */
  fixedFee: bigint;
  /** Variable fee rate charged on the sending amount. */
  variableFeeRate: Ratio;
  updatedAt: Date;
}

/** Default sendingAmount of GET /exchange-rates (reference: 10000 minor units). */
const DEFAULT_SENDING_AMOUNT = 10_000n;

/**
 * Every corridor between the provider's currencies (source ≠ destination),
 * optionally narrowed to one source and a set of destinations, priced with the
 * same rule as quotes for `sendingAmount` locked on the sending side. Ordered by
 * source then destination code.
 */
export function corridorRates(
  rates: ExchangeRateProvider,
  fees: FeeSchedule,
  filter: { sourceCurrency?: string; destinationCurrencies?: string[]; sendingAmount?: bigint },
): CorridorRate[] {
  const codes = [...rates.currencies()].sort();
  const sources = filter.sourceCurrency ? [filter.sourceCurrency] : codes;
  const destinations = filter.destinationCurrencies?.length
    ? [...new Set(filter.destinationCurrencies)].sort()
    : codes;
  const sendingAmount = filter.sendingAmount ?? DEFAULT_SENDING_AMOUNT;
  const out: CorridorRate[] = [];
  for (const from of sources) {
    for (const to of destinations) {
      if (from === to) continue;
      const rate = rates.rate(from, to);
      const terms = fees.terms(from, to);
      let receivingAmount = 0n;
      let exchangeRate: Ratio = { num: rate.majorRate.den, den: rate.majorRate.num };
      try {
        const q = computeQuoteAmounts({ side: 'SENDING', amount: sendingAmount, rate, fees: terms });
        receivingAmount = q.totalReceivingAmount;
        exchangeRate = q.exchangeRate;
      } catch (e) {
        if (!isDomainError(e) || e.code !== 'AMOUNT_OUT_OF_RANGE') throw e;
      }
      const limits = amountLimits(from);
      out.push({
        sourceCurrency: from,
        destinationCurrency: to,
        destinationPaymentRail: destinationRail(to),
        sendingAmount,
        minSendingAmount: limits.min,
        maxSendingAmount: limits.max,
        receivingAmount,
        exchangeRate,
        fixedFee: terms.gridApiFixedFee,
        variableFeeRate: terms.gridApiVariableFeeRate,
        updatedAt: rate.updatedAt,
      });
    }
  }
  return out;
}

/** GET /exchange-rates, valid. */
export interface RatesQuery {
  platformId: string;
  environment: Environment;
  sourceCurrency?: string;
  destinationCurrencies: string[];
  sendingAmount?: bigint;
}

/**
 * A valid exchange-rate query, or INVALID_INPUT: currencies the environment prices
 * (`supported`), a sending amount from 0 to MAX_AMOUNT.
 */
export function parseRatesQuery(
  input: Omit<RatesQuery, 'environment'> & { environment: Environment | undefined },
  supported: (environment: Environment) => readonly string[],
): RatesQuery {
  const errors = new FieldErrors();
  checkId(errors, 'platformId', input.platformId, 'Platform');
  checkEnvironment(errors, input.environment);
  const env = input.environment;
  if (env) {
    const codes = () => supported(env);
    checkCurrency(errors, 'sourceCurrency', input.sourceCurrency, codes);
    for (const d of input.destinationCurrencies) checkCurrency(errors, 'destinationCurrency', d, codes);
  }
  checkAmount(errors, 'sendingAmount', input.sendingAmount, 0n);
  errors.throwIfAny();
  return { ...input, environment: env! };
}
