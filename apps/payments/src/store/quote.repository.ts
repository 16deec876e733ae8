import type { MasterKeyring } from '@sluice/crypto';
import { pgTextArray, writeAtCommit, type EntityManager } from '@sluice/store';
import type { QuoteAmounts } from '../domain/pricing.js';
import type { PurposeOfPayment, Quote } from '../domain/quote.js';
import type { Ratio } from '../domain/ratio.js';
import { predecessors, QUOTE_TRANSITIONS, type QuoteStatus } from '../domain/state-machines.js';
import type { PaymentInstruction } from '../domain/payment-instructions.js';
import type { TransactionEndpoint } from '../domain/transaction.js';
import {
  openCounterpartyInformation,
  openSenderCustomerInfo,
  openUmaAddress,
  sealCounterpartyInformation,
  sealSenderCustomerInfo,
  sealUmaAddress,
} from './sealing.js';
import { fromJson, insertRow } from './sql.js';

type Json = Record<string, unknown>;

/** A row of `payments.quotes` (the locked amounts exact in jsonb: bigints and ratios as text). */
interface QuoteRow {
  id: string;
  platform_id: string;
  status: QuoteStatus;
  source: TransactionEndpoint | string;
  /** Without its `umaAddress`, sealed (store/sealing.ts) in `sealed_destination_uma_address`; rows written before sealing hold it here. */
  destination: TransactionEndpoint | string;
  sealed_destination_uma_address: string | null;
  customer_id: string | null;
  amounts: Json | string;
  lookup_id: string | null;
  description: string | null;
  purpose_of_payment: PurposeOfPayment | null;
  /**
   * The senderCustomerInfo map (payer data: the sender's FULL_NAME, BIRTH_DATE...), sealed
   * (store/sealing.ts) when it is not empty; `sender_customer_info` then holds `{}`, and the map
   * itself only in rows written before sealing.
   */
  sealed_sender_customer_info: string | null;
  sender_customer_info: Json | string;
  /**
   * The counterpartyInformation map, sealed (store/sealing.ts) when it is not empty;
   * `counterparty_information` then holds `{}`, and the map itself only in rows written before sealing.
   */
  sealed_counterparty_information: string | null;
  counterparty_information: Record<string, string> | string;
  transaction_id: string | null;
  signing_request_id: string | null;
  payload_to_sign: string | null;
  payment_instructions: PaymentInstruction[] | string | null;
  source_embedded_wallet: boolean | null;
  created_at: Date | string;
  expires_at: Date | string;
  updated_at: Date | string;
  /** Copies of the amounts' currencies and totals, for constraints and queries. */
  sending_currency: string;
  receiving_currency: string;
  total_sending_amount: string;
  total_receiving_amount: string;
}

const JSONB = new Set([
  'source',
  'destination',
  'amounts',
  'sender_customer_info',
  'counterparty_information',
  'payment_instructions',
]);
const ratioOut = (r: Ratio) => ({ num: r.num.toString(), den: r.den.toString() });
const ratioIn = (r: unknown): Ratio => {
  const o = r as { num: string; den: string };
  return { num: BigInt(o.num), den: BigInt(o.den) };
};

/** QuoteAmounts as JSON: bigints as decimal strings, ratios as {num, den} strings (exact). */
function amountsOut(a: QuoteAmounts): Json {
  const d = a.rateDetails;
  return {
    sendingCurrency: a.sendingCurrency,
    receivingCurrency: a.receivingCurrency,
    lockedCurrencySide: a.lockedCurrencySide,
    lockedCurrencyAmount: a.lockedCurrencyAmount.toString(),
    totalSendingAmount: a.totalSendingAmount.toString(),
    totalReceivingAmount: a.totalReceivingAmount.toString(),
    feesIncluded: a.feesIncluded.toString(),
    convertedSendingAmount: a.convertedSendingAmount.toString(),
    exchangeRate: ratioOut(a.exchangeRate),
    roundingAbsorbed: ratioOut(a.roundingAbsorbed),
    rateDetails: {
      counterpartyMultiplier: ratioOut(d.counterpartyMultiplier),
      counterpartyFixedFee: d.counterpartyFixedFee.toString(),
      gridApiMultiplier: ratioOut(d.gridApiMultiplier),
      gridApiFixedFee: d.gridApiFixedFee.toString(),
      gridApiVariableFeeRate: ratioOut(d.gridApiVariableFeeRate),
      gridApiVariableFeeAmount: d.gridApiVariableFeeAmount.toString(),
    },
  };
}

function amountsIn(j: Json): QuoteAmounts {
  const d = j.rateDetails as Json;
  const big = (v: unknown) => BigInt(v as string);
  return {
    sendingCurrency: j.sendingCurrency as string,
    receivingCurrency: j.receivingCurrency as string,
    lockedCurrencySide: j.lockedCurrencySide as QuoteAmounts['lockedCurrencySide'],
    lockedCurrencyAmount: big(j.lockedCurrencyAmount),
    totalSendingAmount: big(j.totalSendingAmount),
    totalReceivingAmount: big(j.totalReceivingAmount),
    feesIncluded: big(j.feesIncluded),
    convertedSendingAmount: big(j.convertedSendingAmount),
    exchangeRate: ratioIn(j.exchangeRate),
    roundingAbsorbed: ratioIn(j.roundingAbsorbed),
    rateDetails: {
      counterpartyMultiplier: ratioIn(d.counterpartyMultiplier),
      counterpartyFixedFee: big(d.counterpartyFixedFee),
      gridApiMultiplier: ratioIn(d.gridApiMultiplier),
      gridApiFixedFee: big(d.gridApiFixedFee),
      gridApiVariableFeeRate: ratioIn(d.gridApiVariableFeeRate),
      gridApiVariableFeeAmount: big(d.gridApiVariableFeeAmount),
    },
  };
}

/**
 * The one mapper of `payments.quotes`: Quote ↔ QuoteRow (counterpartyInformation,
 * senderCustomerInfo and the destination's UMA address sealed under `keyring`).
 */
const quoteRow = (keyring: MasterKeyring) => ({
  to(q: Quote): QuoteRow {
    const { umaAddress, ...destination } = q.destination;
    return {
      id: q.id,
      platform_id: q.platformId,
      status: q.status,
      source: JSON.stringify(q.source),
      destination: JSON.stringify(destination),
      sealed_destination_uma_address: sealUmaAddress(keyring, 'quoteDestination', q.id, umaAddress),
      customer_id: q.customerId ?? null,
      sending_currency: q.amounts.sendingCurrency,
      receiving_currency: q.amounts.receivingCurrency,
      total_sending_amount: q.amounts.totalSendingAmount.toString(),
      total_receiving_amount: q.amounts.totalReceivingAmount.toString(),
      amounts: JSON.stringify(amountsOut(q.amounts)),
      lookup_id: q.lookupId ?? null,
      description: q.description ?? null,
      purpose_of_payment: q.purposeOfPayment ?? null,
      ...sealSenderCustomerInfo(keyring, q.id, q.senderCustomerInfo),
      ...sealCounterpartyInformation(keyring, q.id, q.counterpartyInformation),
      transaction_id: q.transactionId ?? null,
      signing_request_id: q.signingRequestId ?? null,
      payload_to_sign: q.payloadToSign ?? null,
      payment_instructions: q.paymentInstructions ? JSON.stringify(q.paymentInstructions) : null,
      source_embedded_wallet: q.sourceEmbeddedWallet ?? null,
      created_at: q.createdAt,
      expires_at: q.expiresAt,
      updated_at: q.updatedAt,
    };
  },

  from(r: QuoteRow): Quote {
    const destination = fromJson<TransactionEndpoint>(r.destination);
    const umaAddress = openUmaAddress(keyring, 'quoteDestination', r.id, r.sealed_destination_uma_address, destination.umaAddress);
    return {
      id: r.id,
      platformId: r.platform_id,
      status: r.status,
      source: fromJson<TransactionEndpoint>(r.source),
      destination: { ...destination, ...(umaAddress ? { umaAddress } : {}) },
      ...(r.customer_id ? { customerId: r.customer_id } : {}),
      amounts: amountsIn(fromJson<Json>(r.amounts)),
      ...(r.lookup_id ? { lookupId: r.lookup_id } : {}),
      ...(r.description !== null ? { description: r.description } : {}),
      ...(r.purpose_of_payment ? { purposeOfPayment: r.purpose_of_payment } : {}),
      senderCustomerInfo: openSenderCustomerInfo(keyring, r.id, r.sealed_sender_customer_info, r.sender_customer_info),
      counterpartyInformation: openCounterpartyInformation(
        keyring,
        r.id,
        r.sealed_counterparty_information,
        r.counterparty_information,
      ),
      ...(r.transaction_id ? { transactionId: r.transaction_id } : {}),
      ...(r.signing_request_id ? { signingRequestId: r.signing_request_id } : {}),
      ...(r.payload_to_sign ? { payloadToSign: r.payload_to_sign } : {}),
      ...(r.source_embedded_wallet !== null && r.source_embedded_wallet !== undefined
        ? { sourceEmbeddedWallet: r.source_embedded_wallet }
        : {}),
      ...(r.payment_instructions
        ? { paymentInstructions: fromJson<PaymentInstruction[]>(r.payment_instructions) }
        : {}),
      createdAt: new Date(r.created_at),
      expiresAt: new Date(r.expires_at),
      updatedAt: new Date(r.updated_at),
    };
  },
});

/** Quotes in `payments.quotes` (exact SQL: guarded status changes that race executions against expiry). */
export class QuoteRepository {
  private readonly rows: ReturnType<typeof quoteRow>;

  constructor(keyring: MasterKeyring) {
    this.rows = quoteRow(keyring);
  }

  /** Inserts a new quote in the COMMIT's round trip of `em`'s transaction (writeAtCommit): nothing in the creating transaction reads it back. */
  async insert(em: EntityManager, q: Quote): Promise<void> {
    await writeAtCommit(em, ...insertRow('quotes', this.rows.to(q), JSONB));
  }

  /** The platform's quote, or undefined (also for another platform's id). */
  async get(
    em: EntityManager,
    platformId: string,
    id: string,
    forUpdate = false,
  ): Promise<Quote | undefined> {
    const rows = await em.execute<QuoteRow[]>(
      `SELECT * FROM quotes WHERE id = ? AND platform_id = ?${forUpdate ? ' FOR UPDATE' : ''}`,
      [id, platformId],
    );
    return rows[0] ? this.rows.from(rows[0]) : undefined;
  }

  /** A quote by id whatever its platform (for jobs, which carry only the id). */
  async find(em: EntityManager, id: string): Promise<Quote | undefined> {
    const rows = await em.execute<QuoteRow[]>(`SELECT * FROM quotes WHERE id = ?`, [id]);
    return rows[0] ? this.rows.from(rows[0]) : undefined;
  }

  /** Quotes by id, whatever their platform (the caller checks it), in one statement. */
  async findMany(em: EntityManager, ids: string[]): Promise<Map<string, Quote>> {
    if (ids.length === 0) return new Map();
    const rows = await em.execute<QuoteRow[]>(`SELECT * FROM quotes WHERE id = ANY(?::text[])`, [pgTextArray(ids)]);
    return new Map(rows.map((r) => { const q = this.rows.from(r); return [q.id, q]; }));
  }

  /**
   * Guarded status change: only from `from` (and, when `notExpiredAt` is
   * given, only while expires_at is after it). Returns the updated quote, or
   * undefined when the guard did not hold (someone else moved it first).
   */
  async transition(
    em: EntityManager,
    id: string,
    from: QuoteStatus,
    to: QuoteStatus,
    now: Date,
    o: { notExpiredAt?: Date; expiredAt?: Date; transactionId?: string } = {},
  ): Promise<Quote | undefined> {
    const params: unknown[] = [to, now];
    let set = 'status = ?, updated_at = ?';
    if (o.transactionId) {
      set += ', transaction_id = ?';
      params.push(o.transactionId);
    }
    let where = 'id = ? AND status = ?';
    params.push(id, from);
    if (o.notExpiredAt) {
      where += ' AND expires_at > ?';
      params.push(o.notExpiredAt);
    }
    if (o.expiredAt) {
      where += ' AND expires_at <= ?';
      params.push(o.expiredAt);
    }
    const rows = await em.execute<QuoteRow[]>(`UPDATE quotes SET ${set} WHERE ${where} RETURNING *`, params);
    return rows[0] ? this.rows.from(rows[0]) : undefined;
  }

  /**
   * A quote following its transaction to `to` (COMPLETED, FAILED or EXPIRED): a
   * guarded update from the states QUOTE_TRANSITIONS allows to reach it; a quote
   * already there (or elsewhere) is left alone.
   */
  async follow(em: EntityManager, id: string, to: QuoteStatus, now: Date): Promise<void> {
    const from = predecessors(QUOTE_TRANSITIONS, to);
    if (!from.length) return;
    await em.execute(
      `UPDATE quotes SET status = ?, updated_at = ? WHERE id = ? AND status IN (${from.map(() => '?').join(', ')})`,
      [to, now, id, ...from],
    );
  }

  /** Records the wallet-auth signing request of a quote (EMBEDDED_WALLET source); returns the updated quote. */
  async setSigningRequest(
    em: EntityManager,
    id: string,
    signing: { requestId: string; payloadToSign: string },
    now: Date,
  ): Promise<Quote | undefined> {
    const rows = await em.execute<QuoteRow[]>(
      `UPDATE quotes SET signing_request_id = ?, payload_to_sign = ?, updated_at = ? WHERE id = ? RETURNING *`,
      [signing.requestId, signing.payloadToSign, now, id],
    );
    return rows[0] ? this.rows.from(rows[0]) : undefined;
  }
}
