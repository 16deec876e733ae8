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

/** Mandatory payer-data fields missing from `senderCustomerInfo` (for quote creation). */
export function missingPayerData(
  lookup: Pick<ReceiverLookup, 'requiredPayerDataFields'>,
  info: Record<string, unknown> | undefined,
): string[] {
  return lookup.requiredPayerDataFields
    .filter((f) => f.mandatory)
    .map((f) => f.name)
    .filter((name) => {
      const v = info?.[name];
      return v === undefined || v === null || (typeof v === 'string' && v.trim() === '');
    });
}
