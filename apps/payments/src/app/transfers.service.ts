import { randomBytes } from 'node:crypto';
import {
  decodeCursor,
  encodeCursor,
  invalidInput,
  isPermanentRefusal,
  newId,
  pageSize,
  type Clock,
  type Page,
} from '@sluice/core';
import type { Outbox } from '@sluice/events';
import type { Logger } from '@sluice/logging';
import { isUniqueViolation, transactional, type EntityManager, type MikroORM } from '@sluice/store';
import { fail } from '../domain/errors.js';
import type { PaymentRail, RailPayment } from '../domain/payment-rail.js';
import {
  quoteStatusFor,
  transitionTransaction,
  type TransactionStatus,
  type TransactionType,
} from '../domain/state-machines.js';
import {
  failureReasonFor,
  newReference,
  type FailureDetail,
  type Refund,
  type Transaction,
} from '../domain/transaction.js';
import { QuoteRepository } from '../store/quote.repository.js';
import { publishTransactionChange, publishTransactionCreated } from '../events/transaction.events.js';
import type { JobScheduler } from '../store/job-scheduler.js';
import { TransactionRepository, type TransactionFilter } from '../store/transaction.repository.js';
import type { Environment } from './receiver-lookups.service.js';
import type {
  AccountsPort,
  CustomerDirectory,
  ExternalAccountInfo,
  InternalAccountInfo,
  Ledger,
} from './ports.js';

/** A same-currency transfer request (transfer-in or transfer-out). */
export interface TransferRequest {
  platformId: string;
  environment: Environment;
  requestKey: string;
  sourceAccountId: string;
  destinationAccountId: string;
  amount: bigint;
  description?: string;
}

/** Job kinds of transfers (registered on the scheduler). */
export const TRANSFER_JOBS = {
  /** Hands a PENDING/CREATED transfer to the rail (safety net after a crash between insert and submission). */
  submit: 'transfer.submit',
  /** Asks the rail for the outcome of a PROCESSING transfer and settles it in the ledger. */
  settle: 'transfer.settle',
} as const;

/** How long after creation the safety-net submission runs if the request did not finish it (real time). */
const SUBMIT_SAFETY_NET_MS = 30_000;

interface JobPayload {
  platformId: string;
  transactionId: string;
  environment: Environment;
  check?: number;
}

/**
 * Same-currency transfers and the transaction store: transfer-out holds the
 * internal account's funds in the ledger and pays out through the rail
 * (posted on settlement, voided on failure); transfer-in pulls through the rail
 * and credits the internal account from the settlement account once settled.
 * Every status change goes through the state machine and writes its webhook
 * event to the outbox in the same database transaction.
 */
export class TransfersService {
  private readonly repo = new TransactionRepository();
  private readonly quotes = new QuoteRepository();

  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly deps: {
      accounts: AccountsPort;
      ledger: Ledger;
      customers: CustomerDirectory;
      rails: Record<Environment, PaymentRail>;
      scheduler: JobScheduler;
      outbox: Outbox;
      logger: Logger;
    },
  ) {}

  /** Registers the transfer jobs on the scheduler. */
  registerJobs(): void {
    this.deps.scheduler.register<JobPayload>(TRANSFER_JOBS.submit, async (job) => {
      try {
        await this.advance(job.payload.platformId, job.payload.transactionId, job.payload.environment);
      } catch (err) {
        // A refused hold removed the transfer (or it is gone): nothing left to do. Transient errors retry.
        if (isPermanentRefusal(err)) return;
        throw err;
      }
    });
    this.deps.scheduler.register<JobPayload>(TRANSFER_JOBS.settle, async (job, em) => {
      await this.settle(em, job.payload);
    });
  }

  /** POST /transfer-out. */
  async transferOut(req: TransferRequest): Promise<{ transaction: Transaction; replayed: boolean }> {
    const replay = await this.replay(req, 'OUTGOING');
    if (replay) {
      return { transaction: await this.advance(req.platformId, replay.id, req.environment), replayed: true };
    }
    const [source, destination] = await Promise.all([
      this.deps.accounts.getInternalAccount(req.platformId, req.sourceAccountId),
      this.deps.accounts.getExternalAccount(req.platformId, req.destinationAccountId),
    ]);
    this.checkPair(source, destination, 'destination.accountId');
    this.railOf(req.environment);
    const customer = await this.customerOf(req.platformId, source.customerId);
    // The row exists (CREATED, no webhook) before the hold, so a crash between the two is
    // resumed by the submit job or a retry; a refused hold removes it: nothing is created.
    const created = await this.create(req, {
      type: 'OUTGOING',
      status: 'CREATED',
      source: { kind: 'ACCOUNT', accountId: source.id, currency: source.currency },
      destination: { kind: 'ACCOUNT', accountId: destination.id, currency: destination.currency },
      customer,
      counterpartyIdentifier: destination.primaryIdentifier,
      withHold: true,
    });
    return {
      transaction: await this.advance(req.platformId, created.transaction.id, req.environment),
      replayed: created.replayed,
    };
  }

  /** POST /transfer-in. */
  async transferIn(req: TransferRequest): Promise<{ transaction: Transaction; replayed: boolean }> {
    const replay = await this.replay(req, 'INCOMING');
    if (replay) {
      return { transaction: await this.advance(req.platformId, replay.id, req.environment), replayed: true };
    }
    const [source, destination] = await Promise.all([
      this.deps.accounts.getExternalAccount(req.platformId, req.sourceAccountId),
      this.deps.accounts.getInternalAccount(req.platformId, req.destinationAccountId),
    ]);
    this.checkPair(destination, source, 'source.accountId');
    this.railOf(req.environment);
    const customer = await this.customerOf(req.platformId, destination.customerId);
    const created = await this.create(req, {
      type: 'INCOMING',
      status: 'CREATED',
      source: { kind: 'ACCOUNT', accountId: source.id, currency: source.currency },
      destination: { kind: 'ACCOUNT', accountId: destination.id, currency: destination.currency },
      customer,
      counterpartyIdentifier: source.primaryIdentifier,
    });
    return {
      transaction: await this.advance(req.platformId, created.transaction.id, req.environment),
      replayed: created.replayed,
    };
  }

  /** GET /transactions/{id}: TRANSACTION_NOT_FOUND for an unknown or another platform's id. */
  async get(platformId: string, id: string): Promise<Transaction> {
    const t = await this.repo.get(this.orm.em.fork(), platformId, id);
    if (!t) throw fail('TRANSACTION_NOT_FOUND', `Transaction ${id} not found`, { transactionId: id });
    return t;
  }

  /** GET /transactions. */
  async list(
    f: Omit<TransactionFilter, 'limit' | 'after'> & { limit?: number; cursor?: string },
  ): Promise<Page<Transaction>> {
    const limit = pageSize(f.limit);
    const pos = decodeCursor(f.cursor);
    const { cursor: _c, ...filter } = f;
    const { rows, total } = await this.repo.list(this.orm.em.fork(), {
      ...filter,
      limit,
      ...(pos ? { after: { createdAt: new Date(pos.k), id: pos.id } } : {}),
    });
    const hasMore = rows.length > limit;
    const data = hasMore ? rows.slice(0, limit) : rows;
    const last = data[data.length - 1];
    return {
      data,
      hasMore,
      totalCount: total,
      ...(hasMore && last
        ? { nextCursor: encodeCursor({ k: last.createdAt.toISOString(), id: last.id }) }
        : {}),
    };
  }

  /**
   * Moves a transaction to `to` under its state machine (ILLEGAL_STATE_TRANSITION
   * otherwise) and writes the status webhook event (and, when the refund's status
   * changes, its OUTGOING_PAYMENT.REFUND_* event), in the caller's transaction.
   * A quote's payment carries its quote along (COMPLETED, FAILED, EXPIRED; see
   * quoteStatusFor) in the same database transaction.
   */
  async move(
    em: EntityManager,
    t: Transaction,
    to: TransactionStatus,
    patch: Partial<Pick<Transaction, 'failureReason' | 'failureDetail' | 'settledAt' | 'refund'>> = {},
  ): Promise<Transaction> {
    transitionTransaction(t.type, t.status, to);
    const next: Transaction = { ...t, ...patch, status: to, updatedAt: this.clock.now() };
    await this.write(em, t, next);
    if (next.quoteId) {
      const quoteStatus = quoteStatusFor(to);
      if (quoteStatus) await this.quotes.follow(em, next.quoteId, quoteStatus, next.updatedAt);
    }
    return next;
  }

  /** Records a change of the refund alone (the status stays), with its OUTGOING_PAYMENT.REFUND_* event. */
  async updateRefund(em: EntityManager, t: Transaction, refund: Refund): Promise<Transaction> {
    const next: Transaction = { ...t, refund, updatedAt: this.clock.now() };
    await this.write(em, t, next);
    return next;
  }

  private async write(em: EntityManager, prev: Transaction, next: Transaction): Promise<void> {
    if (!(await this.repo.updateStatus(em, next, prev.status))) {
      throw new Error(`transaction ${prev.id} changed concurrently (expected ${prev.status})`);
    }
    await publishTransactionChange(this.deps.outbox, em, prev, next);
  }

  /** The first transaction of this request key, if any; the same key with another request is refused. */
  private async replay(req: TransferRequest, type: TransactionType): Promise<Transaction | undefined> {
    const t = await this.repo.byRequestKey(this.orm.em.fork(), req.platformId, req.requestKey);
    if (!t) return undefined;
    if (
      t.type !== type ||
      t.source.accountId !== req.sourceAccountId ||
      t.destination.accountId !== req.destinationAccountId ||
      t.sentAmount !== req.amount
    ) {
      throw fail('IDEMPOTENCY_KEY_REUSED', 'This idempotency key was used for a different transfer', {
        transactionId: t.id,
      });
    }
    return t;
  }

  /** Same owner, same currency, a usable external account; `ext` names the external account's field. */
  private checkPair(internal: InternalAccountInfo, external: ExternalAccountInfo, ext: string): void {
    if (external.status !== 'ACTIVE') {
      throw fail(
        'EXTERNAL_ACCOUNT_NOT_USABLE',
        `External account ${external.id} is ${external.status}, not ACTIVE`,
        {
          field: ext,
          status: external.status,
        },
      );
    }
    if (external.currency !== internal.currency) {
      throw invalidInput([
        {
          field: ext,
          message: `currency ${external.currency} does not match the internal account's ${internal.currency}; use a quote for cross-currency payments`,
        },
      ]);
    }
    if ((external.customerId ?? null) !== (internal.customerId ?? null)) {
      throw invalidInput([
        { field: ext, message: 'must belong to the same customer (or the platform) as the internal account' },
      ]);
    }
  }

  private railOf(env: Environment): PaymentRail {
    const rail = this.deps.rails[env];
    if ((rail as { configured?: boolean }).configured === false) {
      throw fail('RAIL_UNAVAILABLE', 'No payment rail is configured for production platforms yet');
    }
    return rail;
  }

  private async customerOf(
    platformId: string,
    customerId: string | undefined,
  ): Promise<{ customerId: string; platformCustomerId: string } | undefined> {
    if (!customerId) return undefined;
    return {
      customerId,
      platformCustomerId: await this.deps.customers.platformCustomerId(platformId, customerId),
    };
  }

  /** Inserts the transaction (and its safety-net submit job); a concurrent twin with the same key wins once. */
  private async create(
    req: TransferRequest,
    o: {
      type: TransactionType;
      status: TransactionStatus;
      source: Transaction['source'];
      destination: Transaction['destination'];
      customer: { customerId: string; platformCustomerId: string } | undefined;
      /** The external account's primary identifier, kept for the rail (the account may be deleted later). */
      counterpartyIdentifier: string;
      withHold?: boolean;
    },
  ): Promise<{ transaction: Transaction; replayed: boolean }> {
    const now = this.clock.now();
    const id = newId('Transaction');
    const t: Transaction = {
      id,
      platformId: req.platformId,
      type: o.type,
      status: o.status,
      source: o.source,
      destination: o.destination,
      ...(o.customer ?? {}),
      sentAmount: req.amount,
      receivedAmount: req.amount,
      fees: 0n,
      reference: newReference((n) => randomBytes(n)),
      ...(req.description !== undefined ? { description: req.description } : {}),
      counterpartyInformation: {},
      requestKey: req.requestKey,
      counterpartyIdentifier: o.counterpartyIdentifier,
      ...(o.withHold ? { holdId: `transfer-out:${id.slice('Transaction:'.length)}` } : {}),
      createdAt: now,
      updatedAt: now,
    };
    try {
      await transactional(this.orm, async (em) => {
        await this.repo.insert(em, t);
        await publishTransactionCreated(this.deps.outbox, em, t);
        await this.deps.scheduler.schedule(
          {
            kind: TRANSFER_JOBS.submit,
            id: `${TRANSFER_JOBS.submit}:${t.id}`,
            payload: { platformId: t.platformId, transactionId: t.id, environment: req.environment },
            delayMs: SUBMIT_SAFETY_NET_MS,
            realTime: true,
          },
          em,
        );
      });
      return { transaction: t, replayed: false };
    } catch (err) {
      if (!isUniqueViolation(err, 'transactions_request_key_unique')) throw err;
      const first = await this.replay(req, o.type);
      if (!first) throw err;
      return { transaction: first, replayed: true };
    }
  }

  private payment(t: Transaction): RailPayment {
    return {
      transactionId: t.id,
      direction: t.type === 'OUTGOING' ? 'PAYOUT' : 'PULL',
      amount: t.sentAmount,
      currency: t.source.currency,
      counterpartyIdentifier: t.counterpartyIdentifier ?? '',
    };
  }

  /**
   * Drives a transfer from where it is (idempotent, safe to run concurrently):
   * an OUTGOING CREATED transfer gets its hold (the hold id is derived from the
   * transaction) and moves to PENDING; a refused hold deletes the CREATED row
   * and rethrows the ledger's error (INSUFFICIENT_FUNDS); then `submit`.
   */
  async advance(platformId: string, transactionId: string, environment: Environment): Promise<Transaction> {
    const t = await this.get(platformId, transactionId);
    if (t.type === 'OUTGOING' && t.status === 'CREATED') {
      try {
        await this.deps.ledger.placeHold({
          platformId,
          holdId: t.holdId!,
          accountId: t.source.accountId!,
          amount: t.sentAmount,
          currency: t.source.currency,
          kind: 'TRANSFER_OUT',
          ...(t.description ? { description: t.description } : {}),
        });
      } catch (err) {
        if (isPermanentRefusal(err)) await this.repo.deleteCreated(this.orm.em.fork(), t.id);
        throw err;
      }
      await transactional(this.orm, async (em) => {
        const cur = await this.repo.get(em, platformId, transactionId, true);
        if (cur?.status === 'CREATED') await this.move(em, cur, 'PENDING');
      });
    }
    return this.submit(platformId, transactionId, environment);
  }

  /**
   * Hands a new transfer to the rail (idempotent: a transfer past its initial
   * state is returned as it is). Refused at submission → FAILED (an outgoing
   * transfer's hold voided first); accepted → PROCESSING with a settle job.
   */
  async submit(platformId: string, transactionId: string, environment: Environment): Promise<Transaction> {
    const t = await this.get(platformId, transactionId);
    const initial: TransactionStatus = t.type === 'OUTGOING' ? 'PENDING' : 'CREATED';
    // A quote's payment has its own rails and steps (QuotePaymentsService).
    if (t.status !== initial || t.quoteId) return t;
    const submission = await this.railOf(environment).submit(this.payment(t));
    if (!submission.accepted && t.holdId) {
      await this.deps.ledger.voidHold({ platformId, holdId: t.holdId, voidId: `${t.holdId}:void` });
    }
    return transactional(this.orm, async (em) => {
      const cur = await this.repo.get(em, platformId, transactionId, true);
      if (!cur || cur.status !== initial) return cur ?? t;
      // Past its initial state: the safety-net submission has nothing left to do.
      await this.deps.scheduler.complete(em, `${TRANSFER_JOBS.submit}:${cur.id}`);
      if (!submission.accepted) return this.failed(em, cur, submission.detail);
      const moved = await this.move(em, cur, 'PROCESSING');
      await this.scheduleSettle(em, moved, environment, 1, submission.checkAfterMs);
      return moved;
    });
  }

  private async scheduleSettle(
    em: EntityManager,
    t: Transaction,
    environment: Environment,
    check: number,
    delayMs: number,
  ): Promise<void> {
    await this.deps.scheduler.schedule(
      {
        kind: TRANSFER_JOBS.settle,
        id: `${TRANSFER_JOBS.settle}:${t.id}:${check}`,
        payload: { platformId: t.platformId, transactionId: t.id, environment, check },
        delayMs,
      },
      em,
    );
  }

  private failed(em: EntityManager, t: Transaction, detail: FailureDetail): Promise<Transaction> {
    return this.move(em, t, 'FAILED', {
      failureReason: failureReasonFor(t.type, detail),
      failureDetail: detail,
    });
  }

  /**
   * The settle job: asks the rail; settled → the ledger moves the money (hold
   * posted / credit from settlement) and COMPLETED; failed → hold voided and
   * FAILED; still pending → asks again later. Ledger steps carry ids derived
   * from the transaction, so a re-run job never moves money twice.
   */
  private async settle(em: EntityManager, p: JobPayload): Promise<void> {
    const t = await this.repo.get(em, p.platformId, p.transactionId, true);
    if (!t || t.status !== 'PROCESSING' || t.quoteId) return;
    const payment = this.payment(t);
    const status = await this.railOf(p.environment).status(
      payment,
      this.clock.now().getTime() - t.createdAt.getTime(),
    );
    if (status.state === 'PENDING') {
      await this.scheduleSettle(em, t, p.environment, (p.check ?? 1) + 1, status.checkAfterMs);
      return;
    }
    if (status.state === 'FAILED') {
      if (t.holdId) {
        await this.deps.ledger.voidHold({
          platformId: t.platformId,
          holdId: t.holdId,
          voidId: `${t.holdId}:void`,
        });
      }
      await this.failed(em, t, status.detail);
      return;
    }
    if (t.type === 'OUTGOING') {
      await this.deps.ledger.postHold({
        platformId: t.platformId,
        holdId: t.holdId!,
        postId: `${t.holdId}:post`,
      });
    } else {
      try {
        await this.deps.ledger.creditFromOutside({
          platformId: t.platformId,
          entryId: `transfer-in:${t.id.slice('Transaction:'.length)}`,
          accountId: t.destination.accountId!,
          amount: t.receivedAmount,
          currency: t.destination.currency,
          kind: 'TRANSFER_IN',
          ...(t.description ? { description: t.description } : {}),
        });
      } catch (err) {
        // The ledger refused the credit for good (e.g. BALANCE_LIMIT_EXCEEDED): the transfer fails
        // rather than retrying until its job dies and leaving it PROCESSING. Outages still retry.
        if (!isPermanentRefusal(err)) throw err;
        this.deps.logger.warn({ transactionId: t.id, code: err.code }, 'transfer-in credit refused');
        await this.failed(em, t, 'CREDIT_REFUSED');
        return;
      }
    }
    await this.move(em, t, 'COMPLETED', { settledAt: this.clock.now() });
    this.deps.logger.info({ transactionId: t.id, type: t.type }, 'transfer settled');
  }
}
