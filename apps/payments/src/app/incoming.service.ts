import { randomBytes } from 'node:crypto';
import { invalidInput, isPermanentRefusal, newId, type Clock } from '@sluice/core';
import type { Logger } from '@sluice/logging';
import { isUniqueViolation, transactional, type EntityManager, type MikroORM } from '@sluice/store';
import { fail } from '../domain/errors.js';
import { incomingCreditEntryId } from '../domain/ids.js';
import type { ApprovalRequest, RejectionRequest, UmaReceiveRequest } from '../domain/incoming-request.js';
import { JOB_KINDS, jobIds } from '../domain/jobs.js';
import { asksPlatform, judgeAnswer, type RelayedAnswer, type RequestedField } from '../domain/incoming-approval.js';
import { failureReasonFor, newReference, type Transaction } from '../domain/transaction.js';
import type { ApprovalDecision, IncomingApprovalRepository } from '../store/incoming-approval.repository.js';
import type { JobScheduler } from '../store/job-scheduler.js';
import type { AccountsPort, ApprovalPolicies, CustomerDirectory, Ledger } from './ports.js';
import type { TransactionLifecycle } from './transaction-lifecycle.js';
import type { TransactionsService } from './transactions.service.js';

/** Rules of incoming payments (service configuration). Protocol deadlines: not scaled. */
export interface IncomingRules {
  /** After a 202 answer, how long the platform has to call approve or reject. */
  approvalWindowMs: number;
  /** How long a payment waits for the answer to its INCOMING_PAYMENT.PENDING webhook at all. */
  answerTimeoutMs: number;
}

/** The fields the sender's side asks about the receiver: the sandbox's simulated sender asks for none. */
const SANDBOX_REQUESTED_RECEIVER_FIELDS: readonly RequestedField[] = [];

/** The payload of the incoming-payment jobs. */
interface IncomingJob {
  platformId: string;
  transactionId: string;
}

/**
 * Incoming payments: a simulated incoming UMA payment becomes an INCOMING
 * transaction and is credited to the receiver's internal account from the
 * settlement account (PROCESSING → COMPLETED, INCOMING_PAYMENT.COMPLETED).
 *
 * A platform with a webhook endpoint is asked first, unless the amount is below
 * its approval threshold for the currency: the payment waits in PENDING, and its
 * INCOMING_PAYMENT.PENDING webhook is a request–response webhook whose answer the
 * dispatcher relays back (INCOMING_PAYMENT.APPROVAL_ANSWERED, `applyAnswer`):
 * any 2xx but 202 approves, 403 and 422 reject, 202 gives the platform the
 * approval window to call approve or reject, anything else fails the payment
 * (PAYMENT_APPROVAL_WEBHOOK_ERROR), and no answer in time too
 * (PAYMENT_APPROVAL_TIMED_OUT). A payment that asks nobody goes straight to
 * PROCESSING (no PENDING webhook: in the reference, PENDING is the request).
 *
 * Each step is a row-locked state change plus an outbox event in one database
 * transaction; the credit is a ledger call between two of them, with an entry
 * id derived from the transaction, so a re-run (job retry after a crash,
 * concurrent approve) never credits twice.
 */
export class IncomingService {
  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly rules: IncomingRules,
    private readonly deps: {
      accounts: AccountsPort;
      customers: CustomerDirectory;
      approvalPolicies: ApprovalPolicies;
      ledger: Ledger;
      transactions: TransactionsService;
      approvals: IncomingApprovalRepository;
      lifecycle: TransactionLifecycle;
      scheduler: JobScheduler;
      logger: Logger;
    },
  ) {}

  /** Registers the incoming-payment jobs on the scheduler. */
  registerJobs(): void {
    // The credit calls the ledger: leased (it writes its own short transactions).
    this.deps.scheduler.registerLeased<IncomingJob>(JOB_KINDS.incomingComplete, async (job) => {
      await this.complete(job.payload.platformId, job.payload.transactionId);
    });
    // The time-out only writes this database: in the job's transaction.
    this.deps.scheduler.register<IncomingJob>(JOB_KINDS.incomingApprovalTimeout, async (job, em) => {
      const t = await this.deps.transactions.find(job.payload.platformId, job.payload.transactionId, em, true);
      if (!t || t.status !== 'PENDING') return;
      const approval = await this.deps.approvals.get(em, t.id);
      if (!approval || approval.decision) return;
      // A 202 answer moved the end of the window: its own job ends it then.
      if (approval.expiresAt.getTime() > this.clock.now().getTime()) return;
      await this.decide(em, t.id, 'TIMED_OUT');
      await this.deps.lifecycle.move(em, t, 'FAILED', { failureReason: 'PAYMENT_APPROVAL_TIMED_OUT' });
      this.deps.logger.info({ transactionId: t.id }, 'incoming payment approval timed out');
    });
  }

  /** POST /sandbox/uma/receive: creates (or replays) the INCOMING transaction. */
  async receiveUma(req: UmaReceiveRequest): Promise<{ transaction: Transaction; replayed: boolean }> {
    const replay = await this.replay(req);
    if (replay) return { transaction: replay, replayed: true };
    if (req.environment !== 'SANDBOX') {
      throw fail('RAIL_UNAVAILABLE', 'Incoming UMA payments are simulated for sandbox platforms only');
    }
    const recipient = await this.deps.customers.customerByUmaAddress(req.platformId, req.receiverUmaAddress);
    if (!recipient) {
      throw fail('UMA_RECEIVER_NOT_FOUND', `No customer of this platform has UMA address ${req.receiverUmaAddress}`, {
        field: 'receiverUmaAddress',
      });
    }
    const account = await this.deps.accounts.customerAccount(req.platformId, recipient.customerId, req.currency);
    if (!account) {
      throw invalidInput([
        { field: 'receivingCurrencyCode', message: `the receiver has no internal account in ${req.currency}` },
      ]);
    }
    const policy = await this.deps.approvalPolicies.approvalPolicy(req.platformId);
    const needsApproval = asksPlatform(policy, req.currency, req.amount);
    const now = this.clock.now();
    const t: Transaction = {
      id: newId('Transaction'),
      platformId: req.platformId,
      type: 'INCOMING',
      status: 'CREATED',
      source: { kind: 'UMA_ADDRESS', umaAddress: req.senderUmaAddress, currency: req.currency },
      destination: { kind: 'ACCOUNT', accountId: account.id, currency: req.currency },
      customerId: recipient.customerId,
      platformCustomerId: recipient.platformCustomerId,
      sentAmount: req.amount,
      receivedAmount: req.amount,
      fees: 0n,
      reference: newReference((n) => randomBytes(n)),
      counterpartyInformation: { senderUmaAddress: req.senderUmaAddress },
      requestKey: req.requestKey,
      counterpartyIdentifier: req.senderUmaAddress,
      createdAt: now,
      updatedAt: now,
    };
    let pending: Transaction;
    try {
      pending = await transactional(this.orm, async (em) => {
        await this.deps.lifecycle.record(em, t);
        // Asking the platform: PENDING (its webhook is the question). Asking nobody: PROCESSING at once.
        const moved = await this.deps.lifecycle.move(em, t, needsApproval ? 'PENDING' : 'PROCESSING');
        const payload = { platformId: t.platformId, transactionId: t.id } satisfies IncomingJob;
        if (needsApproval) {
          // The answer is awaited until its timeout job falls due (real time: a protocol deadline).
          const closes = this.deps.scheduler.dueAt(this.rules.answerTimeoutMs, true);
          await this.deps.approvals.insert(em, { transactionId: t.id, platformId: t.platformId, expiresAt: closes, createdAt: now });
          await this.deps.scheduler.schedule(
            { kind: JOB_KINDS.incomingApprovalTimeout, id: jobIds.incomingApprovalTimeout(t.id), payload, at: closes },
            em,
          );
        } else {
          // The safety net: credits the payment if this process dies before doing it below.
          await this.deps.scheduler.schedule(
            { kind: JOB_KINDS.incomingComplete, id: jobIds.incomingComplete(t.id), payload, delayMs: 0 },
            em,
          );
        }
        return moved;
      });
    } catch (err) {
      if (!isUniqueViolation(err, 'transactions_request_key_unique')) throw err;
      const first = await this.replay(req);
      if (!first) throw err;
      return { transaction: first, replayed: true };
    }
    if (needsApproval) return { transaction: pending, replayed: false };
    return { transaction: await this.complete(t.platformId, t.id), replayed: false };
  }

  /**
   * POST /transactions/{id}/approve: an incoming payment awaiting approval is
   * credited. Approving an approved payment returns it as it is (idempotent);
   * anything else not awaiting approval is TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL.
   */
  async approve(req: ApprovalRequest): Promise<Transaction> {
    const { platformId, transactionId } = req;
    await transactional(this.orm, async (em) => {
      const t = await this.awaiting(em, platformId, transactionId, 'APPROVED');
      if (t.repeat) return; // finish (or return) the approved payment
      await this.decide(em, t.t.id, 'APPROVED', undefined, req.receiverCustomerInfo);
      await this.deps.lifecycle.move(em, t.t, 'PROCESSING');
      await this.deps.scheduler.schedule(
        {
          kind: JOB_KINDS.incomingComplete,
          id: jobIds.incomingComplete(t.t.id),
          payload: { platformId, transactionId } satisfies IncomingJob,
          delayMs: 0,
        },
        em,
      );
    });
    return this.complete(platformId, transactionId);
  }

  /**
   * POST /transactions/{id}/reject: REJECTED (webhook INCOMING_PAYMENT.FAILED),
   * nothing credited. Rejecting a rejected payment returns it as it is.
   */
  async reject(req: RejectionRequest): Promise<Transaction> {
    return transactional(this.orm, async (em) => {
      const t = await this.awaiting(em, req.platformId, req.transactionId, 'REJECTED');
      if (t.repeat) return t.t;
      await this.decide(em, t.t.id, 'REJECTED', req.reason);
      return this.deps.lifecycle.move(em, t.t, 'REJECTED');
    });
  }

  /**
   * The platform's answer to the payment's INCOMING_PAYMENT.PENDING webhook, relayed by the
   * dispatcher; runs in the consumer's inbox transaction `em`. An answer to a payment no longer
   * awaiting one (already decided through the API, timed out, or one that asked nobody) changes
   * nothing. Approval schedules the credit (its job runs right after this commits).
   */
  async applyAnswer(
    em: EntityManager,
    platformId: string,
    answer: RelayedAnswer & { transactionId: string; answeredAt: string },
  ): Promise<void> {
    const t = await this.deps.transactions.find(platformId, answer.transactionId, em, true);
    if (!t || t.type !== 'INCOMING' || t.status !== 'PENDING') return;
    const approval = await this.deps.approvals.get(em, t.id);
    if (!approval || approval.decision) return;
    const verdict = judgeAnswer(answer, SANDBOX_REQUESTED_RECEIVER_FIELDS);
    const log = { transactionId: t.id, verdict: verdict.kind, status: answer.responseStatus };
    this.deps.logger.info(log, 'incoming payment approval webhook answered');
    switch (verdict.kind) {
      case 'APPROVE':
        await this.decide(em, t.id, 'APPROVED', undefined, verdict.receiverCustomerInfo);
        await this.deps.lifecycle.move(em, t, 'PROCESSING');
        await this.deps.scheduler.schedule(
          {
            kind: JOB_KINDS.incomingComplete,
            id: jobIds.incomingComplete(t.id),
            payload: { platformId, transactionId: t.id } satisfies IncomingJob,
            delayMs: 0,
          },
          em,
        );
        return;
      case 'REJECT':
        await this.decide(em, t.id, 'REJECTED', verdict.reason);
        await this.deps.lifecycle.move(em, t, 'REJECTED');
        return;
      case 'DEFER': {
        // The platform calls approve or reject within the window, counted from its answer.
        const answeredAt = new Date(answer.answeredAt);
        const base = Number.isNaN(answeredAt.getTime()) ? this.clock.now() : answeredAt;
        const closes = new Date(base.getTime() + this.rules.approvalWindowMs);
        await this.deps.approvals.extend(em, t.id, closes);
        await this.deps.scheduler.schedule(
          {
            kind: JOB_KINDS.incomingApprovalTimeout,
            id: jobIds.incomingApprovalWindow(t.id),
            payload: { platformId, transactionId: t.id } satisfies IncomingJob,
            at: closes,
          },
          em,
        );
        return;
      }
      case 'WEBHOOK_ERROR':
        await this.decide(em, t.id, 'WEBHOOK_ERROR', verdict.detail);
        await this.deps.lifecycle.move(em, t, 'FAILED', { failureReason: 'PAYMENT_APPROVAL_WEBHOOK_ERROR' });
        return;
      case 'TIMED_OUT':
        await this.decide(em, t.id, 'TIMED_OUT');
        await this.deps.lifecycle.move(em, t, 'FAILED', { failureReason: 'PAYMENT_APPROVAL_TIMED_OUT' });
        return;
    }
  }

  /**
   * Credits an incoming payment (idempotent, safe to run concurrently and to
   * re-run after a crash): PENDING without a pending approval → PROCESSING;
   * PROCESSING → ledger credit from settlement (entry id derived from the
   * transaction, no database transaction open) → COMPLETED. Other states are
   * returned as they are.
   */
  async complete(platformId: string, transactionId: string): Promise<Transaction> {
    const t = await transactional(this.orm, async (em) => {
      const cur = await this.deps.transactions.find(platformId, transactionId, em, true);
      if (!cur) throw fail('TRANSACTION_NOT_FOUND', `Transaction ${transactionId} not found`);
      if (cur.type !== 'INCOMING' || cur.status !== 'PENDING') return cur;
      const approval = await this.deps.approvals.get(em, cur.id);
      if (approval && approval.decision !== 'APPROVED') return cur; // still the platform's call
      return this.deps.lifecycle.move(em, cur, 'PROCESSING');
    });
    if (t.type !== 'INCOMING' || t.status !== 'PROCESSING') return t;
    try {
      await this.deps.ledger.creditFromOutside({
        platformId,
        entryId: incomingCreditEntryId(t.id),
        accountId: t.destination.accountId!,
        amount: t.receivedAmount,
        currency: t.destination.currency,
        kind: 'INCOMING_PAYMENT',
        // The transaction's reference, not the sender's UMA address: payments keeps that sealed, and
        // the ledger's journal keeps descriptions in plain text.
        description: `Incoming UMA payment ${t.reference}`,
      });
    } catch (err) {
      // Refused for good (e.g. BALANCE_LIMIT_EXCEEDED): the payment fails (returned to the sender)
      // instead of staying PROCESSING while its job retries in vain. Outages still retry.
      if (!isPermanentRefusal(err)) throw err;
      this.deps.logger.warn({ transactionId, code: err.code }, 'incoming payment credit refused');
      return this.whileProcessing(t, (em, cur) =>
        this.deps.lifecycle.move(em, cur, 'FAILED', {
          failureReason: failureReasonFor('INCOMING', 'CREDIT_REFUSED'),
          failureDetail: 'CREDIT_REFUSED',
        }),
      );
    }
    const done = await this.whileProcessing(t, (em, cur) =>
      this.deps.lifecycle.move(em, cur, 'COMPLETED', { settledAt: this.clock.now() }),
    );
    this.deps.logger.info({ transactionId, status: done.status }, 'incoming payment credited');
    return done;
  }

  /** `write` on the payment under its row lock if it is still PROCESSING, else the payment as it is. */
  private whileProcessing(t: Transaction, write: (em: EntityManager, cur: Transaction) => Promise<Transaction>): Promise<Transaction> {
    return transactional(this.orm, async (em) => {
      const cur = await this.deps.transactions.find(t.platformId, t.id, em, true);
      if (!cur || cur.status !== 'PROCESSING') return cur ?? t;
      return write(em, cur);
    });
  }

  /**
   * The transaction under lock when the platform may take `want` on it: it awaits
   * approval (repeat: false), or `want` was already taken (repeat: true).
   * Otherwise TRANSACTION_NOT_FOUND or TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL.
   */
  private async awaiting(
    em: EntityManager,
    platformId: string,
    transactionId: string,
    want: 'APPROVED' | 'REJECTED',
  ): Promise<{ t: Transaction; repeat: boolean }> {
    const t = await this.deps.transactions.find(platformId, transactionId, em, true);
    if (!t) throw fail('TRANSACTION_NOT_FOUND', `Transaction ${transactionId} not found`, { transactionId });
    const approval = t.type === 'INCOMING' ? await this.deps.approvals.get(em, t.id) : undefined;
    const notAwaiting = (why: string) =>
      fail('TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL', `Transaction ${transactionId} ${why}`, {
        transactionId,
        status: t.status,
        ...(approval?.decision ? { decision: approval.decision } : {}),
      });
    if (!approval) throw notAwaiting('is not an incoming payment awaiting approval');
    if (approval.decision === want) return { t, repeat: true };
    if (approval.decision === 'TIMED_OUT') throw notAwaiting('was not decided within its approval window');
    if (approval.decision) throw notAwaiting(`was already ${approval.decision.toLowerCase()}`);
    if (t.status !== 'PENDING') throw notAwaiting(`is ${t.status}`);
    if (approval.expiresAt.getTime() <= this.clock.now().getTime()) {
      throw notAwaiting('is past its approval window (it fails with PAYMENT_APPROVAL_TIMED_OUT)');
    }
    return { t, repeat: false };
  }

  /** Records the decision; one contradicting the decision already taken is refused (the caller handles a repeat of it). */
  private async decide(
    em: EntityManager,
    transactionId: string,
    decision: ApprovalDecision,
    reason?: string,
    receiverCustomerInfo?: Record<string, unknown>,
  ): Promise<void> {
    const decided = await this.deps.approvals.decide(em, transactionId, {
      decision,
      ...(reason !== undefined ? { reason } : {}),
      ...(receiverCustomerInfo ? { receiverCustomerInfo } : {}),
      at: this.clock.now(),
    });
    if (!decided) {
      throw fail('TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL', `Transaction ${transactionId} was already decided`, { transactionId });
    }
  }

  /** The first payment of this request key; the key reused for another payment is refused. */
  private async replay(req: UmaReceiveRequest): Promise<Transaction | undefined> {
    const t = await this.deps.transactions.byRequestKey(req.platformId, req.requestKey);
    if (!t) return undefined;
    if (
      t.type !== 'INCOMING' ||
      t.source.umaAddress !== req.senderUmaAddress ||
      t.receivedAmount !== req.amount ||
      t.destination.currency !== req.currency
    ) {
      throw fail('IDEMPOTENCY_KEY_REUSED', 'This idempotency key was used for a different payment', { transactionId: t.id });
    }
    return t;
  }
}
