import type { MasterKeyring } from '@sluice/crypto';
import type { EntityManager } from '@sluice/store';
import { openReceiverCustomerInfo, sealReceiverCustomerInfo, type ReceiverCustomerInfoColumns } from './sealing.js';
import { affectedRows, insertRow } from './sql.js';

/** A decision of the platform on an incoming payment awaiting it (or its window elapsing). */
export type ApprovalDecision = 'APPROVED' | 'REJECTED' | 'TIMED_OUT' | 'WEBHOOK_ERROR';

/** An incoming payment awaiting (or past) the platform's decision. */
export interface IncomingApproval {
  transactionId: string;
  platformId: string;
  /** When the window closes (the instant its timeout job falls due). */
  expiresAt: Date;
  decision?: ApprovalDecision;
  reason?: string;
  receiverCustomerInfo?: Record<string, unknown>;
  decidedAt?: Date;
  createdAt: Date;
}

/** A row of `payments.incoming_approvals`. */
interface IncomingApprovalRow {
  transaction_id: string;
  platform_id: string;
  expires_at: Date | string;
  decision: ApprovalDecision | null;
  reason: string | null;
  /**
   * The receiverCustomerInfo map, sealed (store/sealing.ts) when it is not empty;
   * `receiver_customer_info` then stays null, and holds the map itself only in rows written before
   * sealing (or `{}` for an empty map, which is not sealed).
   */
  sealed_receiver_customer_info: string | null;
  receiver_customer_info: Record<string, unknown> | string | null;
  decided_at: Date | string | null;
  created_at: Date | string;
}

const JSONB = new Set(['receiver_customer_info']);

/** What a decision writes (`decide`), as the mapper writes it. */
type DecisionColumns = Pick<IncomingApprovalRow, 'transaction_id' | 'decision' | 'reason' | 'decided_at'> &
  ReceiverCustomerInfoColumns;

/** A decision of the platform on an incoming payment (the fields `decide` records). */
export interface Decision {
  decision: ApprovalDecision;
  reason?: string;
  receiverCustomerInfo?: Record<string, unknown>;
  at: Date;
}

/**
 * The one mapper of `payments.incoming_approvals`: IncomingApproval ↔ IncomingApprovalRow, and
 * the columns of a decision (receiverCustomerInfo sealed under `keyring`, bound to the transaction id).
 */
const incomingApprovalRow = (keyring: MasterKeyring) => ({
  decision(transactionId: string, d: Decision): DecisionColumns {
    return {
      transaction_id: transactionId,
      decision: d.decision,
      reason: d.reason ?? null,
      ...sealReceiverCustomerInfo(keyring, transactionId, d.receiverCustomerInfo),
      decided_at: d.at,
    };
  },

  to(a: IncomingApproval): IncomingApprovalRow {
    return {
      transaction_id: a.transactionId,
      platform_id: a.platformId,
      expires_at: a.expiresAt,
      decision: a.decision ?? null,
      reason: a.reason ?? null,
      ...sealReceiverCustomerInfo(keyring, a.transactionId, a.receiverCustomerInfo),
      decided_at: a.decidedAt ?? null,
      created_at: a.createdAt,
    };
  },

  from(r: IncomingApprovalRow): IncomingApproval {
    const info = openReceiverCustomerInfo(keyring, r.transaction_id, r.sealed_receiver_customer_info, r.receiver_customer_info);
    return {
      transactionId: r.transaction_id,
      platformId: r.platform_id,
      expiresAt: new Date(r.expires_at),
      ...(r.decision ? { decision: r.decision } : {}),
      ...(r.reason !== null ? { reason: r.reason } : {}),
      ...(info ? { receiverCustomerInfo: info } : {}),
      ...(r.decided_at ? { decidedAt: new Date(r.decided_at) } : {}),
      createdAt: new Date(r.created_at),
    };
  },
});

/** Incoming payments awaiting the platform's decision, in `payments.incoming_approvals`. */
export class IncomingApprovalRepository {
  private readonly rows: ReturnType<typeof incomingApprovalRow>;

  constructor(keyring: MasterKeyring) {
    this.rows = incomingApprovalRow(keyring);
  }

  async insert(em: EntityManager, a: IncomingApproval): Promise<void> {
    await em.execute(...insertRow('incoming_approvals', this.rows.to(a), JSONB));
  }

  /** The approval of an incoming payment, if it needed one. */
  async get(em: EntityManager, transactionId: string): Promise<IncomingApproval | undefined> {
    const rows = await em.execute<IncomingApprovalRow[]>(`SELECT * FROM incoming_approvals WHERE transaction_id = ?`, [
      transactionId,
    ]);
    return rows[0] ? this.rows.from(rows[0]) : undefined;
  }

  /** Moves the end of an undecided payment's window (a 202 answer); false when it was decided meanwhile. */
  async extend(em: EntityManager, transactionId: string, expiresAt: Date): Promise<boolean> {
    const res = await em.execute(
      `UPDATE incoming_approvals SET expires_at = ? WHERE transaction_id = ? AND decision IS NULL`,
      [expiresAt, transactionId],
      'run',
    );
    return affectedRows(res) === 1;
  }

  /**
   * Records the decision once (only while none is taken); false when one was already taken. The
   * receiverCustomerInfo is sealed by the mapper (a refused repeat seals for nothing, but a decision
   * is taken once per payment).
   */
  async decide(em: EntityManager, transactionId: string, d: Decision): Promise<boolean> {
    const row = this.rows.decision(transactionId, d);
    const res = await em.execute(
      `UPDATE incoming_approvals SET decision = ?, reason = ?, receiver_customer_info = ?::jsonb,
         sealed_receiver_customer_info = ?, decided_at = ?
       WHERE transaction_id = ? AND decision IS NULL`,
      [
        row.decision,
        row.reason,
        row.receiver_customer_info,
        row.sealed_receiver_customer_info,
        row.decided_at,
        row.transaction_id,
      ],
      'run',
    );
    return affectedRows(res) === 1;
  }
}
