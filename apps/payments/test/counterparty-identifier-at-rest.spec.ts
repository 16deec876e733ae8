import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { common, payments as pb } from '@sluice/contracts';
import type { PromiseClient } from '@sluice/rpc';
import { runServiceCommand } from '@sluice/runtime';
import { eventually, TEST_MASTER_KEYS, type World, type WorldPlatform } from '@sluice/testing';
import { paymentsService } from '../src/index.js';
import { TransactionRepository } from '../src/store/transaction.repository.js';
import { accountInfoFor, Holders, startPaymentsWithNeighbours } from './support/neighbours.js';
import { keyringOf, REWRAP_NOTHING_LEFT, rewrapCounts, sealedUnder } from './support/rewrap.js';

// Issue 17: a transaction's counterpartyIdentifier — what the rail pays to or is paid from: an
// external account's account number or IBAN (a copy of what accounts keeps sealed), the UMA
// address of a UMA payment — sealed at rest under PAYMENTS_DATA_MASTER_KEY, over real gRPC and
// Postgres with payments' real neighbours: rows read raw hold no account number, the service reads
// the value back (the sandbox rail decides by its last digits; the repository's mapper on the
// service's own connection), a value moved to another row or column does not open, rows written
// before sealing are read and sealed by `rewrap`, which also moves every sealed value to a new key.
// The value is in no API answer.

const SANDBOX = common.Environment.SANDBOX;
const ALICE = '$alice@bank.example';
const SENDER = '$success.usd@sandbox.sluice.local';

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
  stack = await startPaymentsWithNeighbours('cpident', { env: { SANDBOX_TIME_SCALE: '0.01' } });
  ({ client, world, sql } = stack);
  P = await world.platform('SANDBOX');
  platformId = P.id;
  const alice = await world.customer(platformId, { umaAddress: ALICE, platformCustomerId: 'alice-1' });
  await world.internalAccount(P, alice.id, 'USD'); // where her incoming payments are credited
});

afterAll(async () => {
  await stack?.stop();
});

/**
 * A transfer of 1 000 between a new customer's funded account and an external account of theirs in
 * `currency` whose identifier ends in `suffix` (out: to it; in: from it), with that identifier.
 */
async function transfer(direction: 'out' | 'in', currency = 'USD', suffix = '000') {
  const internal = await holders.internal(currency, 50_000n);
  const external = await world.externalAccount(P, holders.ownerOf.get(internal)!, currency, accountInfoFor(currency, suffix));
  const req = {
    platformId,
    environment: SANDBOX,
    requestKey: `k-${randomBytes(8).toString('hex')}`,
    amount: 1_000n,
  };
  const { transaction } =
    direction === 'out'
      ? await client.transferOut({ ...req, sourceAccountId: internal, destinationAccountId: external.id })
      : await client.transferIn({ ...req, sourceAccountId: external.id, destinationAccountId: internal });
  return { transaction: transaction!, identifier: external.primaryIdentifier };
}

const get = async (id: string) => (await client.getTransaction({ platformId, transactionId: id })).transaction!;
const settled = (id: string, status: string) =>
  eventually(async () => {
    const t = await get(id);
    return t.status === status ? t : undefined;
  });

const rowOf = async (id: string) =>
  (await sql.query(`SELECT t::text AS row, t.* FROM payments.transactions t WHERE id = $1`, [id])).rows[0];

/** What the service reads: its repository (the row mapper) under `key`, on its own database connection. */
function reader(key = TEST_MASTER_KEYS.PAYMENTS_DATA_MASTER_KEY!) {
  const transactions = new TransactionRepository(keyringOf(key));
  return async (id: string) =>
    (await transactions.get(stack.running.deps.orm.em.fork(), platformId, id))!.counterpartyIdentifier;
}

describe("transactions' counterpartyIdentifier at rest (issue 17)", () => {
  it('a transfer to or from an external account seals its identifier in the row, bound to the transaction', async () => {
    for (const [direction, currency] of [
      ['out', 'USD'],
      ['in', 'EUR'],
    ] as const) {
      const { transaction: t, identifier } = await transfer(direction, currency);
      // The account number (12 digits) or IBAN, and its random digits alone.
      expect(identifier).toMatch(/\d{9}/);
      const row = await rowOf(t.id);
      expect(row.row).not.toContain(identifier);
      expect(row.row).not.toContain(identifier.match(/\d{9}/)![0]);
      expect(row.counterparty_identifier).toBeNull();
      expect(row.sealed_counterparty_identifier).toMatch(/^spi1\.mk_[0-9a-f]{16}\./);
      expect(await reader()(t.id)).toBe(identifier);
      const done = await settled(t.id, 'COMPLETED');
      const listed = await client.listTransactions(
        pb.ListTransactionsRequest.fromPartial({ platformId, reference: t.reference, page: { limit: 10 } }),
      );
      expect(listed.transactions).toEqual([done]);
    }
  });

  it('the rail is paid the sealed identifier: an account ending in 004 is rejected by the sandbox bank', async () => {
    const { transaction: t } = await transfer('out', 'USD', '004');
    expect(t.status).toBe('PROCESSING');
    expect((await rowOf(t.id)).counterparty_identifier).toBeNull();
    expect(await settled(t.id, 'FAILED')).toMatchObject({ failureReason: 'OFFRAMP_FAILED', failureDetail: 'REJECTED_BY_BANK' });
  });

  it("an incoming UMA payment's sender address is sealed too (every value is)", async () => {
    const { transaction } = await client.sandboxReceiveUma({
      platformId,
      environment: SANDBOX,
      requestKey: `k-${randomBytes(8).toString('hex')}`,
      senderUmaAddress: SENDER,
      receiverUmaAddress: ALICE,
      receivingCurrencyCode: 'USD',
      receivingCurrencyAmount: 1_234n,
    });
    const row = await rowOf(transaction!.id);
    expect(row.counterparty_identifier).toBeNull();
    expect(row.sealed_counterparty_identifier).toMatch(/^spi1\.mk_[0-9a-f]{16}\./);
    expect(await reader()(transaction!.id)).toBe(SENDER);
  });

  it('a value moved to another row, or into another sealed column, does not open', async () => {
    const { transaction: t, identifier } = await transfer('out');
    const done = await settled(t.id, 'COMPLETED');
    const row = await rowOf(t.id);
    const { transaction: other } = await transfer('out');
    await sql.query(`UPDATE payments.transactions SET sealed_counterparty_identifier = $1 WHERE id = $2`, [
      (await rowOf(other.id)).sealed_counterparty_identifier,
      t.id,
    ]);
    await expect(client.getTransaction({ platformId, transactionId: t.id })).rejects.toMatchObject({ grpcCode: 13 });
    // The row's own identifier in its counterpartyInformation column (another scheme).
    await sql.query(
      `UPDATE payments.transactions SET sealed_counterparty_identifier = $1, sealed_counterparty_information = $1
       WHERE id = $2`,
      [row.sealed_counterparty_identifier, t.id],
    );
    await expect(client.getTransaction({ platformId, transactionId: t.id })).rejects.toMatchObject({ grpcCode: 13 });
    await sql.query(`UPDATE payments.transactions SET sealed_counterparty_information = NULL WHERE id = $1`, [t.id]);
    expect(await get(t.id)).toEqual(done);
    expect(await reader()(t.id)).toBe(identifier);
  });
});

describe('rows written before sealing, and a new master key (issue 17)', () => {
  it('reads plaintext identifiers; rewrap seals them, moves every sealed one to a new key, and the old key can go', async () => {
    const sealed = await transfer('out');
    const legacy = await transfer('out', 'USD', '777');
    const legacyIn = await transfer('in', 'EUR');
    const done = new Map<string, pb.Transaction>();
    for (const { transaction: t } of [sealed, legacy, legacyIn]) done.set(t.id, await settled(t.id, 'COMPLETED'));
    // As written before sealing existed.
    for (const { transaction: t, identifier } of [legacy, legacyIn]) {
      await sql.query(
        `UPDATE payments.transactions SET sealed_counterparty_identifier = NULL, counterparty_identifier = $1 WHERE id = $2`,
        [identifier, t.id],
      );
      expect(await reader()(t.id)).toBe(identifier);
      expect(await get(t.id)).toEqual(done.get(t.id));
    }

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
    // At least this test's sealed transfer (the other tests' rows are counted too).
    expect(await sealedUnder(sql, 'transactions', 'sealed_counterparty_identifier', oldId)).toBeGreaterThanOrEqual(1);
    // Every count this file's rows give: the incoming UMA payment's counterpartyInformation and
    // source address (its sender's) are sealed too.
    const counts = await rewrapCounts(sql, oldId, { 'transactionsCounterpartyIdentifier.sealed': 2 });
    expect(await runServiceCommand(paymentsService, 'rewrap', env)).toEqual(counts);
    // Nothing left: a second run visits no row.
    expect(await runServiceCommand(paymentsService, 'rewrap', env)).toEqual(REWRAP_NOTHING_LEFT);
    const { rows } = await sql.query(
      `SELECT DISTINCT split_part(sealed_counterparty_identifier, '.', 2) AS k FROM payments.transactions
       WHERE sealed_counterparty_identifier IS NOT NULL`,
    );
    expect(rows.map((r) => r.k)).toEqual([newId]);
    const plain = await sql.query(`SELECT count(*)::int AS n FROM payments.transactions WHERE counterparty_identifier IS NOT NULL`);
    expect(plain.rows[0].n).toBe(0);
    for (const { transaction: t, identifier } of [legacy, legacyIn]) {
      const row = await rowOf(t.id);
      expect(row.row).not.toContain(identifier);
      expect(row.row).not.toContain(identifier.match(/\d{9}/)![0]);
      expect(row.sealed_counterparty_identifier).toMatch(new RegExp(`^spi1\\.${newId}\\.`));
    }

    // The service's mapper with the new key alone reads every identifier; the old key alone no longer does.
    const fresh = reader(newKey);
    for (const { transaction: t, identifier } of [sealed, legacy, legacyIn]) expect(await fresh(t.id)).toBe(identifier);
    await expect(reader(oldKey)(sealed.transaction.id)).rejects.toThrow();
  });
});
