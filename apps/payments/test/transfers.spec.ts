import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { common, payments as pb } from '@sluice/contracts';
import { DomainError, newId } from '@sluice/core';
import { createRpcClient, type PromiseClient } from '@sluice/rpc';
import { startService, type RunningService } from '@sluice/runtime';
import {
  createTestDatabase,
  dropStreams,
  eventually,
  natsUrl,
  testPrefix,
  type TestDatabase,
} from '@sluice/testing';
import {
  definePaymentsService,
  type ExternalAccountInfo,
  type PaymentsConfig,
  type PaymentsGraph,
} from '../src/index.js';
import { FakeAccounts } from './support/fake-accounts.js';
import { FakeCustomers } from './support/fake-customers.js';
import { FakeLedger } from './support/fake-ledger.js';

// Transfers and transactions over real gRPC and Postgres, with the accounts service
// (reads + two-phase ledger) and identity replaced by in-memory fakes that keep the
// ledger's rules: holds refused beyond the available balance, every step idempotent on its id.

const SANDBOX = common.Environment.SANDBOX;
const platformId = newId('Platform');
const otherPlatformId = newId('Platform');
const customerId = newId('Customer');
const otherCustomerId = newId('Customer');

const accountsFake = new FakeAccounts();
const { internal, external } = accountsFake;
const customersFake = new FakeCustomers(
  new Map([
    [customerId, { platformCustomerId: 'cust-1' }],
    [otherCustomerId, { platformCustomerId: 'cust-2' }],
  ]),
);

const ledger = new FakeLedger();
let db: TestDatabase;
let prefix: string;
let running: RunningService<PaymentsConfig, PaymentsGraph>;
let client: PromiseClient<pb.PaymentsServiceClient>;
let sql: pg.Pool;

function addInternal(
  currency = 'USD',
  owner: string | null = customerId,
  balance = 1_000_000n,
  p = platformId,
) {
  const id = newId('InternalAccount');
  internal.set(id, { id, currency, platformId: p, ...(owner ? { customerId: owner } : {}) });
  ledger.posted.set(id, balance);
  return id;
}
function addExternal(
  identifier: string,
  currency = 'USD',
  owner: string | null = customerId,
  status: ExternalAccountInfo['status'] = 'ACTIVE',
) {
  const id = newId('ExternalAccount');
  external.set(id, {
    id,
    currency,
    platformId,
    status,
    accountType: `${currency}_ACCOUNT`,
    primaryIdentifier: identifier,
    ...(owner ? { customerId: owner } : {}),
  });
  return id;
}

beforeAll(async () => {
  db = await createTestDatabase('transfers');
  prefix = testPrefix('transfers');
  running = (await startService(
    definePaymentsService({ accounts: accountsFake, ledger, customers: customersFake }),
    {
      DATABASE_URL: db.url,
      NATS_URL: await natsUrl(),
      EVENT_SUBJECT_PREFIX: prefix,
      GRPC_PORT: '0',
      // 1 s settlement → 10 ms, the 005 30 s pending → 300 ms.
      SANDBOX_TIME_SCALE: '0.01',
      JOB_POLL_MS: '20',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    },
  )) as never;
  client = createRpcClient(pb.PaymentsServiceClient, `127.0.0.1:${running.port}`, {
    defaultDeadlineMs: 5000,
  });
  sql = new pg.Pool({ connectionString: db.url, max: 2 });
});

afterAll(async () => {
  client?.close();
  await running?.stop();
  await sql?.end();
  await dropStreams(await natsUrl(), prefix);
  await db?.drop();
});

async function rejection(p: Promise<unknown>): Promise<DomainError> {
  try {
    await p;
  } catch (e) {
    return e as DomainError;
  }
  throw new Error('expected a rejection');
}

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
    const src = addInternal('USD', customerId, 50_000n);
    const dst = addExternal('000123456789');
    const { transaction: t, replayed } = await out(src, dst, 12_550n);
    expect(replayed).toBe(false);
    expect(t).toMatchObject({
      type: 'OUTGOING',
      status: 'PROCESSING',
      customerId,
      platformCustomerId: 'cust-1',
      sentAmount: 12_550n,
      receivedAmount: 12_550n,
      source: { kind: 'ACCOUNT', accountId: src, currency: 'USD' },
      destination: { kind: 'ACCOUNT', accountId: dst, currency: 'USD' },
    });
    expect(t!.reference).toMatch(/^SLC-[A-Z2-9]{16}$/);
    expect(ledger.available(src)).toBe(50_000n - 12_550n);
    const done = await settled(t!.id, 'COMPLETED');
    expect(done.settledAt).toBeInstanceOf(Date);
    expect(ledger.posted.get(src)).toBe(50_000n - 12_550n);
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
      customerId,
      platformCustomerId: 'cust-1',
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
      const src = addInternal('USD', customerId, 5_000n);
      const dst = addExternal(`98765${suffix}`);
      const { transaction: t } = await out(src, dst, 5_000n);
      expect(t).toMatchObject({
        status: 'FAILED',
        failureReason: 'QUOTE_EXECUTION_FAILED',
        failureDetail: detail,
      });
      expect(ledger.available(src)).toBe(5_000n);
      expect(ledger.posted.get(src)).toBe(5_000n);
      expect((await eventsOf(t!.id)).map((e) => e.type)).toEqual([
        'OUTGOING_PAYMENT.PENDING',
        'OUTGOING_PAYMENT.FAILED',
      ]);
    },
  );

  it('004: accepted, then rejected by the bank: FAILED, hold voided, balance intact', async () => {
    const src = addInternal('USD', customerId, 5_000n);
    const dst = addExternal('GB29NWBK60161331926004', 'USD');
    const { transaction: t } = await out(src, dst, 4_000n);
    expect(t!.status).toBe('PROCESSING');
    expect(ledger.available(src)).toBe(1_000n);
    const failed = await settled(t!.id, 'FAILED');
    expect(failed).toMatchObject({
      failureReason: 'OFFRAMP_FAILED',
      failureDetail: 'REJECTED_BY_BANK',
    });
    expect(ledger.available(src)).toBe(5_000n);
    expect(ledger.posted.get(src)).toBe(5_000n);
    expect((await eventsOf(t!.id)).map((e) => e.type)).toEqual([
      'OUTGOING_PAYMENT.PENDING',
      'OUTGOING_PAYMENT.PROCESSING',
      'OUTGOING_PAYMENT.FAILED',
    ]);
  });

  it('005: stays PROCESSING about 30 s (× time scale), then FAILED with the hold voided', async () => {
    const src = addInternal('USD', customerId, 5_000n);
    const dst = addExternal('555000005');
    const started = Date.now();
    const { transaction: t } = await out(src, dst, 2_000n);
    await new Promise((r) => setTimeout(r, 100));
    expect((await statusOf(t!.id)).status).toBe('PROCESSING');
    expect(ledger.available(src)).toBe(3_000n);
    const failed = await settled(t!.id, 'FAILED');
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(failed.failureDetail).toBe('TIMED_OUT');
    expect(ledger.available(src)).toBe(5_000n);
  });

  it('settles from the identifier kept at creation even if the external account is deleted meanwhile', async () => {
    const src = addInternal('USD', customerId, 5_000n);
    const dst = addExternal('000987654321');
    const { transaction: t } = await out(src, dst, 1_000n);
    external.delete(dst);
    await settled(t!.id, 'COMPLETED');
    expect(ledger.posted.get(src)).toBe(4_000n);
  });

  it('refuses a transfer beyond the available balance with INSUFFICIENT_FUNDS and creates nothing', async () => {
    const src = addInternal('USD', customerId, 999n);
    const dst = addExternal('000111222333');
    const e = await rejection(out(src, dst, 1_000n));
    expect(e.code).toBe('INSUFFICIENT_FUNDS');
    const page = await client.listTransactions({
      platformId,
      accountIdentifier: src,
      sortOrder: pb.SortOrder.DESC,
      page: { limit: 10 },
    });
    expect(page.page!.totalCount).toBe(0);
    expect(ledger.available(src)).toBe(999n);
  });
});

describe('TransferOut: idempotency', () => {
  it('the same request key twice (sequential and concurrent) is one transaction and one hold', async () => {
    const src = addInternal('USD', customerId, 10_000n);
    const dst = addExternal('000000000777');
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
    expect(ledger.available(src)).toBe(1_000n);
    expect([...ledger.holds.values()].filter((h) => h.accountId === src)).toHaveLength(2);
  });

  it('a transfer interrupted before its hold (accounts timed out) is resumed by a retry with the same key', async () => {
    const src = addInternal('USD', customerId, 10_000n);
    const dst = addExternal('000000000779');
    ledger.failNextPlace = true;
    await rejection(out(src, dst, 4_000n, 'resume-key'));
    const stuck = await client.listTransactions({
      platformId,
      senderAccountIdentifier: src,
      sortOrder: pb.SortOrder.DESC,
      page: { limit: 10 },
    });
    expect(stuck.transactions.map((t) => t.status)).toEqual(['CREATED']);
    expect(ledger.available(src)).toBe(10_000n);
    const resumed = await out(src, dst, 4_000n, 'resume-key');
    expect(resumed.replayed).toBe(true);
    expect(resumed.transaction!.id).toBe(stuck.transactions[0]!.id);
    expect(resumed.transaction!.status).toBe('PROCESSING');
    await settled(resumed.transaction!.id, 'COMPLETED');
    expect(ledger.posted.get(src)).toBe(6_000n);
    expect((await eventsOf(resumed.transaction!.id)).map((x) => x.type)).toEqual([
      'OUTGOING_PAYMENT.PENDING',
      'OUTGOING_PAYMENT.PROCESSING',
      'OUTGOING_PAYMENT.COMPLETED',
    ]);
  });

  it('the same key with another amount is IDEMPOTENCY_KEY_REUSED and changes nothing', async () => {
    const src = addInternal('USD', customerId, 10_000n);
    const dst = addExternal('000000000778');
    await out(src, dst, 1_000n, 'reused-key');
    const e = await rejection(out(src, dst, 2_000n, 'reused-key'));
    expect(e.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect([...ledger.holds.values()].filter((h) => h.accountId === src)).toHaveLength(1);
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
    const src = addInternal();
    const dst = addExternal('000000000100');
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
    expect(ledger.available(src)).toBe(1_000_000n);
  });

  it('a currency mismatch is 400 on destination.accountId (out) / source.accountId (in)', async () => {
    const src = addInternal('USD');
    const eur = addExternal('000000000101', 'EUR');
    const e1 = await rejection(out(src, eur));
    expect(e1.code).toBe('INVALID_INPUT');
    expect(JSON.stringify(e1.details)).toContain('destination.accountId');
    const e2 = await rejection(into(eur, src));
    expect(JSON.stringify(e2.details)).toContain('source.accountId');
    expect(ledger.available(src)).toBe(1_000_000n);
  });

  it("another owner's external account, an inactive one, and unknown accounts are refused", async () => {
    const src = addInternal('USD', customerId);
    const e1 = await rejection(out(src, addExternal('000000000102', 'USD', otherCustomerId)));
    expect(e1.code).toBe('INVALID_INPUT');
    const e2 = await rejection(out(src, addExternal('000000000103', 'USD', customerId, 'PENDING')));
    expect(e2.code).toBe('EXTERNAL_ACCOUNT_NOT_USABLE');
    const e3 = await rejection(out(src, newId('ExternalAccount')));
    expect(e3.code).toBe('EXTERNAL_ACCOUNT_NOT_FOUND');
    const foreign = addInternal('USD', customerId, 1_000n, otherPlatformId);
    const e4 = await rejection(out(foreign, addExternal('000000000104')));
    expect(e4.code).toBe('INTERNAL_ACCOUNT_NOT_FOUND');
    expect(ledger.available(src)).toBe(1_000_000n);
  });
});

describe('TransferIn', () => {
  it('credits the internal account from the outside once settled: CREATED → PROCESSING → COMPLETED, INCOMING_PAYMENT.COMPLETED', async () => {
    const dst = addInternal('USD', customerId, 0n);
    const src = addExternal('000000000900');
    const { transaction: t } = await into(src, dst, 7_700n);
    expect(t).toMatchObject({
      type: 'INCOMING',
      status: 'PROCESSING',
      customerId,
      platformCustomerId: 'cust-1',
    });
    await settled(t!.id, 'COMPLETED');
    expect(ledger.posted.get(dst)).toBe(7_700n);
    const events = await eventsOf(t!.id);
    expect(events.map((e) => e.type)).toEqual(['INCOMING_PAYMENT.COMPLETED']);
    expect(events[0]!.data).toMatchObject({
      type: 'INCOMING',
      status: 'COMPLETED',
      receivedAmount: { amount: 7700, currency: { code: 'USD' } },
      source: { sourceType: 'ACCOUNT', accountId: src },
    });
    expect(events[0]!.data).not.toHaveProperty('sentAmount');
  });

  it.each(['002', '003'])('%s fails immediately with nothing credited', async (suffix) => {
    const dst = addInternal('USD', customerId, 0n);
    const { transaction: t } = await into(addExternal(`44${suffix}`), dst, 100n);
    expect(t!.status).toBe('FAILED');
    expect(ledger.posted.get(dst)).toBe(0n);
    expect((await eventsOf(t!.id)).map((e) => e.type)).toEqual(['INCOMING_PAYMENT.FAILED']);
  });

  it('004 fails after acceptance with nothing credited', async () => {
    const dst = addInternal('USD', customerId, 0n);
    const { transaction: t } = await into(addExternal('123004'), dst, 100n);
    expect((await settled(t!.id, 'FAILED')).failureDetail).toBe('REJECTED_BY_BANK');
    expect(ledger.posted.get(dst)).toBe(0n);
  });
});

describe('Transactions: read and list', () => {
  it('GetTransaction: another platform or an unknown id is TRANSACTION_NOT_FOUND; a malformed id INVALID_INPUT', async () => {
    const { transaction: t } = await out(addInternal(), addExternal('000000000200'), 100n);
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
    const a = addInternal('USD', otherCustomerId, 100_000n);
    const plat = addInternal('USD', null, 100_000n);
    const extA = addExternal('000000000300', 'USD', otherCustomerId);
    const extP = addExternal('000000000301', 'USD', null);
    const t1 = (await out(a, extA, 100n)).transaction!;
    const t2 = (await out(a, addExternal('000000000002', 'USD', otherCustomerId), 200n)).transaction!;
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
    expect(await ids({ platformCustomerId: 'cust-2' })).toEqual([t1.id, t2.id, t4.id]);
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
    const { transaction: t } = await out(addInternal(), addExternal('000000000400'), 100n);
    await settled(t!.id, 'COMPLETED');
    const lifecycle = running.graph.lifecycle;
    const em = running.deps.orm.em.fork();
    const current = await running.graph.transactions.get(platformId, t!.id);
    const e = await rejection(em.transactional((tem) => lifecycle.move(tem as never, current, 'PROCESSING')));
    expect(e.code).toBe('ILLEGAL_STATE_TRANSITION');
    expect((await statusOf(t!.id)).status).toBe('COMPLETED');
    expect((await eventsOf(t!.id)).map((x) => x.type)).toHaveLength(3);
  });
});
