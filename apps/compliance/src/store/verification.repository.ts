import type { MasterKeyring } from '@sluice/crypto';
import type { EntityManager } from '@sluice/store';
import type { CursorPosition, Environment, Page } from '@sluice/core';
import type {
  CustomerType,
  Verification,
  VerificationError,
  VerificationStatus,
} from '../domain/verification.js';
import { openSubject, sealSubject } from './sealing.js';
import { announceDue, date, fromJson, keysetPage, optDate } from './sql.js';

/**
 * Verifications (exact SQL). The screened subject (a full name or a registration number) is
 * sealed in `sealed_subject` (store/sealing.ts); `subject` holds it in plain text only in rows
 * written before sealing, until `rewrap`.
 */

const COLUMNS = `id, platform_id, customer_id, customer_type, environment, status, errors, sealed_subject, subject,
  decision_due_at, decided_status, created_at, updated_at`;

interface Row {
  id: string;
  platform_id: string;
  customer_id: string;
  customer_type: CustomerType;
  environment: Environment;
  status: VerificationStatus;
  errors: VerificationError[] | string;
  sealed_subject: string | null;
  subject: string | null;
  decision_due_at: Date | string | null;
  decided_status: VerificationStatus | null;
  created_at: Date | string;
  updated_at: Date | string;
}

function toVerification(r: Row, keyring: MasterKeyring): Verification {
  const v: Verification = {
    id: r.id,
    platformId: r.platform_id,
    customerId: r.customer_id,
    customerType: r.customer_type,
    environment: r.environment,
    status: r.status,
    errors: fromJson(r.errors),
    createdAt: date(r.created_at),
    updatedAt: date(r.updated_at),
  };
  if (r.sealed_subject !== null) v.subject = openSubject(keyring, r.id, r.sealed_subject);
  else if (r.subject !== null) v.subject = r.subject;
  const due = optDate(r.decision_due_at);
  if (due) v.decisionDueAt = due;
  if (r.decided_status !== null) v.decidedStatus = r.decided_status;
  return v;
}

export interface VerificationFilter {
  customerId?: string;
  status?: VerificationStatus;
}

export class VerificationRepository {
  constructor(private readonly keyring: MasterKeyring) {}

  private readonly toVerification = (r: Row): Verification => toVerification(r, this.keyring);

  private sealed(v: Verification): string | null {
    return v.subject !== undefined ? sealSubject(this.keyring, v.id, v.subject) : null;
  }

  async insert(em: EntityManager, v: Verification): Promise<void> {
    await em.execute(
      `INSERT INTO verifications (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?::jsonb, ?, NULL, ?, ?, ?, ?)`,
      [
        v.id,
        v.platformId,
        v.customerId,
        v.customerType,
        v.environment,
        v.status,
        JSON.stringify(v.errors),
        this.sealed(v),
        v.decisionDueAt ?? null,
        v.decidedStatus ?? null,
        v.createdAt,
        v.updatedAt,
      ],
    );
    announceDue(em, v.decisionDueAt);
  }

  async update(em: EntityManager, v: Verification): Promise<void> {
    await em.execute(
      `UPDATE verifications SET status = ?, errors = ?::jsonb, sealed_subject = ?, subject = NULL, environment = ?,
         decision_due_at = ?, decided_status = ?, updated_at = ?
       WHERE id = ?`,
      [
        v.status,
        JSON.stringify(v.errors),
        this.sealed(v),
        v.environment,
        v.decisionDueAt ?? null,
        v.decidedStatus ?? null,
        v.updatedAt,
        v.id,
      ],
    );
    announceDue(em, v.decisionDueAt);
  }

  async find(
    em: EntityManager,
    platformId: string,
    id: string,
    lock?: 'update',
  ): Promise<Verification | undefined> {
    const rows = await em.execute<Row[]>(
      `SELECT ${COLUMNS} FROM verifications WHERE platform_id = ? AND id = ?${lock ? ' FOR UPDATE' : ''}`,
      [platformId, id],
    );
    return rows[0] ? this.toVerification(rows[0]) : undefined;
  }

  /**
   * The newest verification of a customer, under a per-customer transaction lock (so two
   * concurrent submissions of one customer are serialized).
   */
  async latestOfCustomer(
    em: EntityManager,
    platformId: string,
    customerId: string,
  ): Promise<Verification | undefined> {
    await em.execute(`SELECT pg_advisory_xact_lock(hashtext(?))`, [
      `verification:${platformId}:${customerId}`,
    ]);
    const rows = await em.execute<Row[]>(
      `SELECT ${COLUMNS} FROM verifications WHERE platform_id = ? AND customer_id = ?
       ORDER BY created_at DESC, id DESC LIMIT 1`,
      [platformId, customerId],
    );
    return rows[0] ? this.toVerification(rows[0]) : undefined;
  }

  /** True when a verification of the customer is under way (IN_PROGRESS or PENDING_MANUAL_REVIEW). */
  async underWay(em: EntityManager, platformId: string, customerId: string): Promise<boolean> {
    const rows = await em.execute<{ n: string }[]>(
      `SELECT count(*) AS n FROM verifications WHERE platform_id = ? AND customer_id = ?
         AND status IN ('IN_PROGRESS', 'PENDING_MANUAL_REVIEW')`,
      [platformId, customerId],
    );
    return Number(rows[0]?.n ?? 0) > 0;
  }

  list(
    em: EntityManager,
    platformId: string,
    f: VerificationFilter,
    size: number,
    after: CursorPosition | undefined,
  ): Promise<Page<Verification>> {
    const where = ['platform_id = ?'];
    const params: unknown[] = [platformId];
    if (f.customerId) {
      where.push('customer_id = ?');
      params.push(f.customerId);
    }
    if (f.status) {
      where.push('status = ?');
      params.push(f.status);
    }
    return keysetPage<Row, Verification>(em, {
      table: 'verifications',
      columns: COLUMNS,
      where,
      params,
      order: 'DESC',
      size,
      after,
      map: this.toVerification,
    });
  }

  /** Ids (with platform) of verifications whose screening is due at `now`. */
  async due(em: EntityManager, now: Date, limit: number): Promise<{ id: string; platformId: string }[]> {
    const rows = await em.execute<{ id: string; platform_id: string }[]>(
      `SELECT id, platform_id FROM verifications WHERE decision_due_at <= ? ORDER BY decision_due_at LIMIT ?`,
      [now, limit],
    );
    return rows.map((r) => ({ id: r.id, platformId: r.platform_id }));
  }

  /** When the next screening of this table falls due (undefined: none is). */
  async nextDueAt(em: EntityManager): Promise<Date | undefined> {
    const rows = await em.execute<{ at: Date | string | null }[]>(`SELECT min(decision_due_at) AS at FROM verifications`);
    return optDate(rows[0]?.at ?? null);
  }
}
