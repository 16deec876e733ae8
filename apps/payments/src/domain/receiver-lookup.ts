import type { ExchangeRateProvider } from './exchange-rates.js';
import { amountLimits } from './pricing.js';
import { div, ratio, type Ratio } from './ratio.js';
import type { PayerDataField, ReceiverProfile, SandboxReceiverBehavior } from './uma.js';

/** One currency a receiver accepts, with an indicative rate from the sender's currency. */
export interface CurrencyPreference {
  currency: string;
  /** Sending-currency units per receiving-currency unit (same definition as a quote's exchangeRate); not locked. */
  estimatedExchangeRate: Ratio;
  /** Minimum and maximum receivable amount in minor units. */
  min: bigint;
  max: bigint;
}

/** A stored receiver lookup; a quote refers to it by id until it expires. */
export interface ReceiverLookup {
  id: string;
  platformId: string;
  kind: 'UMA' | 'EXTERNAL_ACCOUNT';
  receiverUmaAddress?: string;
  externalAccountId?: string;
  senderUmaAddress?: string;
  customerId?: string;
  sendingCurrency: string;
  supportedCurrencies: CurrencyPreference[];
  requiredPayerDataFields: PayerDataField[];
  sandboxBehavior?: SandboxReceiverBehavior;
  counterpartyName?: string;
  createdAt: Date;
  expiresAt: Date;
}

/** The receiver's currencies as CurrencyPreferences from `sendingCurrency`, in the profile's order. */
export function currencyPreferences(
  profile: Pick<ReceiverProfile, 'currencies'>,
  sendingCurrency: string,
  rates: ExchangeRateProvider,
): CurrencyPreference[] {
  return profile.currencies.map((code) => {
    const limits = amountLimits(code);
    return {
      currency: code,
      estimatedExchangeRate:
        code === sendingCurrency ? ratio(1n) : div(ratio(1n), rates.rate(sendingCurrency, code).majorRate),
      min: limits.min,
      max: limits.max,
    };
  });
}

/** A mandatory payer-data field absent (or blank), or given as no usable value. */
export interface PayerDataProblem {
  name: string;
  problem: 'missing' | 'not-a-value';
}

/**
 * What is wrong with the mandatory payer-data fields of `senderCustomerInfo` (for quote
 * creation): each one absent or blank, or given as something other than a non-blank string
 * (or, for a structured field such as ADDRESS, a non-empty object).
 */
export function payerDataProblems(
  lookup: Pick<ReceiverLookup, 'requiredPayerDataFields'>,
  info: Record<string, unknown> | undefined,
): PayerDataProblem[] {
  return lookup.requiredPayerDataFields
    .filter((f) => f.mandatory)
    .flatMap(({ name }): PayerDataProblem[] => {
      const v = info?.[name];
      if (v === undefined || v === null || (typeof v === 'string' && v.trim() === ''))
        return [{ name, problem: 'missing' }];
      if (typeof v === 'string') return [];
      if (typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length > 0) return [];
      return [{ name, problem: 'not-a-value' }];
    });
}

/** Mandatory payer-data fields missing from `senderCustomerInfo` or not given as a value. */
export function missingPayerData(
  lookup: Pick<ReceiverLookup, 'requiredPayerDataFields'>,
  info: Record<string, unknown> | undefined,
): string[] {
  return payerDataProblems(lookup, info).map((p) => p.name);
}
