import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { common, identity, payments as pb } from '@sluice/contracts';
import { newId } from '@sluice/core';
import { subjectFor } from '@sluice/events';
import type { PromiseClient } from '@sluice/rpc';
import { eventually, rejection, type World } from '@sluice/testing';
import { startPaymentsWithNeighbours } from './support/neighbours.js';

// Incoming payments (sandbox UMA receive, the approval webhook's answers, approve, reject, the
// approval window) over real gRPC and Postgres, with the real identity (Alice, found by her UMA
// address; the platform's webhook endpoint and USD approval threshold in its config) and accounts
// (her USD account and the ledger) started in-process: every credit asserted is the balance
// accounts answers. The dispatcher's answers are published as it would publish them.

const SANDBOX = common.Environment.SANDBOX;
const ALICE = '$alice@bank.example';
const SENDER = '$success.usd@sandbox.sluice.local';
const THRESHOLD = 100_000n;

let stack: Awaited<ReturnType<typeof startPaymentsWithNeighbours>>;
let running: typeof stack.running;
let client: PromiseClient<pb.PaymentsServiceClient>;
let world: World;
let sql: pg.Pool;
let prefix: string;
let platformId: string;
let otherPlatformId: string;
/** Alice, a customer of the platform with the UMA address ALICE, and her USD account. */
let customerId: string;
let usdAccount: string;
/** Alice's USD balance as accounts answers it. */
const balance = async (accountId: string) => (await world.balance(platformId, accountId)).posted;

beforeAll(async () => {
  stack = await startPaymentsWithNeighbours('incoming', {
    env: {
      SANDBOX_TIME_SCALE: '0.01',
      // These tests move jobs' due times with SQL, which announces nothing: poll instead of the 10 s safety poll.
      JOB_POLL_MS: '20',
      // Real seconds (protocol deadlines are not scaled): no answer deadline elapses by itself during
      // the file; the test of one elapsing closes it (closeWindow).
      INCOMING_APPROVAL_ANSWER_TIMEOUT_SECONDS: '3600',
      INCOMING_APPROVAL_WINDOW_SECONDS: '3600',
    },
  });
  ({ client, world, sql, running } = stack);
  prefix = stack.services.prefix;
  const platform = await world.platform('SANDBOX');
  platformId = platform.id;
  // Identity's platform config: a webhook endpoint and a USD approval threshold.
  await stack.identity.updatePlatformConfig({
    platformId,
    webhookEndpoint: 'https://platform.example/webhooks',
    supportedCurrencies: {
      currencies: [
        identity.CurrencyConfig.fromPartial({
          currencyCode: 'USD',
          incomingPaymentApprovalThreshold: THRESHOLD,
        }),
      ],
    },
    clearEmbeddedWalletConfig: false,
  });
  otherPlatformId = (await world.platform('SANDBOX')).id;
  const alice = await world.customer(platformId, { umaAddress: ALICE, platformCustomerId: 'alice-1' });
  customerId = alice.id;
  usdAccount = (await world.internalAccount(platform, customerId, 'USD')).id;
});

afterAll(async () => {
  await stack?.stop();
});


const receive = (over: Partial<pb.SandboxReceiveUmaRequest> = {}) =>
  client.sandboxReceiveUma({
    platformId,
    environment: SANDBOX,
    requestKey: `k-${Math.random()}`,
    senderUmaAddress: SENDER,
    receiverUmaAddress: ALICE,
    receivingCurrencyCode: 'USD',
    receivingCurrencyAmount: 1234n,
    ...over,
  });

async function eventsOf(id: string): Promise<{ type: string; data: Record<string, unknown> }[]> {
  const { rows } = await sql.query<{ type: string; envelope: { data: Record<string, unknown> } }>(
    `SELECT type, envelope FROM payments.outbox WHERE envelope->'data'->>'id' = $1 ORDER BY occurred_at, id`,
    [id],
  );
  return rows.map((r) => ({ type: r.type, data: r.envelope.data }));
}

/** The answer deadline of a payment passes now: its end and its timeout job, moved together. */
async function closeWindow(transactionId: string): Promise<void> {
  const { rowCount } = await sql.query(
    `WITH closed AS (UPDATE payments.incoming_approvals SET expires_at = now() WHERE transaction_id = $1 RETURNING expires_at)
     UPDATE payments.scheduled_jobs SET run_at = (SELECT expires_at FROM closed) WHERE id = 'incoming.approval-timeout:' || $1`,
    [transactionId],
  );
  expect(rowCount).toBe(1);
}

async function transactionCount(): Promise<number> {
  const { rows } = await sql.query<{ n: string }>(`SELECT count(*) AS n FROM payments.transactions`);
  return Number(rows[0]!.n);
}

describe('SandboxReceiveUma below the approval threshold', () => {
  it('credits the receiver once without asking: no PENDING webhook, COMPLETED with the public INCOMING shape', async () => {
    const before = await balance(usdAccount);
    const { transaction: t, replayed } = await receive({ receivingCurrencyAmount: 1234n });
    expect(replayed).toBe(false);
    expect(t).toMatchObject({
      type: 'INCOMING',
      status: 'COMPLETED',
      customerId,
      platformCustomerId: 'alice-1',
      receivedAmount: 1234n,
      source: { kind: 'UMA_ADDRESS', umaAddress: SENDER, currency: 'USD' },
      destination: { kind: 'ACCOUNT', accountId: usdAccount, currency: 'USD' },
    });
    expect(t!.settledAt).toBeInstanceOf(Date);
    // Received in the currency it credits: rate 1, no fee (the reference IncomingRateDetails).
    expect(t!.incomingRateDetails).toEqual({
      gridApiMultiplier: '1',
      gridApiFixedFee: 0n,
      gridApiVariableFeeRate: '0',
      gridApiVariableFeeAmount: 0n,
    });
    expect(t!.rateDetails).toBeUndefined();
    // The sender's address in counterpartyInformation is sealed at rest (issue 17), answered as it was.
    expect(t!.counterpartyInformation).toEqual({ senderUmaAddress: SENDER });
    const { rows: stored } = await sql.query(
      `SELECT counterparty_information, sealed_counterparty_information FROM payments.transactions WHERE id = $1`,
      [t!.id],
    );
    expect(stored[0].counterparty_information).toEqual({});
    expect(stored[0].sealed_counterparty_information).toMatch(/^spc1\./);
    expect((await client.getTransaction({ platformId, transactionId: t!.id })).transaction).toEqual(t);
    expect((await balance(usdAccount)) - before).toBe(1234n);
    const events = await eventsOf(t!.id);
    expect(events.map((e) => e.type)).toEqual(['INCOMING_PAYMENT.COMPLETED']);
    expect(events[0]!.data).toMatchObject({
      id: t!.id,
      type: 'INCOMING',
      status: 'COMPLETED',
      receivedAmount: { amount: 1234, currency: { code: 'USD', decimals: 2 } },
      source: { sourceType: 'UMA_ADDRESS', umaAddress: SENDER },
      rateDetails: { gridApiMultiplier: 1, gridApiFixedFee: 0, gridApiVariableFeeRate: 0, gridApiVariableFeeAmount: 0 },
    });
    expect((events[0]!.data as { rateDetails?: unknown }).rateDetails).toEqual({
      gridApiMultiplier: 1,
      gridApiFixedFee: 0,
      gridApiVariableFeeRate: 0,
      gridApiVariableFeeAmount: 0,
    });
    // The safety-net job ran (or finds nothing to do) without crediting again.
    await eventually(async () => {
      const { rows } = await sql.query(
        `SELECT done_at FROM payments.scheduled_jobs WHERE id = $1 AND done_at IS NOT NULL`,
        [`incoming.complete:${t!.id}`],
      );
      expect(rows).toHaveLength(1);
      return true;
    });
    expect((await balance(usdAccount)) - before).toBe(1234n);
    expect((await eventsOf(t!.id)).length).toBe(1);
  });

  it('replays the same request key without a second payment; another request under the key is refused', async () => {
    const before = await balance(usdAccount);
    const first = await receive({ requestKey: 'uma-key-1', receivingCurrencyAmount: 500n });
    const again = await receive({ requestKey: 'uma-key-1', receivingCurrencyAmount: 500n });
    expect(again.replayed).toBe(true);
    expect(again.transaction!.id).toBe(first.transaction!.id);
    expect((await balance(usdAccount)) - before).toBe(500n);
    const e = await rejection(receive({ requestKey: 'uma-key-1', receivingCurrencyAmount: 501n }));
    expect(e.code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('an unknown receiver is UMA_RECEIVER_NOT_FOUND (also another platform’s customer) and creates nothing', async () => {
    const before = await transactionCount();
    const e1 = await rejection(receive({ receiverUmaAddress: '$bob@bank.example' }));
    expect(e1).toMatchObject({ kind: 'NOT_FOUND', code: 'UMA_RECEIVER_NOT_FOUND' });
    const e2 = await rejection(receive({ platformId: otherPlatformId }));
    expect(e2.code).toBe('UMA_RECEIVER_NOT_FOUND');
    expect(await transactionCount()).toBe(before);
  });

  it('a receiver without an account in the currency is INVALID_INPUT on receivingCurrencyCode', async () => {
    const before = await transactionCount();
    const e = await rejection(receive({ receivingCurrencyCode: 'EUR' }));
    expect(e.code).toBe('INVALID_INPUT');
    expect(e.details).toMatchObject({ errors: [{ field: 'receivingCurrencyCode' }] });
    expect(await transactionCount()).toBe(before);
  });

  it.each([
    ['senderUmaAddress', { senderUmaAddress: 'alice@bank.example' }],
    ['senderUmaAddress', { senderUmaAddress: '' }],
    ['receiverUmaAddress', { receiverUmaAddress: '$alice' }],
    ['receivingCurrencyCode', { receivingCurrencyCode: 'XXX' }],
    ['receivingCurrencyAmount', { receivingCurrencyAmount: 0n }],
    ['receivingCurrencyAmount', { receivingCurrencyAmount: 9_000_000_000_000_001n }],
    ['requestKey', { requestKey: '' }],
    ['environment', { environment: common.Environment.UNSPECIFIED }],
  ] as const)('bad input #%# on %s → INVALID_INPUT naming it, nothing created', async (field, over) => {
    const before = await transactionCount();
    const e = await rejection(receive(over as Partial<pb.SandboxReceiveUmaRequest>));
    expect(e).toMatchObject({ kind: 'INVALID_ARGUMENT', code: 'INVALID_INPUT' });
    expect((e.details as { errors: { field: string }[] }).errors.map((x) => x.field)).toContain(field);
    expect(await transactionCount()).toBe(before);
  });

  it('production platforms have no simulated incoming payments (RAIL_UNAVAILABLE)', async () => {
    const e = await rejection(receive({ environment: common.Environment.PRODUCTION }));
    expect(e.code).toBe('RAIL_UNAVAILABLE');
  });
});

describe('incoming payments awaiting the platform (amount ≥ the platform’s USD threshold)', () => {
  it('waits PENDING without a credit; approve credits it once; a repeated approve returns it', async () => {
    const before = await balance(usdAccount);
    const { transaction: t } = await receive({ receivingCurrencyAmount: THRESHOLD });
    expect(t!.status).toBe('PENDING');
    expect(await balance(usdAccount)).toBe(before);
    // The window the approval row enforces is the one its timeout job fires at (both × SANDBOX_TIME_SCALE).
    const { rows: window } = await sql.query(
      `SELECT a.expires_at, j.run_at FROM payments.incoming_approvals a
         JOIN payments.scheduled_jobs j ON j.id = 'incoming.approval-timeout:' || a.transaction_id
        WHERE a.transaction_id = $1`,
      [t!.id],
    );
    expect(new Date(window[0].expires_at).getTime()).toBe(new Date(window[0].run_at).getTime());
    const approved = await client.approveIncomingPayment({
      platformId,
      transactionId: t!.id,
      receiverCustomerInfoJson: JSON.stringify({ FULL_NAME: 'Alice' }),
    });
    expect(approved.transaction!.status).toBe('COMPLETED');
    expect((await balance(usdAccount)) - before).toBe(THRESHOLD);
    const again = await client.approveIncomingPayment({ platformId, transactionId: t!.id });
    expect(again.transaction!.status).toBe('COMPLETED');
    expect((await balance(usdAccount)) - before).toBe(THRESHOLD);
    expect((await eventsOf(t!.id)).map((e) => e.type)).toEqual([
      'INCOMING_PAYMENT.PENDING',
      'INCOMING_PAYMENT.COMPLETED',
    ]);
    const e = await rejection(client.rejectIncomingPayment({ platformId, transactionId: t!.id }));
    expect(e).toMatchObject({ kind: 'ABORTED', code: 'TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL' });
  });

  it('concurrent approvals credit once', async () => {
    const before = await balance(usdAccount);
    const { transaction: t } = await receive({ receivingCurrencyAmount: THRESHOLD + 7n });
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, () => client.approveIncomingPayment({ platformId, transactionId: t!.id })),
    );
    expect(results.every((r) => r.status === 'fulfilled')).toBe(true);
    expect((await balance(usdAccount)) - before).toBe(THRESHOLD + 7n);
    expect((await client.getTransaction({ platformId, transactionId: t!.id })).transaction!.status).toBe(
      'COMPLETED',
    );
  });

  it('reject → REJECTED (INCOMING_PAYMENT.FAILED), nothing credited; reject again returns it; approve is 409', async () => {
    const before = await balance(usdAccount);
    const { transaction: t } = await receive({ receivingCurrencyAmount: THRESHOLD * 2n });
    const r = await client.rejectIncomingPayment({
      platformId,
      transactionId: t!.id,
      reason: 'RESTRICTED_JURISDICTION',
    });
    expect(r.transaction!.status).toBe('REJECTED');
    expect(
      (await client.rejectIncomingPayment({ platformId, transactionId: t!.id })).transaction!.status,
    ).toBe('REJECTED');
    const e = await rejection(client.approveIncomingPayment({ platformId, transactionId: t!.id }));
    expect(e.code).toBe('TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL');
    expect(await balance(usdAccount)).toBe(before);
    expect((await eventsOf(t!.id)).map((x) => x.type)).toEqual([
      'INCOMING_PAYMENT.PENDING',
      'INCOMING_PAYMENT.FAILED',
    ]);
    const { rows } = await sql.query(
      `SELECT decision, reason FROM payments.incoming_approvals WHERE transaction_id = $1`,
      [t!.id],
    );
    expect(rows[0]).toEqual({ decision: 'REJECTED', reason: 'RESTRICTED_JURISDICTION' });
  });

  it('the approval window elapsing → FAILED with PAYMENT_APPROVAL_TIMED_OUT; approve afterwards is 409', async () => {
    const before = await balance(usdAccount);
    const { transaction: t } = await receive({ receivingCurrencyAmount: THRESHOLD * 3n });
    await closeWindow(t!.id);
    await eventually(async () => {
      const cur = (await client.getTransaction({ platformId, transactionId: t!.id })).transaction!;
      expect(cur.status).toBe('FAILED');
      expect(cur.failureReason).toBe('PAYMENT_APPROVAL_TIMED_OUT');
      return true;
    }, 10_000);
    const e = await rejection(client.approveIncomingPayment({ platformId, transactionId: t!.id }));
    expect(e.code).toBe('TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL');
    expect(await balance(usdAccount)).toBe(before);
    expect((await eventsOf(t!.id)).map((x) => x.type)).toEqual([
      'INCOMING_PAYMENT.PENDING',
      'INCOMING_PAYMENT.FAILED',
    ]);
  });

  it('another platform’s transaction is TRANSACTION_NOT_FOUND; a payment not awaiting approval is 409; bad ids are 400', async () => {
    const { transaction: pending } = await receive({ receivingCurrencyAmount: THRESHOLD });
    const e1 = await rejection(
      client.approveIncomingPayment({ platformId: otherPlatformId, transactionId: pending!.id }),
    );
    expect(e1).toMatchObject({ kind: 'NOT_FOUND', code: 'TRANSACTION_NOT_FOUND' });
    const e2 = await rejection(
      client.rejectIncomingPayment({ platformId: otherPlatformId, transactionId: pending!.id }),
    );
    expect(e2.code).toBe('TRANSACTION_NOT_FOUND');
    const { transaction: auto } = await receive({ receivingCurrencyAmount: 10n });
    const e3 = await rejection(client.approveIncomingPayment({ platformId, transactionId: auto!.id }));
    expect(e3).toMatchObject({ kind: 'ABORTED', code: 'TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL' });
    const e4 = await rejection(client.approveIncomingPayment({ platformId, transactionId: 'nope' }));
    expect(e4.code).toBe('INVALID_INPUT');
    expect(e4.details).toMatchObject({ errors: [{ field: 'transactionId' }] });
    const e5 = await rejection(
      client.approveIncomingPayment({
        platformId,
        transactionId: pending!.id,
        receiverCustomerInfoJson: '[1]',
      }),
    );
    expect(e5.details).toMatchObject({ errors: [{ field: 'receiverCustomerInfo' }] });
    expect(
      (await client.getTransaction({ platformId, transactionId: pending!.id })).transaction!.status,
    ).toBe('PENDING');
  });
});

describe('the platform’s answer to INCOMING_PAYMENT.PENDING, relayed by the dispatcher (INCOMING_PAYMENT.APPROVAL_ANSWERED)', () => {
  /** Publishes an answer as the dispatcher's outbox relay does, on the webhooks stream. */
  async function answer(
    transactionId: string,
    a: { outcome: string; responseStatus?: number; responseBody?: string; error?: string },
    eventId = newId('Event'),
  ): Promise<string> {
    const envelope = {
      id: eventId,
      type: 'INCOMING_PAYMENT.APPROVAL_ANSWERED',
      occurredAt: new Date().toISOString(),
      platformId,
      data: { transactionId, webhookId: newId('Webhook'), answeredAt: new Date().toISOString(), ...a },
    };
    await running.deps.bus.js.publish(
      subjectFor(prefix, 'webhooks', 'INCOMING_PAYMENT.APPROVAL_ANSWERED'),
      JSON.stringify(envelope),
      { msgID: eventId },
    );
    return eventId;
  }
  const statusOf = (id: string, status: string) =>
    eventually(async () => {
      const t = (await client.getTransaction({ platformId, transactionId: id })).transaction!;
      return t.status === status ? t : undefined;
    }, 15_000);
  const decisionOf = async (id: string) =>
    (
      await sql.query(`SELECT decision, reason FROM payments.incoming_approvals WHERE transaction_id = $1`, [
        id,
      ])
    ).rows[0];

  it('a 2xx approves: credited once, COMPLETED; the same answer again and a contradicting one change nothing', async () => {
    const before = await balance(usdAccount);
    const { transaction: t } = await receive({ receivingCurrencyAmount: THRESHOLD + 11n });
    expect(t!.status).toBe('PENDING');
    const eventId = await answer(t!.id, { outcome: 'RESPONDED', responseStatus: 200, responseBody: '' });
    await statusOf(t!.id, 'COMPLETED');
    expect((await balance(usdAccount)) - before).toBe(THRESHOLD + 11n);
    await answer(t!.id, { outcome: 'RESPONDED', responseStatus: 200 }, eventId);
    await answer(t!.id, { outcome: 'RESPONDED', responseStatus: 403 });
    const late = await rejection(client.rejectIncomingPayment({ platformId, transactionId: t!.id }));
    expect(late.code).toBe('TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL');
    await eventually(async () => {
      const { rows } = await sql.query(
        `SELECT count(*)::int AS n FROM payments.inbox WHERE consumer = 'payments-approval-answers'`,
      );
      return rows[0].n >= 2 ? true : undefined;
    });
    expect((await balance(usdAccount)) - before).toBe(THRESHOLD + 11n);
    expect((await client.getTransaction({ platformId, transactionId: t!.id })).transaction!.status).toBe(
      'COMPLETED',
    );
    expect(await decisionOf(t!.id)).toEqual({ decision: 'APPROVED', reason: null });
  });

  it('403 rejects with its reason; 422 rejects naming the fields asked for; nothing credited', async () => {
    const before = await balance(usdAccount);
    const { transaction: a } = await receive({ receivingCurrencyAmount: THRESHOLD + 12n });
    const { transaction: b } = await receive({ receivingCurrencyAmount: THRESHOLD + 13n });
    await answer(a!.id, {
      outcome: 'RESPONDED',
      responseStatus: 403,
      responseBody: '{"reason":"RESTRICTED_JURISDICTION"}',
    });
    await answer(b!.id, {
      outcome: 'RESPONDED',
      responseStatus: 422,
      responseBody: '{"requiredFields":["TAX_ID"]}',
    });
    await statusOf(a!.id, 'REJECTED');
    await statusOf(b!.id, 'REJECTED');
    expect(await decisionOf(a!.id)).toEqual({ decision: 'REJECTED', reason: 'RESTRICTED_JURISDICTION' });
    expect(await decisionOf(b!.id)).toEqual({
      decision: 'REJECTED',
      reason: 'COUNTERPARTY_INFORMATION_REQUIRED: TAX_ID',
    });
    expect(await balance(usdAccount)).toBe(before);
  });

  it('another status or no response fails it with PAYMENT_APPROVAL_WEBHOOK_ERROR; none in time with PAYMENT_APPROVAL_TIMED_OUT', async () => {
    const { transaction: a } = await receive({ receivingCurrencyAmount: THRESHOLD + 14n });
    const { transaction: b } = await receive({ receivingCurrencyAmount: THRESHOLD + 15n });
    const { transaction: c } = await receive({ receivingCurrencyAmount: THRESHOLD + 16n });
    await answer(a!.id, { outcome: 'RESPONDED', responseStatus: 500 });
    await answer(b!.id, { outcome: 'NO_RESPONSE', error: 'network error: ECONNREFUSED' });
    await answer(c!.id, { outcome: 'TIMED_OUT', error: 'timed out after 10000 ms' });
    expect((await statusOf(a!.id, 'FAILED')).failureReason).toBe('PAYMENT_APPROVAL_WEBHOOK_ERROR');
    expect((await statusOf(b!.id, 'FAILED')).failureReason).toBe('PAYMENT_APPROVAL_WEBHOOK_ERROR');
    expect((await statusOf(c!.id, 'FAILED')).failureReason).toBe('PAYMENT_APPROVAL_TIMED_OUT');
    expect(await decisionOf(b!.id)).toEqual({
      decision: 'WEBHOOK_ERROR',
      reason: 'network error: ECONNREFUSED',
    });
  });

  it('202 opens the approval window from the answer: the window and its job agree; approve then credits', async () => {
    const before = await balance(usdAccount);
    const { transaction: t } = await receive({ receivingCurrencyAmount: THRESHOLD + 17n });
    await answer(t!.id, { outcome: 'RESPONDED', responseStatus: 202 });
    const window = await eventually(async () => {
      const { rows } = await sql.query(
        `SELECT a.expires_at, j.run_at FROM payments.incoming_approvals a
           JOIN payments.scheduled_jobs j ON j.id = 'incoming.approval-timeout:' || a.transaction_id || ':window'
          WHERE a.transaction_id = $1`,
        [t!.id],
      );
      return rows[0];
    });
    expect(new Date(window.expires_at).getTime()).toBe(new Date(window.run_at).getTime());
    expect((await client.getTransaction({ platformId, transactionId: t!.id })).transaction!.status).toBe(
      'PENDING',
    );
    const ok = await client.approveIncomingPayment({ platformId, transactionId: t!.id });
    expect(ok.transaction!.status).toBe('COMPLETED');
    expect((await balance(usdAccount)) - before).toBe(THRESHOLD + 17n);
  });

  it('an answer about a payment that asked nobody changes nothing', async () => {
    const { transaction: t } = await receive({ receivingCurrencyAmount: 42n });
    expect(t!.status).toBe('COMPLETED');
    const eventId = await answer(t!.id, { outcome: 'RESPONDED', responseStatus: 403 });
    await eventually(async () => {
      const { rows } = await sql.query(`SELECT 1 FROM payments.inbox WHERE event_id = $1`, [eventId]);
      return rows.length ? true : undefined;
    });
    expect((await client.getTransaction({ platformId, transactionId: t!.id })).transaction!.status).toBe(
      'COMPLETED',
    );
  });
});
