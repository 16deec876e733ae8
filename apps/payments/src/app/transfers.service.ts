import { randomBytes } from 'node:crypto';
import { isPermanentRefusal, newId, type Clock, type Environment } from '@sluice/core';
import type { Logger } from '@sluice/logging';
import { isUniqueViolation, transactional, type EntityManager, type MikroORM } from '@sluice/store';
import { fail } from '../domain/errors.js';
import { holdPostId, holdVoidId, transferLedgerIds } from '../domain/ids.js';
import { JOB_KINDS, jobIds } from '../domain/jobs.js';
import type { TransactionStatus, TransactionType } from '../domain/state-machines.js';
import { failureReasonFor, newReference, type FailureDetail, type Transaction } from '../domain/transaction.js';
import { checkTransferPair, type TransferRequest } from '../domain/transfer-request.js';
import type { JobOutcome, JobScheduler } from '../store/job-scheduler.js';
import type { JobLagAdmission } from './admission.js';
import type { AccountsPort, CustomerDirectory, CustomerRef, Ledger, RailPayment, TransferRail } from './ports.js';
import type { TransactionLifecycle } from './transaction-lifecycle.js';
import type { TransactionsService } from './transactions.service.js';

/** How long after creation the safety-net submission runs if the request did not finish it (real time). */
const SUBMIT_SAFETY_NET_MS = 30_000;

/** The payload of the transfer jobs. */
interface TransferJob {
  platformId: string;
  transactionId: string;
  environment: Environment;
  check?: number;
}

/**
 * Same-currency transfers (POST /transfer-out, POST /transfer-in): transfer-out holds the
 * internal account's funds in the ledger and pays out through the transfer rail (posted on
 * settlement, voided on failure); transfer-in pulls through the rail and credits the internal
 * account from the settlement account once settled. Ledger steps carry ids derived from the
 * transaction, and no ledger or rail call is made while a database transaction is open.
 */
export class TransfersService {
  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly deps: {
      admission: JobLagAdmission;
      accounts: AccountsPort;
      ledger: Ledger;
      customers: CustomerDirectory;
      rails: Record<Environment, TransferRail>;
      transactions: TransactionsService;
      lifecycle: TransactionLifecycle;
      scheduler: JobScheduler;
      logger: Logger;
    },
  ) {}

  /** Registers the transfer jobs on the scheduler (both call other services: leased). */
  registerJobs(): void {
    this.deps.scheduler.registerLeased<TransferJob>(JOB_KINDS.transferSubmit, async (job) => {
      try {
        await this.advance(job.payload.platformId, job.payload.transactionId, job.payload.environment);
      } catch (err) {
        // A refused hold removed the transfer (or it is gone): nothing left to do. Transient errors retry.
        if (!isPermanentRefusal(err)) throw err;
      }
    });
    this.deps.scheduler.registerLeased<TransferJob>(JOB_KINDS.transferSettle, (job) => this.settle(job.payload));
  }

  /** POST /transfer-out. */
  async transferOut(req: TransferRequest): Promise<{ transaction: Transaction; replayed: boolean }> {
    const replay = await this.replay(req, 'OUTGOING');
    if (replay) return { transaction: await this.advance(req.platformId, replay.id, req.environment), replayed: true };
    // A new payment: it waits while settlement is behind (admission.ts).
    await this.deps.admission.admit();
    const [source, destination] = await Promise.all([
      this.deps.accounts.getInternalAccount(req.platformId, req.sourceAccountId),
      this.deps.accounts.getExternalAccount(req.platformId, req.destinationAccountId),
    ]);
    checkTransferPair(source, destination, 'destination.accountId');
    this.railOf(req.environment);
    const customer = await this.customerOf(req.platformId, source.customerId);
    // The row exists (CREATED, no webhook) before the hold, so a crash between the two is
    // resumed by the submit job or a retry; a refused hold removes it: nothing is created.
    const created = await this.create(req, {
      type: 'OUTGOING',
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
    if (replay) return { transaction: await this.advance(req.platformId, replay.id, req.environment), replayed: true };
    // A new payment: it waits while settlement is behind (admission.ts).
    await this.deps.admission.admit();
    const [source, destination] = await Promise.all([
      this.deps.accounts.getExternalAccount(req.platformId, req.sourceAccountId),
      this.deps.accounts.getInternalAccount(req.platformId, req.destinationAccountId),
    ]);
    checkTransferPair(destination, source, 'source.accountId');
    this.railOf(req.environment);
    const customer = await this.customerOf(req.platformId, destination.customerId);
    const created = await this.create(req, {
      type: 'INCOMING',
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

  /**
   * Drives a transfer from where it is (idempotent, safe to run concurrently):
   * an OUTGOING CREATED transfer gets its hold (the hold id is derived from the
   * transaction) and moves to PENDING; a refused hold deletes the CREATED row
   * and rethrows the ledger's error (INSUFFICIENT_FUNDS); then `submit`.
   */
  async advance(platformId: string, transactionId: string, environment: Environment): Promise<Transaction> {
    const t = await this.deps.transactions.get(platformId, transactionId);
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
        if (isPermanentRefusal(err)) await this.deps.lifecycle.discard(this.orm.em.fork(), t.id);
        throw err;
      }
      await transactional(this.orm, async (em) => {
        const cur = await this.deps.transactions.find(platformId, transactionId, em, true);
        if (cur?.status === 'CREATED') await this.deps.lifecycle.move(em, cur, 'PENDING');
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
    const t = await this.deps.transactions.get(platformId, transactionId);
    const initial: TransactionStatus = t.type === 'OUTGOING' ? 'PENDING' : 'CREATED';
    // A quote's payment has its own rails and steps (QuotePaymentsService).
    if (t.status !== initial || t.quoteId) return t;
    const submission = await this.railOf(environment).submit(this.payment(t));
    if (!submission.accepted && t.holdId) {
      await this.deps.ledger.voidHold({ platformId, holdId: t.holdId, voidId: holdVoidId(t.holdId) });
    }
    return transactional(this.orm, async (em) => {
      const cur = await this.deps.transactions.find(platformId, transactionId, em, true);
      if (!cur || cur.status !== initial) return cur ?? t;
      // Past its initial state: the safety-net submission has nothing left to do.
      await this.deps.scheduler.complete(em, jobIds.transferSubmit(cur.id));
      if (!submission.accepted) return this.failed(em, cur, submission.detail);
      const moved = await this.deps.lifecycle.move(em, cur, 'PROCESSING');
      await this.scheduleSettle(em, moved, environment, 1, submission.checkAfterMs);
      return moved;
    });
  }

  /**
   * The settle job — read, call, then write: asks the rail; settled → the ledger
   * moves the money (hold posted / credit from settlement); failed → hold voided;
   * then, in the job's short completing transaction, COMPLETED or FAILED if the
   * transfer is still PROCESSING. Still pending → the next check is scheduled.
   * The ledger steps carry ids derived from the transaction, so a re-run job (a
   * crash between the calls and the write) never moves money twice.
   */
  private async settle(p: TransferJob): Promise<JobOutcome | void> {
    const t = await this.deps.transactions.find(p.platformId, p.transactionId);
    if (!t || t.status !== 'PROCESSING' || t.quoteId) return;
    const status = await this.railOf(p.environment).status(this.payment(t), this.clock.now().getTime() - t.createdAt.getTime());
    if (status.state === 'PENDING') {
      return this.ifStillProcessing(p, (em, cur) =>
        this.scheduleSettle(em, cur, p.environment, (p.check ?? 1) + 1, status.checkAfterMs),
      );
    }
    if (status.state === 'FAILED') {
      if (t.holdId) await this.deps.ledger.voidHold({ platformId: t.platformId, holdId: t.holdId, voidId: holdVoidId(t.holdId) });
      return this.ifStillProcessing(p, (em, cur) => this.failed(em, cur, status.detail));
    }
    if (t.type === 'OUTGOING') {
      await this.deps.ledger.postHold({ platformId: t.platformId, holdId: t.holdId!, postId: holdPostId(t.holdId!) });
    } else {
      try {
        await this.deps.ledger.creditFromOutside({
          platformId: t.platformId,
          entryId: transferLedgerIds.credit(t.id),
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
        return this.ifStillProcessing(p, (em, cur) => this.failed(em, cur, 'CREDIT_REFUSED'));
      }
    }
    return this.ifStillProcessing(p, async (em, cur) => {
      await this.deps.lifecycle.move(em, cur, 'COMPLETED', { settledAt: this.clock.now() });
      this.deps.logger.info({ transactionId: cur.id, type: cur.type }, 'transfer settled');
    });
  }

  /** A settle job's outcome: `write` on the transfer under its row lock, if it is still PROCESSING. */
  private ifStillProcessing(p: TransferJob, write: (em: EntityManager, t: Transaction) => Promise<unknown>): JobOutcome {
    return async (em) => {
      const cur = await this.deps.transactions.find(p.platformId, p.transactionId, em, true);
      if (cur?.status === 'PROCESSING') await write(em, cur);
    };
  }

  /** The first transaction of this request key, if any; the same key with another request is refused. */
  private async replay(req: TransferRequest, type: TransactionType): Promise<Transaction | undefined> {
    const t = await this.deps.transactions.byRequestKey(req.platformId, req.requestKey);
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

  private railOf(env: Environment): TransferRail {
    const rail = this.deps.rails[env];
    if (!rail.configured) throw fail('RAIL_UNAVAILABLE', 'No payment rail is configured for production platforms yet');
    return rail;
  }

  private async customerOf(platformId: string, customerId: string | undefined): Promise<CustomerRef | undefined> {
    if (!customerId) return undefined;
    return { customerId, platformCustomerId: await this.deps.customers.platformCustomerId(platformId, customerId) };
  }

  /** Inserts the transaction CREATED (and its safety-net submit job); a concurrent twin with the same key wins once. */
  private async create(
    req: TransferRequest,
    o: {
      type: TransactionType;
      source: Transaction['source'];
      destination: Transaction['destination'];
      customer: CustomerRef | undefined;
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
      status: 'CREATED',
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
      ...(req.agentId !== undefined ? { agentId: req.agentId } : {}),
      counterpartyIdentifier: o.counterpartyIdentifier,
      ...(o.withHold ? { holdId: transferLedgerIds.hold(id) } : {}),
      createdAt: now,
      updatedAt: now,
    };
    try {
      await transactional(this.orm, async (em) => {
        await this.deps.lifecycle.record(em, t);
        await this.deps.scheduler.schedule(
          {
            kind: JOB_KINDS.transferSubmit,
            id: jobIds.transferSubmit(t.id),
            payload: { platformId: t.platformId, transactionId: t.id, environment: req.environment } satisfies TransferJob,
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

  private async scheduleSettle(
    em: EntityManager,
    t: Transaction,
    environment: Environment,
    check: number,
    delayMs: number,
  ): Promise<void> {
    await this.deps.scheduler.schedule(
      {
        kind: JOB_KINDS.transferSettle,
        id: jobIds.transferSettle(t.id, check),
        payload: { platformId: t.platformId, transactionId: t.id, environment, check } satisfies TransferJob,
        delayMs,
      },
      em,
    );
  }

  private failed(em: EntityManager, t: Transaction, detail: FailureDetail): Promise<Transaction> {
    return this.deps.lifecycle.move(em, t, 'FAILED', { failureReason: failureReasonFor(t.type, detail), failureDetail: detail });
  }
}
