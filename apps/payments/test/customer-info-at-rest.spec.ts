import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { common, identity, payments as pb } from '@sluice/contracts';
import type { PromiseClient } from '@sluice/rpc';
import { runServiceCommand } from '@sluice/runtime';
import { TEST_MASTER_KEYS, type World, type WorldPlatform } from '@sluice/testing';
import { paymentsService } from '../src/index.js';
import { IncomingApprovalRepository } from '../src/store/incoming-approval.repository.js';
import { QuoteRepository } from '../src/store/quote.repository.js';
import { accountInfoFor, Holders, startPaymentsWithNeighbours } from './support/neighbours.js';
import { keyringOf, REWRAP_NOTHING_LEFT, rewrapCounts, sealedUnder } from './support/rewrap.js';

// Issue 17: the payer data a quote sends to a UMA receiver's institution (senderCustomerInfo) and
// what a platform answers about its receiver when it approves an incoming payment
// (receiverCustomerInfo) sealed at rest under PAYMENTS_DATA_MASTER_KEY, over real gRPC and Postgres
// with payments' real neighbours: rows read raw hold none of it, the service reads it back (the
// repositories' mappers, on the service's own database connection), a value moved to another row
// does not open, an empty map is not sealed, rows written before sealing are read and sealed by
// `rewrap`, which also moves every sealed value to a new key. Neither map is in an API answer:
// both are kept for audit, and the service reads them on every read of their row.

const SANDBOX = common.Environment.SANDBOX;
const UMA_DOMAIN = 'sandbox.sluice.local';
const ALICE = '$alice@bank.example';
const SENDER = `$success.usd@${UMA_DOMAIN}`;
const THRESHOLD = 100_000n;
const SENDER_INFO = { FULL_NAME: 'Ada Lovelace', BIRTH_DATE: '1815-12-10', NATIONALITY: 'GB' };
/** Values looked for in raw rows: long enough not to turn up in base64 ciphertext by chance ('GB' would). */
const telling = (info: Record<string, string>) => Object.values(info).filter((v) => v.length >= 8);
const RECEIVER_INFO = { FULL_NAME: 'Alice Liddell', BIRTH_DATE: '1852-05-04' };

let stack: Awaited<ReturnType<typeof startPaymentsWithNeighbours>>;
let client: PromiseClient<pb.PaymentsServiceClient>;
let world: World;
let sql: pg.Pool;
let P: WorldPlatform;
let platformId: string;
const holders = new Holders(
  () => world,
  () => P,
);

beforeAll(async () => {
  stack = await startPaymentsWithNeighbours('custinfo', {
    env: {
      SANDBOX_TIME_SCALE: '0.01',
      // No approval deadline elapses during the file (real seconds, not scaled).
      INCOMING_APPROVAL_ANSWER_TIMEOUT_SECONDS: '3600',
      INCOMING_APPROVAL_WINDOW_SECONDS: '3600',
    },
  });
  ({ client, world, sql } = stack);
  P = await world.platform('SANDBOX');
  platformId = P.id;
  // Incoming USD payments from THRESHOLD up wait for the platform's approval.
  await stack.identity.updatePlatformConfig({
    platformId,
    webhookEndpoint: 'https://platform.example/webhooks',
    supportedCurrencies: {
      currencies: [identity.CurrencyConfig.fromPartial({ currencyCode: 'USD', incomingPaymentApprovalThreshold: THRESHOLD })],
    },
    clearEmbeddedWalletConfig: false,
  });
  const alice = await world.customer(platformId, { umaAddress: ALICE, platformCustomerId: 'alice-1' });
  await world.internalAccount(P, alice.id, 'USD'); // where her incoming payments are credited
});

afterAll(async () => {
  await stack?.stop();
});

/** A PENDING quote from a new funded EUR account to `$success.usd`, made from a receiver lookup. */
async function umaQuote(info: Record<string, string> = SENDER_INFO): Promise<pb.Quote> {
  const src = await holders.internal('EUR', 50_000n);
  const { lookup } = await client.lookupUmaReceiver({
    platformId,
    environment: SANDBOX,
    receiverUmaAddress: `$success.usd@${UMA_DOMAIN}`,
    sendingCurrency: 'EUR',
  });
  const { quote } = await client.createQuote({
    platformId,
    environment: SANDBOX,
    sourceKind: 'ACCOUNT',
    sourceAccountId: src,
    destinationKind: 'UMA_ADDRESS',
    destinationUmaAddress: `$success.usd@${UMA_DOMAIN}`,
    lookupId: lookup!.id,
    lockedCurrencySide: 'SENDING',
    lockedCurrencyAmount: 10_000n,
    immediatelyExecute: false,
    senderCustomerInfoJson: JSON.stringify(info),
  });
  return quote!;
}

/** An incoming payment to Alice waiting for the platform's approval (PENDING). */
async function pendingIncoming(): Promise<pb.Transaction> {
  const { transaction } = await client.sandboxReceiveUma({
    platformId,
    environment: SANDBOX,
    requestKey: `k-${randomBytes(8).toString('hex')}`,
    senderUmaAddress: SENDER,
    receiverUmaAddress: ALICE,
    receivingCurrencyCode: 'USD',
    receivingCurrencyAmount: THRESHOLD,
  });
  expect(transaction!.status).toBe('PENDING');
  return transaction!;
}

/** An incoming payment approved with `info` as its receiverCustomerInfo (JSON text; '' for none). */
async function approved(info: string): Promise<pb.Transaction> {
  const t = await pendingIncoming();
  const r = await client.approveIncomingPayment({ platformId, transactionId: t.id, receiverCustomerInfoJson: info });
  expect(r.transaction!.status).toBe('COMPLETED');
  return r.transaction!;
}

const quoteRow = async (id: string) =>
  (await sql.query(`SELECT t::text AS row, t.* FROM payments.quotes t WHERE id = $1`, [id])).rows[0];
const approvalRow = async (transactionId: string) =>
  (
    await sql.query(`SELECT t::text AS row, t.* FROM payments.incoming_approvals t WHERE transaction_id = $1`, [
      transactionId,
    ])
  ).rows[0];

/** What the service reads: its repositories (their row mappers) under `key`, on its own database connection. */
function reader(key = TEST_MASTER_KEYS.PAYMENTS_DATA_MASTER_KEY!) {
  const keyring = keyringOf(key);
  const quotes = new QuoteRepository(keyring);
  const approvals = new IncomingApprovalRepository(keyring);
  const em = () => stack.running.deps.orm.em.fork();
  return {
    senderInfo: async (quoteId: string) => (await quotes.find(em(), quoteId))!.senderCustomerInfo,
    receiverInfo: async (transactionId: string) => (await approvals.get(em(), transactionId))!.receiverCustomerInfo,
  };
}

/** An approve repeated on an approved payment reads its approval (the mapper opens the sealed map). */
const approveAgain = (transactionId: string) =>
  client.approveIncomingPayment({ platformId, transactionId, receiverCustomerInfoJson: '' });

describe("quotes' senderCustomerInfo at rest (issue 17)", () => {
  it('is sealed in its row, bound to the quote, and read back as it was given', async () => {
    const q = await umaQuote();
    const row = await quoteRow(q.id);
    for (const value of telling(SENDER_INFO)) expect(row.row).not.toContain(value);
    expect(row.sender_customer_info).toEqual({});
    expect(row.sealed_sender_customer_info).toMatch(/^sps1\.mk_[0-9a-f]{16}\./);
    expect(await reader().senderInfo(q.id)).toEqual(SENDER_INFO);
    expect((await client.getQuote({ platformId, quoteId: q.id })).quote).toEqual(q);

    // Another quote's sealed map moved into this row does not open there (an internal error,
    // never the payer data of another quote).
    const other = await umaQuote({ FULL_NAME: 'Charles Babbage' });
    const otherRow = await quoteRow(other.id);
    await sql.query(`UPDATE payments.quotes SET sealed_sender_customer_info = $1 WHERE id = $2`, [
      otherRow.sealed_sender_customer_info,
      q.id,
    ]);
    await expect(client.getQuote({ platformId, quoteId: q.id })).rejects.toMatchObject({ grpcCode: 13 });
    // Nor does the quote's own counterpartyInformation (another scheme) moved into the column.
    await sql.query(`UPDATE payments.quotes SET sealed_sender_customer_info = sealed_counterparty_information WHERE id = $1`, [
      q.id,
    ]);
    await expect(client.getQuote({ platformId, quoteId: q.id })).rejects.toMatchObject({ grpcCode: 13 });
    await sql.query(`UPDATE payments.quotes SET sealed_sender_customer_info = $1 WHERE id = $2`, [
      row.sealed_sender_customer_info,
      q.id,
    ]);
    expect((await client.getQuote({ platformId, quoteId: q.id })).quote).toEqual(q);
    expect(await reader().senderInfo(q.id)).toEqual(SENDER_INFO);
  });

  it('an empty map is not sealed: `{}` and nothing in the sealed column', async () => {
    const src = await holders.internal('USD');
    const dest = (await world.externalAccount(P, holders.ownerOf.get(src)!, 'EUR', accountInfoFor('EUR'))).id;
    const { quote } = await client.createQuote({
      platformId,
      environment: SANDBOX,
      sourceKind: 'ACCOUNT',
      sourceAccountId: src,
      destinationKind: 'ACCOUNT',
      destinationAccountId: dest,
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 10_000n,
      immediatelyExecute: false,
      senderCustomerInfoJson: '',
    });
    const row = await quoteRow(quote!.id);
    expect(row.sender_customer_info).toEqual({});
    expect(row.sealed_sender_customer_info).toBeNull();
    expect(await reader().senderInfo(quote!.id)).toEqual({});
  });
});

describe("incoming approvals' receiverCustomerInfo at rest (issue 17)", () => {
  it('is sealed in its row, bound to the payment, and read back as the platform answered it', async () => {
    const t = await approved(JSON.stringify(RECEIVER_INFO));
    const row = await approvalRow(t.id);
    expect(row.decision).toBe('APPROVED');
    for (const value of telling(RECEIVER_INFO)) expect(row.row).not.toContain(value);
    expect(row.receiver_customer_info).toBeNull();
    expect(row.sealed_receiver_customer_info).toMatch(/^spr1\.mk_[0-9a-f]{16}\./);
    expect(await reader().receiverInfo(t.id)).toEqual(RECEIVER_INFO);
    expect((await approveAgain(t.id)).transaction).toEqual(t);

    // Another payment's sealed map moved into this row does not open there.
    const other = await approved(JSON.stringify({ FULL_NAME: 'Lorina Liddell' }));
    await sql.query(`UPDATE payments.incoming_approvals SET sealed_receiver_customer_info = $1 WHERE transaction_id = $2`, [
      (await approvalRow(other.id)).sealed_receiver_customer_info,
      t.id,
    ]);
    await expect(approveAgain(t.id)).rejects.toMatchObject({ grpcCode: 13 });
    await sql.query(`UPDATE payments.incoming_approvals SET sealed_receiver_customer_info = $1 WHERE transaction_id = $2`, [
      row.sealed_receiver_customer_info,
      t.id,
    ]);
    expect((await approveAgain(t.id)).transaction).toEqual(t);
    expect(await reader().receiverInfo(t.id)).toEqual(RECEIVER_INFO);
  });

  it('an empty map is not sealed (`{}`), and a decision without one writes nothing', async () => {
    const empty = await approved('{}');
    const emptyRow = await approvalRow(empty.id);
    expect(emptyRow.receiver_customer_info).toEqual({});
    expect(emptyRow.sealed_receiver_customer_info).toBeNull();
    expect(await reader().receiverInfo(empty.id)).toEqual({});

    const none = await approved('');
    const rejected = await pendingIncoming();
    await client.rejectIncomingPayment({ platformId, transactionId: rejected.id, reason: 'RESTRICTED_JURISDICTION' });
    for (const id of [none.id, rejected.id]) {
      const row = await approvalRow(id);
      expect(row.receiver_customer_info).toBeNull();
      expect(row.sealed_receiver_customer_info).toBeNull();
      expect(await reader().receiverInfo(id)).toBeUndefined();
    }
  });
});

describe('rows written before sealing, and a new master key (issue 17)', () => {
  it('reads plaintext maps; rewrap seals them, moves every sealed map to a new key, and the old key can go', async () => {
    const sealedQuote = await umaQuote();
    const legacyQuote = await umaQuote();
    const sealedApproval = await approved(JSON.stringify(RECEIVER_INFO));
    const legacyApproval = await approved(JSON.stringify(RECEIVER_INFO));
    // As written before sealing existed.
    const legacySender = { FULL_NAME: 'Grace Hopper', BIRTH_DATE: '1906-12-09' };
    const legacyReceiver = { FULL_NAME: 'Katherine Johnson' };
    await sql.query(
      `UPDATE payments.quotes SET sealed_sender_customer_info = NULL, sender_customer_info = $1::jsonb WHERE id = $2`,
      [JSON.stringify(legacySender), legacyQuote.id],
    );
    await sql.query(
      `UPDATE payments.incoming_approvals SET sealed_receiver_customer_info = NULL, receiver_customer_info = $1::jsonb
       WHERE transaction_id = $2`,
      [JSON.stringify(legacyReceiver), legacyApproval.id],
    );
    expect(await reader().senderInfo(legacyQuote.id)).toEqual(legacySender);
    expect(await reader().receiverInfo(legacyApproval.id)).toEqual(legacyReceiver);
    expect((await client.getQuote({ platformId, quoteId: legacyQuote.id })).quote).toEqual(legacyQuote);
    expect((await approveAgain(legacyApproval.id)).transaction).toEqual(legacyApproval);

    const oldKey = TEST_MASTER_KEYS.PAYMENTS_DATA_MASTER_KEY!;
    const oldId = keyringOf(oldKey).current.id;
    const newKey = randomBytes(32).toString('base64');
    const newId = keyringOf(newKey).current.id;
    const env = {
      DATABASE_URL: stack.services.db.url,
      LOG_LEVEL: 'silent',
      PAYMENTS_DATA_MASTER_KEY: newKey,
      PAYMENTS_DATA_MASTER_KEYS_RETIRED: oldKey,
    };
    // At least this test's sealed quote and approval (the other tests' rows are counted too).
    expect(await sealedUnder(sql, 'quotes', 'sealed_sender_customer_info', oldId)).toBeGreaterThanOrEqual(1);
    expect(await sealedUnder(sql, 'incoming_approvals', 'sealed_receiver_customer_info', oldId)).toBeGreaterThanOrEqual(1);
    // Every count this file's rows give (the quotes' and incoming payments' UMA addresses too).
    const counts = await rewrapCounts(sql, oldId, { 'quotesSenderCustomerInfo.sealed': 1, 'incomingApprovals.sealed': 1 });
    expect(await runServiceCommand(paymentsService, 'rewrap', env)).toEqual(counts);
    // Nothing left: a second run visits no row.
    expect(await runServiceCommand(paymentsService, 'rewrap', env)).toEqual(REWRAP_NOTHING_LEFT);
    for (const [table, column, plain] of [
      ['quotes', 'sealed_sender_customer_info', `sender_customer_info <> '{}'::jsonb`],
      ['incoming_approvals', 'sealed_receiver_customer_info', `receiver_customer_info <> '{}'::jsonb`],
    ] as const) {
      const { rows } = await sql.query(
        `SELECT DISTINCT split_part(${column}, '.', 2) AS k FROM payments.${table} WHERE ${column} IS NOT NULL`,
      );
      expect(rows.map((r) => r.k)).toEqual([newId]);
      const left = await sql.query(`SELECT count(*)::int AS n FROM payments.${table} WHERE ${plain}`);
      expect(left.rows[0].n).toBe(0);
    }
    const q = await quoteRow(legacyQuote.id);
    for (const value of telling(legacySender)) expect(q.row).not.toContain(value);
    expect(q.sender_customer_info).toEqual({});
    expect(q.sealed_sender_customer_info).toMatch(new RegExp(`^sps1\\.${newId}\\.`));
    const a = await approvalRow(legacyApproval.id);
    expect(a.row).not.toContain(legacyReceiver.FULL_NAME);
    expect(a.receiver_customer_info).toBeNull();
    expect(a.sealed_receiver_customer_info).toMatch(new RegExp(`^spr1\\.${newId}\\.`));

    // The service's mappers with the new key alone read every map.
    const fresh = reader(newKey);
    expect(await fresh.senderInfo(legacyQuote.id)).toEqual(legacySender);
    expect(await fresh.senderInfo(sealedQuote.id)).toEqual(SENDER_INFO);
    expect(await fresh.receiverInfo(legacyApproval.id)).toEqual(legacyReceiver);
    expect(await fresh.receiverInfo(sealedApproval.id)).toEqual(RECEIVER_INFO);
  });
});
