import { PAYMENT_RAILS } from '@sluice/core';
import type { MasterKeyring } from '@sluice/crypto';
import { isPaymentRail } from '../domain/payment-rails.js';
import type { RateDetails } from '../domain/pricing.js';
import { ratio, type Ratio } from '../domain/ratio.js';
import type { TransactionStatus, TransactionType } from '../domain/state-machines.js';
import type { FailureDetail, Refund, Transaction, TransactionEndpoint } from '../domain/transaction.js';
import type { TransactionQuery } from '../domain/transaction-query.js';
import { pgTextArray, writeAtCommit, type EntityManager } from '@sluice/store';
import {
  openCounterpartyIdentifier,
  openCounterpartyInformation,
  openUmaAddress,
  sealCounterpartyIdentifier,
  sealCounterpartyInformation,
  sealTransactionUmaAddresses,
  transactionUmaAddressIndexes,
  type TransactionSide,
} from './sealing.js';
import { affectedRows, fromJson, insertRow } from './sql.js';

/** A row of `payments.transactions` (bigints as decimal text, as pg returns them). */
interface TransactionRow {
  id: string;
  platform_id: string;
  type: TransactionType;
  status: TransactionStatus;
  source_kind: TransactionEndpoint['kind'];
  source_account_id: string | null;
  /**
   * The UMA addresses of the endpoints (an incoming payment's sender, the receiver of a payment to
   * a UMA address), sealed (store/sealing.ts) beside their blind index (GET /transactions filters
   * on them); `source_uma_address` / `destination_uma_address` then stay null, and hold the address
   * itself only in rows written before sealing.
   */
  source_uma_address: string | null;
  sealed_source_uma_address: string | null;
  source_uma_address_index: string | null;
  source_currency: string;
  destination_kind: TransactionEndpoint['kind'];
  destination_account_id: string | null;
  destination_uma_address: string | null;
  sealed_destination_uma_address: string | null;
  destination_uma_address_index: string | null;
  destination_currency: string;
  destination_payment_rail: string | null;
  customer_id: string | null;
  platform_customer_id: string | null;
  sent_amount: string;
  received_amount: string;
  fees: string;
  reference: string;
  description: string | null;
  failure_reason: string | null;
  failure_detail: FailureDetail | null;
  /**
   * The counterpartyInformation map, sealed (store/sealing.ts) when it is not empty;
   * `counterparty_information` then holds `{}`, and the map itself only in rows written before sealing.
   */
  sealed_counterparty_information: string | null;
  counterparty_information: Record<string, string> | string;
  quote_id: string | null;
  request_key: string | null;
  agent_id: string | null;
  hold_id: string | null;
  /**
   * What the rail pays to or is paid from (an external account's number, IBAN, CLABE, PIX key or
   * wallet address; a UMA address), sealed (store/sealing.ts); `counterparty_identifier` then stays
   * null, and holds the value itself only in rows written before sealing.
   */
  sealed_counterparty_identifier: string | null;
  counterparty_identifier: string | null;
  settled_at: Date | string | null;
  /** Exact, as `num/den`. */
  exchange_rate: string | null;
  rate_details: StoredRateDetails | string | null;
  refund: StoredRefund | string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

/** RateDetails in jsonb: ratios as `num/den`, bigints as decimal text. */
type StoredRateDetails = Record<keyof RateDetails, string>;

/** A Refund in jsonb: instants as ISO text. */
interface StoredRefund {
  reference: string;
  initiatedAt: string;
  settledAt?: string;
  status: Refund['status'];
  reason: Refund['reason'];
}

const JSONB = new Set(['counterparty_information', 'rate_details', 'refund']);

const ratioText = (r: Ratio): string => `${r.num}/${r.den}`;
function parseRatio(s: string): Ratio {
  const [n, d] = s.split('/');
  return ratio(BigInt(n!), BigInt(d ?? '1'));
}

/** The columns a status change writes (`updateStatus`), as the mapper writes them. */
type StatusColumns = Pick<
  TransactionRow,
  'id' | 'status' | 'failure_reason' | 'failure_detail' | 'settled_at' | 'refund' | 'updated_at'
>;

function statusColumns(t: Transaction): StatusColumns {
  return {
    id: t.id,
    status: t.status,
    failure_reason: t.failureReason ?? null,
    failure_detail: t.failureDetail ?? null,
    settled_at: t.settledAt ?? null,
    refund: refundOut(t.refund),
    updated_at: t.updatedAt,
  };
}

/**
 * The one mapper of `payments.transactions`: Transaction ↔ TransactionRow (counterpartyInformation
 * and counterpartyIdentifier sealed under `keyring`).
 */
const transactionRow = (keyring: MasterKeyring) => ({
  to(t: Transaction): TransactionRow {
    return {
      ...statusColumns(t),
      platform_id: t.platformId,
      type: t.type,
      source_kind: t.source.kind,
      source_account_id: t.source.accountId ?? null,
      source_currency: t.source.currency,
      destination_kind: t.destination.kind,
      destination_account_id: t.destination.accountId ?? null,
      destination_currency: t.destination.currency,
      ...sealTransactionUmaAddresses(keyring, t.id, t.source.umaAddress, t.destination.umaAddress),
      destination_payment_rail: t.destination.paymentRail ?? null,
      customer_id: t.customerId ?? null,
      platform_customer_id: t.platformCustomerId ?? null,
      sent_amount: t.sentAmount.toString(),
      received_amount: t.receivedAmount.toString(),
      fees: t.fees.toString(),
      reference: t.reference,
      description: t.description ?? null,
      ...sealCounterpartyInformation(keyring, t.id, t.counterpartyInformation),
      quote_id: t.quoteId ?? null,
      request_key: t.requestKey ?? null,
      agent_id: t.agentId ?? null,
      hold_id: t.holdId ?? null,
      ...sealCounterpartyIdentifier(keyring, t.id, t.counterpartyIdentifier),
      exchange_rate: t.exchangeRate ? ratioText(t.exchangeRate) : null,
      rate_details: t.rateDetails ? JSON.stringify(rateDetailsOut(t.rateDetails)) : null,
      created_at: t.createdAt,
    };
  },

  from(r: TransactionRow): Transaction {
    const endpoint = (
      kind: TransactionEndpoint['kind'],
      acc: string | null,
      uma: string | undefined,
      currency: string,
    ) => ({
      kind,
      ...(acc ? { accountId: acc } : {}),
      ...(uma ? { umaAddress: uma } : {}),
      currency,
    });
    const rail = r.destination_payment_rail;
    const counterpartyIdentifier = openCounterpartyIdentifier(
      keyring,
      r.id,
      r.sealed_counterparty_identifier,
      r.counterparty_identifier,
    );
    return {
      id: r.id,
      platformId: r.platform_id,
      type: r.type,
      status: r.status,
      source: endpoint(
        r.source_kind,
        r.source_account_id,
        openUmaAddress(keyring, 'transactionSource', r.id, r.sealed_source_uma_address, r.source_uma_address),
        r.source_currency,
      ),
      destination: {
        ...endpoint(
          r.destination_kind,
          r.destination_account_id,
          openUmaAddress(keyring, 'transactionDestination', r.id, r.sealed_destination_uma_address, r.destination_uma_address),
          r.destination_currency,
        ),
        ...(rail && isPaymentRail(rail, PAYMENT_RAILS) ? { paymentRail: rail } : {}),
      },
      ...(r.customer_id ? { customerId: r.customer_id } : {}),
      ...(r.platform_customer_id ? { platformCustomerId: r.platform_customer_id } : {}),
      sentAmount: BigInt(r.sent_amount),
      receivedAmount: BigInt(r.received_amount),
      fees: BigInt(r.fees),
      reference: r.reference,
      ...(r.description !== null ? { description: r.description } : {}),
      ...(r.failure_reason ? { failureReason: r.failure_reason } : {}),
      ...(r.failure_detail ? { failureDetail: r.failure_detail } : {}),
      counterpartyInformation: openCounterpartyInformation(
        keyring,
        r.id,
        r.sealed_counterparty_information,
        r.counterparty_information,
      ),
      ...(r.quote_id ? { quoteId: r.quote_id } : {}),
      ...(r.request_key ? { requestKey: r.request_key } : {}),
      ...(r.agent_id ? { agentId: r.agent_id } : {}),
      ...(r.hold_id ? { holdId: r.hold_id } : {}),
      ...(counterpartyIdentifier ? { counterpartyIdentifier } : {}),
      ...(r.settled_at ? { settledAt: new Date(r.settled_at) } : {}),
      ...(r.exchange_rate ? { exchangeRate: parseRatio(r.exchange_rate) } : {}),
      ...(r.rate_details ? { rateDetails: rateDetailsIn(fromJson(r.rate_details)) } : {}),
      ...(r.refund ? { refund: refundIn(fromJson(r.refund)) } : {}),
      createdAt: new Date(r.created_at),
      updatedAt: new Date(r.updated_at),
    };
  },
});

function rateDetailsOut(d: RateDetails): StoredRateDetails {
  return {
    counterpartyMultiplier: ratioText(d.counterpartyMultiplier),
    counterpartyFixedFee: d.counterpartyFixedFee.toString(),
    gridApiMultiplier: ratioText(d.gridApiMultiplier),
    gridApiFixedFee: d.gridApiFixedFee.toString(),
    gridApiVariableFeeRate: ratioText(d.gridApiVariableFeeRate),
    gridApiVariableFeeAmount: d.gridApiVariableFeeAmount.toString(),
  };
}

function rateDetailsIn(j: StoredRateDetails): RateDetails {
  return {
    counterpartyMultiplier: parseRatio(j.counterpartyMultiplier),
    counterpartyFixedFee: BigInt(j.counterpartyFixedFee),
    gridApiMultiplier: parseRatio(j.gridApiMultiplier),
    gridApiFixedFee: BigInt(j.gridApiFixedFee),
    gridApiVariableFeeRate: parseRatio(j.gridApiVariableFeeRate),
    gridApiVariableFeeAmount: BigInt(j.gridApiVariableFeeAmount),
  };
}

function refundOut(r: Refund | undefined): string | null {
  if (!r) return null;
  const stored: StoredRefund = {
    reference: r.reference,
    initiatedAt: r.initiatedAt.toISOString(),
    ...(r.settledAt ? { settledAt: r.settledAt.toISOString() } : {}),
    status: r.status,
    reason: r.reason,
  };
  return JSON.stringify(stored);
}

function refundIn(j: StoredRefund): Refund {
  return {
    reference: j.reference,
    initiatedAt: new Date(j.initiatedAt),
    ...(j.settledAt ? { settledAt: new Date(j.settledAt) } : {}),
    status: j.status,
    reason: j.reason,
  };
}

/** GET /transactions as the repository runs it: a page size and the keyset position after the cursor. */
export type TransactionFilter = Omit<TransactionQuery, 'limit' | 'cursor'> & {
  limit: number;
  after?: { createdAt: Date; id: string };
};

/** Transactions in `payments.transactions` (exact SQL: guarded status changes, row locks, keyset pages). */
export class TransactionRepository {
  private readonly rows: ReturnType<typeof transactionRow>;

  constructor(private readonly keyring: MasterKeyring) {
    this.rows = transactionRow(keyring);
  }

  /**
   * Inserts a new transaction; `atCommit`: in the COMMIT's round trip of `em`'s transaction
   * (writeAtCommit), for a caller whose transaction does not read it back.
   */
  async insert(em: EntityManager, t: Transaction, atCommit = false): Promise<void> {
    const [sql, params] = insertRow('transactions', this.rows.to(t), JSONB);
    if (atCommit) await writeAtCommit(em, sql, params);
    else await em.execute(sql, params);
  }

  /**
   * Writes a status change (and the refund), only if the row is still in `from`
   * (the state machine's guard against concurrent moves; `from` may equal the
   * status for a refund-only change). Returns false when it was not. Only the status columns are
   * mapped (nothing is sealed for a status change).
   */
  async updateStatus(em: EntityManager, t: Transaction, from: TransactionStatus, unchangedSince?: Date): Promise<boolean> {
    const row = statusColumns(t);
    // `unchangedSince`: the row as the caller saw it without a lock must not have changed since
    // (its updated_at, compared at the millisecond the driver reads it with).
    const res = await em.execute(
      `UPDATE transactions SET status = ?, failure_reason = ?, failure_detail = ?, settled_at = ?, refund = ?::jsonb,
         updated_at = ?
       WHERE id = ? AND status = ?${unchangedSince ? ` AND date_trunc('milliseconds', updated_at) = ?` : ''}`,
      [
        row.status,
        row.failure_reason,
        row.failure_detail,
        row.settled_at,
        row.refund,
        row.updated_at,
        row.id,
        from,
        ...(unchangedSince ? [unchangedSince] : []),
      ],
      'run',
    );
    return affectedRows(res) === 1;
  }

  /** Sets the agent of a transaction that has none (agent_id is never changed once set). */
  async setAgent(em: EntityManager, id: string, agentId: string): Promise<void> {
    await em.execute(`UPDATE transactions SET agent_id = ? WHERE id = ? AND agent_id IS NULL`, [agentId, id]);
  }

  /** Removes a transfer that never got past CREATED (its hold was refused); no webhook was ever sent for it. */
  async deleteCreated(em: EntityManager, id: string): Promise<void> {
    await em.execute(`DELETE FROM transactions WHERE id = ? AND status = 'CREATED'`, [id]);
  }

  /** The platform's transaction, or undefined (also another platform's); `forUpdate` locks its row. */
  async get(
    em: EntityManager,
    platformId: string,
    id: string,
    forUpdate = false,
  ): Promise<Transaction | undefined> {
    const rows = await em.execute<TransactionRow[]>(
      `SELECT * FROM transactions WHERE id = ? AND platform_id = ?${forUpdate ? ' FOR UPDATE' : ''}`,
      [id, platformId],
    );
    return rows[0] ? this.rows.from(rows[0]) : undefined;
  }

  /** Transactions by id, whatever their platform (the caller checks it), in one statement. */
  async getMany(em: EntityManager, ids: string[]): Promise<Map<string, Transaction>> {
    if (ids.length === 0) return new Map();
    const rows = await em.execute<TransactionRow[]>(`SELECT * FROM transactions WHERE id = ANY(?::text[])`, [pgTextArray(ids)]);
    return new Map(rows.map((r) => { const t = this.rows.from(r); return [t.id, t]; }));
  }

  async byRequestKey(
    em: EntityManager,
    platformId: string,
    requestKey: string,
  ): Promise<Transaction | undefined> {
    const rows = await em.execute<TransactionRow[]>(
      `SELECT * FROM transactions WHERE platform_id = ? AND request_key = ?`,
      [platformId, requestKey],
    );
    return rows[0] ? this.rows.from(rows[0]) : undefined;
  }

  /** One page (limit + 1 rows, to tell whether more follow) and the total matching the filters. */
  async list(em: EntityManager, f: TransactionFilter): Promise<{ rows: Transaction[]; total: number }> {
    const where: string[] = ['platform_id = ?'];
    const params: unknown[] = [f.platformId];
    const add = (clause: string, ...values: unknown[]) => {
      where.push(clause);
      params.push(...values);
    };
    if (f.customerId === null) add('customer_id IS NULL');
    else if (f.customerId !== undefined) add('customer_id = ?', f.customerId);
    if (f.platformCustomerId !== undefined) add('platform_customer_id = ?', f.platformCustomerId);
    // An account id, or a UMA address: its blind index under every key of the ring (rows indexed
    // before a rotation, until rewrap), or the address itself (rows written before sealing).
    const endpointIs = (sides: TransactionSide[], id: string) =>
      add(
        `(${sides.map((s) => `${s}_account_id = ? OR ${s}_uma_address_index = ANY(?::text[]) OR ${s}_uma_address = ?`).join(' OR ')})`,
        ...sides.flatMap((s) => [id, pgTextArray(transactionUmaAddressIndexes(this.keyring, s, id)), id]),
      );
    if (f.accountIdentifier !== undefined) endpointIs(['source', 'destination'], f.accountIdentifier);
    if (f.senderAccountIdentifier !== undefined) endpointIs(['source'], f.senderAccountIdentifier);
    if (f.receiverAccountIdentifier !== undefined) endpointIs(['destination'], f.receiverAccountIdentifier);
    if (f.status !== undefined) add('status = ?', f.status);
    if (f.type !== undefined) add('type = ?', f.type);
    if (f.reference !== undefined) add('reference = ?', f.reference);
    if (f.startDate !== undefined) add('created_at >= ?', f.startDate);
    if (f.endDate !== undefined) add('created_at <= ?', f.endDate);
    const totalRows = await em.execute<{ n: string }[]>(
      `SELECT count(*) AS n FROM transactions WHERE ${where.join(' AND ')}`,
      params,
    );
    const dir = f.sortOrder === 'asc' ? 'ASC' : 'DESC';
    const pageWhere = [...where];
    const pageParams = [...params];
    if (f.after) {
      pageWhere.push(`(created_at, id) ${f.sortOrder === 'asc' ? '>' : '<'} (?, ?)`);
      pageParams.push(f.after.createdAt, f.after.id);
    }
    const rows = await em.execute<TransactionRow[]>(
      `SELECT * FROM transactions WHERE ${pageWhere.join(' AND ')} ORDER BY created_at ${dir}, id ${dir} LIMIT ?`,
      [...pageParams, f.limit + 1],
    );
    return { rows: rows.map((r) => this.rows.from(r)), total: Number(totalRows[0]?.n ?? 0) };
  }
}
