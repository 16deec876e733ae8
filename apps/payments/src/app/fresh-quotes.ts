import { BoundedMap } from '@sluice/core';
import { isPastExpiry, type Quote } from '../domain/quote.js';
import type { Transaction } from '../domain/transaction.js';

/** A quote as created, with the transaction its creation inserted (the execute's claim carries it on). */
export interface FreshQuote {
  quote: Quote;
  transaction?: Transaction;
}

/** How close to its expiry a kept quote is no longer served (clock skew between replicas). */
export const EXPIRY_MARGIN_MS = 5_000;

/**
 * The quotes this process has just created, kept for the one execute that usually follows
 * (POST /quotes then POST /quotes/{id}/execute): that execute starts from the quote as created
 * instead of reading it back. Only what an execute may start from without a read is kept — a
 * PENDING quote paid from an internal account that is not an embedded wallet (an embedded wallet's
 * execute consumes a signature, which a stale status must never do). An entry serves one execute
 * (`take` forgets it), is never served within EXPIRY_MARGIN_MS of the quote's expiry, is forgotten
 * when this process expires the quote or reads it no longer PENDING, and everything it does is still
 * checked where it counts: the hold is idempotent by the quote's id, the claim re-checks the status
 * and the expiry under the row's lock, and an execute that fails from a kept quote answers as from
 * the database (QuoteExecutionService.executeQuote). Another replica's quotes are read as before.
 * The quote's transaction as its creation inserted it is kept beside it: the claim carries it on as
 * last seen (its hand-off writes only if the row is unchanged since, else reads it under its lock)
 * instead of reading it under the lock.
 */
export class FreshQuotes {
  private readonly quotes: BoundedMap<string, FreshQuote>;

  constructor(maxEntries = 5_000) {
    this.quotes = new BoundedMap(maxEntries);
  }

  /** Keeps a quote just committed (and the transaction committed with it), if an execute may start from it. */
  remember(q: Quote, transaction?: Transaction): void {
    if (q.status !== 'PENDING' || q.source.kind !== 'ACCOUNT' || q.sourceEmbeddedWallet !== false) return;
    const kept = transaction?.id === q.transactionId && transaction?.status === 'PENDING' ? transaction : undefined;
    this.quotes.set(q.id, kept ? { quote: q, transaction: kept } : { quote: q });
  }

  /**
   * The kept quote of this platform, once, while it is more than `EXPIRY_MARGIN_MS` from its expiry
   * at `now` (another replica whose clock runs ahead may be expiring it: read it instead).
   */
  take(platformId: string, quoteId: string, now: Date): FreshQuote | undefined {
    const kept = this.quotes.get(quoteId);
    if (!kept) return undefined;
    this.quotes.delete(quoteId);
    const margin = new Date(now.getTime() + EXPIRY_MARGIN_MS);
    return kept.quote.platformId === platformId && !isPastExpiry(kept.quote, margin) ? kept : undefined;
  }

  /** Forgets a quote this process saw move on (expired, or read no longer PENDING). */
  forget(quoteId: string): void {
    this.quotes.delete(quoteId);
  }
}
