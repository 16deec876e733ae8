import { DomainError } from './errors.js';

export type CurrencyKind = 'FIAT' | 'CRYPTO';

export interface Currency {
  code: string;
  name: string;
  symbol: string;
  /** Number of digits of the smallest unit: 2 for USD cents, 8 for BTC satoshis. */
  decimals: number;
  kind: CurrencyKind;
}

/**
 * The currencies Sluice knows. Amounts are always integers in the smallest unit
 * (`bigint` in code, `bigint` in Postgres, int64 in proto, a JSON integer on the wire).
 */
export const CURRENCIES: Readonly<Record<string, Currency>> = Object.freeze({
  USD: { code: 'USD', name: 'United States Dollar', symbol: '$', decimals: 2, kind: 'FIAT' },
  EUR: { code: 'EUR', name: 'Euro', symbol: '€', decimals: 2, kind: 'FIAT' },
  GBP: { code: 'GBP', name: 'Pound Sterling', symbol: '£', decimals: 2, kind: 'FIAT' },
  MXN: { code: 'MXN', name: 'Mexican Peso', symbol: '$', decimals: 2, kind: 'FIAT' },
  BRL: { code: 'BRL', name: 'Brazilian Real', symbol: 'R$', decimals: 2, kind: 'FIAT' },
  CAD: { code: 'CAD', name: 'Canadian Dollar', symbol: '$', decimals: 2, kind: 'FIAT' },
  INR: { code: 'INR', name: 'Indian Rupee', symbol: '₹', decimals: 2, kind: 'FIAT' },
  NGN: { code: 'NGN', name: 'Nigerian Naira', symbol: '₦', decimals: 2, kind: 'FIAT' },
  PHP: { code: 'PHP', name: 'Philippine Peso', symbol: '₱', decimals: 2, kind: 'FIAT' },
  JPY: { code: 'JPY', name: 'Japanese Yen', symbol: '¥', decimals: 0, kind: 'FIAT' },
  USDC: { code: 'USDC', name: 'USD Coin', symbol: 'USDC', decimals: 6, kind: 'CRYPTO' },
  USDT: { code: 'USDT', name: 'Tether USD', symbol: 'USDT', decimals: 6, kind: 'CRYPTO' },
  BTC: { code: 'BTC', name: 'Bitcoin', symbol: '₿', decimals: 8, kind: 'CRYPTO' },
});

export function isCurrencyCode(code: unknown): code is string {
  return typeof code === 'string' && Object.prototype.hasOwnProperty.call(CURRENCIES, code);
}

export function currency(code: string): Currency {
  const c = isCurrencyCode(code) ? CURRENCIES[code] : undefined;
  if (!c) throw new DomainError('INVALID_ARGUMENT', 'INVALID_CURRENCY', `Unknown currency ${code}`);
  return c;
}

/** The public Currency object (`code`, `name`, `symbol`, `decimals`). */
export function currencyView(code: string): { code: string; name: string; symbol: string; decimals: number } {
  const { name, symbol, decimals } = currency(code);
  return { code, name, symbol, decimals };
}

/** Largest amount accepted anywhere (fits int64 with room for sums). */
export const MAX_AMOUNT = 9_000_000_000_000_000n;

export interface Money {
  amount: bigint;
  currency: string;
}

export function money(amount: bigint | number | string, currencyCode: string): Money {
  currency(currencyCode);
  return { amount: BigInt(amount), currency: currencyCode };
}

/** Parses an amount given as a JSON integer (number or decimal string); rejects fractions and floats. */
export function parseAmount(value: unknown): bigint | undefined {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') return Number.isSafeInteger(value) ? BigInt(value) : undefined;
  if (typeof value === 'string' && /^-?\d{1,19}$/.test(value)) return BigInt(value);
  return undefined;
}
