import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { common, payments as pb } from '@sluice/contracts';
import { DomainError, newId } from '@sluice/core';
import { createRpcClient, type PromiseClient } from '@sluice/rpc';
import { startService, type RunningService } from '@sluice/runtime';
import { createTestDatabase, dropStreams, natsUrl, testPrefix, type TestDatabase } from '@sluice/testing';
import { definePaymentsService, type Ledger, type PaymentsConfig, type PaymentsGraph } from '../src/index.js';
import { FakeAccounts } from './support/fake-accounts.js';
import { FakeCustomers } from './support/fake-customers.js';

// Sandbox funding (POST /sandbox/internal-accounts/{id}/fund) as an INCOMING transaction, over real
// gRPC and Postgres; accounts and identity are in-memory fakes. Credits are recorded by entry id, so
// funding twice would show as a second entry.

const platformId = newId('Platform');
const customerId = newId('Customer');
const usdAccount = newId('InternalAccount');
const platformAccount = newId('InternalAccount');

const credits = new Map<string, { accountId: string; amount: bigint }>();
const balance = (accountId: string) =>
  [...credits.values()].filter((c) => c.accountId === accountId).reduce((s, c) => s + c.amount, 0n);
const notUsed = async () => {
  throw new Error('not used');
};
const ledger: Ledger = {
  placeHold: notUsed,
  postHold: notUsed,
  voidHold: notUsed,
  postEntry: notUsed,
  async creditFromOutside(c) {
    if (!credits.has(c.entryId)) credits.set(c.entryId, { accountId: c.accountId, amount: c.amount });
  },
};
const accountsFake = new FakeAccounts();
accountsFake.internal.set(usdAccount, { id: usdAccount, platformId, customerId, currency: 'USD' });
accountsFake.internal.set(platformAccount, { id: platformAccount, platformId, currency: 'USDC' });
const customersFake = new FakeCustomers(new Map([[customerId, { platformCustomerId: 'ada-1', platformId }]]));

let db: TestDatabase;
let prefix: string;
let running: RunningService<PaymentsConfig, PaymentsGraph>;
let client: PromiseClient<pb.PaymentsServiceClient>;
let sql: pg.Pool;

beforeAll(async () => {
  db = await createTestDatabase('sandboxfund');
  prefix = testPrefix('sandboxfund');
  running = (await startService(
    definePaymentsService({ accounts: accountsFake, ledger, customers: customersFake }),
    {
      DATABASE_URL: db.url,
      NATS_URL: await natsUrl(),
      EVENT_SUBJECT_PREFIX: prefix,
      GRPC_PORT: '0',
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

const fund = (over: Partial<pb.SandboxFundAccountRequest> = {}) =>
  client.sandboxFundAccount({
    platformId,
    environment: common.Environment.SANDBOX,
    accountId: usdAccount,
    amount: 10_000n,
    ...over,
  });

describe('SandboxFundAccount', () => {
  it('is an INCOMING transaction, COMPLETED, credited once per request key, listed with the others', async () => {
    const before = balance(usdAccount);
    const { transaction } = await fund({ requestKey: 'fund-1' });
    expect(transaction).toMatchObject({
      type: 'INCOMING',
      status: 'COMPLETED',
      source: { kind: 'REALTIME_FUNDING', currency: 'USD' },
      destination: { kind: 'ACCOUNT', accountId: usdAccount, currency: 'USD' },
      customerId,
      platformCustomerId: 'ada-1',
      receivedAmount: 10_000n,
    });
    expect(balance(usdAccount)).toBe(before + 10_000n);
    // The same key: the same transaction, nothing credited again.
    const again = await fund({ requestKey: 'fund-1' });
    expect(again.transaction!.id).toBe(transaction!.id);
    expect(balance(usdAccount)).toBe(before + 10_000n);
    // The same key for another amount is refused.
    expect((await rejection(fund({ requestKey: 'fund-1', amount: 5n }))).code).toBe('IDEMPOTENCY_KEY_REUSED');
    const listed = await client.listTransactions({
      platformId,
      sortOrder: pb.SortOrder.DESC,
      page: { limit: 100 },
    });
    expect(listed.transactions.map((t) => t.id)).toContain(transaction!.id);
    const events = await sql.query<{ type: string }>(
      `SELECT type FROM payments.outbox WHERE envelope->'data'->>'id' = $1 ORDER BY occurred_at, id`,
      [transaction!.id],
    );
    expect(events.rows.map((r) => r.type)).toEqual([
      'INCOMING_PAYMENT.PENDING',
      'INCOMING_PAYMENT.COMPLETED',
    ]);
  });

  it("funds the platform's own accounts too (no customer), and each call without a key is its own funding", async () => {
    const a = await fund({ accountId: platformAccount, amount: 7n });
    const b = await fund({ accountId: platformAccount, amount: 7n });
    expect(a.transaction!.id).not.toBe(b.transaction!.id);
    expect(a.transaction).toMatchObject({ status: 'COMPLETED', customerId: platformId });
    expect(balance(platformAccount)).toBe(14n);
  });

  it('refuses bad input naming the field, an unknown account, and production platforms; nothing is recorded', async () => {
    const count = async () =>
      (await sql.query('SELECT count(*)::int AS n FROM payments.transactions')).rows[0].n;
    const before = await count();
    const bad = await rejection(fund({ accountId: 'InternalAccount:nope', amount: 0n }));
    expect(bad.code).toBe('INVALID_INPUT');
    expect((bad.details!.errors as { field: string }[]).map((e) => e.field).sort()).toEqual([
      'accountId',
      'amount',
    ]);
    expect((await rejection(fund({ accountId: newId('InternalAccount') }))).code).toBe(
      'INTERNAL_ACCOUNT_NOT_FOUND',
    );
    expect((await rejection(fund({ environment: common.Environment.PRODUCTION }))).code).toBe(
      'RAIL_UNAVAILABLE',
    );
    expect(await count()).toBe(before);
  });
});
