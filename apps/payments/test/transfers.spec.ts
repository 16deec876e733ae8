import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { common, payments as pb } from '@sluice/contracts';
import { newId } from '@sluice/core';
import type { PromiseClient } from '@sluice/rpc';
import { eventually, rejection, type World, type WorldPlatform } from '@sluice/testing';
import type { Ledger } from '../src/index.js';
import { AccountsClient } from '../src/clients/accounts.client.js';
import { accountInfoFor, Holders, startPaymentsWithNeighbours } from './support/neighbours.js';

// Transfers and transactions over real gRPC and Postgres, with the real identity (customers) and
// accounts (accounts and the two-phase ledger) started in-process: balances and holds are what
// accounts answers. The one fault injected is a lost PlaceHold answer, on payments' way to accounts.

const SANDBOX = common.Environment.SANDBOX;

/**
 * Payments' ledger port: the real accounts client, except that the next PlaceHold can be made to
 * fail before it reaches accounts, as a deadline exceeded on the way would.
 */
class LedgerWithALostCall implements Ledger {
  failNextPlace = false;
  private inner: AccountsClient | undefined;
  constructor(private readonly address: () => string) {}
  private get ledger(): AccountsClient {
    return (this.inner ??= new AccountsClient(this.address()));
  }
  async placeHold(h: Parameters<Ledger['placeHold']>[0]) {
    if (this.failNextPlace) {
      this.failNextPlace = false;
      throw new Error('accounts did not answer in time (deadline exceeded)');
    }
    return this.ledger.placeHold(h);
  }
  postHold(h: Parameters<Ledger['postHold']>[0]) {
    return this.ledger.postHold(h);
  }
  voidHold(h: Parameters<Ledger['voidHold']>[0]) {
    return this.ledger.voidHold(h);
  }
  creditFromOutside(c: Parameters<Ledger['creditFromOutside']>[0]) {
    return this.ledger.creditFromOutside(c);
  }
  postEntry(e: Parameters<Ledger['postEntry']>[0]) {
    return this.ledger.postEntry(e);
  }
  close() {
    this.inner?.close();
  }
}

let accountsAddress: string;
const ledger = new LedgerWithALostCall(() => accountsAddress);
let stack: Awaited<ReturnType<typeof startPaymentsWithNeighbours>>;
let client: PromiseClient<pb.PaymentsServiceClient>;
let world: World;
let sql: pg.Pool;
let running: typeof stack.running;
let P: WorldPlatform;
let platformId: string;
let otherPlatform: WorldPlatform;
let otherPlatformId: string;

const holders = new Holders(
  () => world,
  () => P,
);
const { ownerOf, platformCustomerIdOf } = holders;
const newCustomer = (p?: WorldPlatform) => holders.newCustomer(p);
const addInternal = (...a: Parameters<Holders['internal']>) => holders.internal(...a);

/** An external account of `owner` (null: the platform) whose identifier ends in `suffix` (the sandbox rail's outcome). */
async function addExternal(suffix: string, currency: string, owner: string | null): Promise<string> {
  return (await world.externalAccount(P, owner, currency, accountInfoFor(currency, suffix))).id;
}

/** A new customer's funded USD account and a USD external account of the same customer ending in `suffix`. */
async function pair(balance: bigint, suffix = '789') {
  const src = await addInternal('USD', balance);
  const owner = ownerOf.get(src)!;
  return { src, dst: await addExternal(suffix, 'USD', owner), owner };
}

const posted = async (accountId: string) => (await world.balance(platformId, accountId)).posted;
const available = async (accountId: string) => (await world.balance(platformId, accountId)).available;
const holdsOf = (accountId: string) => world.holdsOf(platformId, accountId);

beforeAll(async () => {
  stack = await startPaymentsWithNeighbours('transfers', {
    adapters: { ledger },
    env: {
      // 1 s settlement → 10 ms, the 005 30 s pending → 300 ms.
      SANDBOX_TIME_SCALE: '0.01',
    },
  });
  accountsAddress = stack.services.address('accounts');
  ({ client, world, sql, running } = stack);
  P = await world.platform('SANDBOX');
  platformId = P.id;
  otherPlatform = await world.platform('SANDBOX');
  otherPlatformId = otherPlatform.id;
});

afterAll(async () => {
  ledger.close();
  await stack?.stop();
});


const out = (source: string, destination: string, amount = 1000n, requestKey = `k-${Math.random()}`) =>
  client.transferOut({
    platformId,
    environment: SANDBOX,
    requestKey,
    sourceAccountId: source,
    destinationAccountId: destination,
    amount,
  });
const into = (source: string, destination: string, amount = 1000n, requestKey = `k-${Math.random()}`) =>
  client.transferIn({
    platformId,
    environment: SANDBOX,
    requestKey,
    sourceAccountId: source,
    destinationAccountId: destination,
    amount,
  });

const statusOf = async (id: string) =>
  (await client.getTransaction({ platformId, transactionId: id })).transaction!;
const settled = (id: string, status: string) =>
  eventually(
    async () => {
      const t = await statusOf(id);
      return t.status === status ? t : undefined;
    },
    5000,
    20,
  );

/** The webhook events the outbox holds for a transaction, in order. */
async function eventsOf(id: string): Promise<{ type: string; data: Record<string, unknown> }[]> {
  const { rows } = await sql.query<{ type: string; envelope: { data: Record<string, unknown> } }>(
    `SELECT type, envelope FROM payments.outbox WHERE envelope->'data'->>'id' = $1 ORDER BY occurred_at, id`,
    [id],
  );
  return rows.map((r) => ({ type: r.type, data: r.envelope.data }));
}

describe('TransferOut: the sandbox rail by the external account suffix', () => {
  it('other suffix: held, PROCESSING, then COMPLETED with the hold posted and PENDING/PROCESSING/COMPLETED webhooks', async () => {
    const { src, dst, owner } = await pair(50_000n);
    const { transaction: t, replayed } = await out(src, dst, 12_550n);
    expect(replayed).toBe(false);
    expect(t).toMatchObject({
      type: 'OUTGOING',
      status: 'PROCESSING',
      customerId: owner,
      platformCustomerId: platformCustomerIdOf.get(owner),
      sentAmount: 12_550n,
      receivedAmount: 12_550n,
      source: { kind: 'ACCOUNT', accountId: src, currency: 'USD' },
      destination: { kind: 'ACCOUNT', accountId: dst, currency: 'USD' },
    });
    expect(t!.reference).toMatch(/^SLC-[A-Z2-9]{16}$/);
    expect(await available(src)).toBe(50_000n - 12_550n);
    const done = await settled(t!.id, 'COMPLETED');
    expect(done.settledAt).toBeInstanceOf(Date);
    expect(await posted(src)).toBe(50_000n - 12_550n);
    const events = await eventsOf(t!.id);
    expect(events.map((e) => e.type)).toEqual([
      'OUTGOING_PAYMENT.PENDING',
      'OUTGOING_PAYMENT.PROCESSING',
      'OUTGOING_PAYMENT.COMPLETED',
    ]);
    expect(events[2]!.data).toMatchObject({
      id: t!.id,
      status: 'COMPLETED',
      type: 'OUTGOING',
      source: { sourceType: 'ACCOUNT', accountId: src, currency: 'USD' },
      destination: { destinationType: 'ACCOUNT', accountId: dst, currency: 'USD' },
      sentAmount: { amount: 12550, currency: { code: 'USD', decimals: 2 } },
      receivedAmount: { amount: 12550, currency: { code: 'USD' } },
      customerId: owner,
      platformCustomerId: platformCustomerIdOf.get(owner),
      reconciliationInstructions: { reference: t!.reference },
      exchangeRate: 1,
      fees: 0,
    });
    expect(typeof events[2]!.data.settledAt).toBe('string');
  });

  it.each([
    ['002', 'INSUFFICIENT_FUNDS'],
    ['003', 'ACCOUNT_CLOSED'],
  ])(
    '%s fails immediately (%s): FAILED in the response, hold voided, FAILED webhook',
    async (suffix, detail) => {
      const { src, dst } = await pair(5_000n, suffix);
      const { transaction: t } = await out(src, dst, 5_000n);
      expect(t).toMatchObject({
        status: 'FAILED',
        failureReason: 'QUOTE_EXECUTION_FAILED',
        failureDetail: detail,
      });
      expect(await available(src)).toBe(5_000n);
      expect(await posted(src)).toBe(5_000n);
      expect((await eventsOf(t!.id)).map((e) => e.type)).toEqual([
        'OUTGOING_PAYMENT.PENDING',
        'OUTGOING_PAYMENT.FAILED',
      ]);
    },
  );

  it('004: accepted, then rejected by the bank: FAILED, hold voided, balance intact', async () => {
    const { src, dst } = await pair(5_000n, '004');
    const { transaction: t } = await out(src, dst, 4_000n);
    expect(t!.status).toBe('PROCESSING');
    expect(await available(src)).toBe(1_000n);
    const failed = await settled(t!.id, 'FAILED');
    expect(failed).toMatchObject({
      failureReason: 'OFFRAMP_FAILED',
      failureDetail: 'REJECTED_BY_BANK',
    });
    expect(await available(src)).toBe(5_000n);
    expect(await posted(src)).toBe(5_000n);
    expect((await eventsOf(t!.id)).map((e) => e.type)).toEqual([
      'OUTGOING_PAYMENT.PENDING',
      'OUTGOING_PAYMENT.PROCESSING',
      'OUTGOING_PAYMENT.FAILED',
    ]);
  });

  it('005: stays PROCESSING about 30 s (× time scale), then FAILED with the hold voided', async () => {
    const { src, dst } = await pair(5_000n, '005');
    const started = Date.now();
    const { transaction: t } = await out(src, dst, 2_000n);
    await new Promise((r) => setTimeout(r, 100));
    expect((await statusOf(t!.id)).status).toBe('PROCESSING');
    expect(await available(src)).toBe(3_000n);
    const failed = await settled(t!.id, 'FAILED');
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(failed.failureDetail).toBe('TIMED_OUT');
    expect(await available(src)).toBe(5_000n);
  });

  it('settles from the identifier kept at creation even if the external account is deleted meanwhile', async () => {
    const { src, dst } = await pair(5_000n, '321');
    const { transaction: t } = await out(src, dst, 1_000n);
    await stack.accounts.deleteExternalAccount({ platformId, accountId: dst });
    await settled(t!.id, 'COMPLETED');
    expect(await posted(src)).toBe(4_000n);
  });

  it('refuses a transfer beyond the available balance with INSUFFICIENT_FUNDS and creates nothing', async () => {
    const { src, dst } = await pair(999n, '333');
    const e = await rejection(out(src, dst, 1_000n));
    expect(e.code).toBe('INSUFFICIENT_FUNDS');
    const page = await client.listTransactions({
      platformId,
      accountIdentifier: src,
      sortOrder: pb.SortOrder.DESC,
      page: { limit: 10 },
    });
    expect(page.page!.totalCount).toBe(0);
    expect(await available(src)).toBe(999n);
  });
});

describe('TransferOut: idempotency', () => {
  it('the same request key twice (sequential and concurrent) is one transaction and one hold', async () => {
    const { src, dst } = await pair(10_000n, '777');
    const first = await out(src, dst, 6_000n, 'same-key-1');
    const again = await out(src, dst, 6_000n, 'same-key-1');
    expect(again.replayed).toBe(true);
    expect(again.transaction!.id).toBe(first.transaction!.id);
    const [a, b] = await Promise.all([
      out(src, dst, 3_000n, 'same-key-2'),
      out(src, dst, 3_000n, 'same-key-2'),
    ]);
    expect(a.transaction!.id).toBe(b.transaction!.id);
    expect([a.replayed, b.replayed].filter(Boolean)).toHaveLength(1);
    const page = await client.listTransactions({
      platformId,
      senderAccountIdentifier: src,
      sortOrder: pb.SortOrder.DESC,
      page: { limit: 10 },
    });
    expect(page.page!.totalCount).toBe(2);
    expect(await available(src)).toBe(1_000n);
    expect(await holdsOf(src)).toHaveLength(2);
  });

  it('a transfer interrupted before its hold (accounts timed out) is resumed by a retry with the same key', async () => {
    const { src, dst } = await pair(10_000n, '779');
    ledger.failNextPlace = true;
    // Not a refusal: the call fails as a lost ledger call does (an internal error, no domain code).
    await expect(out(src, dst, 4_000n, 'resume-key')).rejects.toThrow();
    const stuck = await client.listTransactions({
      platformId,
      senderAccountIdentifier: src,
      sortOrder: pb.SortOrder.DESC,
      page: { limit: 10 },
    });
    expect(stuck.transactions.map((t) => t.status)).toEqual(['CREATED']);
    expect(await available(src)).toBe(10_000n);
    const resumed = await out(src, dst, 4_000n, 'resume-key');
    expect(resumed.replayed).toBe(true);
    expect(resumed.transaction!.id).toBe(stuck.transactions[0]!.id);
    expect(resumed.transaction!.status).toBe('PROCESSING');
    await settled(resumed.transaction!.id, 'COMPLETED');
    expect(await posted(src)).toBe(6_000n);
    expect((await eventsOf(resumed.transaction!.id)).map((x) => x.type)).toEqual([
      'OUTGOING_PAYMENT.PENDING',
      'OUTGOING_PAYMENT.PROCESSING',
      'OUTGOING_PAYMENT.COMPLETED',
    ]);
  });

  it('the same key with another amount is IDEMPOTENCY_KEY_REUSED and changes nothing', async () => {
    const { src, dst } = await pair(10_000n, '778');
    await out(src, dst, 1_000n, 'reused-key');
    const e = await rejection(out(src, dst, 2_000n, 'reused-key'));
    expect(e.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(await holdsOf(src)).toHaveLength(1);
  });
});

describe('TransferOut / TransferIn: bad input changes nothing', () => {
  it.each([
    ['sourceAccountId', { sourceAccountId: 'InternalAccount:nope' }, 'source.accountId'],
    ['destinationAccountId', { destinationAccountId: newId('InternalAccount') }, 'destination.accountId'],
    ['amount 0', { amount: 0n }, 'amount'],
    ['amount too large', { amount: 9_000_000_000_000_001n }, 'amount'],
    ['requestKey', { requestKey: '' }, 'requestKey'],
    ['environment', { environment: common.Environment.UNSPECIFIED }, 'environment'],
  ])('%s → INVALID_INPUT naming the field', async (_n, patch, field) => {
    const { src, dst } = await pair(1_000_000n, '100');
    const e = await rejection(
      client.transferOut({
        platformId,
        environment: SANDBOX,
        requestKey: 'x',
        sourceAccountId: src,
        destinationAccountId: dst,
        amount: 100n,
        ...patch,
      }),
    );
    expect(e.code).toBe('INVALID_INPUT');
    expect((e.details as { errors: { field: string }[] }).errors.map((x) => x.field)).toContain(field);
    expect(await available(src)).toBe(1_000_000n);
  });

  it('a currency mismatch is 400 on destination.accountId (out) / source.accountId (in)', async () => {
    const src = await addInternal('USD');
    const eur = await addExternal('101', 'EUR', ownerOf.get(src)!);
    const e1 = await rejection(out(src, eur));
    expect(e1.code).toBe('INVALID_INPUT');
    expect(JSON.stringify(e1.details)).toContain('destination.accountId');
    const e2 = await rejection(into(eur, src));
    expect(JSON.stringify(e2.details)).toContain('source.accountId');
    expect(await available(src)).toBe(1_000_000n);
  });

  it("another owner's external account, an inactive one, and unknown accounts are refused", async () => {
    const src = await addInternal('USD');
    const owner = ownerOf.get(src)!;
    const e1 = await rejection(out(src, await addExternal('102', 'USD', await newCustomer())));
    expect(e1.code).toBe('INVALID_INPUT');
    const pending = await addExternal('103', 'USD', owner);
    // accounts creates external accounts ACTIVE; a review would make one PENDING.
    await sql.query(`UPDATE accounts.external_accounts SET status = 'PENDING' WHERE id = $1`, [pending]);
    const e2 = await rejection(out(src, pending));
    expect(e2.code).toBe('EXTERNAL_ACCOUNT_NOT_USABLE');
    const e3 = await rejection(out(src, newId('ExternalAccount')));
    expect(e3.code).toBe('EXTERNAL_ACCOUNT_NOT_FOUND');
    const foreign = await addInternal('USD', 1_000n, { platform: otherPlatform });
    const e4 = await rejection(out(foreign, await addExternal('104', 'USD', owner)));
    expect(e4.code).toBe('INTERNAL_ACCOUNT_NOT_FOUND');
    expect(await available(src)).toBe(1_000_000n);
  });
});

describe('TransferIn', () => {
  it('credits the internal account from the outside once settled: CREATED → PROCESSING → COMPLETED, INCOMING_PAYMENT.COMPLETED', async () => {
    const dst = await addInternal('USD', 0n);
    const owner = ownerOf.get(dst)!;
    const src = await addExternal('900', 'USD', owner);
    const { transaction: t } = await into(src, dst, 7_700n);
    expect(t).toMatchObject({
      type: 'INCOMING',
      status: 'PROCESSING',
      customerId: owner,
      platformCustomerId: platformCustomerIdOf.get(owner),
    });
    await settled(t!.id, 'COMPLETED');
    expect(await posted(dst)).toBe(7_700n);
    const events = await eventsOf(t!.id);
    expect(events.map((e) => e.type)).toEqual(['INCOMING_PAYMENT.COMPLETED']);
    expect(events[0]!.data).toMatchObject({
      type: 'INCOMING',
      status: 'COMPLETED',
      receivedAmount: { amount: 7700, currency: { code: 'USD' } },
      source: { sourceType: 'ACCOUNT', accountId: src },
      rateDetails: { gridApiMultiplier: 1, gridApiFixedFee: 0, gridApiVariableFeeRate: 0, gridApiVariableFeeAmount: 0 },
    });
    expect(events[0]!.data).not.toHaveProperty('sentAmount');
  });

  it.each(['002', '003'])('%s fails immediately with nothing credited', async (suffix) => {
    const dst = await addInternal('USD', 0n);
    const { transaction: t } = await into(await addExternal(suffix, 'USD', ownerOf.get(dst)!), dst, 100n);
    expect(t!.status).toBe('FAILED');
    expect(await posted(dst)).toBe(0n);
    expect((await eventsOf(t!.id)).map((e) => e.type)).toEqual(['INCOMING_PAYMENT.FAILED']);
  });

  it('004 fails after acceptance with nothing credited', async () => {
    const dst = await addInternal('USD', 0n);
    const { transaction: t } = await into(await addExternal('004', 'USD', ownerOf.get(dst)!), dst, 100n);
    expect((await settled(t!.id, 'FAILED')).failureDetail).toBe('REJECTED_BY_BANK');
    expect(await posted(dst)).toBe(0n);
  });
});

describe('Transactions: read and list', () => {
  it('GetTransaction: another platform or an unknown id is TRANSACTION_NOT_FOUND; a malformed id INVALID_INPUT', async () => {
    const { src, dst } = await pair(1_000_000n, '200');
    const { transaction: t } = await out(src, dst, 100n);
    expect(
      (await rejection(client.getTransaction({ platformId: otherPlatformId, transactionId: t!.id }))).code,
    ).toBe('TRANSACTION_NOT_FOUND');
    expect(
      (await rejection(client.getTransaction({ platformId, transactionId: newId('Transaction') }))).code,
    ).toBe('TRANSACTION_NOT_FOUND');
    expect((await rejection(client.getTransaction({ platformId, transactionId: 'x' }))).code).toBe(
      'INVALID_INPUT',
    );
  });

  it('filters by every parameter, sorts both ways and pages with a cursor', async () => {
    const before = new Date();
    const a = await addInternal('USD', 100_000n);
    const otherCustomerId = ownerOf.get(a)!;
    const plat = await addInternal('USD', 100_000n, { owner: null });
    const extA = await addExternal('300', 'USD', otherCustomerId);
    const extP = await addExternal('301', 'USD', null);
    const t1 = (await out(a, extA, 100n)).transaction!;
    const t2 = (await out(a, await addExternal('002', 'USD', otherCustomerId), 200n)).transaction!;
    const t3 = (await out(plat, extP, 300n)).transaction!;
    const t4 = (await into(extA, a, 400n)).transaction!;
    await Promise.all([
      settled(t1.id, 'COMPLETED'),
      settled(t3.id, 'COMPLETED'),
      settled(t4.id, 'COMPLETED'),
    ]);
    const after = new Date();
    const ids = async (q: Partial<pb.ListTransactionsRequest>) =>
      (
        await client.listTransactions({
          platformId,
          sortOrder: pb.SortOrder.ASC,
          page: { limit: 100 },
          startDate: before,
          ...q,
        })
      ).transactions.map((t) => t.id);

    expect(await ids({})).toEqual([t1.id, t2.id, t3.id, t4.id]);
    expect(await ids({ customerId: otherCustomerId })).toEqual([t1.id, t2.id, t4.id]);
    expect(await ids({ customerId: platformId })).toEqual([t3.id]);
    expect(await ids({ platformCustomerId: platformCustomerIdOf.get(otherCustomerId) })).toEqual([
      t1.id,
      t2.id,
      t4.id,
    ]);
    expect(await ids({ accountIdentifier: extA })).toEqual([t1.id, t4.id]);
    expect(await ids({ senderAccountIdentifier: extA })).toEqual([t4.id]);
    expect(await ids({ receiverAccountIdentifier: extA })).toEqual([t1.id]);
    expect(await ids({ status: 'FAILED' })).toEqual([t2.id]);
    expect(await ids({ status: 'COMPLETED', type: 'OUTGOING' })).toEqual([t1.id, t3.id]);
    expect(await ids({ type: 'INCOMING' })).toEqual([t4.id]);
    expect(await ids({ reference: t3.reference })).toEqual([t3.id]);
    expect(await ids({ startDate: after })).toEqual([]);
    expect(await ids({ startDate: t2.createdAt, endDate: t3.createdAt })).toEqual([t2.id, t3.id]);

    const desc = await client.listTransactions({
      platformId,
      startDate: before,
      sortOrder: pb.SortOrder.UNSPECIFIED,
      page: { limit: 3 },
    });
    expect(desc.transactions.map((t) => t.id)).toEqual([t4.id, t3.id, t2.id]);
    expect(desc).toMatchObject({ page: { hasMore: true, totalCount: 4 } });
    const next = await client.listTransactions({
      platformId,
      startDate: before,
      sortOrder: pb.SortOrder.UNSPECIFIED,
      page: { limit: 3, cursor: desc.page!.nextCursor! },
    });
    expect(next.transactions.map((t) => t.id)).toEqual([t1.id]);
    expect(next.page!.hasMore).toBe(false);

    const other = await client.listTransactions({
      platformId: otherPlatformId,
      sortOrder: pb.SortOrder.DESC,
      page: { limit: 10 },
    });
    expect(other.page!.totalCount).toBe(0);
  });

  it.each([
    [{ status: 'DONE' }, 'status'],
    [{ type: 'SIDEWAYS' }, 'type'],
    [{ customerId: 'Customer:bad' }, 'customerId'],
    [{ page: { limit: 101 } }, 'limit'],
    [{ page: { cursor: '!!' } }, 'cursor'],
    [{ startDate: new Date('2026-02-01'), endDate: new Date('2026-01-01') }, 'endDate'],
  ])('refuses %o naming the field', async (q, field) => {
    const e = await rejection(
      client.listTransactions({ platformId, sortOrder: pb.SortOrder.DESC, page: { limit: 10 }, ...q }),
    );
    expect(e.code).toBe('INVALID_INPUT');
    expect(JSON.stringify(e.details)).toContain(`"${field}"`);
  });
});

describe('the state machine guards every status change', () => {
  it('refuses an illegal transition (COMPLETED → PROCESSING) and leaves the row and outbox unchanged', async () => {
    const { src, dst } = await pair(1_000_000n, '400');
    const { transaction: t } = await out(src, dst, 100n);
    await settled(t!.id, 'COMPLETED');
    const lifecycle = running.graph.lifecycle;
    const em = running.deps.orm.em.fork();
    const current = await running.graph.transactions.get(platformId, t!.id);
    const e = await rejection(em.transactional((tem) => lifecycle.move(tem as never, current, 'PROCESSING')));
    expect(e.code).toBe('ILLEGAL_STATE_TRANSITION');
    expect((await statusOf(t!.id)).status).toBe('COMPLETED');
    expect((await eventsOf(t!.id)).map((x) => x.type)).toHaveLength(3);
  });

  it('a move of a transaction as seen without its lock (asSeen) writes only if its row is unchanged since: TransactionChanged, nothing written', async () => {
    const { src, dst } = await pair(1_000_000n, '400');
    const { transaction: t } = await out(src, dst, 100n);
    await settled(t!.id, 'COMPLETED');
    const lifecycle = running.graph.lifecycle;
    const seen = await running.graph.transactions.get(platformId, t!.id);
    // Changed since it was seen, its status the same (as a refund's own update would).
    await sql.query(`UPDATE payments.transactions SET updated_at = updated_at + interval '1 second' WHERE id = $1`, [t!.id]);
    const moveToFailed = (from: typeof seen) =>
      running.deps.orm.em.fork().transactional((tem) => lifecycle.move(tem as never, lifecycle.asSeen(from), 'FAILED'));
    const e = await moveToFailed(seen).then(
      () => undefined,
      (err: unknown) => err as Error,
    );
    expect(e?.name).toBe('TransactionChanged');
    expect((await statusOf(t!.id)).status).toBe('COMPLETED');
    expect((await eventsOf(t!.id)).map((x) => x.type)).toHaveLength(3);
    // As seen now, it moves (the guard is the row's status and updated_at, nothing else).
    const now = await running.graph.transactions.get(platformId, t!.id);
    await moveToFailed(now);
    expect((await statusOf(t!.id)).status).toBe('FAILED');
    expect((await eventsOf(t!.id)).map((x) => x.type)).toHaveLength(4);
  });
});
