import { FieldErrors, type Environment } from '@sluice/core';
import type { ExchangeRateProvider } from './exchange-rates.js';
import { checkCurrency, checkEnvironment, checkId } from './field-rules.js';
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

/** A receiver lookup request (LookupUmaReceiver, LookupExternalAccountReceiver), valid. */
export interface LookupRequest {
  platformId: string;
  environment: Environment;
  /** The payer, when the platform names one. */
  senderUmaAddress?: string;
  customerId?: string;
  /** The currency the rates are estimated from (USD unless given). */
  sendingCurrency: string;
}

/** A lookup request as it arrives. */
export interface LookupInput {
  platformId: string;
  environment: Environment | undefined;
  senderUmaAddress?: string;
  customerId?: string;
  sendingCurrency?: string;
}

/** The currencies an environment prices (its rate provider's). */
export type SupportedCurrencies = (environment: Environment) => readonly string[];

/**
 * A valid lookup of a UMA receiver, or INVALID_INPUT. The addresses' grammar is checked by the
 * lookup itself (INVALID_UMA_ADDRESS naming the field).
 */
export function parseUmaLookup(
  input: LookupInput & { receiverUmaAddress: string },
  supported: SupportedCurrencies,
): LookupRequest & { receiverUmaAddress: string } {
  const errors = new FieldErrors();
  checkId(errors, 'platformId', input.platformId, 'Platform');
  checkEnvironment(errors, input.environment);
  checkId(errors, 'customerId', input.customerId, 'Customer', true);
  if (!input.receiverUmaAddress) errors.add('receiverUmaAddress', 'is required');
  checkSendingCurrency(errors, input, supported);
  errors.throwIfAny();
  return { ...lookupRequest(input), receiverUmaAddress: input.receiverUmaAddress };
}

/** A valid lookup of an external account as a receiver, or INVALID_INPUT. */
export function parseExternalAccountLookup(
  input: LookupInput & { accountId: string },
  supported: SupportedCurrencies,
): LookupRequest & { accountId: string } {
  const errors = new FieldErrors();
  checkId(errors, 'platformId', input.platformId, 'Platform');
  checkEnvironment(errors, input.environment);
  checkId(errors, 'accountId', input.accountId, 'ExternalAccount');
  checkId(errors, 'customerId', input.customerId, 'Customer', true);
  checkSendingCurrency(errors, input, supported);
  errors.throwIfAny();
  return { ...lookupRequest(input), accountId: input.accountId };
}

/** A valid reference to a stored lookup, or INVALID_INPUT. */
export function parseLookupRef(platformId: string, lookupId: string): { platformId: string; lookupId: string } {
  const errors = new FieldErrors();
  checkId(errors, 'platformId', platformId, 'Platform');
  checkId(errors, 'lookupId', lookupId, 'Lookup');
  errors.throwIfAny();
  return { platformId, lookupId };
}

/** The sending currency must be one the environment prices (asked only once the environment is known). */
function checkSendingCurrency(errors: FieldErrors, input: LookupInput, supported: SupportedCurrencies): void {
  const env = input.environment;
  if (env) checkCurrency(errors, 'sendingCurrency', input.sendingCurrency, () => supported(env));
}

function lookupRequest(input: LookupInput): LookupRequest {
  return {
    platformId: input.platformId,
    environment: input.environment!,
    ...(input.senderUmaAddress ? { senderUmaAddress: input.senderUmaAddress } : {}),
    ...(input.customerId ? { customerId: input.customerId } : {}),
    sendingCurrency: input.sendingCurrency ?? 'USD',
  };
}
