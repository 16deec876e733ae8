import { currency as currencyOf, FieldErrors, isCurrencyCode, MAX_AMOUNT } from '@sluice/core';

export type InternalAccountType = 'INTERNAL_FIAT' | 'INTERNAL_CRYPTO' | 'EMBEDDED_WALLET';
export const INTERNAL_ACCOUNT_TYPES: readonly InternalAccountType[] = [
  'INTERNAL_FIAT',
  'INTERNAL_CRYPTO',
  'EMBEDDED_WALLET',
];

import type { Environment } from '@sluice/core';
export type Owner = 'CUSTOMER' | 'PLATFORM';

export function isInternalAccountType(value: string): value is InternalAccountType {
  return (INTERNAL_ACCOUNT_TYPES as readonly string[]).includes(value);
}

/** Whose accounts: the platform's own, or one customer's. */
export interface AccountOwner {
  platformId: string;
  owner: Owner;
  /** Set exactly when owner is CUSTOMER. */
  customerId?: string;
}

/** Which accounts of a platform a listing asks for (internal and external accounts alike). */
export interface AccountListFilter {
  platformId: string;
  owner: Owner;
  customerId?: string;
  currency?: string;
}

/** A listing of internal accounts, which may also ask for one type. */
export interface AccountFilter extends AccountListFilter {
  type?: InternalAccountType;
}

/** Largest balance an internal account may hold (keeps every amount a safe JSON integer). */
export const MAX_BALANCE = MAX_AMOUNT;

/** The holding-account type for a currency: INTERNAL_FIAT for fiat, INTERNAL_CRYPTO for stablecoins and crypto. */
export function holdingAccountType(currencyCode: string): Exclude<InternalAccountType, 'EMBEDDED_WALLET'> {
  return currencyOf(currencyCode).kind === 'FIAT' ? 'INTERNAL_FIAT' : 'INTERNAL_CRYPTO';
}

/**
 * Validates a list of currency codes (field `field[i]` at fault) and returns them
 * without duplicates, in first-seen order.
 */
export function normalizeCurrencies(codes: readonly string[], field = 'currencies'): string[] {
  const errors = new FieldErrors();
  const seen = new Set<string>();
  codes.forEach((code, i) => {
    if (!isCurrencyCode(code)) errors.add(`${field}[${i}]`, `unknown currency ${JSON.stringify(code)}`);
    else seen.add(code);
  });
  errors.throwIfAny();
  return [...seen];
}

/** Splits currency codes from another service into known ones (deduplicated, first-seen order) and unknown ones. */
export function knownCurrencies(codes: readonly string[]): { known: string[]; unknown: string[] } {
  return {
    known: [...new Set(codes.filter((c) => isCurrencyCode(c)))],
    unknown: codes.filter((c) => !isCurrencyCode(c)),
  };
}

/** What the store keeps about an internal account, with its ledger balances. */
export interface InternalAccountRecord {
  id: string;
  platformId: string;
  owner: Owner;
  customerId?: string;
  type: InternalAccountType;
  currency: string;
  environment: Environment;
  /** Unique per account; drives the generated sandbox account numbers. */
  fundingSeq: bigint;
  /** Unique reference an incoming payment must carry to be credited to this account. */
  fundingReference: string;
  createdAt: Date;
  updatedAt: Date;
  /** Posted credits − posted debits. */
  postedBalance: bigint;
  pendingDebits: bigint;
  pendingCredits: bigint;
  /** EMBEDDED_WALLET only: wallet privacy. */
  privateEnabled?: boolean;
}

/** Posted balance minus pending debits: what can be held or spent now. */
export function availableBalance(a: Pick<InternalAccountRecord, 'postedBalance' | 'pendingDebits'>): bigint {
  return a.postedBalance - a.pendingDebits;
}
