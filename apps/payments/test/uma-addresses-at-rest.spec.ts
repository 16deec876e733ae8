import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { common, payments as pb } from '@sluice/contracts';
import { loadMasterKeyring, type MasterKeyring } from '@sluice/crypto';
import type { PromiseClient } from '@sluice/rpc';
import { runServiceCommand } from '@sluice/runtime';
import { eventually, TEST_MASTER_KEYS, type World, type WorldPlatform } from '@sluice/testing';
import { paymentsService } from '../src/index.js';
import { PAYMENTS_KEYRING } from '../src/store/sealing.js';
import { TransactionRepository, type TransactionFilter } from '../src/store/transaction.repository.js';
import { accountInfoFor, Holders, startPaymentsWithNeighbours } from './support/neighbours.js';
import { keyringOf, REWRAP_NOTHING_LEFT, rewrapCounts, withReplicaOnKey } from './support/rewrap.js';

// Issue 17: UMA addresses sealed at rest under PAYMENTS_DATA_MASTER_KEY, over real gRPC and
// Postgres with payments' real neighbours: a transaction's source and destination address (with a
// blind index each, which GET /transactions' accountIdentifier, senderAccountIdentifier and
// receiverAccountIdentifier filters look up), a quote's destination address (out of its
// `destination` jsonb), a receiver lookup's receiver and sender addresses. Rows read raw (as text)
// hold no address, the API answers as before, a value moved to another row or column does not
// open, rows written before sealing are read and matched by the filters, a rotation keeps the
// filters working before `rewrap`, which seals the legacy rows and moves every value and index to
// the new key, and the new key alone then reads and finds everything.

const SANDBOX = common.Environment.SANDBOX;
const RECEIVER = '$success.usd@sandbox.sluice.local'; // a sandbox receiver (paid in USD, from EUR here)
const hex = () => randomBytes(4).toString('hex');
/** A sender's UMA address of its own (stored lower-cased, as payments normalises it). */
const newSender = () => `$sender.${hex()}@remote.example`;

let stack: Awaited<ReturnType<typeof startPaymentsWithNeighbours>>;
let client: PromiseClient<pb.PaymentsServiceClient>;
let world: World;
let sql: pg.Pool;
const holders = new Holders(
  () => world,
  () => {
    throw new Error('each test names its platform');
  },
);

beforeAll(async () => {
  stack = await startPaymentsWithNeighbours('umaaddr', { env: { SANDBOX_TIME_SCALE: '0.01' } });
  ({ client, world, sql } = stack);
});

afterAll(async () => {
  await stack?.stop();
});

/** A platform of its own (so a filter's answer is exactly this test's payments), with a customer paid by UMA in USD. */
async function newPlatform(): Promise<{ p: WorldPlatform; payee: string }> {
  const p = await world.platform('SANDBOX');
  const payee = `$payee.${hex()}@bank.example`;
  const c = await world.customer(p.id, { umaAddress: payee, platformCustomerId: `payee-${hex()}` });
  await world.internalAccount(p, c.id, 'USD'); // where its incoming payments are credited
  return { p, payee };
}

const getTransaction = async (platformId: string, id: string) =>
  (await client.getTransaction({ platformId, transactionId: id })).transaction!;
const completed = (platformId: string, id: string) =>
  eventually(async () => {
    const t = await getTransaction(platformId, id);
    return t.status === 'COMPLETED' ? t : undefined;
  });

/** A payment to RECEIVER from a new funded EUR account: its lookup (with a sender address), its quote and its completed transaction. */
async function outgoing(p: WorldPlatform) {
  const src = await holders.internal('EUR', 50_000n, { platform: p });
  const sender = newSender();
  const { lookup } = await client.lookupUmaReceiver({
    platformId: p.id,
    environment: SANDBOX,
    receiverUmaAddress: RECEIVER,
    senderUmaAddress: sender,
    sendingCurrency: 'EUR',
  });
  const { quote } = await client.createQuote({
    platformId: p.id,
    environment: SANDBOX,
    sourceKind: 'ACCOUNT',
    sourceAccountId: src,
    destinationKind: 'UMA_ADDRESS',
    destinationUmaAddress: RECEIVER,
    lookupId: lookup!.id,
    lockedCurrencySide: 'SENDING',
    lockedCurrencyAmount: 10_000n,
    immediatelyExecute: true,
    senderCustomerInfoJson: JSON.stringify({ FULL_NAME: 'Ada L', BIRTH_DATE: '1990-01-01' }),
  });
  const done = await eventually(async () => {
    const { quote: q } = await client.getQuote({ platformId: p.id, quoteId: quote!.id });
    return q!.status === 'COMPLETED' ? q! : undefined;
  });
  return { lookup: lookup!, sender, quote: done, transaction: await completed(p.id, done.transactionId!) };
}

/** A completed incoming UMA payment from `sender` to the platform's payee. */
async function incoming(platform: { p: WorldPlatform; payee: string }, sender: string): Promise<pb.Transaction> {
  const { transaction } = await client.sandboxReceiveUma({
    platformId: platform.p.id,
    environment: SANDBOX,
    requestKey: `k-${hex()}`,
    senderUmaAddress: sender,
    receiverUmaAddress: platform.payee,
    receivingCurrencyCode: 'USD',
    receivingCurrencyAmount: 1_234n,
  });
  return completed(platform.p.id, transaction!.id);
}

type Table = 'transactions' | 'quotes' | 'receiver_lookups';
const rowOf = async (table: Table, id: string) =>
  (await sql.query(`SELECT t::text AS row, t.* FROM payments.${table} t WHERE id = $1`, [id])).rows[0];

type Filter = Pick<pb.ListTransactionsRequest, 'accountIdentifier' | 'senderAccountIdentifier' | 'receiverAccountIdentifier'>;
/** The ids GET /transactions answers for `filter` on the platform (newest first), checked against its total. */
async function listed(c: PromiseClient<pb.PaymentsServiceClient>, platformId: string, filter: Filter): Promise<string[]> {
  const r = await c.listTransactions(pb.ListTransactionsRequest.fromPartial({ platformId, ...filter, page: { limit: 50 } }));
  expect(r.page!.totalCount).toBe(r.transactions.length);
  return r.transactions.map((t) => t.id);
}

/** What the service's repository (the row mapper and the filters) does under `keyring`, on its own database connection. */
function repositoryUnder(keyring: MasterKeyring, platformId: string) {
  const transactions = new TransactionRepository(keyring);
  const em = () => stack.running.deps.orm.em.fork();
  return {
    get: async (id: string) => (await transactions.get(em(), platformId, id))!,
    ids: async (f: Pick<TransactionFilter, 'accountIdentifier' | 'senderAccountIdentifier' | 'receiverAccountIdentifier'>) =>
      (await transactions.list(em(), { platformId, sortOrder: 'desc', limit: 50, ...f })).rows.map((t) => t.id),
  };
}

const SEALED = /^spu1\.mk_[0-9a-f]{16}\./;
const INDEX = /^bi1\.mk_[0-9a-f]{16}\.[0-9a-f]{64}$/;

describe('UMA addresses at rest (issue 17)', () => {
  it('a payment to a UMA address: its lookup, quote and transaction hold the addresses sealed, none in plain text, and answer them', async () => {
    const { p } = await newPlatform();
    const { lookup, sender, quote, transaction: t } = await outgoing(p);
    expect(lookup).toMatchObject({ receiverUmaAddress: RECEIVER, senderUmaAddress: sender });

    const l = await rowOf('receiver_lookups', lookup.id);
    expect(l.row).not.toContain(RECEIVER);
    expect(l.row).not.toContain(sender);
    expect(l).toMatchObject({ receiver_uma_address: null, sender_uma_address: null });
    expect(l.sealed_receiver_uma_address).toMatch(SEALED);
    expect(l.sealed_sender_uma_address).toMatch(SEALED);
    expect((await client.getReceiverLookup({ platformId: p.id, lookupId: lookup.id, includeExpired: false })).lookup).toEqual(
      lookup,
    );

    expect(quote.destination).toEqual({ kind: 'UMA_ADDRESS', umaAddress: RECEIVER, currency: 'USD' });
    const q = await rowOf('quotes', quote.id);
    expect(q.row).not.toContain(RECEIVER);
    expect(q.destination).toEqual({ kind: 'UMA_ADDRESS', currency: 'USD' });
    expect(q.sealed_destination_uma_address).toMatch(SEALED);

    expect(t.destination).toMatchObject({ kind: 'UMA_ADDRESS', umaAddress: RECEIVER, currency: 'USD' });
    const row = await rowOf('transactions', t.id);
    expect(row.row).not.toContain(RECEIVER);
    expect(row.destination_uma_address).toBeNull();
    expect(row.sealed_destination_uma_address).toMatch(SEALED);
    expect(row.destination_uma_address_index).toMatch(INDEX);
    // An account as the source: nothing sealed nor indexed for it.
    expect(row).toMatchObject({ source_uma_address: null, sealed_source_uma_address: null, source_uma_address_index: null });
    const listedByReference = await client.listTransactions(
      pb.ListTransactionsRequest.fromPartial({ platformId: p.id, reference: t.reference, page: { limit: 10 } }),
    );
    expect(listedByReference.transactions).toEqual([t]);
  });

  it('GET /transactions finds payments by a UMA address in either direction, by equality, as before', async () => {
    const platform = await newPlatform();
    const { p } = platform;
    const out = await outgoing(p);
    const sender = newSender();
    const inc = await incoming(platform, sender);
    expect(inc.source).toMatchObject({ kind: 'UMA_ADDRESS', umaAddress: sender });
    const row = await rowOf('transactions', inc.id);
    expect(row.row).not.toContain(sender);
    expect(row.source_uma_address).toBeNull();
    expect(row.sealed_source_uma_address).toMatch(SEALED);
    expect(row.source_uma_address_index).toMatch(INDEX);
    expect(row).toMatchObject({
      destination_uma_address: null,
      sealed_destination_uma_address: null,
      destination_uma_address_index: null,
    });
    // The ledger's credit of the payment (accounts keeps descriptions in plain text) names its reference, not its sender.
    const { rows: entries } = await sql.query(
      `SELECT description FROM accounts.journal_entries WHERE platform_id = $1 AND kind = 'INCOMING_PAYMENT'`,
      [p.id],
    );
    expect(entries).toEqual([{ description: `Incoming UMA payment ${inc.reference}` }]);
    // The same address gives another index in the other column (one label per column).
    expect(row.source_uma_address_index).not.toBe((await rowOf('transactions', out.transaction.id)).destination_uma_address_index);

    const ids = (f: Filter) => listed(client, p.id, f);
    expect(await ids({ accountIdentifier: sender })).toEqual([inc.id]);
    expect(await ids({ senderAccountIdentifier: sender })).toEqual([inc.id]);
    expect(await ids({ receiverAccountIdentifier: sender })).toEqual([]);
    expect(await ids({ accountIdentifier: RECEIVER })).toEqual([out.transaction.id]);
    expect(await ids({ receiverAccountIdentifier: RECEIVER })).toEqual([out.transaction.id]);
    expect(await ids({ senderAccountIdentifier: RECEIVER })).toEqual([]);
    // Equality on the stored address, as the plain column was: another case is another address.
    expect(await ids({ accountIdentifier: sender.toUpperCase() })).toEqual([]);
    // Account ids still match beside the addresses.
    expect(await ids({ accountIdentifier: out.transaction.source!.accountId! })).toEqual([out.transaction.id]);
    expect(await ids({ receiverAccountIdentifier: inc.destination!.accountId! })).toEqual([inc.id]);
    expect(await ids({ accountIdentifier: sender, receiverAccountIdentifier: inc.destination!.accountId! })).toEqual([inc.id]);
  });

  it('a payment without a UMA address seals and indexes nothing for it', async () => {
    const { p } = await newPlatform();
    const internal = await holders.internal('USD', 50_000n, { platform: p });
    const external = await world.externalAccount(p, holders.ownerOf.get(internal)!, 'USD', accountInfoFor('USD'));
    const { transaction } = await client.transferOut({
      platformId: p.id,
      environment: SANDBOX,
      requestKey: `k-${hex()}`,
      amount: 1_000n,
      sourceAccountId: internal,
      destinationAccountId: external.id,
    });
    const row = await rowOf('transactions', transaction!.id);
    for (const side of ['source', 'destination']) {
      expect(row[`${side}_uma_address`]).toBeNull();
      expect(row[`sealed_${side}_uma_address`]).toBeNull();
      expect(row[`${side}_uma_address_index`]).toBeNull();
    }
  });

  it('a value moved to another row, or into another UMA address column, does not open', async () => {
    const platform = await newPlatform();
    const { p } = platform;
    const a = await incoming(platform, newSender());
    const b = await incoming(platform, newSender());
    const own = (await rowOf('transactions', a.id)).sealed_source_uma_address as string;
    const setTx = (column: string, value: string | null, id = a.id) =>
      sql.query(`UPDATE payments.transactions SET ${column} = $1 WHERE id = $2`, [value, id]);
    const internalError = { grpcCode: 13 };

    await setTx('sealed_source_uma_address', (await rowOf('transactions', b.id)).sealed_source_uma_address);
    await expect(client.getTransaction({ platformId: p.id, transactionId: a.id })).rejects.toMatchObject(internalError);
    // The row's own source address in its destination column (another field of the scheme).
    await setTx('sealed_source_uma_address', own);
    await setTx('sealed_destination_uma_address', own);
    await expect(client.getTransaction({ platformId: p.id, transactionId: a.id })).rejects.toMatchObject(internalError);
    await setTx('sealed_destination_uma_address', null);
    expect(await getTransaction(p.id, a.id)).toEqual(a);

    // A quote's destination address in its transaction's row.
    const out = await outgoing(p);
    const tx = await rowOf('transactions', out.transaction.id);
    await setTx('sealed_destination_uma_address', (await rowOf('quotes', out.quote.id)).sealed_destination_uma_address, out.transaction.id);
    await expect(client.getTransaction({ platformId: p.id, transactionId: out.transaction.id })).rejects.toMatchObject(
      internalError,
    );
    await setTx('sealed_destination_uma_address', tx.sealed_destination_uma_address, out.transaction.id);
    expect(await getTransaction(p.id, out.transaction.id)).toEqual(out.transaction);

    // A lookup's receiver address in its sender column.
    const l = await rowOf('receiver_lookups', out.lookup.id);
    const setLookup = (value: string) =>
      sql.query(`UPDATE payments.receiver_lookups SET sealed_sender_uma_address = $1 WHERE id = $2`, [value, out.lookup.id]);
    await setLookup(l.sealed_receiver_uma_address);
    await expect(
      client.getReceiverLookup({ platformId: p.id, lookupId: out.lookup.id, includeExpired: false }),
    ).rejects.toMatchObject(internalError);
    await setLookup(l.sealed_sender_uma_address);
    expect((await client.getReceiverLookup({ platformId: p.id, lookupId: out.lookup.id, includeExpired: false })).lookup).toEqual(
      out.lookup,
    );
  });
});

describe('rows written before sealing, and a new master key (issue 17)', () => {
  it('legacy rows read and match the filters; a rotation keeps them matching; rewrap seals and moves everything; the new key alone reads and finds it', async () => {
    const platform = await newPlatform();
    const { p } = platform;
    const sender = newSender();
    // Two payments of each direction on one address: one sealed (under the soon retired key), one
    // as written before sealing existed.
    const sealedIn = await incoming(platform, sender);
    const legacyIn = await incoming(platform, sender);
    const sealedOut = await outgoing(p);
    const legacyOut = await outgoing(p);
    await sql.query(
      `UPDATE payments.transactions SET source_uma_address = $1, sealed_source_uma_address = NULL, source_uma_address_index = NULL
       WHERE id = $2`,
      [sender, legacyIn.id],
    );
    await sql.query(
      `UPDATE payments.transactions SET destination_uma_address = $1, sealed_destination_uma_address = NULL,
         destination_uma_address_index = NULL WHERE id = $2`,
      [RECEIVER, legacyOut.transaction.id],
    );
    await sql.query(
      `UPDATE payments.quotes SET destination = destination || jsonb_build_object('umaAddress', $1::text),
         sealed_destination_uma_address = NULL WHERE id = $2`,
      [RECEIVER, legacyOut.quote.id],
    );
    await sql.query(
      `UPDATE payments.receiver_lookups SET receiver_uma_address = $1, sealed_receiver_uma_address = NULL,
         sender_uma_address = $2, sealed_sender_uma_address = NULL WHERE id = $3`,
      [RECEIVER, legacyOut.sender, legacyOut.lookup.id],
    );
    const legacyRows: [Table, string, string[]][] = [
      ['transactions', legacyIn.id, [sender]],
      ['transactions', legacyOut.transaction.id, [RECEIVER]],
      ['quotes', legacyOut.quote.id, [RECEIVER]],
      ['receiver_lookups', legacyOut.lookup.id, [RECEIVER, legacyOut.sender]],
    ];
    for (const [table, id, addresses] of legacyRows) {
      const text = (await rowOf(table, id)).row as string;
      for (const a of addresses) expect(text).toContain(a);
    }

    /** Everything the API answers of these payments, and what the filters find, as `c` answers it. */
    const answers = async (c: PromiseClient<pb.PaymentsServiceClient>) => ({
      transactions: await Promise.all(
        [sealedIn.id, legacyIn.id, sealedOut.transaction.id, legacyOut.transaction.id].map(
          async (id) => (await c.getTransaction({ platformId: p.id, transactionId: id })).transaction,
        ),
      ),
      quotes: await Promise.all(
        [sealedOut.quote.id, legacyOut.quote.id].map(async (id) => (await c.getQuote({ platformId: p.id, quoteId: id })).quote),
      ),
      lookups: await Promise.all(
        [sealedOut.lookup.id, legacyOut.lookup.id].map(
          async (id) => (await c.getReceiverLookup({ platformId: p.id, lookupId: id, includeExpired: false })).lookup,
        ),
      ),
      bySender: await listed(c, p.id, { senderAccountIdentifier: sender }),
      byAccount: await listed(c, p.id, { accountIdentifier: sender }),
      byReceiver: await listed(c, p.id, { receiverAccountIdentifier: RECEIVER }),
      receiverAsSender: await listed(c, p.id, { senderAccountIdentifier: RECEIVER }),
    });
    const before = {
      transactions: [sealedIn, legacyIn, sealedOut.transaction, legacyOut.transaction],
      quotes: [sealedOut.quote, legacyOut.quote],
      lookups: [sealedOut.lookup, legacyOut.lookup],
      bySender: [legacyIn.id, sealedIn.id],
      byAccount: [legacyIn.id, sealedIn.id],
      byReceiver: [legacyOut.transaction.id, sealedOut.transaction.id],
      receiverAsSender: [],
    };
    // Legacy rows read as before and match the filters beside sealed ones.
    expect(await answers(client)).toEqual(before);

    const oldKey = TEST_MASTER_KEYS.PAYMENTS_DATA_MASTER_KEY!;
    const oldId = keyringOf(oldKey).current.id;
    const newKey = randomBytes(32).toString('base64');
    const newId = keyringOf(newKey).current.id;

    // After the switch to the new key and before rewrap: values and indexes under the retired key
    // still open and match (the filters look under every key of the ring), legacy rows too.
    const rotated = repositoryUnder(loadMasterKeyring(newKey, oldKey, PAYMENTS_KEYRING), p.id);
    expect(await rotated.ids({ senderAccountIdentifier: sender })).toEqual(before.bySender);
    expect(await rotated.ids({ accountIdentifier: RECEIVER })).toEqual(before.byReceiver);
    expect((await rotated.get(sealedIn.id)).source.umaAddress).toBe(sender);

    const env = {
      DATABASE_URL: stack.services.db.url,
      LOG_LEVEL: 'silent',
      PAYMENTS_DATA_MASTER_KEY: newKey,
      PAYMENTS_DATA_MASTER_KEYS_RETIRED: oldKey,
    };
    // Every sealed value of every test file's rows is rewrapped (counted under the old key); this
    // test's legacy rows are sealed, one per UMA address column.
    const expected = await rewrapCounts(sql, oldId, {
      'transactionsSourceUmaAddress.sealed': 1,
      'transactionsDestinationUmaAddress.sealed': 1,
      'quotesDestinationUmaAddress.sealed': 1,
      'receiverLookupsReceiverUmaAddress.sealed': 1,
      'receiverLookupsSenderUmaAddress.sealed': 1,
    });
    // At least this test's sealed rows.
    expect(expected['transactionsSourceUmaAddress.rewrapped']).toBeGreaterThanOrEqual(1);
    expect(expected['transactionsDestinationUmaAddress.rewrapped']).toBeGreaterThanOrEqual(1);
    expect(expected['quotesDestinationUmaAddress.rewrapped']).toBeGreaterThanOrEqual(1);
    expect(expected['receiverLookupsReceiverUmaAddress.rewrapped']).toBeGreaterThanOrEqual(1);
    expect(expected['receiverLookupsSenderUmaAddress.rewrapped']).toBeGreaterThanOrEqual(1);
    expect(await runServiceCommand(paymentsService, 'rewrap', env)).toEqual(expected);
    // Nothing left: a second run visits no row.
    expect(await runServiceCommand(paymentsService, 'rewrap', env)).toEqual(REWRAP_NOTHING_LEFT);

    // Every value and every index under the new key, no address left in a plain column.
    const keyIds = async (table: Table, column: string) =>
      (
        await sql.query(
          `SELECT DISTINCT split_part(${column}, '.', 2) AS k FROM payments.${table} WHERE ${column} IS NOT NULL`,
        )
      ).rows.map((r) => r.k);
    for (const [table, column] of [
      ['transactions', 'sealed_source_uma_address'],
      ['transactions', 'source_uma_address_index'],
      ['transactions', 'sealed_destination_uma_address'],
      ['transactions', 'destination_uma_address_index'],
      ['quotes', 'sealed_destination_uma_address'],
      ['receiver_lookups', 'sealed_receiver_uma_address'],
      ['receiver_lookups', 'sealed_sender_uma_address'],
    ] as const) {
      expect(await keyIds(table, column)).toEqual([newId]);
    }
    const { rows: plain } = await sql.query(
      `SELECT (SELECT count(*)::int FROM payments.transactions
                WHERE source_uma_address IS NOT NULL OR destination_uma_address IS NOT NULL) AS transactions,
              (SELECT count(*)::int FROM payments.quotes WHERE destination->>'umaAddress' IS NOT NULL) AS quotes,
              (SELECT count(*)::int FROM payments.receiver_lookups
                WHERE receiver_uma_address IS NOT NULL OR sender_uma_address IS NOT NULL) AS lookups`,
    );
    expect(plain).toEqual([{ transactions: 0, quotes: 0, lookups: 0 }]);
    for (const [table, id, addresses] of legacyRows) {
      const text = (await rowOf(table, id)).row as string;
      for (const a of addresses) expect(text).not.toContain(a);
    }
    expect((await rowOf('transactions', legacyIn.id)).source_uma_address_index).toMatch(
      new RegExp(`^bi1\\.${newId}\\.[0-9a-f]{64}$`),
    );

    // A replica with the new key alone answers everything as before, and its filters find every row.
    await withReplicaOnKey(stack.services, newKey, async (c2) => {
      expect(await answers(c2)).toEqual(before);
    });
    // The old key alone neither opens a value nor matches an index any more.
    const old = repositoryUnder(keyringOf(oldKey), p.id);
    expect(await old.ids({ senderAccountIdentifier: sender })).toEqual([]);
    await expect(old.get(legacyIn.id)).rejects.toThrow();
  });
});
