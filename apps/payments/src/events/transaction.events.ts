import { EVENTS, transactionJson, type EventContract, type Transaction as PublicTransaction } from '@sluice/api';
import type { Outbox } from '@sluice/events';
import type { EntityManager } from '@sluice/store';
import type { TransactionEvents } from '../app/ports.js';
import { refundWebhookType, webhookTypeFor, type Transaction } from '../domain/transaction.js';
import { transactionToPb } from '../rpc/payments.mapper.js';

/**
 * The public Transaction of a payment: the one mapper of the public API
 * (`@sluice/api` transactionJson) over the service's contract (the proto
 * Transaction the RPCs return), so a webhook's `data` and the REST response of
 * the same transaction are the same object.
 */
export function publicTransaction(t: Transaction): PublicTransaction {
  return transactionJson(transactionToPb(t));
}

const PAYMENT_EVENTS: ReadonlyMap<string, EventContract> = new Map(
  Object.values(EVENTS)
    .filter((c) => c.owner === 'payments')
    .map((c) => [c.type, c as EventContract]),
);

function contract(type: string): EventContract {
  const c = PAYMENT_EVENTS.get(type);
  if (!c) throw new Error(`${type} is not a payments event of the catalogue`);
  return c;
}

/** The transaction events of payments, written to the outbox in the caller's database transaction. */
export class TransactionEventPublisher implements TransactionEvents {
  constructor(private readonly outbox: Outbox) {}

  /** The webhook of a new transaction's first status, if that status has one. */
  async created(em: EntityManager, t: Transaction): Promise<void> {
    const type = webhookTypeFor(t.type, t.status);
    if (type) await this.outbox.add(em, contract(type), { platformId: t.platformId, data: publicTransaction(t), occurredAt: t.updatedAt });
  }

  /** The webhooks of a change: its status webhook and, when the refund moved, the refund's. */
  async changed(em: EntityManager, prev: Transaction, next: Transaction): Promise<void> {
    const types: string[] = [];
    if (next.status !== prev.status) {
      const type = webhookTypeFor(next.type, next.status);
      if (type) types.push(type);
    }
    if (next.refund && next.refund.status !== prev.refund?.status) types.push(refundWebhookType(next.refund.status));
    if (types.length === 0) return;
    const data = publicTransaction(next);
    for (const type of types) {
      await this.outbox.add(em, contract(type), { platformId: next.platformId, data, occurredAt: next.updatedAt });
    }
  }
}
