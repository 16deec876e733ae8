import { toBigInt, type EntityManager } from '@sluice/store';
import { type CursorPosition, type Environment } from '@sluice/core';
import { fundingReference } from '../domain/funding-instructions.js';
import type { AccountFilter, AccountOwner, InternalAccountRecord, InternalAccountType, Owner } from '../domain/internal-account.js';

/**
 * Internal accounts, read together with their ledger running totals. Raw SQL on
 * purpose: provisioning relies on INSERT ... ON CONFLICT against the
 * one-account-per-currency unique key.
 */

/**
 * The `internal_accounts` columns of a record, qualified by `alias` when given. With the ledger
 * totals (`posted_balance`, `pending_debits`, `pending_credits`) they are the row
 * `internalAccountFromRow` maps: SELECT_ACCOUNT here, and the ledger's write statement, which returns
 * an account after its totals moved (LedgerRepository.writeEntry).
 */
export function accountColumns(alias?: string): string {
  const p = alias ? `${alias}.` : '';
  return ['id', 'platform_id', 'owner', 'customer_id', 'type', 'currency', 'environment', 'funding_seq',
    'funding_reference', 'created_at', 'updated_at', 'private_enabled'].map((c) => p + c).join(', ');
}

const SELECT_ACCOUNT = `
  SELECT ${accountColumns('ia')},
         la.posted_credits - la.posted_debits AS posted_balance, la.pending_debits, la.pending_credits
  FROM internal_accounts ia JOIN ledger_accounts la ON la.id = ia.id`;

/** An internal account's row with its ledger totals (see accountColumns). */
export interface InternalAccountRow {
  id: string;
  platform_id: string;
  owner: Owner;
  customer_id: string | null;
  type: InternalAccountType;
  currency: string;
  environment: Environment;
  funding_seq: string | number;
  funding_reference: string;
  created_at: Date | string;
  updated_at: Date | string;
  posted_balance: string | number;
  pending_debits: string | number;
  pending_credits: string | number;
  private_enabled: boolean;
}

/** The one mapper of an internal account's row. */
export function internalAccountFromRow(r: InternalAccountRow): InternalAccountRecord {
  return {
    id: r.id,
    platformId: r.platform_id,
    owner: r.owner,
    ...(r.customer_id ? { customerId: r.customer_id } : {}),
    type: r.type,
    currency: r.currency,
    environment: r.environment,
    fundingSeq: toBigInt(r.funding_seq),
    fundingReference: r.funding_reference,
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
    postedBalance: toBigInt(r.posted_balance),
    pendingDebits: toBigInt(r.pending_debits),
    pendingCredits: toBigInt(r.pending_credits),
    ...(r.type === 'EMBEDDED_WALLET' ? { privateEnabled: Boolean(r.private_enabled) } : {}),
  };
}

export interface NewAccount {
  id: string;
  currency: string;
  type: InternalAccountType;
}

export class InternalAccountRepository {
  /** The owner's accounts in the given currencies (any type). */
  async findByOwner(
    em: EntityManager,
    o: AccountOwner,
    currencies: readonly string[],
  ): Promise<InternalAccountRecord[]> {
    if (currencies.length === 0) return [];
    const rows = await em.execute<InternalAccountRow[]>(
      `${SELECT_ACCOUNT}
       WHERE ia.platform_id = ? AND ia.owner = ? AND ia.customer_id IS NOT DISTINCT FROM ? AND ia.currency IN (${currencies.map(() => '?').join(', ')})
       ORDER BY ia.created_at, ia.id`,
      [o.platformId, o.owner, o.customerId ?? null, ...currencies],
    );
    return rows.map(internalAccountFromRow);
  }

  /**
   * Inserts the accounts that do not exist yet, with their ledger accounts.
   * Concurrent callers race on the unique key (platform, owner, customer,
   * currency, type): the loser's row is skipped (ON CONFLICT DO NOTHING), never
   * duplicated. Returns the ids actually inserted.
   */
  async insertMissing(
    em: EntityManager,
    o: AccountOwner,
    environment: Environment,
    accounts: readonly NewAccount[],
    now: Date,
  ): Promise<string[]> {
    if (accounts.length === 0) return [];
    const seqRows = await em.execute<{ seq: string }[]>(
      `SELECT nextval('internal_account_funding_seq') AS seq FROM generate_series(1, ?)`,
      [accounts.length],
    );
    const values: unknown[] = [];
    const tuples = accounts.map((a, i) => {
      const seq = toBigInt(seqRows[i]!.seq);
      values.push(
        a.id,
        o.platformId,
        o.owner,
        o.customerId ?? null,
        a.type,
        a.currency,
        environment,
        seq.toString(),
        fundingReference(seq),
        now,
        now,
      );
      return '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';
    });
    const inserted = await em.execute<{ id: string; currency: string }[]>(
      `INSERT INTO internal_accounts (id, platform_id, owner, customer_id, type, currency, environment, funding_seq, funding_reference, created_at, updated_at)
       VALUES ${tuples.join(', ')}
       ON CONFLICT (platform_id, owner, customer_id, currency, type) DO NOTHING
       RETURNING id, currency`,
      values,
    );
    if (inserted.length) {
      const ledgerValues: unknown[] = [];
      const ledgerTuples = inserted.map((r) => {
        ledgerValues.push(r.id, o.platformId, r.currency, now, now);
        return `(?, ?, ?, 'INTERNAL', false, ?, ?)`;
      });
      await em.execute(
        `INSERT INTO ledger_accounts (id, platform_id, currency, kind, allow_negative, created_at, updated_at) VALUES ${ledgerTuples.join(', ')}`,
        ledgerValues,
      );
    }
    return inserted.map((r) => r.id);
  }

  /** One account of the platform, or undefined (another platform's account is not found). */
  async get(em: EntityManager, platformId: string, id: string): Promise<InternalAccountRecord | undefined> {
    const rows = await em.execute<InternalAccountRow[]>(`${SELECT_ACCOUNT} WHERE ia.platform_id = ? AND ia.id = ?`, [
      platformId,
      id,
    ]);
    return rows[0] ? internalAccountFromRow(rows[0]) : undefined;
  }

  /** A page of accounts (oldest first, keyset after `after`) fetched with `limit + 1` rows, and the total count. */
  async list(
    em: EntityManager,
    f: AccountFilter,
    limit: number,
    after?: CursorPosition,
  ): Promise<{ rows: InternalAccountRecord[]; total: number }> {
    const where: string[] = ['ia.platform_id = ?', 'ia.owner = ?'];
    const params: unknown[] = [f.platformId, f.owner];
    if (f.customerId !== undefined) {
      where.push('ia.customer_id = ?');
      params.push(f.customerId);
    }
    if (f.currency !== undefined) {
      where.push('ia.currency = ?');
      params.push(f.currency);
    }
    if (f.type !== undefined) {
      where.push('ia.type = ?');
      params.push(f.type);
    }
    const countRows = await em.execute<{ n: string }[]>(
      `SELECT count(*) AS n FROM internal_accounts ia WHERE ${where.join(' AND ')}`,
      params,
    );
    const pageWhere = [...where];
    const pageParams = [...params];
    if (after) {
      pageWhere.push('(ia.created_at, ia.id) > (?::timestamptz, ?)');
      pageParams.push(after.k, after.id);
    }
    const rows = await em.execute<InternalAccountRow[]>(
      `${SELECT_ACCOUNT} WHERE ${pageWhere.join(' AND ')} ORDER BY ia.created_at, ia.id LIMIT ?`,
      [...pageParams, limit + 1],
    );
    return { rows: rows.map(internalAccountFromRow), total: Number(countRows[0]?.n ?? 0) };
  }

  /** Sets an EMBEDDED_WALLET account's privacy flag; false when no such account of the platform. */
  async setPrivateEnabled(em: EntityManager, platformId: string, id: string, value: boolean, now: Date): Promise<boolean> {
    const rows = await em.execute<{ id: string }[]>(
      `UPDATE internal_accounts SET private_enabled = ?, updated_at = GREATEST(updated_at, ?::timestamptz)
        WHERE platform_id = ? AND id = ? AND type = 'EMBEDDED_WALLET' RETURNING id`,
      [value, now, platformId, id],
    );
    return rows.length === 1;
  }

  /** Customers of the platform that own at least one internal account. */
  async customersOf(em: EntityManager, platformId: string): Promise<string[]> {
    const rows = await em.execute<{ customer_id: string }[]>(
      `SELECT DISTINCT customer_id FROM internal_accounts WHERE platform_id = ? AND customer_id IS NOT NULL ORDER BY customer_id`,
      [platformId],
    );
    return rows.map((r) => r.customer_id);
  }

  /** Marks the accounts as changed (their balance moved). */
  async touch(em: EntityManager, ids: readonly string[], now: Date): Promise<void> {
    if (ids.length === 0) return;
    await em.execute(
      `UPDATE internal_accounts SET updated_at = GREATEST(updated_at, ?::timestamptz) WHERE id IN (${ids.map(() => '?').join(', ')})`,
      [now, ...ids],
    );
  }
}
