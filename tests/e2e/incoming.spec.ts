/**
 * End to end: incoming UMA payments through the real processes (gateway →
 * payments → identity customer lookup → accounts ledger → outbox → NATS →
 * webhook dispatcher): the sandbox receive, the approval flow (approve,
 * reject, window elapsing), balances, webhooks and the ledger's reconciliation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { eventually } from '@sluice/testing';
import { accounts as accountsPb } from '@sluice/contracts';
import { createRpcClient } from '@sluice/rpc';
import {
  accountRightAfterCreate,
  apiClient,
  basic,
  newCredential,
  startE2eStack,
  type Api,
  type E2eStack,
} from './support.js';

describe('incoming payments through the real processes', () => {
  let e2e: E2eStack;
  let client: Api;
  let receiver: Server;
  const received: { type: string; data: any }[] = [];
  const sandbox = newCredential();
  const production = newCredential();
  let customerId: string;
  let umaAddress: string;
  let usdAccount: string;
  const SENDER = '$success.usd@sandbox.sluice.local';
  const THRESHOLD = 100_000;

  const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    client(method, path, { body, headers });
  const balance = async () =>
    (
      await api(
        'GET',
        `/customers/internal-accounts?customerId=${encodeURIComponent(customerId)}&currency=USD`,
      )
    ).json.data[0].balance.amount as number;
  const receive = (
    amount: number,
    over: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) =>
    api(
      'POST',
      '/sandbox/uma/receive',
      {
        senderUmaAddress: SENDER,
        receiverUmaAddress: umaAddress,
        receivingCurrencyCode: 'USD',
        receivingCurrencyAmount: amount,
        ...over,
      },
      headers,
    );
  const statusOf = (id: string, status: string) =>
    eventually(async () => {
      const r = await api('GET', `/transactions/${encodeURIComponent(id)}`);
      return r.json.status === status ? r.json : undefined;
    }, 30_000);
  const webhook = (type: string, id: string) =>
    eventually(async () => received.find((x) => x.type === type && x.data.id === id), 30_000);

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const parsed = JSON.parse(body);
        received.push({ type: parsed.type, data: parsed.data });
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const addr = receiver.address();
    const receiverUrl = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/hooks`;
    e2e = await startE2eStack(
      'e2einc',
      { sandbox, production },
      {
        env: { SANDBOX_TIME_SCALE: '0.01' },
        // Amounts from 1000.00 USD wait for approval. The window (100 h × 0.01 = 1 h) never elapses by
        // itself during the file: no decision races a real-time deadline on a loaded machine. The test
        // of the window elapsing makes its timeout job due (closeApprovalWindow).
        appEnv: {
          payments: {
            INCOMING_APPROVAL_THRESHOLDS: `USD:${THRESHOLD}`,
            INCOMING_APPROVAL_WINDOW_SECONDS: String(100 * 3600),
          },
        },
      },
    );
    client = apiClient(e2e.stack, sandbox);
    const cfg = await api('PATCH', '/config', {
      webhookEndpoint: receiverUrl,
      supportedCurrencies: [{ currencyCode: 'USD' }],
    });
    expect(cfg.status, cfg.text).toBe(200);
    const c = await api('POST', '/customers', {
      customerType: 'INDIVIDUAL',
      platformCustomerId: 'incoming-user',
      fullName: 'Grace Hopper',
      region: 'US',
      currencies: ['USD'],
    });
    expect(c.status, c.text).toBe(201);
    customerId = c.json.id;
    umaAddress = c.json.umaAddress;
    usdAccount = await accountRightAfterCreate(client, customerId, 'USD');
  }, 240_000);

  afterAll(async () => {
    await e2e?.stop();
    await new Promise((r) => receiver?.close(r));
  });

  it('credits the receiver: INCOMING COMPLETED, balance up once, PENDING and COMPLETED webhooks; a retry replays', async () => {
    const before = await balance();
    const r = await receive(2_500, {}, { 'idempotency-key': 'inc-1' });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({
      type: 'INCOMING',
      customerId,
      platformCustomerId: 'incoming-user',
      source: { sourceType: 'UMA_ADDRESS', umaAddress: SENDER },
      destination: { destinationType: 'ACCOUNT', accountId: usdAccount },
      receivedAmount: { amount: 2_500, currency: { code: 'USD' } },
    });
    await statusOf(r.json.id, 'COMPLETED');
    const again = await receive(2_500, {}, { 'idempotency-key': 'inc-1' });
    expect(again.json.id).toBe(r.json.id);
    expect(await balance()).toBe(before + 2_500);
    await webhook('INCOMING_PAYMENT.PENDING', r.json.id);
    const done = await webhook('INCOMING_PAYMENT.COMPLETED', r.json.id);
    expect(done!.data).toMatchObject({ status: 'COMPLETED', receivedAmount: { amount: 2_500 } });
    await eventually(
      async () =>
        received.find((x) => x.type === 'INTERNAL_ACCOUNT.BALANCE_UPDATED' && x.data.id === usdAccount),
      30_000,
    );
  });

  it('refuses bad input with 400 naming the field, an unknown receiver with 404, production with 403', async () => {
    const bad = await receive(1_000, { senderUmaAddress: 'nobody' });
    expect(bad.status, bad.text).toBe(400);
    expect(bad.text).toContain('senderUmaAddress');
    const cur = await receive(1_000, { receivingCurrencyCode: 'EUR' });
    expect(cur.status, cur.text).toBe(400);
    expect(cur.text).toContain('receivingCurrencyCode');
    const unknown = await receive(1_000, { receiverUmaAddress: '$nobody-here@example.com' });
    expect(unknown.status, unknown.text).toBe(404);
    expect(unknown.json.code).toBe('UMA_RECEIVER_NOT_FOUND');
    const prod = await client('POST', '/sandbox/uma/receive', {
      auth: basic(production),
      body: {
        senderUmaAddress: SENDER,
        receiverUmaAddress: umaAddress,
        receivingCurrencyCode: 'USD',
        receivingCurrencyAmount: 1,
      },
    });
    expect(prod.status, prod.text).toBe(403);
  });

  it('finds the receiver by customerId too (reference SandboxUmaReceiveRequest); one of the two, an unknown customer 404', async () => {
    const before = await balance();
    const byId = await receive(1_200, { receiverUmaAddress: undefined, customerId });
    expect(byId.status, byId.text).toBe(200);
    expect(byId.json).toMatchObject({ type: 'INCOMING', customerId, destination: { accountId: usdAccount } });
    await statusOf(byId.json.id, 'COMPLETED');
    expect(await balance()).toBe(before + 1_200);
    const both = await receive(1_000, { customerId });
    expect([both.status, both.json.details.errors[0].field]).toEqual([400, 'customerId']);
    const neither = await receive(1_000, { receiverUmaAddress: undefined });
    expect([neither.status, neither.json.details.errors[0].field]).toEqual([400, 'receiverUmaAddress']);
    const malformed = await receive(1_000, { receiverUmaAddress: undefined, customerId: 'Customer:nope' });
    expect([malformed.status, malformed.json.details.errors[0].field]).toEqual([400, 'customerId']);
    const unknown = await receive(1_000, {
      receiverUmaAddress: undefined,
      customerId: 'Customer:00000000-0000-7000-8000-000000000000',
    });
    expect([unknown.status, unknown.json.code]).toEqual([404, 'CUSTOMER_NOT_FOUND']);
    expect(await balance()).toBe(before + 1_200);
  });

  it('approval: PENDING until approved, then credited; a second approve is idempotent; another platform gets 404', async () => {
    const before = await balance();
    const r = await receive(THRESHOLD);
    expect(r.status, r.text).toBe(200);
    expect(r.json.status).toBe('PENDING');
    expect(await balance()).toBe(before);
    const theirs = await client('POST', `/transactions/${encodeURIComponent(r.json.id)}/approve`, {
      auth: basic(production),
    });
    expect(theirs.status, theirs.text).toBe(404);
    const ok = await api('POST', `/transactions/${encodeURIComponent(r.json.id)}/approve`);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json.status).toBe('COMPLETED');
    const twice = await api('POST', `/transactions/${encodeURIComponent(r.json.id)}/approve`, {});
    expect(twice.status, twice.text).toBe(200);
    expect(await balance()).toBe(before + THRESHOLD);
    const rej = await api('POST', `/transactions/${encodeURIComponent(r.json.id)}/reject`);
    expect(rej.status, rej.text).toBe(409);
    expect(rej.json.code).toBe('TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL');
    await webhook('INCOMING_PAYMENT.COMPLETED', r.json.id);
  });

  it('an approved payment the ledger cannot credit (the balance would pass the maximum) fails at once: FAILED, CREDIT_REFUSED, nothing credited', async () => {
    const fund = await api('POST', `/sandbox/internal-accounts/${encodeURIComponent(usdAccount)}/fund`, {
      amount: 1,
    });
    expect(fund.status, fund.text).toBe(200);
    const before = await balance();
    const r = await receive(9_000_000_000_000_000);
    expect(r.status, r.text).toBe(200);
    expect(r.json.status).toBe('PENDING');
    const ap = await api('POST', `/transactions/${encodeURIComponent(r.json.id)}/approve`);
    expect(ap.status, ap.text).toBe(200);
    expect(ap.json).toMatchObject({
      status: 'FAILED',
      failureReason: 'OFFRAMP_FAILED',
      failureDetail: 'CREDIT_REFUSED',
    });
    expect((await api('GET', `/transactions/${encodeURIComponent(r.json.id)}`)).json.status).toBe('FAILED');
    expect(await balance()).toBe(before);
    const hook = await webhook('INCOMING_PAYMENT.FAILED', r.json.id);
    expect(hook!.data.failureDetail).toBe('CREDIT_REFUSED');
    // The decision stands: approving again returns the failed payment (idempotent), credits nothing.
    const again = await api('POST', `/transactions/${encodeURIComponent(r.json.id)}/approve`);
    expect(again.status, again.text).toBe(200);
    expect(again.json).toMatchObject({ status: 'FAILED', failureDetail: 'CREDIT_REFUSED' });
    expect(await balance()).toBe(before);
  });

  it('reject: REJECTED, nothing credited, INCOMING_PAYMENT.FAILED delivered', async () => {
    const before = await balance();
    const r = await receive(THRESHOLD + 1);
    const rej = await api('POST', `/transactions/${encodeURIComponent(r.json.id)}/reject`, {
      reason: 'RESTRICTED_JURISDICTION',
    });
    expect(rej.status, rej.text).toBe(200);
    expect(rej.json.status).toBe('REJECTED');
    const ap = await api('POST', `/transactions/${encodeURIComponent(r.json.id)}/approve`);
    expect(ap.status, ap.text).toBe(409);
    const hook = await webhook('INCOMING_PAYMENT.FAILED', r.json.id);
    expect(hook!.data.status).toBe('REJECTED');
    expect(await balance()).toBe(before);
  });

  it('the approval window elapsing: FAILED with PAYMENT_APPROVAL_TIMED_OUT, nothing credited; the ledger reconciles', async () => {
    const before = await balance();
    const r = await receive(THRESHOLD + 2);
    expect(r.status, r.text).toBe(200);
    expect(r.json.status).toBe('PENDING');
    // The window is open: its timeout job is scheduled at the instant the window closes.
    const db = e2e.db();
    const { rows: jobs } = await db.query<{ run_at: Date; done_at: Date | null }>(
      `SELECT j.run_at, j.done_at FROM payments.scheduled_jobs j JOIN payments.incoming_approvals a ON a.transaction_id = $1
       WHERE j.id = 'incoming.approval-timeout:' || $1 AND j.run_at = a.expires_at`,
      [r.json.id],
    );
    expect(jobs, 'one timeout job, due when the window closes').toHaveLength(1);
    expect(jobs[0]!.done_at).toBeNull();
    expect((await api('GET', `/transactions/${encodeURIComponent(r.json.id)}`)).json.status).toBe('PENDING');
    // The window closes now: the job and the window's end are moved to this instant together (as the
    // service schedules them), instead of waiting for a real-time deadline.
    await db.query(
      `WITH closed AS (UPDATE payments.incoming_approvals SET expires_at = now() WHERE transaction_id = $1 RETURNING expires_at)
       UPDATE payments.scheduled_jobs SET run_at = (SELECT expires_at FROM closed) WHERE id = 'incoming.approval-timeout:' || $1`,
      [r.json.id],
    );
    const failed = await statusOf(r.json.id, 'FAILED');
    expect(failed.failureReason).toBe('PAYMENT_APPROVAL_TIMED_OUT');
    const hook = await webhook('INCOMING_PAYMENT.FAILED', r.json.id);
    expect(hook!.data.failureReason).toBe('PAYMENT_APPROVAL_TIMED_OUT');
    expect(await balance()).toBe(before);

    const ledger = createRpcClient(accountsPb.AccountsServiceClient, e2e.stack.grpc.accounts!, {
      defaultDeadlineMs: 10_000,
    });
    try {
      const rec = await ledger.reconcileLedger({ platformId: e2e.stack.platforms.sandbox!.platformId });
      expect(
        rec.consistent,
        JSON.stringify(rec, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)),
      ).toBe(true);
    } finally {
      ledger.close();
    }
  });
});
