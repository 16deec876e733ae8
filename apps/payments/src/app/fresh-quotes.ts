import { BoundedMap } from '@sluice/core';
import { isPastExpiry, type Quote } from '../domain/quote.js';

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
 */
/** How close to its expiry a kept quote is no longer served (clock skew between replicas). */
export const EXPIRY_MARGIN_MS = 5_000;

export class FreshQuotes {
  private readonly quotes: BoundedMap<string, Quote>;

  constructor(maxEntries = 5_000) {
    this.quotes = new BoundedMap(maxEntries);
  }

  /** Keeps a quote just committed, if an execute may start from it. */
  remember(q: Quote): void {
    if (q.status !== 'PENDING' || q.source.kind !== 'ACCOUNT' || q.sourceEmbeddedWallet !== false) return;
    this.quotes.set(q.id, q);
  }

  /**
   * The kept quote of this platform, once, while it is more than `EXPIRY_MARGIN_MS` from its expiry
   * at `now` (another replica whose clock runs ahead may be expiring it: read it instead).
   */
  take(platformId: string, quoteId: string, now: Date): Quote | undefined {
    const q = this.quotes.get(quoteId);
    if (!q) return undefined;
    this.quotes.delete(quoteId);
    const margin = new Date(now.getTime() + EXPIRY_MARGIN_MS);
    return q.platformId === platformId && !isPastExpiry(q, margin) ? q : undefined;
  }

  /** Forgets a quote this process saw move on (expired, or read no longer PENDING). */
  forget(quoteId: string): void {
    this.quotes.delete(quoteId);
  }
}
