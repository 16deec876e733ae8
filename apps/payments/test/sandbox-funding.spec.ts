import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { common, payments as pb } from '@sluice/contracts';
import { newId } from '@sluice/core';
import type { PromiseClient } from '@sluice/rpc';
import { rejection, type World } from '@sluice/testing';
import { startPaymentsWithNeighbours } from './support/neighbours.js';

// Sandbox funding (POST /sandbox/internal-accounts/{id}/fund) as an INCOMING transaction, over real
// gRPC and Postgres, with the real identity (customers) and accounts (internal accounts and the
// ledger) started in-process: balances are what accounts answers.

let stack: Awaited<ReturnType<typeof startPaymentsWithNeighbours>>;
let client: PromiseClient<pb.PaymentsServiceClient>;
let world: World;
let sql: pg.Pool;
let platformId: string;
let customerId: string;
let usdAccount: string;
let platformAccount: string;

const balance = async (accountId: string) => (await world.balance(platformId, accountId)).posted;

beforeAll(async () => {
  stack = await startPaymentsWithNeighbours('sandboxfund');
  ({ client, world, sql } = stack);
  const P = await world.platform('SANDBOX');
  platformId = P.id;
  customerId = (await world.customer(platformId, { platformCustomerId: 'ada-1' })).id;
  usdAccount = (await world.internalAccount(P, customerId, 'USD')).id;
  platformAccount = (await world.internalAccount(P, null, 'USDC')).id;
});

afterAll(async () => {
  await stack?.stop();
});


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
    const before = await balance(usdAccount);
    const { transaction } = await fund({ requestKey: 'fund-1' });
    expect(transaction).toMatchObject({
      type: 'INCOMING',
      status: 'COMPLETED',
      source: { kind: 'REALTIME_FUNDING', currency: 'USD' },
      destination: { kind: 'ACCOUNT', accountId: usdAccount, currency: 'USD' },
      customerId,
      platformCustomerId: 'ada-1',
      receivedAmount: 10_000n,
      // A deposit in the account's currency: rate 1, no fee (the reference IncomingRateDetails).
      incomingRateDetails: {
        gridApiMultiplier: '1',
        gridApiFixedFee: 0n,
        gridApiVariableFeeRate: '0',
        gridApiVariableFeeAmount: 0n,
      },
    });
    expect(await balance(usdAccount)).toBe(before + 10_000n);
    // The same key: the same transaction, nothing credited again.
    const again = await fund({ requestKey: 'fund-1' });
    expect(again.transaction!.id).toBe(transaction!.id);
    expect(await balance(usdAccount)).toBe(before + 10_000n);
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
    // A deposit the platform asked for itself: no INCOMING_PAYMENT.PENDING (that is the approval
    // request of the incoming-payment webhook), only the completion.
    expect(events.rows.map((r) => r.type)).toEqual(['INCOMING_PAYMENT.COMPLETED']);
  });

  it("funds the platform's own accounts too (no customer), and each call without a key is its own funding", async () => {
    const a = await fund({ accountId: platformAccount, amount: 7n });
    const b = await fund({ accountId: platformAccount, amount: 7n });
    expect(a.transaction!.id).not.toBe(b.transaction!.id);
    expect(a.transaction).toMatchObject({ status: 'COMPLETED', customerId: platformId });
    expect(await balance(platformAccount)).toBe(14n);
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
