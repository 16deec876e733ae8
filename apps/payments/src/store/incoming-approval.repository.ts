import type { EntityManager } from '@sluice/store';
import { affectedRows, fromJson, insertRow } from './sql.js';

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
  receiver_customer_info: Record<string, unknown> | string | null;
  decided_at: Date | string | null;
  created_at: Date | string;
}

const JSONB = new Set(['receiver_customer_info']);

/** The one mapper of `payments.incoming_approvals`: IncomingApproval ↔ IncomingApprovalRow. */
const incomingApprovalRow = {
  to(a: IncomingApproval): IncomingApprovalRow {
    return {
      transaction_id: a.transactionId,
      platform_id: a.platformId,
      expires_at: a.expiresAt,
      decision: a.decision ?? null,
      reason: a.reason ?? null,
      receiver_customer_info: a.receiverCustomerInfo ? JSON.stringify(a.receiverCustomerInfo) : null,
      decided_at: a.decidedAt ?? null,
      created_at: a.createdAt,
    };
  },

  from(r: IncomingApprovalRow): IncomingApproval {
    return {
      transactionId: r.transaction_id,
      platformId: r.platform_id,
      expiresAt: new Date(r.expires_at),
      ...(r.decision ? { decision: r.decision } : {}),
      ...(r.reason !== null ? { reason: r.reason } : {}),
      ...(r.receiver_customer_info ? { receiverCustomerInfo: fromJson(r.receiver_customer_info) } : {}),
      ...(r.decided_at ? { decidedAt: new Date(r.decided_at) } : {}),
      createdAt: new Date(r.created_at),
    };
  },
};

/** Incoming payments awaiting the platform's decision, in `payments.incoming_approvals`. */
export class IncomingApprovalRepository {
  async insert(em: EntityManager, a: IncomingApproval): Promise<void> {
    await em.execute(...insertRow('incoming_approvals', incomingApprovalRow.to(a), JSONB));
  }

  /** The approval of an incoming payment, if it needed one. */
  async get(em: EntityManager, transactionId: string): Promise<IncomingApproval | undefined> {
    const rows = await em.execute<IncomingApprovalRow[]>(`SELECT * FROM incoming_approvals WHERE transaction_id = ?`, [
      transactionId,
    ]);
    return rows[0] ? incomingApprovalRow.from(rows[0]) : undefined;
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

  /** Records the decision once (only while none is taken); false when one was already taken. */
  async decide(
    em: EntityManager,
    transactionId: string,
    d: { decision: ApprovalDecision; reason?: string; receiverCustomerInfo?: Record<string, unknown>; at: Date },
  ): Promise<boolean> {
    const res = await em.execute(
      `UPDATE incoming_approvals SET decision = ?, reason = ?, receiver_customer_info = ?::jsonb, decided_at = ?
       WHERE transaction_id = ? AND decision IS NULL`,
      [
        d.decision,
        d.reason ?? null,
        d.receiverCustomerInfo ? JSON.stringify(d.receiverCustomerInfo) : null,
        d.at,
        transactionId,
      ],
      'run',
    );
    return affectedRows(res) === 1;
  }
}
