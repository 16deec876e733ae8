import type { EntityManager } from '@sluice/store';
import type { TransactionStatus, TransactionType } from '../domain/state-machines.js';
import type { RateDetails } from '../domain/pricing.js';
import { ratio, type Ratio } from '../domain/ratio.js';
import type { FailureDetail, Refund, Transaction, TransactionEndpoint } from '../domain/transaction.js';

interface Row {
  id: string;
  platform_id: string;
  type: TransactionType;
  status: TransactionStatus;
  source_kind: TransactionEndpoint['kind'];
  source_account_id: string | null;
  source_uma_address: string | null;
  source_currency: string;
  destination_kind: TransactionEndpoint['kind'];
  destination_account_id: string | null;
  destination_uma_address: string | null;
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
  counterparty_information: Record<string, string> | string;
  quote_id: string | null;
  request_key: string | null;
  hold_id: string | null;
  counterparty_identifier: string | null;
  settled_at: Date | string | null;
  exchange_rate: string | null;
  rate_details: Record<string, string> | string | null;
  refund: Record<string, string> | string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

const json = <T>(v: T | string): T => (typeof v === 'string' ? (JSON.parse(v) as T) : v);

/** A ratio as text `num/den` (exact). */
const ratioText = (r: Ratio): string => `${r.num}/${r.den}`;
function parseRatio(s: string): Ratio {
  const [n, d] = s.split('/');
  return ratio(BigInt(n!), BigInt(d ?? '1'));
}

function rateDetailsOut(d: RateDetails): Record<string, string> {
  return {
    counterpartyMultiplier: ratioText(d.counterpartyMultiplier),
    counterpartyFixedFee: d.counterpartyFixedFee.toString(),
    gridApiMultiplier: ratioText(d.gridApiMultiplier),
    gridApiFixedFee: d.gridApiFixedFee.toString(),
    gridApiVariableFeeRate: ratioText(d.gridApiVariableFeeRate),
    gridApiVariableFeeAmount: d.gridApiVariableFeeAmount.toString(),
  };
}

function rateDetailsIn(j: Record<string, string>): RateDetails {
  return {
    counterpartyMultiplier: parseRatio(j.counterpartyMultiplier!),
    counterpartyFixedFee: BigInt(j.counterpartyFixedFee!),
    gridApiMultiplier: parseRatio(j.gridApiMultiplier!),
    gridApiFixedFee: BigInt(j.gridApiFixedFee!),
    gridApiVariableFeeRate: parseRatio(j.gridApiVariableFeeRate!),
    gridApiVariableFeeAmount: BigInt(j.gridApiVariableFeeAmount!),
  };
}

function refundOut(r: Refund | undefined): string | null {
  if (!r) return null;
  return JSON.stringify({
    reference: r.reference,
    initiatedAt: r.initiatedAt.toISOString(),
    ...(r.settledAt ? { settledAt: r.settledAt.toISOString() } : {}),
    status: r.status,
    reason: r.reason,
  });
}

function refundIn(j: Record<string, string>): Refund {
  return {
    reference: j.reference!,
    initiatedAt: new Date(j.initiatedAt!),
    ...(j.settledAt ? { settledAt: new Date(j.settledAt) } : {}),
    status: j.status as Refund['status'],
    reason: j.reason as Refund['reason'],
  };
}

function endpoint(kind: TransactionEndpoint['kind'], acc: string | null, uma: string | null, cur: string) {
  return { kind, ...(acc ? { accountId: acc } : {}), ...(uma ? { umaAddress: uma } : {}), currency: cur };
}

function fromRow(r: Row): Transaction {
  return {
    id: r.id,
    platformId: r.platform_id,
    type: r.type,
    status: r.status,
    source: endpoint(r.source_kind, r.source_account_id, r.source_uma_address, r.source_currency),
    destination: {
      ...endpoint(
        r.destination_kind,
        r.destination_account_id,
        r.destination_uma_address,
        r.destination_currency,
      ),
      ...(r.destination_payment_rail ? { paymentRail: r.destination_payment_rail } : {}),
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
    counterpartyInformation:
      typeof r.counterparty_information === 'string'
        ? (JSON.parse(r.counterparty_information) as Record<string, string>)
        : r.counterparty_information,
    ...(r.quote_id ? { quoteId: r.quote_id } : {}),
    ...(r.request_key ? { requestKey: r.request_key } : {}),
    ...(r.hold_id ? { holdId: r.hold_id } : {}),
    ...(r.counterparty_identifier ? { counterpartyIdentifier: r.counterparty_identifier } : {}),
    ...(r.settled_at ? { settledAt: new Date(r.settled_at) } : {}),
    ...(r.exchange_rate ? { exchangeRate: parseRatio(r.exchange_rate) } : {}),
    ...(r.rate_details ? { rateDetails: rateDetailsIn(json(r.rate_details)) } : {}),
    ...(r.refund ? { refund: refundIn(json(r.refund)) } : {}),
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
  };
}

/** Filters of GET /transactions (all optional, combined with AND). */
export interface TransactionFilter {
  platformId: string;
  /** A customer id; `null` selects the platform's own transactions. */
  customerId?: string | null;
  platformCustomerId?: string;
  accountIdentifier?: string;
  senderAccountIdentifier?: string;
  receiverAccountIdentifier?: string;
  status?: TransactionStatus;
  type?: TransactionType;
  reference?: string;
  startDate?: Date;
  endDate?: Date;
  sortOrder: 'asc' | 'desc';
  limit: number;
  after?: { createdAt: Date; id: string };
}

/** Transactions in `payments.transactions`. */
export class TransactionRepository {
  async insert(em: EntityManager, t: Transaction): Promise<void> {
    await em.execute(
      `INSERT INTO transactions (id, platform_id, type, status, source_kind, source_account_id, source_uma_address,
        source_currency, destination_kind, destination_account_id, destination_uma_address, destination_currency,
        customer_id, platform_customer_id, sent_amount, received_amount, fees, reference, description,
        failure_reason, failure_detail, counterparty_information, quote_id, request_key, hold_id, counterparty_identifier, settled_at,
        exchange_rate, rate_details, refund, created_at, updated_at, destination_payment_rail)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?, ?, ?, ?::jsonb, ?::jsonb, ?, ?, ?)`,
      [
        t.id,
        t.platformId,
        t.type,
        t.status,
        t.source.kind,
        t.source.accountId ?? null,
        t.source.umaAddress ?? null,
        t.source.currency,
        t.destination.kind,
        t.destination.accountId ?? null,
        t.destination.umaAddress ?? null,
        t.destination.currency,
        t.customerId ?? null,
        t.platformCustomerId ?? null,
        t.sentAmount.toString(),
        t.receivedAmount.toString(),
        t.fees.toString(),
        t.reference,
        t.description ?? null,
        t.failureReason ?? null,
        t.failureDetail ?? null,
        JSON.stringify(t.counterpartyInformation),
        t.quoteId ?? null,
        t.requestKey ?? null,
        t.holdId ?? null,
        t.counterpartyIdentifier ?? null,
        t.settledAt ?? null,
        t.exchangeRate ? ratioText(t.exchangeRate) : null,
        t.rateDetails ? JSON.stringify(rateDetailsOut(t.rateDetails)) : null,
        refundOut(t.refund),
        t.createdAt,
        t.updatedAt,
        t.destination.paymentRail ?? null,
      ],
    );
  }

  /**
   * Writes a status change (and the refund), only if the row is still in `from`
   * (the state machine's guard against concurrent moves; `from` may equal the
   * status for a refund-only change). Returns false when it was not.
   */
  async updateStatus(em: EntityManager, t: Transaction, from: TransactionStatus): Promise<boolean> {
    const res = await em.execute(
      `UPDATE transactions SET status = ?, failure_reason = ?, failure_detail = ?, settled_at = ?, refund = ?::jsonb,
         updated_at = ?
       WHERE id = ? AND status = ?`,
      [
        t.status,
        t.failureReason ?? null,
        t.failureDetail ?? null,
        t.settledAt ?? null,
        refundOut(t.refund),
        t.updatedAt,
        t.id,
        from,
      ],
      'run',
    );
    return ((res as { affectedRows?: number }).affectedRows ?? 0) === 1;
  }

  /** Removes a transfer that never got past CREATED (its hold was refused); no webhook was ever sent for it. */
  async deleteCreated(em: EntityManager, id: string): Promise<void> {
    await em.execute(`DELETE FROM transactions WHERE id = ? AND status = 'CREATED'`, [id]);
  }

  async get(
    em: EntityManager,
    platformId: string,
    id: string,
    forUpdate = false,
  ): Promise<Transaction | undefined> {
    const rows = await em.execute<Row[]>(
      `SELECT * FROM transactions WHERE id = ? AND platform_id = ?${forUpdate ? ' FOR UPDATE' : ''}`,
      [id, platformId],
    );
    return rows[0] ? fromRow(rows[0]) : undefined;
  }

  async byRequestKey(
    em: EntityManager,
    platformId: string,
    requestKey: string,
  ): Promise<Transaction | undefined> {
    const rows = await em.execute<Row[]>(
      `SELECT * FROM transactions WHERE platform_id = ? AND request_key = ?`,
      [platformId, requestKey],
    );
    return rows[0] ? fromRow(rows[0]) : undefined;
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
    if (f.accountIdentifier !== undefined) {
      const id = f.accountIdentifier;
      add(
        '(source_account_id = ? OR destination_account_id = ? OR source_uma_address = ? OR destination_uma_address = ?)',
        id,
        id,
        id,
        id,
      );
    }
    if (f.senderAccountIdentifier !== undefined) {
      add(
        '(source_account_id = ? OR source_uma_address = ?)',
        f.senderAccountIdentifier,
        f.senderAccountIdentifier,
      );
    }
    if (f.receiverAccountIdentifier !== undefined) {
      add(
        '(destination_account_id = ? OR destination_uma_address = ?)',
        f.receiverAccountIdentifier,
        f.receiverAccountIdentifier,
      );
    }
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
    const rows = await em.execute<Row[]>(
      `SELECT * FROM transactions WHERE ${pageWhere.join(' AND ')} ORDER BY created_at ${dir}, id ${dir} LIMIT ?`,
      [...pageParams, f.limit + 1],
    );
    return { rows: rows.map(fromRow), total: Number(totalRows[0]?.n ?? 0) };
  }
}
