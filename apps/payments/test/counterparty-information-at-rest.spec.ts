import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { common, payments as pb } from '@sluice/contracts';
import type { PromiseClient } from '@sluice/rpc';
import { runServiceCommand } from '@sluice/runtime';
import { eventually, TEST_MASTER_KEYS, type World, type WorldPlatform } from '@sluice/testing';
import { paymentsService } from '../src/index.js';
import { accountInfoFor, Holders, startPaymentsWithNeighbours } from './support/neighbours.js';
import { keyringOf, REWRAP_NOTHING_LEFT, rewrapCounts, sealedUnder, withReplicaOnKey } from './support/rewrap.js';

// Issue 17: the counterpartyInformation of quotes and transactions (the receiver's FULL_NAME a
// quote copies from its receiver lookup, and its transaction from the quote) sealed at rest under
// PAYMENTS_DATA_MASTER_KEY, over real gRPC and Postgres with payments' real neighbours: rows read
// raw hold no name, the API answers it, rows written before sealing are read and sealed by
// `rewrap`, which also moves every sealed map to a new key.

const SANDBOX = common.Environment.SANDBOX;
const UMA_DOMAIN = 'sandbox.sluice.local';
const NAME = 'Sluice Sandbox UMA'; // what the sandbox counterparty answers as the receiver's name

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
  stack = await startPaymentsWithNeighbours('cpinfo', { env: { SANDBOX_TIME_SCALE: '0.01' } });
  ({ client, world, sql } = stack);
  P = await world.platform('SANDBOX');
  platformId = P.id;
});

afterAll(async () => {
  await stack?.stop();
});

/** A PENDING quote from a new funded EUR account to `$success.usd`, made from a receiver lookup. */
async function umaQuote(): Promise<pb.Quote> {
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
    senderCustomerInfoJson: JSON.stringify({ FULL_NAME: 'Ada L', BIRTH_DATE: '1990-01-01' }),
  });
  return quote!;
}

/** Executes a quote and waits for it to complete; answers its transaction as GetTransaction does. */
async function executed(q: pb.Quote): Promise<pb.Transaction> {
  await client.executeQuote({ platformId, environment: SANDBOX, quoteId: q.id });
  const done = await eventually(async () => {
    const { quote } = await client.getQuote({ platformId, quoteId: q.id });
    return quote!.status === 'COMPLETED' ? quote! : undefined;
  });
  return (await client.getTransaction({ platformId, transactionId: done.transactionId! })).transaction!;
}

const rowOf = async (table: 'quotes' | 'transactions', id: string) =>
  (await sql.query(`SELECT t::text AS row, t.* FROM payments.${table} t WHERE id = $1`, [id])).rows[0];

describe("quotes' and transactions' counterpartyInformation at rest (issue 17)", () => {
  it('a quote and its transaction carry the receiver name sealed in their rows, bound to each row, and answer it', async () => {
    const q = await umaQuote();
    expect(q.counterpartyInformation).toEqual({ FULL_NAME: NAME });
    const quoteRow = await rowOf('quotes', q.id);
    expect(quoteRow.row).not.toContain(NAME);
    expect(quoteRow.counterparty_information).toEqual({});
    expect(quoteRow.sealed_counterparty_information).toMatch(/^spc1\.mk_[0-9a-f]{16}\./);
    expect((await client.getQuote({ platformId, quoteId: q.id })).quote).toEqual(q);

    const t = await executed(q);
    expect(t.counterpartyInformation).toEqual({ FULL_NAME: NAME });
    const txRow = await rowOf('transactions', t.id);
    expect(txRow.row).not.toContain(NAME);
    expect(txRow.counterparty_information).toEqual({});
    expect(txRow.sealed_counterparty_information).toMatch(/^spc1\.mk_[0-9a-f]{16}\./);
    const listed = await client.listTransactions(
      pb.ListTransactionsRequest.fromPartial({ platformId, reference: t.reference, page: { limit: 10 } }),
    );
    expect(listed.transactions).toEqual([t]);

    // The quote's sealed map copied into its transaction's row does not open there (an internal
    // error, never the map of another row).
    await sql.query(`UPDATE payments.transactions SET sealed_counterparty_information = $1 WHERE id = $2`, [
      quoteRow.sealed_counterparty_information,
      t.id,
    ]);
    await expect(client.getTransaction({ platformId, transactionId: t.id })).rejects.toMatchObject({
      grpcCode: 13,
    });
    await sql.query(`UPDATE payments.transactions SET sealed_counterparty_information = $1 WHERE id = $2`, [
      txRow.sealed_counterparty_information,
      t.id,
    ]);
    expect((await client.getTransaction({ platformId, transactionId: t.id })).transaction).toEqual(t);
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
    expect(quote!.counterpartyInformation).toEqual({});
    const row = await rowOf('quotes', quote!.id);
    expect(row.counterparty_information).toEqual({});
    expect(row.sealed_counterparty_information).toBeNull();
  });

  it('reads maps written before sealing; rewrap seals them, moves every sealed map to a new key, and the old key can go', async () => {
    // A quote and a transaction sealed under the current (soon retired) key, and one of each as
    // written before sealing existed.
    const sealedQuote = await umaQuote();
    const sealedTx = await executed(await umaQuote());
    const legacyQuote = await umaQuote();
    const legacyTx = await executed(await umaQuote());
    const legacy = JSON.stringify({ FULL_NAME: 'Grace Hopper' });
    for (const [table, id] of [
      ['quotes', legacyQuote.id],
      ['transactions', legacyTx.id],
    ] as const) {
      await sql.query(
        `UPDATE payments.${table} SET sealed_counterparty_information = NULL, counterparty_information = $1::jsonb WHERE id = $2`,
        [legacy, id],
      );
    }
    const legacyQuoteBefore = (await client.getQuote({ platformId, quoteId: legacyQuote.id })).quote!;
    expect(legacyQuoteBefore.counterpartyInformation).toEqual({ FULL_NAME: 'Grace Hopper' });
    const legacyTxBefore = (await client.getTransaction({ platformId, transactionId: legacyTx.id })).transaction!;
    expect(legacyTxBefore.counterpartyInformation).toEqual({ FULL_NAME: 'Grace Hopper' });

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
    // At least this test's rows: three quotes, the two executed ones' transactions (whose
    // counterpartyIdentifier, the receiver's UMA address, is sealed too:
    // test/counterparty-identifier-at-rest.spec.ts).
    expect(await sealedUnder(sql, 'quotes', 'sealed_counterparty_information', oldId)).toBeGreaterThanOrEqual(3);
    expect(await sealedUnder(sql, 'transactions', 'sealed_counterparty_information', oldId)).toBeGreaterThanOrEqual(1);
    expect(await sealedUnder(sql, 'transactions', 'sealed_counterparty_identifier', oldId)).toBeGreaterThanOrEqual(2);
    // Every count this file's rows give (the quotes' payer data and the UMA addresses too).
    const counts = await rewrapCounts(sql, oldId, { 'quotes.sealed': 1, 'transactions.sealed': 1 });
    expect(await runServiceCommand(paymentsService, 'rewrap', env)).toEqual(counts);
    // Nothing left: a second run visits no row.
    expect(await runServiceCommand(paymentsService, 'rewrap', env)).toEqual(REWRAP_NOTHING_LEFT);
    for (const table of ['quotes', 'transactions']) {
      const { rows } = await sql.query(
        `SELECT DISTINCT split_part(sealed_counterparty_information, '.', 2) AS k FROM payments.${table}
         WHERE sealed_counterparty_information IS NOT NULL`,
      );
      expect(rows.map((r) => r.k)).toEqual([newId]);
      const plain = await sql.query(
        `SELECT count(*)::int AS n FROM payments.${table} WHERE counterparty_information <> '{}'::jsonb`,
      );
      expect(plain.rows[0].n).toBe(0);
    }
    for (const [table, id] of [
      ['quotes', legacyQuote.id],
      ['transactions', legacyTx.id],
    ] as const) {
      const row = await rowOf(table, id);
      expect(row.row).not.toContain('Grace Hopper');
      expect(row.counterparty_information).toEqual({});
      expect(row.sealed_counterparty_information).toMatch(new RegExp(`^spc1\\.${newId}\\.`));
    }

    // A replica with the new key alone reads every map.
    await withReplicaOnKey(stack.services, newKey, async (c2) => {
      expect((await c2.getQuote({ platformId, quoteId: legacyQuote.id })).quote).toEqual(legacyQuoteBefore);
      expect((await c2.getQuote({ platformId, quoteId: sealedQuote.id })).quote).toEqual(sealedQuote);
      expect((await c2.getTransaction({ platformId, transactionId: legacyTx.id })).transaction).toEqual(
        legacyTxBefore,
      );
      expect((await c2.getTransaction({ platformId, transactionId: sealedTx.id })).transaction).toEqual(sealedTx);
    });
  });
});
