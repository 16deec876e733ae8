import type { LedgerAccountRef, LedgerLine } from '../domain/quote-ledger.js';

/** An internal account as transfers need it. */
export interface InternalAccountInfo {
  id: string;
  customerId?: string;
  currency: string;
  /** INTERNAL_FIAT, INTERNAL_CRYPTO or EMBEDDED_WALLET, when the adapter knows it. */
  type?: 'INTERNAL_FIAT' | 'INTERNAL_CRYPTO' | 'EMBEDDED_WALLET';
}

/** An external account as transfers need it. */
export interface ExternalAccountInfo {
  id: string;
  customerId?: string;
  currency: string;
  status: 'ACTIVE' | 'PENDING' | 'UNDER_REVIEW' | 'INACTIVE' | 'UNKNOWN';
  /** accountInfo.accountType: USD_ACCOUNT, EUR_ACCOUNT, SPARK_WALLET, ... (which payout rails apply). */
  accountType: string;
  /** Account number, IBAN, CLABE, wallet address, pix key, ... (the sandbox suffix is its last 3 digits). */
  primaryIdentifier: string;
}

/** Reads of the accounts service; unknown or another platform's accounts are its NOT_FOUND errors. */
export interface AccountsPort {
  getInternalAccount(platformId: string, accountId: string): Promise<InternalAccountInfo>;
  getExternalAccount(platformId: string, accountId: string): Promise<ExternalAccountInfo>;
}

/**
 * The two-phase ledger of the accounts service. Every step carries a unique id;
 * repeating a step with the same id is a no-op, so callers retry freely.
 */
export interface Ledger {
  /**
   * Pending debit of the internal account towards `counter` (default SETTLEMENT, the
   * outside world); INSUFFICIENT_FUNDS when the available balance is short.
   */
  placeHold(h: {
    platformId: string;
    holdId: string;
    accountId: string;
    amount: bigint;
    currency: string;
    counter?: LedgerAccountRef;
    kind: string;
    description?: string;
  }): Promise<void>;
  postHold(h: { platformId: string; holdId: string; postId: string }): Promise<void>;
  voidHold(h: { platformId: string; holdId: string; voidId: string }): Promise<void>;
  /** Immediate credit of the internal account from the settlement account (money from outside). */
  creditFromOutside(c: {
    platformId: string;
    entryId: string;
    accountId: string;
    amount: bigint;
    currency: string;
    kind: string;
    description?: string;
  }): Promise<void>;
  /** One posted entry of balanced lines (each currency sums to zero); INSUFFICIENT_FUNDS for an internal account short of it. */
  postEntry(e: {
    platformId: string;
    entryId: string;
    lines: LedgerLine[];
    kind: string;
    description?: string;
  }): Promise<void>;
}

/** The platform's own id of a customer (identity); CUSTOMER_NOT_FOUND passes through. */
export interface CustomerDirectory {
  platformCustomerId(platformId: string, customerId: string): Promise<string>;
}
