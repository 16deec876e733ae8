import { isPermanentRefusal, type Clock, type DomainError } from '@sluice/core';
import type { Logger } from '@sluice/logging';
import { transactional, type EntityManager, type MikroORM } from '@sluice/store';
import type { RailPayment } from '../domain/payment-rail.js';
import type { Quote } from '../domain/quote.js';
import type { PayoutRail } from '../domain/quote-rail.js';
import { quoteEntries, type QuoteFunding, type QuotePayee } from '../domain/quote-ledger.js';
import {
  failureReasonFor,
  type FailureDetail,
  type Refund,
  type RefundReason,
  type Transaction,
} from '../domain/transaction.js';
import type { JobScheduler } from '../store/job-scheduler.js';
import { QuoteRepository } from '../store/quote.repository.js';
import { TransactionRepository } from '../store/transaction.repository.js';
import type { Ledger } from './ports.js';
import type { Environment } from './receiver-lookups.service.js';
import type { TransfersService } from './transfers.service.js';

/** The payout rails of one environment: to external accounts and to UMA addresses. */
export interface PayoutRails {
  account: PayoutRail;
  uma: PayoutRail;
}

/** Job kinds of quote payments (registered on the scheduler). */
export const QUOTE_PAYMENT_JOBS = {
  /** Drives a claimed payment (transaction PENDING) to its rail or books it; the safety net after a crash. */
  submit: 'quote-payment.submit',
  /** Asks the rail for the outcome of a PROCESSING payout and captures or releases the funds. */
  settle: 'quote-payment.settle',
  /** Asks the rail whether a delivered payout came back (sandbox suffix 005). */
  returnCheck: 'quote-payment.return-check',
  /** Completes the refund of a payment whose money came back (or a real-time funding that cannot be used). */
  refund: 'quote-payment.refund',
} as const;

/** How long after a claim the safety-net submission runs if the request did not finish it (real time). */
export const SUBMIT_SAFETY_NET_MS = 30_000;
/** Sandbox time a refund takes (before SANDBOX_TIME_SCALE). */
const REFUND_CHECK_MS = 1_000;

interface JobPayload {
  platformId: string;
  transactionId: string;
  environment: Environment;
  check?: number;
}

/** Where the quote's money comes from. */
export function fundingOf(q: Quote): QuoteFunding {
  return q.source.kind === 'REALTIME_FUNDING'
    ? { kind: 'REALTIME_FUNDING' }
    : { kind: 'ACCOUNT', accountId: q.source.accountId! };
}

/** Where the quote's money goes: an internal account (booked at once) or outside through a rail. */
export function payeeOf(q: Quote): QuotePayee {
  const d = q.destination;
  return d.kind === 'ACCOUNT' && d.accountId?.startsWith('InternalAccount:')
    ? { kind: 'INTERNAL', accountId: d.accountId }
    : { kind: 'OUTSIDE' };
}

/**
 * The money movement of executed (or funded) quotes, after the claim:
 *
 * - to an internal account: the conversion is booked at once (capture) and the
 *   payment is COMPLETED in the same request;
 * - to an external account or a UMA address: the payout is handed to the rail
 *   (PROCESSING); delivered → captured, COMPLETED; failed before any money
 *   left → the funds are released (the hold voided, or real-time funds
 *   refunded), FAILED; money that left and came back → captured, returned and
 *   refunded (FAILED, then REFUNDED — or FAILED with a FAILED refund);
 * - a delivered payout the receiving bank returns later → COMPLETED → FAILED,
 *   then refunded.
 *
 * The ledger entries are `quoteEntries` (domain/quote-ledger.ts), with ids derived
 * from the quote, so every step is a no-op when a job or a request repeats it.
 * Status changes go through TransfersService.move (state machine, webhook in the
 * same database transaction, the quote following its transaction).
 */
export class QuotePaymentsService {
  private readonly transactions = new TransactionRepository();
  private readonly quotes = new QuoteRepository();

  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly deps: {
      ledger: Ledger;
      transfers: TransfersService;
      rails: Record<Environment, PayoutRails>;
      scheduler: JobScheduler;
      logger: Logger;
    },
  ) {}

  /** Registers the quote payment jobs on the scheduler. */
  registerJobs(): void {
    this.deps.scheduler.register<JobPayload>(QUOTE_PAYMENT_JOBS.submit, async (job) => {
      await this.submit(job.payload.platformId, job.payload.transactionId, job.payload.environment);
    });
    this.deps.scheduler.register<JobPayload>(QUOTE_PAYMENT_JOBS.settle, (job, em) =>
      this.settle(em, job.payload),
    );
    this.deps.scheduler.register<JobPayload>(QUOTE_PAYMENT_JOBS.returnCheck, (job, em) =>
      this.checkReturn(em, job.payload),
    );
    this.deps.scheduler.register<JobPayload>(QUOTE_PAYMENT_JOBS.refund, (job, em) =>
      this.refund(em, job.payload),
    );
  }

  /** Schedules the safety-net submission of a claimed payment, in the claim's database transaction. */
  async scheduleSubmit(em: EntityManager, t: Transaction, environment: Environment): Promise<void> {
    await this.schedule(em, QUOTE_PAYMENT_JOBS.submit, t, environment, 0, SUBMIT_SAFETY_NET_MS, true);
  }

  /** The payment moved past PENDING: its safety-net submission has nothing left to do. */
  private async submitted(em: EntityManager, t: Transaction): Promise<void> {
    await this.deps.scheduler.complete(em, `${QUOTE_PAYMENT_JOBS.submit}:${t.id}:0`);
  }

  /**
   * Drives a claimed payment forward (idempotent, safe to run concurrently): a
   * transaction past PENDING, or whose quote is not claimed yet (an unfunded
   * real-time-funding quote), is returned as it is.
   */
  async submit(platformId: string, transactionId: string, environment: Environment): Promise<Transaction> {
    const t = await this.deps.transfers.get(platformId, transactionId);
    if (t.status !== 'PENDING' || !t.quoteId) return t;
    const q = await this.quotes.get(this.orm.em.fork(), platformId, t.quoteId);
    if (!q || q.status === 'PENDING' || q.status === 'EXPIRED') return t;
    const funding = fundingOf(q);
    if (funding.kind === 'REALTIME_FUNDING') {
      await this.deps.ledger.postEntry({
        platformId,
        entryId: `${quoteEntries.base(q.id)}:funding`,
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
        return transactional(this.orm, async (em) => {
          const cur = await this.transactions.get(em, platformId, transactionId, true);
          if (!cur || cur.status !== 'PENDING') return cur ?? t;
          await this.submitted(em, cur);
          return this.failed(em, cur, funding, environment, 'CREDIT_REFUSED');
        });
      }
      return transactional(this.orm, async (em) => {
        const cur = await this.transactions.get(em, platformId, transactionId, true);
        if (!cur || cur.status !== 'PENDING') return cur ?? t;
        const processing = await this.deps.transfers.move(em, cur, 'PROCESSING');
        await this.submitted(em, cur);
        return this.deps.transfers.move(em, processing, 'COMPLETED', { settledAt: this.clock.now() });
      });
    }
    const submission = await this.railOf(environment, q).submit(this.payment(t));
    if (!submission.accepted) await this.release(q, funding);
    return transactional(this.orm, async (em) => {
      const cur = await this.transactions.get(em, platformId, transactionId, true);
      if (!cur || cur.status !== 'PENDING') return cur ?? t;
      await this.submitted(em, cur);
      if (!submission.accepted) return this.failed(em, cur, funding, environment, submission.detail);
      const moved = await this.deps.transfers.move(em, cur, 'PROCESSING');
      await this.schedule(em, QUOTE_PAYMENT_JOBS.settle, moved, environment, 1, submission.checkAfterMs);
      return moved;
    });
  }

  /** The settle job: the rail's outcome of a PROCESSING payout. */
  private async settle(em: EntityManager, p: JobPayload): Promise<void> {
    const found = await this.load(em, p, 'PROCESSING');
    if (!found) return;
    const { t, q } = found;
    const funding = fundingOf(q);
    const status = await this.railOf(p.environment, q).status(
      this.payment(t),
      this.clock.now().getTime() - t.createdAt.getTime(),
    );
    switch (status.state) {
      case 'PENDING':
        await this.schedule(
          em,
          QUOTE_PAYMENT_JOBS.settle,
          t,
          p.environment,
          (p.check ?? 1) + 1,
          status.checkAfterMs,
        );
        return;
      case 'FAILED':
        await this.release(q, funding);
        await this.failed(em, t, funding, p.environment, status.detail);
        return;
      case 'SETTLED': {
        await this.capture(q, funding, { kind: 'OUTSIDE' });
        const done = await this.deps.transfers.move(em, t, 'COMPLETED', { settledAt: this.clock.now() });
        if (status.returnCheckAfterMs !== undefined) {
          await this.schedule(
            em,
            QUOTE_PAYMENT_JOBS.returnCheck,
            done,
            p.environment,
            1,
            status.returnCheckAfterMs,
          );
        }
        this.deps.logger.info({ transactionId: t.id, quoteId: q.id }, 'quote payout delivered');
        return;
      }
      case 'RETURNED':
        // The money left (captured) and came back (returned): refund it to the payer.
        await this.capture(q, funding, { kind: 'OUTSIDE' });
        await this.returned(em, t, q, p.environment, status.detail, status.reason);
        return;
    }
  }

  /** The return-check job: a delivered payout the receiving bank sent back. */
  private async checkReturn(em: EntityManager, p: JobPayload): Promise<void> {
    const found = await this.load(em, p, 'COMPLETED');
    if (!found) return;
    const r = await this.railOf(p.environment, found.q).returned(this.payment(found.t));
    if (r) await this.returned(em, found.t, found.q, p.environment, r.detail, r.reason);
  }

  /** The refund job: the payer gets the money back (REFUNDED), or the refund fails (FAILED stays). */
  private async refund(em: EntityManager, p: JobPayload): Promise<void> {
    const found = await this.load(em, p, 'FAILED');
    if (!found || found.t.refund?.status !== 'PENDING') return;
    const { t, q } = found;
    const refund = t.refund!;
    const status = await this.railOf(p.environment, q).refund(this.payment(t));
    if (status.state === 'PENDING') {
      await this.schedule(
        em,
        QUOTE_PAYMENT_JOBS.refund,
        t,
        p.environment,
        (p.check ?? 1) + 1,
        status.checkAfterMs,
      );
      return;
    }
    const now = this.clock.now();
    if (status.state === 'FAILED') {
      // The money stays in CLEARING, owed to the payer: an operator resolves it.
      await this.deps.transfers.updateRefund(em, t, { ...refund, status: 'FAILED' });
      this.deps.logger.warn({ transactionId: t.id, quoteId: q.id }, 'refund failed: funds wait in CLEARING');
      return;
    }
    await this.deps.ledger.postEntry({
      platformId: t.platformId,
      entryId: `${quoteEntries.base(q.id)}:refund`,
      lines: quoteEntries.refund(q.amounts, fundingOf(q)),
      kind: 'QUOTE_REFUND',
      description: `Refund of ${q.id} (${refund.reference})`,
    });
    await this.deps.transfers.move(em, t, 'REFUNDED', {
      refund: { ...refund, status: 'COMPLETED', settledAt: now },
    });
  }

  /** A payout whose money came back: the capture reversed, FAILED with a PENDING refund. */
  private async returned(
    em: EntityManager,
    t: Transaction,
    q: Quote,
    environment: Environment,
    detail: FailureDetail,
    reason: RefundReason,
  ): Promise<void> {
    await this.deps.ledger.postEntry({
      platformId: t.platformId,
      entryId: `${quoteEntries.base(q.id)}:return`,
      lines: quoteEntries.return(q.amounts, { kind: 'OUTSIDE' }),
      kind: 'QUOTE_RETURN',
      description: `Payout of ${q.id} returned`,
    });
    const failed = await this.deps.transfers.move(em, t, 'FAILED', {
      failureReason: failureReasonFor(t.type, detail),
      failureDetail: detail,
      refund: this.newRefund(t, reason),
    });
    await this.schedule(em, QUOTE_PAYMENT_JOBS.refund, failed, environment, 1, REFUND_CHECK_MS);
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
    if (funding.kind === 'ACCOUNT') return this.deps.transfers.move(em, t, 'FAILED', patch);
    const failed = await this.deps.transfers.move(em, t, 'FAILED', {
      ...patch,
      refund: this.newRefund(t, 'TRANSACTION_FAILED'),
    });
    await this.schedule(em, QUOTE_PAYMENT_JOBS.refund, failed, environment, 1, REFUND_CHECK_MS);
    return failed;
  }

  /** Releases funds that never left: voids an internal-account source's hold (no-op for real-time funds). */
  private async release(q: Quote, funding: QuoteFunding): Promise<void> {
    if (funding.kind !== 'ACCOUNT') return;
    const holdId = quoteEntries.base(q.id);
    await this.deps.ledger.voidHold({ platformId: q.platformId, holdId, voidId: `${holdId}:void` });
  }

  /**
   * Books the conversion and delivery, then takes the payer's money (posts the hold to CLEARING).
   * The capture entry goes first: it is the step the ledger may refuse for good (an internal payee
   * whose balance would exceed the maximum), and refused first it leaves the payer's hold unposted,
   * so the payment fails with the hold voided (`CaptureRefused`). Between the two calls CLEARING is
   * short by T (system accounts have no running totals to guard); both ids are fixed, so a re-run
   * job or request completes the pair.
   */
  private async capture(q: Quote, funding: QuoteFunding, payee: QuotePayee): Promise<void> {
    const base = quoteEntries.base(q.id);
    try {
      await this.deps.ledger.postEntry({
        platformId: q.platformId,
        entryId: `${base}:capture`,
        lines: quoteEntries.capture(q.amounts, payee),
        kind: 'QUOTE_CAPTURE',
        ...(q.description ? { description: q.description } : {}),
      });
    } catch (err) {
      if (isPermanentRefusal(err)) throw new CaptureRefused(err);
      throw err;
    }
    if (funding.kind === 'ACCOUNT') {
      await this.deps.ledger.postHold({ platformId: q.platformId, holdId: base, postId: `${base}:post` });
    }
  }

  private newRefund(t: Transaction, reason: RefundReason): Refund {
    return { reference: `${t.reference}-REFUND`, initiatedAt: this.clock.now(), status: 'PENDING', reason };
  }

  private async load(
    em: EntityManager,
    p: JobPayload,
    status: Transaction['status'],
  ): Promise<{ t: Transaction; q: Quote } | undefined> {
    const t = await this.transactions.get(em, p.platformId, p.transactionId, true);
    if (!t || t.status !== status || !t.quoteId) return undefined;
    const q = await this.quotes.get(em, p.platformId, t.quoteId);
    return q ? { t, q } : undefined;
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
    kind: string,
    t: Transaction,
    environment: Environment,
    check: number,
    delayMs: number,
    realTime = false,
  ): Promise<void> {
    const payload: JobPayload = { platformId: t.platformId, transactionId: t.id, environment, check };
    await this.deps.scheduler.schedule(
      {
        kind,
        id: `${kind}:${t.id}:${check}`,
        payload: { ...payload },
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
