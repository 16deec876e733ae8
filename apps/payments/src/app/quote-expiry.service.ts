import { isDomainError, type Clock } from '@sluice/core';
import type { Logger } from '@sluice/logging';
import { transactional, type EntityManager, type MikroORM } from '@sluice/store';
import { fail } from '../domain/errors.js';
import { quoteLedgerIds } from '../domain/ids.js';
import { JOB_KINDS } from '../domain/jobs.js';
import { isPastExpiry, type Quote } from '../domain/quote.js';
import type { JobScheduler } from '../store/job-scheduler.js';
import type { QuoteRepository } from '../store/quote.repository.js';
import type { Ledger } from './ports.js';
import type { TransactionLifecycle } from './transaction-lifecycle.js';
import type { TransactionsService } from './transactions.service.js';
import type { FreshQuotes } from './fresh-quotes.js';

/**
 * Reading quotes, and their end when nobody executes them: a quote PENDING past `expiresAt`
 * becomes EXPIRED — by its durable expiry job, or as soon as someone reads or executes it — and
 * an execution hold left on its source by an execute that lost the claim to the expiry is
 * released. The status change commits first, the hold is voided after it (outside any database
 * transaction): an EXPIRED quote can never be claimed, so its hold is safe to void, and voiding
 * is idempotent, so a repeat after a crash is harmless.
 */
export class QuoteExpiryService {
  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly deps: {
      ledger: Ledger;
      quotes: QuoteRepository;
      transactions: TransactionsService;
      lifecycle: TransactionLifecycle;
      scheduler: JobScheduler;
      /** Forgets the quotes this process kept for their execute once they expire or move on. */
      fresh: FreshQuotes;
      logger: Logger;
    },
  ) {}

  /** Registers the expiry job on the scheduler (it may void a hold: leased). */
  registerJobs(): void {
    this.deps.scheduler.registerLeased<{ quoteId: string }>(JOB_KINDS.quoteExpire, async (job) => {
      const expiry = await this.expire(job.payload.quoteId);
      if (expiry?.expiredNow) this.deps.logger.info({ quoteId: expiry.quote.id }, 'quote expired');
    });
  }

  /**
   * GET /quotes/{id}: QUOTE_NOT_FOUND for an unknown or another platform's id.
   * A PENDING quote already past its expiry reads as EXPIRED (and is marked so)
   * even if the expiry job has not run yet.
   */
  async read(platformId: string, id: string): Promise<Quote> {
    const q = await this.deps.quotes.get(this.orm.em.fork(), platformId, id);
    if (!q) throw fail('QUOTE_NOT_FOUND', `Quote ${id} not found`, { quoteId: id });
    if (q.status === 'PENDING' && isPastExpiry(q, this.clock.now())) return (await this.expire(q.id))?.quote ?? q;
    if (q.status !== 'PENDING') this.deps.fresh.forget(q.id);
    return q;
  }

  /**
   * Expires a quote if it is PENDING past its expiry (an unfunded real-time-funding quote's
   * transaction becomes EXPIRED with it: OUTGOING_PAYMENT.EXPIRED); then, if the quote is EXPIRED
   * and paid from an internal account, voids its execution hold (none placed: a no-op). Returns
   * the quote as it is then (`expiredNow` when this call expired it), or undefined for an unknown id.
   */
  async expire(quoteId: string): Promise<{ quote: Quote; expiredNow: boolean } | undefined> {
    this.deps.fresh.forget(quoteId);
    const expired = await transactional(this.orm, (em) => this.markExpired(em, quoteId));
    const quote = expired ?? (await this.deps.quotes.find(this.orm.em.fork(), quoteId));
    if (quote?.status === 'EXPIRED' && quote.source.kind === 'ACCOUNT') await this.releaseHold(quote);
    return quote ? { quote, expiredNow: expired !== undefined } : undefined;
  }

  /** PENDING → EXPIRED once past expiresAt (guarded), with its awaiting transaction. */
  private async markExpired(em: EntityManager, quoteId: string): Promise<Quote | undefined> {
    const now = this.clock.now();
    const q = await this.deps.quotes.transition(em, quoteId, 'PENDING', 'EXPIRED', now, { expiredAt: now });
    if (q?.transactionId) {
      const t = await this.deps.transactions.find(q.platformId, q.transactionId, em, true);
      if (t?.status === 'PENDING') await this.deps.lifecycle.move(em, t, 'EXPIRED', { failureReason: 'QUOTE_EXPIRED' });
    }
    return q;
  }

  /** Voids the execution hold of a quote that will never execute (no-op when none was placed). */
  private async releaseHold(q: Quote): Promise<void> {
    const ids = quoteLedgerIds(q.id);
    try {
      await this.deps.ledger.voidHold({ platformId: q.platformId, holdId: ids.hold, voidId: ids.void });
    } catch (err) {
      if (isDomainError(err) && err.code === 'HOLD_NOT_FOUND') return;
      throw err;
    }
  }
}
