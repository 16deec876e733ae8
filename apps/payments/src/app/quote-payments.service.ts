import { isId, isPermanentRefusal, type Clock, type DomainError, type Environment } from '@sluice/core';
import type { Logger } from '@sluice/logging';
import { transactional, type EntityManager, type MikroORM } from '@sluice/store';
import { quoteLedgerIds, refundReference } from '../domain/ids.js';
import { JOB_KINDS, jobIds, type QuotePaymentJobKind } from '../domain/jobs.js';
import type { Quote } from '../domain/quote.js';
import { quoteEntries, type QuoteFunding, type QuotePayee } from '../domain/quote-ledger.js';
import {
  failureReasonFor,
  type FailureDetail,
  type Refund,
  type RefundReason,
  type Transaction,
} from '../domain/transaction.js';
import type { Job, JobOutcome, JobScheduler, Loaded } from '../store/job-scheduler.js';
import type { QuoteRepository } from '../store/quote.repository.js';
import type { Ledger, PayoutRail, PayoutRails, RailPayment } from './ports.js';
import { TransactionChanged, type TransactionLifecycle } from './transaction-lifecycle.js';
import type { TransactionsService } from './transactions.service.js';

/** How long after a claim the safety-net submission runs if the request did not finish it (real time). */
const SUBMIT_SAFETY_NET_MS = 30_000;
/** Sandbox time a refund takes (before SANDBOX_TIME_SCALE). */
const REFUND_CHECK_MS = 1_000;

/** The payload of the quote payment jobs. */
/** A quote payment as a job finds it: its transaction and its quote. */
interface Payment {
  t: Transaction;
  q: Quote;
}

interface QuotePaymentJob {
  platformId: string;
  transactionId: string;
  environment: Environment;
  check?: number;
}

/** Where the quote's money comes from. */
function fundingOf(q: Quote): QuoteFunding {
  return q.source.kind === 'REALTIME_FUNDING' ? { kind: 'REALTIME_FUNDING' } : { kind: 'ACCOUNT', accountId: q.source.accountId! };
}

/** Where the quote's money goes: an internal account (booked at once) or outside through a rail. */
function payeeOf(q: Quote): QuotePayee {
  const d = q.destination;
  return d.kind === 'ACCOUNT' && isId(d.accountId, 'InternalAccount') ? { kind: 'INTERNAL', accountId: d.accountId } : { kind: 'OUTSIDE' };
}

/**
 * The money movement of executed (or funded) quotes, after the claim:
 *
 * - to an internal account: the conversion is booked at once (capture) and the
 *   payment is COMPLETED in the same request;
 * - to an external account or a UMA address: the payout is handed to the payout
 *   rail (PROCESSING); delivered → captured, COMPLETED; failed before any money
 *   left → the funds are released (the hold voided, or real-time funds
 *   refunded), FAILED; money that left and came back → captured, returned and
 *   refunded (FAILED, then REFUNDED — or FAILED with a FAILED refund);
 * - a delivered payout the receiving bank returns later → COMPLETED → FAILED,
 *   then refunded.
 *
 * The ledger entries are `quoteEntries` (domain/quote-ledger.ts), with ids derived
 * from the quote (domain/ids.ts), so every step is a no-op when a job or a request
 * repeats it. Ledger and rail calls are made with no database transaction open:
 * each step reads, calls, then writes its status change (TransactionLifecycle) in
 * a short transaction that re-checks the status under the row lock.
 */
export class QuotePaymentsService {
  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly deps: {
      ledger: Ledger;
      rails: Record<Environment, PayoutRails>;
      transactions: TransactionsService;
      quotes: QuoteRepository;
      lifecycle: TransactionLifecycle;
      scheduler: JobScheduler;
      logger: Logger;
    },
  ) {}

  /** Registers the quote payment jobs on the scheduler (they all call the ledger or a rail: leased). */
  registerJobs(): void {
    const s = this.deps.scheduler;
    s.registerLeased<QuotePaymentJob>(JOB_KINDS.quotePaymentSubmit, async (job) => {
      await this.submit(job.payload.platformId, job.payload.transactionId, job.payload.environment);
    });
    // Their first read (the transactions and their quotes, a batch in two statements) rides on the claim's transaction.
    const loading = (status: Transaction['status']) => ({
      load: async (em: EntityManager, jobs: Job<QuotePaymentJob>[]) => {
        const found = await this.paymentsIn(em, jobs.map((j) => j.payload), status);
        return new Map(jobs.map((j, i) => [j.id, found[i]]));
      },
    });
    s.registerLeased<QuotePaymentJob, Payment | undefined>(
      JOB_KINDS.quotePaymentSettle,
      (job, loaded) => this.settle(job.payload, loaded),
      loading('PROCESSING'),
    );
    s.registerLeased<QuotePaymentJob, Payment | undefined>(
      JOB_KINDS.quotePaymentReturnCheck,
      (job, loaded) => this.checkReturn(job.payload, loaded),
      loading('COMPLETED'),
    );
    s.registerLeased<QuotePaymentJob, Payment | undefined>(
      JOB_KINDS.quotePaymentRefund,
      (job, loaded) => this.refund(job.payload, loaded),
      loading('FAILED'),
    );
  }

  /** Schedules the safety-net submission of a claimed payment, in the claim's database transaction. */
  async scheduleSubmit(em: EntityManager, t: Transaction, environment: Environment): Promise<void> {
    await this.schedule(em, JOB_KINDS.quotePaymentSubmit, t, environment, 0, SUBMIT_SAFETY_NET_MS, true);
  }

  /** The payment moved past PENDING: its safety-net submission has nothing left to do. */
  private async submitted(em: EntityManager, t: Transaction): Promise<void> {
    await this.deps.scheduler.complete(em, jobIds.quotePayment(JOB_KINDS.quotePaymentSubmit, t.id, 0));
  }

  /**
   * Drives a claimed payment forward (idempotent, safe to run concurrently): a
   * transaction past PENDING, or whose quote is not claimed yet (an unfunded
   * real-time-funding quote), is returned as it is. `claimed`: the quote and its
   * transaction as the caller's claim just committed them (not read again; every
   * write below re-checks the status under the row lock).
   */
  async submit(
    platformId: string,
    transactionId: string,
    environment: Environment,
    claimed?: { quote: Quote; transaction: Transaction },
  ): Promise<Transaction> {
    const t = claimed?.transaction ?? (await this.deps.transactions.get(platformId, transactionId));
    if (t.status !== 'PENDING' || !t.quoteId) return t;
    const q = claimed?.quote ?? (await this.deps.quotes.get(this.orm.em.fork(), platformId, t.quoteId));
    if (!q || q.status === 'PENDING' || q.status === 'EXPIRED') return t;
    const ids = quoteLedgerIds(q.id);
    const funding = fundingOf(q);
    if (funding.kind === 'REALTIME_FUNDING') {
      await this.deps.ledger.postEntry({
        platformId,
        entryId: ids.funding,
        lines: quoteEntries.funding(q.amounts),
        kind: 'QUOTE_FUNDING',
        description: `Real-time funding of ${q.id} (${t.reference})`,
      });
    }
    const payee = payeeOf(q);
    if (payee.kind === 'INTERNAL') {
      try {
        await this.capture(q, funding, payee);
      } catch (err) {
        if (!(err instanceof CaptureRefused)) throw err;
        // The payee cannot be credited (e.g. its balance would exceed the maximum): nothing was
        // captured, so the payer's funds are released (hold voided; real-time funds refunded) and
        // the payment fails instead of its safety-net job retrying in vain.
        this.deps.logger.warn({ transactionId, code: err.refusal.code }, 'quote payment credit refused');
        await this.release(q, funding);
        return this.whilePending(t, async (em, cur) => {
          await this.submitted(em, cur);
          return this.failed(em, cur, funding, environment, 'CREDIT_REFUSED');
        });
      }
      return this.whilePending(t, async (em, cur) => {
        const processing = await this.deps.lifecycle.move(em, cur, 'PROCESSING');
        await this.submitted(em, cur);
        return this.deps.lifecycle.move(em, processing, 'COMPLETED', { settledAt: this.clock.now() });
      });
    }
    const submission = await this.railOf(environment, q).submit(this.payment(t));
    if (!submission.accepted) await this.release(q, funding);
    return this.whilePending(t, async (em, cur) => {
      await this.submitted(em, cur);
      if (!submission.accepted) return this.failed(em, cur, funding, environment, submission.detail);
      const moved = await this.deps.lifecycle.move(em, cur, 'PROCESSING');
      await this.schedule(em, JOB_KINDS.quotePaymentSettle, moved, environment, 1, submission.checkAfterMs);
      return moved;
    });
  }

  /**
   * A submission's write: `write` on the transaction if it is still PENDING, else it as it is. `t`
   * is the transaction as the claim committed it or as just read: written as seen (asSeen, no
   * locking read first), and only if its row changed since is it read under its lock and decided again.
   */
  private async whilePending(t: Transaction, write: (em: EntityManager, cur: Transaction) => Promise<Transaction>): Promise<Transaction> {
    if (t.status === 'PENDING') {
      try {
        return await transactional(this.orm, (em) => write(em, this.deps.lifecycle.asSeen(t)));
      } catch (err) {
        if (!(err instanceof TransactionChanged)) throw err;
      }
    }
    return transactional(this.orm, async (em) => {
      const cur = await this.deps.transactions.find(t.platformId, t.id, em, true);
      if (!cur || cur.status !== 'PENDING') return cur ?? t;
      return write(em, cur);
    });
  }

  /** The settle job: the rail's outcome of a PROCESSING payout; the money moves before the status is written. */
  private async settle(p: QuotePaymentJob, loaded?: Loaded<Payment | undefined>): Promise<JobOutcome | void> {
    const found = loaded ? loaded.value : await this.load(p, 'PROCESSING');
    if (!found) return;
    const { t, q } = found;
    const funding = fundingOf(q);
    const status = await this.railOf(p.environment, q).status(this.payment(t), this.clock.now().getTime() - t.createdAt.getTime());
    switch (status.state) {
      case 'PENDING':
        return this.ifStill(
          p,
          'PROCESSING',
          (em, cur) => this.schedule(em, JOB_KINDS.quotePaymentSettle, cur, p.environment, (p.check ?? 1) + 1, status.checkAfterMs),
          t,
        );
      case 'FAILED':
        await this.release(q, funding);
        return this.ifStill(p, 'PROCESSING', (em, cur) => this.failed(em, cur, funding, p.environment, status.detail), t);
      case 'SETTLED':
        await this.capture(q, funding, { kind: 'OUTSIDE' });
        return this.ifStill(
          p,
          'PROCESSING',
          async (em, cur) => {
            const done = await this.deps.lifecycle.move(em, cur, 'COMPLETED', { settledAt: this.clock.now() });
            if (status.returnCheckAfterMs !== undefined) {
              await this.schedule(em, JOB_KINDS.quotePaymentReturnCheck, done, p.environment, 1, status.returnCheckAfterMs);
            }
            this.deps.logger.info({ transactionId: t.id, quoteId: q.id }, 'quote payout delivered');
          },
          t,
        );
      case 'RETURNED':
        // The money left (captured) and came back (returned): refund it to the payer.
        await this.capture(q, funding, { kind: 'OUTSIDE' });
        await this.postReturn(q);
        return this.ifStill(p, 'PROCESSING', (em, cur) => this.returned(em, cur, p.environment, status.detail, status.reason), t);
    }
  }

  /** The return-check job: a delivered payout the receiving bank sent back. */
  private async checkReturn(p: QuotePaymentJob, loaded?: Loaded<Payment | undefined>): Promise<JobOutcome | void> {
    const found = loaded ? loaded.value : await this.load(p, 'COMPLETED');
    if (!found) return;
    const r = await this.railOf(p.environment, found.q).returned(this.payment(found.t));
    if (!r) return;
    await this.postReturn(found.q);
    return this.ifStill(p, 'COMPLETED', (em, cur) => this.returned(em, cur, p.environment, r.detail, r.reason), found.t);
  }

  /** The refund job: the payer gets the money back (REFUNDED), or the refund fails (FAILED stays). */
  private async refund(p: QuotePaymentJob, loaded?: Loaded<Payment | undefined>): Promise<JobOutcome | void> {
    const found = loaded ? loaded.value : await this.load(p, 'FAILED');
    const refund = found?.t.refund;
    if (!found || refund?.status !== 'PENDING') return;
    const { t, q } = found;
    const status = await this.railOf(p.environment, q).refund(this.payment(t));
    const whileRefundPending = (write: (em: EntityManager, cur: Transaction, refund: Refund) => Promise<unknown>) =>
      this.ifStill(p, 'FAILED', (em, cur) => (cur.refund?.status === 'PENDING' ? write(em, cur, cur.refund) : Promise.resolve()), t);
    if (status.state === 'PENDING') {
      return whileRefundPending((em, cur) =>
        this.schedule(em, JOB_KINDS.quotePaymentRefund, cur, p.environment, (p.check ?? 1) + 1, status.checkAfterMs),
      );
    }
    if (status.state === 'FAILED') {
      // The money stays in CLEARING, owed to the payer: an operator resolves it.
      return whileRefundPending(async (em, cur, refund) => {
        await this.deps.lifecycle.updateRefund(em, cur, { ...refund, status: 'FAILED' });
        this.deps.logger.warn({ transactionId: t.id, quoteId: q.id }, 'refund failed: funds wait in CLEARING');
      });
    }
    await this.deps.ledger.postEntry({
      platformId: t.platformId,
      entryId: quoteLedgerIds(q.id).refund,
      lines: quoteEntries.refund(q.amounts, fundingOf(q)),
      kind: 'QUOTE_REFUND',
      description: `Refund of ${q.id} (${refund.reference})`,
    });
    return whileRefundPending((em, cur, refund) =>
      this.deps.lifecycle.move(em, cur, 'REFUNDED', { refund: { ...refund, status: 'COMPLETED', settledAt: this.clock.now() } }),
    );
  }

  /**
   * A job's outcome: `write` on the transaction if it is still in `status`. `seen` is the
   * transaction as the job read it: written as seen (asSeen, no locking read first); only if its
   * row changed since is it read under its lock and decided again. Each `write` makes the status
   * write (`move`, `updateRefund`) its first write, so a TransactionChanged leaves nothing of it
   * behind, or writes nothing that depends on the status (a next check scheduled).
   */
  private ifStill(
    p: QuotePaymentJob,
    status: Transaction['status'],
    write: (em: EntityManager, t: Transaction) => Promise<unknown>,
    seen?: Transaction,
  ): JobOutcome {
    return async (em) => {
      if (seen?.status === status) {
        try {
          await write(em, this.deps.lifecycle.asSeen(seen));
          return;
        } catch (err) {
          if (!(err instanceof TransactionChanged)) throw err;
        }
      }
      const cur = await this.deps.transactions.find(p.platformId, p.transactionId, em, true);
      if (cur?.status === status) await write(em, cur);
    };
  }

  /** A payout whose money came back: the capture reversed in the ledger (the return entry). */
  private async postReturn(q: Quote): Promise<void> {
    await this.deps.ledger.postEntry({
      platformId: q.platformId,
      entryId: quoteLedgerIds(q.id).return,
      lines: quoteEntries.return(q.amounts, { kind: 'OUTSIDE' }),
      kind: 'QUOTE_RETURN',
      description: `Payout of ${q.id} returned`,
    });
  }

  /** A returned payout's status: FAILED with a PENDING refund, and the refund job. */
  private async returned(
    em: EntityManager,
    t: Transaction,
    environment: Environment,
    detail: FailureDetail,
    reason: RefundReason,
  ): Promise<void> {
    const failed = await this.deps.lifecycle.move(em, t, 'FAILED', {
      failureReason: failureReasonFor(t.type, detail),
      failureDetail: detail,
      refund: this.newRefund(t, reason),
    });
    await this.schedule(em, JOB_KINDS.quotePaymentRefund, failed, environment, 1, REFUND_CHECK_MS);
  }

  /**
   * FAILED before any money left: an internal-account source's hold is already
   * voided (nothing to give back); real-time funds sit in CLEARING and are refunded.
   */
  private async failed(
    em: EntityManager,
    t: Transaction,
    funding: QuoteFunding,
    environment: Environment,
    detail: FailureDetail,
  ): Promise<Transaction> {
    const patch = { failureReason: failureReasonFor(t.type, detail), failureDetail: detail };
    if (funding.kind === 'ACCOUNT') return this.deps.lifecycle.move(em, t, 'FAILED', patch);
    const failed = await this.deps.lifecycle.move(em, t, 'FAILED', { ...patch, refund: this.newRefund(t, 'TRANSACTION_FAILED') });
    await this.schedule(em, JOB_KINDS.quotePaymentRefund, failed, environment, 1, REFUND_CHECK_MS);
    return failed;
  }

  /** Releases funds that never left: voids an internal-account source's hold (no-op for real-time funds). */
  private async release(q: Quote, funding: QuoteFunding): Promise<void> {
    if (funding.kind !== 'ACCOUNT') return;
    const ids = quoteLedgerIds(q.id);
    await this.deps.ledger.voidHold({ platformId: q.platformId, holdId: ids.hold, voidId: ids.void });
  }

  /**
   * Books the conversion and delivery, then takes the payer's money (posts the hold to CLEARING).
   * The capture entry goes first: it is the step the ledger may refuse for good (an internal payee
   * whose balance would exceed the maximum), and refused first it leaves the payer's hold unposted,
   * so the payment fails with the hold voided (`CaptureRefused`). Between the two calls CLEARING is
   * short by T (system accounts have no running totals to guard); both ids are fixed, so a re-run
   * job or request completes the pair.
   *
   * An internal-account payer's pair is first asked of the ledger as one call and one transaction
   * (PostHold with the capture entry: both or neither). Only when that is refused for good are the
   * two steps taken one by one as above, which tells a refused capture from a refused post.
   */
  private async capture(q: Quote, funding: QuoteFunding, payee: QuotePayee): Promise<void> {
    const ids = quoteLedgerIds(q.id);
    const entry = {
      entryId: ids.capture,
      lines: quoteEntries.capture(q.amounts, payee),
      kind: 'QUOTE_CAPTURE',
      ...(q.description ? { description: q.description } : {}),
    };
    if (funding.kind === 'ACCOUNT') {
      try {
        await this.deps.ledger.postHold({ platformId: q.platformId, holdId: ids.hold, postId: ids.post, entry });
        return;
      } catch (err) {
        if (!isPermanentRefusal(err)) throw err;
      }
    }
    try {
      await this.deps.ledger.postEntry({ platformId: q.platformId, ...entry });
    } catch (err) {
      if (isPermanentRefusal(err)) throw new CaptureRefused(err);
      throw err;
    }
    if (funding.kind === 'ACCOUNT') {
      await this.deps.ledger.postHold({ platformId: q.platformId, holdId: ids.hold, postId: ids.post });
    }
  }

  private newRefund(t: Transaction, reason: RefundReason): Refund {
    return { reference: refundReference(t.reference), initiatedAt: this.clock.now(), status: 'PENDING', reason };
  }

  /** A job's transaction and its quote, read in one database transaction (one commit, not two). */
  private async load(p: QuotePaymentJob, status: Transaction['status']): Promise<Payment | undefined> {
    return (await transactional(this.orm, (em) => this.paymentsIn(em, [p], status)))[0];
  }

  /**
   * The payments of jobs, in their order (one job's alone, or a claimed batch's in the claim's
   * transaction), in two statements however many: undefined for a job whose transaction is not in
   * `status`, or not of the job's platform.
   */
  private async paymentsIn(em: EntityManager, ps: QuotePaymentJob[], status: Transaction['status']): Promise<(Payment | undefined)[]> {
    const ts = await this.deps.transactions.findMany(em, ps.map((p) => p.transactionId));
    const mine = ps.map((p) => {
      const t = ts.get(p.transactionId);
      return t && t.platformId === p.platformId && t.status === status && t.quoteId ? t : undefined;
    });
    const qs = await this.deps.quotes.findMany(em, mine.flatMap((t) => t?.quoteId ?? []));
    return mine.map((t) => {
      const q = t && qs.get(t.quoteId!);
      return q && q.platformId === t.platformId ? { t, q } : undefined;
    });
  }

  private railOf(environment: Environment, q: Quote): PayoutRail {
    const rails = this.deps.rails[environment];
    return q.destination.kind === 'UMA_ADDRESS' ? rails.uma : rails.account;
  }

  private payment(t: Transaction): RailPayment {
    return {
      transactionId: t.id,
      direction: 'PAYOUT',
      amount: t.receivedAmount,
      currency: t.destination.currency,
      counterpartyIdentifier: t.counterpartyIdentifier ?? t.destination.umaAddress ?? '',
    };
  }

  private async schedule(
    em: EntityManager,
    kind: QuotePaymentJobKind,
    t: Transaction,
    environment: Environment,
    check: number,
    delayMs: number,
    realTime = false,
  ): Promise<void> {
    await this.deps.scheduler.schedule(
      {
        kind,
        id: jobIds.quotePayment(kind, t.id, check),
        payload: { platformId: t.platformId, transactionId: t.id, environment, check } satisfies QuotePaymentJob,
        delayMs,
        ...(realTime ? { realTime } : {}),
      },
      em,
    );
  }
}

/** The ledger refused a capture entry for good (the payee cannot be credited); nothing was captured. */
class CaptureRefused extends Error {
  constructor(readonly refusal: DomainError) {
    super(`capture refused: ${refusal.code}`);
    this.name = 'CaptureRefused';
  }
}
