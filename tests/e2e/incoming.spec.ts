/**
 * End to end: incoming UMA payments through the real processes (gateway →
 * payments → identity customer lookup and platform config → accounts ledger →
 * outbox → NATS → webhook dispatcher → a loopback receiver → the answer back to
 * payments): the sandbox receive, the approval webhook (every answer: 2xx, 403,
 * 422, 202 then approve/reject or nothing, another status, no answer in time),
 * the platform's threshold, a platform without an endpoint, balances, webhooks
 * and the ledger's reconciliation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { eventually } from '@sluice/testing';
import { accounts as accountsPb } from '@sluice/contracts';
import { createRpcClient } from '@sluice/rpc';
import {
  accountRightAfterCreate,
  apiClient,
  basic,
  newCredential,
  startE2eStack,
  startWebhookReceiver,
  type Api,
  type E2eStack,
  type WebhookAnswer,
} from './support.js';

describe('incoming payments through the real processes', () => {
  let e2e: E2eStack;
  let client: Api;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  const sandbox = newCredential();
  const production = newCredential();
  let customerId: string;
  let umaAddress: string;
  let usdAccount: string;
  let signingSecret: string;
  const SENDER = '$success.usd@sandbox.sluice.local';
  /** The platform's USD approval threshold: smaller payments are approved without asking. */
  const THRESHOLD = 100_000;
  /** How the receiver answers the INCOMING_PAYMENT.PENDING webhook of a payment, by its amount. */
  const answers = new Map<number, WebhookAnswer>();
  /** The dispatcher's attempt timeout in this file: a slower answer is no answer. */
  const WEBHOOK_TIMEOUT_MS = 1500;
  const received = () => receiver.received;

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
  /** Receives `amount` with the receiver set to answer its approval webhook `answer`. */
  const receiveAnswered = (amount: number, answer: WebhookAnswer) => {
    answers.set(amount, answer);
    return receive(amount);
  };
  const statusOf = (id: string, status: string) =>
    eventually(async () => {
      const r = await api('GET', `/transactions/${encodeURIComponent(id)}`);
      return r.json.status === status ? r.json : undefined;
    }, 30_000);
  const webhook = (type: string, id: string) =>
    eventually(async () => received().find((x) => x.type === type && x.data.id === id), 30_000);
  const decide = (verb: 'approve' | 'reject', id: string, body?: unknown) =>
    api('POST', `/transactions/${encodeURIComponent(id)}/${verb}`, body);

  beforeAll(async () => {
    receiver = await startWebhookReceiver((w) =>
      w.type === 'INCOMING_PAYMENT.PENDING'
        ? (answers.get(w.data.receivedAmount.amount) ?? { status: 200 })
        : { status: 200 },
    );
    e2e = await startE2eStack(
      'e2einc',
      { sandbox, production },
      {
        env: { SANDBOX_TIME_SCALE: '0.01' },
        // The approval window after a 202 is the default 5 s (a protocol deadline, not scaled).
        appEnv: { 'webhook-dispatcher': { WEBHOOK_TIMEOUT_MS: String(WEBHOOK_TIMEOUT_MS) } },
      },
    );
    client = apiClient(e2e.stack, sandbox);
    const cfg = await api('PATCH', '/config', {
      webhookEndpoint: receiver.url,
      supportedCurrencies: [{ currencyCode: 'USD', incomingPaymentApprovalThreshold: THRESHOLD }],
    });
    expect(cfg.status, cfg.text).toBe(200);
    expect(cfg.json.supportedCurrencies[0].incomingPaymentApprovalThreshold).toBe(THRESHOLD);
    signingSecret = cfg.json.webhookSigningSecret;
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
    await receiver?.close();
  });

  it('below the platform’s threshold: credited without asking, balance up once, no PENDING webhook; a retry replays', async () => {
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
    // The reference IncomingRateDetails (the whole body is checked against IncomingTransaction by
    // the reference check): received in the currency it credits, rate 1 and no fee.
    const noConversion = { gridApiMultiplier: 1, gridApiFixedFee: 0, gridApiVariableFeeRate: 0, gridApiVariableFeeAmount: 0 };
    expect(r.json.rateDetails).toEqual(noConversion);
    await statusOf(r.json.id, 'COMPLETED');
    const again = await receive(2_500, {}, { 'idempotency-key': 'inc-1' });
    expect(again.json.id).toBe(r.json.id);
    expect(await balance()).toBe(before + 2_500);
    const done = await webhook('INCOMING_PAYMENT.COMPLETED', r.json.id);
    expect(done!.data).toMatchObject({ status: 'COMPLETED', receivedAmount: { amount: 2_500 } });
    expect(done!.data.rateDetails).toEqual(noConversion);
    await eventually(
      async () =>
        received().find((x) => x.type === 'INTERNAL_ACCOUNT.BALANCE_UPDATED' && x.data.id === usdAccount),
      30_000,
    );
    // The payments outbox is in order: its COMPLETED webhook arrived, so a PENDING one would have too.
    expect(
      received().filter((x) => x.type === 'INCOMING_PAYMENT.PENDING' && x.data.id === r.json.id),
    ).toEqual([]);
  });

  it('a sandbox funding deposit is INCOMING with the same rateDetails: rate 1, no fee, in the account’s currency', async () => {
    const f = await api('POST', `/sandbox/internal-accounts/${encodeURIComponent(usdAccount)}/fund`, { amount: 300 });
    expect(f.status, f.text).toBe(200);
    const listed = await api('GET', '/transactions?type=INCOMING&limit=100');
    expect(listed.status, listed.text).toBe(200);
    const deposit = (listed.json.data as { source: { sourceType: string }; rateDetails?: unknown }[]).find(
      (t) => t.source.sourceType === 'REALTIME_FUNDING',
    );
    expect(deposit).toMatchObject({ type: 'INCOMING', receivedAmount: { amount: 300, currency: { code: 'USD' } } });
    expect(deposit!.rateDetails).toEqual({
      gridApiMultiplier: 1,
      gridApiFixedFee: 0,
      gridApiVariableFeeRate: 0,
      gridApiVariableFeeAmount: 0,
    });
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

  it('a 2xx answer approves: PENDING asked (signed), then COMPLETED and credited once; approve repeats, reject is 409', async () => {
    const before = await balance();
    const amount = THRESHOLD;
    const r = await receiveAnswered(amount, { status: 200, body: '{}' });
    expect(r.status, r.text).toBe(200);
    expect(r.json.status).toBe('PENDING');
    const asked = await webhook('INCOMING_PAYMENT.PENDING', r.json.id);
    expect(asked!.data).toMatchObject({ status: 'PENDING', type: 'INCOMING', receivedAmount: { amount } });
    expect(new Webhook(signingSecret).verify(asked!.body, asked!.headers)).toMatchObject({
      type: 'INCOMING_PAYMENT.PENDING',
    });
    await statusOf(r.json.id, 'COMPLETED');
    await webhook('INCOMING_PAYMENT.COMPLETED', r.json.id);
    expect(await balance()).toBe(before + amount);
    const again = await decide('approve', r.json.id);
    expect([again.status, again.json.status], again.text).toEqual([200, 'COMPLETED']);
    const rej = await decide('reject', r.json.id);
    expect(rej.status, rej.text).toBe(409);
    expect(rej.json.code).toBe('TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL');
    expect(await balance()).toBe(before + amount);
    expect(
      received().filter((x) => x.type === 'INCOMING_PAYMENT.PENDING' && x.data.id === r.json.id),
    ).toHaveLength(1);
  });

  it('403 rejects (REJECTED, INCOMING_PAYMENT.FAILED, nothing credited); 422 rejects too; a later approve is 409', async () => {
    const before = await balance();
    const forbidden = await receiveAnswered(THRESHOLD + 1, {
      status: 403,
      body: JSON.stringify({ code: 'FORBIDDEN', message: 'no', reason: 'RESTRICTED_JURISDICTION' }),
    });
    const more = await receiveAnswered(THRESHOLD + 2, {
      status: 422,
      body: JSON.stringify({ code: 'MORE_INFO', message: 'need more', requiredFields: ['TAX_ID'] }),
    });
    await statusOf(forbidden.json.id, 'REJECTED');
    await statusOf(more.json.id, 'REJECTED');
    expect((await webhook('INCOMING_PAYMENT.FAILED', forbidden.json.id))!.data.status).toBe('REJECTED');
    await webhook('INCOMING_PAYMENT.FAILED', more.json.id);
    const ap = await decide('approve', forbidden.json.id);
    expect(ap.status, ap.text).toBe(409);
    expect(await balance()).toBe(before);
  });

  it('202 defers: PENDING until POST /transactions/{id}/approve (credited once) or /reject (REJECTED); another platform gets 404', async () => {
    const before = await balance();
    const a = await receiveAnswered(THRESHOLD + 3, { status: 202 });
    const b = await receiveAnswered(THRESHOLD + 4, { status: 202 });
    expect(a.json.status).toBe('PENDING');
    const theirs = await client('POST', `/transactions/${encodeURIComponent(a.json.id)}/approve`, {
      auth: basic(production),
    });
    expect(theirs.status, theirs.text).toBe(404);
    const ok = await decide('approve', a.json.id);
    expect([ok.status, ok.json.status], ok.text).toEqual([200, 'COMPLETED']);
    const rej = await decide('reject', b.json.id, { reason: 'RESTRICTED_JURISDICTION' });
    expect([rej.status, rej.json.status], rej.text).toEqual([200, 'REJECTED']);
    await webhook('INCOMING_PAYMENT.COMPLETED', a.json.id);
    expect((await webhook('INCOMING_PAYMENT.FAILED', b.json.id))!.data.status).toBe('REJECTED');
    expect(await balance()).toBe(before + THRESHOLD + 3);
    // The 202 answers arrive whenever they do: they change nothing decided.
    await webhook('INCOMING_PAYMENT.PENDING', a.json.id);
    await webhook('INCOMING_PAYMENT.PENDING', b.json.id);
    expect((await api('GET', `/transactions/${encodeURIComponent(a.json.id)}`)).json.status).toBe(
      'COMPLETED',
    );
  });

  it('202 and no decision within the window: FAILED with PAYMENT_APPROVAL_TIMED_OUT; a decision afterwards is 409', async () => {
    const before = await balance();
    const r = await receiveAnswered(THRESHOLD + 5, { status: 202 });
    const failed = await statusOf(r.json.id, 'FAILED');
    expect(failed.failureReason).toBe('PAYMENT_APPROVAL_TIMED_OUT');
    expect((await webhook('INCOMING_PAYMENT.FAILED', r.json.id))!.data.failureReason).toBe(
      'PAYMENT_APPROVAL_TIMED_OUT',
    );
    const late = await decide('approve', r.json.id);
    expect(late.status, late.text).toBe(409);
    expect(await balance()).toBe(before);
  });

  it('another status fails it with PAYMENT_APPROVAL_WEBHOOK_ERROR; no answer within the attempt timeout with PAYMENT_APPROVAL_TIMED_OUT', async () => {
    const before = await balance();
    const error = await receiveAnswered(THRESHOLD + 6, { status: 500, body: 'boom' });
    const silent = await receiveAnswered(THRESHOLD + 7, { status: 200, delayMs: WEBHOOK_TIMEOUT_MS * 3 });
    expect((await statusOf(error.json.id, 'FAILED')).failureReason).toBe('PAYMENT_APPROVAL_WEBHOOK_ERROR');
    expect((await statusOf(silent.json.id, 'FAILED')).failureReason).toBe('PAYMENT_APPROVAL_TIMED_OUT');
    await webhook('INCOMING_PAYMENT.FAILED', error.json.id);
    await webhook('INCOMING_PAYMENT.FAILED', silent.json.id);
    // One attempt each: a request–response webhook is not retried.
    expect(
      received().filter((x) => x.type === 'INCOMING_PAYMENT.PENDING' && x.data.id === error.json.id),
    ).toHaveLength(1);
    expect(await balance()).toBe(before);
  });

  it('an approved payment the ledger cannot credit (the balance would pass the maximum) fails at once: FAILED, CREDIT_REFUSED, nothing credited', async () => {
    const fund = await api('POST', `/sandbox/internal-accounts/${encodeURIComponent(usdAccount)}/fund`, {
      amount: 1,
    });
    expect(fund.status, fund.text).toBe(200);
    const before = await balance();
    const r = await receiveAnswered(9_000_000_000_000_000, { status: 200 });
    expect(r.status, r.text).toBe(200);
    expect(r.json.status).toBe('PENDING');
    const failed = await statusOf(r.json.id, 'FAILED');
    expect(failed).toMatchObject({ failureReason: 'OFFRAMP_FAILED', failureDetail: 'CREDIT_REFUSED' });
    expect(await balance()).toBe(before);
    const hook = await webhook('INCOMING_PAYMENT.FAILED', r.json.id);
    expect(hook!.data.failureDetail).toBe('CREDIT_REFUSED');
    // The decision stands: approving again returns the failed payment (idempotent), credits nothing.
    const again = await decide('approve', r.json.id);
    expect(again.status, again.text).toBe(200);
    expect(again.json).toMatchObject({ status: 'FAILED', failureDetail: 'CREDIT_REFUSED' });
    expect(await balance()).toBe(before);
  });

  it('a platform without a webhook endpoint has every incoming payment approved; the ledger reconciles', async () => {
    const off = await api('PATCH', '/config', { webhookEndpoint: null });
    expect(off.status, off.text).toBe(200);
    try {
      const before = await balance();
      const r = await receive(THRESHOLD * 3);
      expect(r.status, r.text).toBe(200);
      expect(r.json.status).toBe('COMPLETED');
      expect(await balance()).toBe(before + THRESHOLD * 3);
    } finally {
      const on = await api('PATCH', '/config', { webhookEndpoint: receiver.url });
      expect(on.status, on.text).toBe(200);
    }
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
