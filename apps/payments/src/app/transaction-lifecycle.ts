import type { Clock } from '@sluice/core';
import type { EntityManager } from '@sluice/store';
import { quoteStatusFor, transitionTransaction, type TransactionStatus } from '../domain/state-machines.js';
import type { Refund, Transaction } from '../domain/transaction.js';
import type { QuoteRepository } from '../store/quote.repository.js';
import type { TransactionRepository } from '../store/transaction.repository.js';
import type { TransactionEvents } from './ports.js';

/** Marks a transaction as last seen without a lock (`asSeen`): the updated_at it had then. */
const SEEN = Symbol('sluice.transactionSeenAt');

/**
 * A transaction written from what was last seen of it, unlocked (`TransactionLifecycle.asSeen`),
 * whose row changed since: the caller reads it under its lock and decides again. Thrown by the
 * status write, the first statement of `move` and `updateRefund`.
 */
export class TransactionChanged extends Error {
  constructor(readonly transactionId: string) {
    super(`transaction ${transactionId} changed since it was read`);
    this.name = 'TransactionChanged';
  }
}

/** `t` without its asSeen mark: what a write makes of it is the row as written, not as seen. */
function unmarked(t: Transaction): Transaction {
  const { [SEEN]: _seen, ...current } = t as Transaction & { [SEEN]?: Date };
  return current;
}

/** What a status change may set besides the status. */
export type TransactionPatch = Partial<
  Pick<Transaction, 'failureReason' | 'failureDetail' | 'settledAt' | 'refund'>
>;

/**
 * The life of every transaction — transfers, quote payments, incoming payments — in one place:
 * its first row (`record`, or `discard` of one refused before its first event), each status change (`move`: the state machine's guard, a guarded row
 * update, the webhook event in the same database transaction, a quote payment's quote following
 * it) and a refund's own changes (`updateRefund`). Use cases decide when; this decides how.
 */
export class TransactionLifecycle {
  constructor(
    private readonly clock: Clock,
    private readonly deps: {
      transactions: TransactionRepository;
      quotes: QuoteRepository;
      events: TransactionEvents;
    },
  ) {}

  /** Inserts a new transaction, in the caller's transaction, with the event of its first status (if any). */
  async record(em: EntityManager, t: Transaction): Promise<void> {
    await this.deps.transactions.insert(em, t);
    await this.deps.events.created(em, t);
  }

  /**
   * `record` then `move` to `to`, as one insert of the moved row (the state machine's guard, the
   * events of both and the quote following it are the same): a transaction that is born and moved
   * in one database transaction is never seen in its first status anyway. The insert goes in the
   * COMMIT's round trip (writeAtCommit): the callers' transactions do not read the row back.
   */
  async recordMoved(em: EntityManager, t: Transaction, to: TransactionStatus, patch: TransactionPatch = {}): Promise<Transaction> {
    const next = this.next(t, to, patch);
    await this.deps.transactions.insert(em, next, true);
    await this.deps.events.created(em, t);
    await this.deps.events.changed(em, t, next);
    await this.follow(em, next);
    return next;
  }

  /** Removes a transaction that never got past CREATED (its hold was refused): no event was ever written for it. */
  async discard(em: EntityManager, id: string): Promise<void> {
    await this.deps.transactions.deleteCreated(em, id);
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
    patch: TransactionPatch = {},
  ): Promise<Transaction> {
    const next = this.next(t, to, patch);
    await this.write(em, t, next);
    await this.follow(em, next);
    return next;
  }

  /**
   * `t` as the caller last saw it, without its row lock (read in an earlier transaction, or written
   * by the caller's own last commit): a `move` or `updateRefund` of it writes only if the row is
   * unchanged since (its status and updated_at), and throws TransactionChanged otherwise, before
   * anything else of the move is written. This saves the locking read where the caller usually
   * knows the row; on TransactionChanged it reads it under the lock and decides again.
   */
  asSeen(t: Transaction): Transaction {
    return Object.assign({ ...t }, { [SEEN]: t.updatedAt });
  }

  /** `t` moved to `to` (ILLEGAL_STATE_TRANSITION unless its state machine allows it). */
  private next(t: Transaction, to: TransactionStatus, patch: TransactionPatch): Transaction {
    transitionTransaction(t.type, t.status, to);
    return { ...unmarked(t), ...patch, status: to, updatedAt: this.clock.now() };
  }

  /** A quote's payment carries its quote along (quoteStatusFor). */
  private async follow(em: EntityManager, next: Transaction): Promise<void> {
    const quoteStatus = next.quoteId ? quoteStatusFor(next.status) : undefined;
    if (quoteStatus) await this.deps.quotes.follow(em, next.quoteId!, quoteStatus, next.updatedAt);
  }

  /**
   * Names the agent whose approved action pays this transaction (a quote's transaction exists from
   * the quote's creation; the agent is known when it executes). Only a transaction without an agent
   * gets one; its next status event carries it.
   */
  async attributeToAgent(em: EntityManager, t: Transaction, agentId: string): Promise<Transaction> {
    if (t.agentId) return t;
    await this.deps.transactions.setAgent(em, t.id, agentId);
    return { ...t, agentId };
  }

  /** Records a change of the refund alone (the status stays), with its OUTGOING_PAYMENT.REFUND_* event. */
  async updateRefund(em: EntityManager, t: Transaction, refund: Refund): Promise<Transaction> {
    const next: Transaction = { ...unmarked(t), refund, updatedAt: this.clock.now() };
    await this.write(em, t, next);
    return next;
  }

  private async write(em: EntityManager, prev: Transaction, next: Transaction): Promise<void> {
    const seenAt = (prev as Transaction & { [SEEN]?: Date })[SEEN];
    if (!(await this.deps.transactions.updateStatus(em, next, prev.status, seenAt))) {
      if (seenAt) throw new TransactionChanged(prev.id);
      throw new Error(`transaction ${prev.id} changed concurrently (expected ${prev.status})`);
    }
    await this.deps.events.changed(em, prev, next);
  }
}
