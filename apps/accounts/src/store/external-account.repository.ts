import type { MasterKeyring } from '@sluice/crypto';
import { fromJson, lockKeys, pgTextArray, type EntityManager } from '@sluice/store';
import { paymentRailsOf, type CursorPosition, type Environment } from '@sluice/core';
import type { AccountListFilter, Owner } from '../domain/internal-account.js';
import type { ExternalAccountInfo, ExternalAccountRecord } from '../domain/external-account.js';
import { type BeneficiaryVerificationStatus, type ExternalAccountStatus } from '@sluice/core';
import { dedupeKeys, openAccountData, sealAccountData } from './sealing.js';

/** External accounts (raw SQL: partial unique indexes decide duplicates; soft delete; identifying data sealed, sealing.ts). */

const COLUMNS = `id, platform_id, owner, customer_id, currency, status, sealed_data, account_info, primary_identifier,
  platform_account_id, default_uma_deposit, verification_status, verified_full_name, environment, created_at, updated_at`;

interface Row {
  id: string;
  platform_id: string;
  owner: Owner;
  customer_id: string | null;
  currency: string;
  status: ExternalAccountStatus;
  /** The account's identifying data sealed (sealing.ts); null on rows written before sealing. */
  sealed_data: string | null;
  /** Rows written before sealing only (null once sealed). */
  account_info: ExternalAccountInfo | string | null;
  primary_identifier: string | null;
  platform_account_id: string | null;
  default_uma_deposit: boolean;
  verification_status: BeneficiaryVerificationStatus;
  verified_full_name: string | null;
  environment: Environment;
  created_at: Date | string;
  updated_at: Date | string;
}

/**
 * The stored accountInfo; accounts stored before payment rails were recorded (the five bank
 * variants of then, each with one set of fields) get every rail of their type.
 */
function withRails(info: ExternalAccountInfo): ExternalAccountInfo {
  const rails = paymentRailsOf(info.accountType);
  return info.paymentRails === undefined && rails.length ? { ...info, paymentRails: [...rails] } : info;
}

/** The identifying data of a row: opened when sealed, read from its plaintext columns when written before. */
function identifyingData(
  r: Row,
  keyring: MasterKeyring,
): Pick<ExternalAccountRecord, 'accountInfo' | 'primaryIdentifier' | 'verifiedFullName'> {
  if (r.sealed_data) {
    const d = openAccountData(keyring, r.id, r.sealed_data);
    return {
      accountInfo: d.accountInfo,
      primaryIdentifier: d.primaryIdentifier,
      ...(d.verifiedFullName ? { verifiedFullName: d.verifiedFullName } : {}),
    };
  }
  return {
    accountInfo: fromJson(r.account_info as ExternalAccountInfo | string),
    primaryIdentifier: r.primary_identifier ?? '',
    ...(r.verified_full_name ? { verifiedFullName: r.verified_full_name } : {}),
  };
}

function toRecord(r: Row, keyring: MasterKeyring): ExternalAccountRecord {
  const { accountInfo, ...identifying } = identifyingData(r, keyring);
  return {
    id: r.id,
    platformId: r.platform_id,
    owner: r.owner,
    ...(r.customer_id ? { customerId: r.customer_id } : {}),
    currency: r.currency,
    status: r.status,
    accountInfo: withRails(accountInfo),
    ...identifying,
    ...(r.platform_account_id ? { platformAccountId: r.platform_account_id } : {}),
    defaultUmaDepositAccount: r.default_uma_deposit,
    beneficiaryVerificationStatus: r.verification_status,
    environment: r.environment,
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
  };
}

export class ExternalAccountRepository {
  constructor(private readonly keyring: MasterKeyring) {}

  /**
   * Inserts the account, its identifying data sealed, unless the same account (dedupe key) is
   * already live for this owner and currency: returns false then. The stored dedupe key is a
   * blind index under the current master key, so concurrent duplicates insert once (ON CONFLICT
   * on the partial unique index); rows written under a retired key or before sealing carry
   * another form of it, looked for first (under advisory locks of the ring's indexes).
   */
  async insert(em: EntityManager, a: ExternalAccountRecord, dedupe: string): Promise<boolean> {
    const forms = dedupeKeys(this.keyring, dedupe);
    const [dedupeKey, ...otherForms] = forms;
    // During a rolling rotation one replica may index under the old key while another indexes under
    // the new one: both lock every index of the ring (the old key's is common to both), in order, so
    // the second sees the first's row.
    await lockKeys(em, forms.slice(0, -1));
    const earlier = await em.execute<{ id: string }[]>(
      `SELECT id FROM external_accounts WHERE platform_id = ? AND owner = ? AND customer_id IS NOT DISTINCT FROM ?
         AND currency = ? AND dedupe_key = ANY(?::text[]) AND deleted_at IS NULL LIMIT 1`,
      [a.platformId, a.owner, a.customerId ?? null, a.currency, pgTextArray(otherForms)],
    );
    if (earlier.length) return false;
    const sealed = sealAccountData(this.keyring, a.id, {
      accountInfo: a.accountInfo,
      primaryIdentifier: a.primaryIdentifier,
      ...(a.verifiedFullName ? { verifiedFullName: a.verifiedFullName } : {}),
      dedupe,
    });
    const rows = await em.execute<{ id: string }[]>(
      `INSERT INTO external_accounts (id, platform_id, owner, customer_id, currency, account_type, sealed_data,
         dedupe_key, platform_account_id, default_uma_deposit, status, verification_status,
         environment, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (platform_id, owner, customer_id, currency, dedupe_key) WHERE deleted_at IS NULL DO NOTHING
       RETURNING id`,
      [
        a.id,
        a.platformId,
        a.owner,
        a.customerId ?? null,
        a.currency,
        a.accountInfo.accountType,
        sealed,
        dedupeKey,
        a.platformAccountId ?? null,
        a.defaultUmaDepositAccount,
        a.status,
        a.beneficiaryVerificationStatus,
        a.environment,
        a.createdAt,
        a.updatedAt,
      ],
    );
    return rows.length === 1;
  }

  /** Clears the customer's current default UMA deposit account (before setting a new one). */
  /**
   * Serializes, until the transaction ends, the changes of one customer's default UMA
   * deposit account: two concurrent creates that both claim the default would otherwise
   * both clear (none) and both insert, and the second would fail on
   * `external_accounts_one_uma_default`. Under the lock the second clears the first's.
   */
  async lockUmaDefault(em: EntityManager, platformId: string, customerId: string): Promise<void> {
    await em.execute(`SELECT pg_advisory_xact_lock(hashtextextended(?, 0))`, [
      `accounts:uma-default:${platformId}:${customerId}`,
    ]);
  }

  async clearUmaDefault(em: EntityManager, platformId: string, customerId: string, now: Date): Promise<void> {
    await em.execute(
      `UPDATE external_accounts SET default_uma_deposit = false, updated_at = ?
       WHERE platform_id = ? AND customer_id = ? AND default_uma_deposit AND deleted_at IS NULL`,
      [now, platformId, customerId],
    );
  }

  /**
   * The read of `get` (parameters: platform id, account id), for a statement that embeds it (PlaceHold's
   * payee, read by the hold's statement): `fromJsonRow` maps its row as `to_jsonb` returns it.
   */
  readonly liveSql = `SELECT ${COLUMNS} FROM external_accounts WHERE platform_id = ? AND id = ? AND deleted_at IS NULL`;

  /** A live account of the platform, or undefined (deleted or another platform's). */
  async get(em: EntityManager, platformId: string, id: string): Promise<ExternalAccountRecord | undefined> {
    const rows = await em.execute<Row[]>(this.liveSql, [platformId, id]);
    return rows[0] ? toRecord(rows[0], this.keyring) : undefined;
  }

  /** A row of `liveSql` as `to_jsonb` returns it (timestamps as text, which the mapper takes). */
  fromJsonRow(row: object): ExternalAccountRecord {
    return toRecord(row as Row, this.keyring);
  }

  /** Soft-deletes a live account; returns it as it was, or undefined when there was none. */
  async softDelete(
    em: EntityManager,
    platformId: string,
    id: string,
    now: Date,
  ): Promise<ExternalAccountRecord | undefined> {
    const rows = await em.execute<Row[]>(
      `UPDATE external_accounts SET deleted_at = ?, updated_at = ?, default_uma_deposit = false
       WHERE platform_id = ? AND id = ? AND deleted_at IS NULL
       RETURNING ${COLUMNS}`,
      [now, now, platformId, id],
    );
    return rows[0] ? toRecord(rows[0], this.keyring) : undefined;
  }

  /** A page of live accounts (oldest first, keyset after `after`), `limit + 1` rows, and the total count. */
  async list(
    em: EntityManager,
    f: AccountListFilter,
    limit: number,
    after?: CursorPosition,
  ): Promise<{ rows: ExternalAccountRecord[]; total: number }> {
    const where = ['platform_id = ?', 'owner = ?', 'deleted_at IS NULL'];
    const params: unknown[] = [f.platformId, f.owner];
    if (f.customerId !== undefined) {
      where.push('customer_id = ?');
      params.push(f.customerId);
    }
    if (f.currency !== undefined) {
      where.push('currency = ?');
      params.push(f.currency);
    }
    const count = await em.execute<{ n: string }[]>(
      `SELECT count(*) AS n FROM external_accounts WHERE ${where.join(' AND ')}`,
      params,
    );
    const pageWhere = [...where];
    const pageParams = [...params];
    if (after) {
      pageWhere.push('(created_at, id) > (?::timestamptz, ?)');
      pageParams.push(after.k, after.id);
    }
    const rows = await em.execute<Row[]>(
      `SELECT ${COLUMNS} FROM external_accounts WHERE ${pageWhere.join(' AND ')} ORDER BY created_at, id LIMIT ?`,
      [...pageParams, limit + 1],
    );
    return { rows: rows.map((r) => toRecord(r, this.keyring)), total: Number(count[0]?.n ?? 0) };
  }
}
