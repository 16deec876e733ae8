/**
 * End to end: same-currency transfers through the real processes (gateway →
 * payments → accounts ledger → outbox → NATS → webhook dispatcher), with the
 * sandbox rail's suffix outcomes, balances and webhooks; Idempotency-Key on
 * /transfer-out and /transfer-in (another body 422, in flight 409, nothing
 * changed), payments frozen as the deliberate fault that holds a request in flight.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { eventually } from '@sluice/testing';
import { accounts as accountsPb } from '@sluice/contracts';
import { createRpcClient } from '@sluice/rpc';
import {
  apiClient,
  basic,
  newCredential,
  startE2eStack,
  withRequestInFlight,
  type Api,
  type ApiResponse,
  type E2eStack,
  usdAccountInfo,
} from './support.js';

describe('transfers through the real processes', () => {
  let e2e: E2eStack;
  let client: Api;
  let receiver: Server;
  let receiverUrl: string;
  const received: { type: string; data: any }[] = [];
  const sandbox = newCredential();
  const production = newCredential();
  let customerId: string;
  let usdAccount: string;

  const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    client(method, path, { body, headers });

  const balance = async () =>
    (
      await api(
        'GET',
        `/customers/internal-accounts?customerId=${encodeURIComponent(customerId)}&currency=USD`,
      )
    ).json.data[0].balance.amount as number;

  async function external(accountNumber: string): Promise<string> {
    const r = await api('POST', '/customers/external-accounts', {
      customerId,
      currency: 'USD',
      accountInfo: usdAccountInfo(accountNumber),
    });
    expect(r.status, r.text).toBe(201);
    return r.json.id;
  }

  const transferOut = (destination: string, amount: number, key = `out-${randomBytes(6).toString('hex')}`) =>
    api(
      'POST',
      '/transfer-out',
      { source: { accountId: usdAccount }, destination: { accountId: destination }, amount },
      {
        'idempotency-key': key,
      },
    );

  const statusOf = (id: string, status: string) =>
    eventually(async () => {
      const r = await api('GET', `/transactions/${encodeURIComponent(id)}`);
      return r.json.status === status ? r.json : undefined;
    }, 30_000);

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
    receiverUrl = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/hooks`;
    // Settlement 1 s → 10 ms; the 005 pending 30 s → 300 ms.
    e2e = await startE2eStack('e2ext', { sandbox, production }, { env: { SANDBOX_TIME_SCALE: '0.01' } });
    client = apiClient(e2e.stack, sandbox);
    const cfg = await api('PATCH', '/config', {
      webhookEndpoint: receiverUrl,
      supportedCurrencies: [{ currencyCode: 'USD' }],
    });
    expect(cfg.status, cfg.text).toBe(200);
    const c = await api('POST', '/customers', {
      customerType: 'INDIVIDUAL',
      platformCustomerId: 'xfer-user',
      fullName: 'Ada Lovelace',
      region: 'US',
      currencies: ['USD'],
    });
    expect(c.status, c.text).toBe(201);
    customerId = c.json.id;
    const accounts = await api(
      'GET',
      `/customers/internal-accounts?customerId=${encodeURIComponent(customerId)}&currency=USD`,
    );
    usdAccount = accounts.json.data[0].id;
    const fund = await api('POST', `/sandbox/internal-accounts/${encodeURIComponent(usdAccount)}/fund`, {
      amount: 100_000,
    });
    expect(fund.status, fund.text).toBe(200);
  }, 240_000);

  afterAll(async () => {
    await e2e?.stop();
    await new Promise((r) => receiver?.close(r));
  });

  it('beneficiary verification by the 1xx suffix of the account number, through the gateway (105: 400, nothing stored)', async () => {
    const create = (accountNumber: string, fullName = 'Ada Lovelace') =>
      api('POST', '/customers/external-accounts', {
        customerId,
        currency: 'USD',
        accountInfo: {
          accountType: 'USD_ACCOUNT',
          accountNumber,
          routingNumber: '021000021',
          beneficiary: {
            beneficiaryType: 'INDIVIDUAL',
            fullName,
            address: { line1: '1 Main St', postalCode: '94105', country: 'US' },
          },
        },
      });
    const rows: [string, string][] = [
      ['102', 'NOT_MATCHED'],
      ['103', 'PARTIAL_MATCH'],
      ['104', 'PENDING'],
      ['106', 'UNSUPPORTED'],
      ['107', 'CHECKED_BY_RECEIVING_FI'],
      ['101', 'MATCHED'],
      ['555', 'MATCHED'],
    ];
    for (const [suffix, status] of rows) {
      const r = await create(`88881234${suffix}`);
      expect(r.status, r.text).toBe(201);
      expect(r.json.beneficiaryVerificationStatus, suffix).toBe(status);
      if (status === 'MATCHED') expect(r.json.beneficiaryVerifiedData).toEqual({ fullName: 'Ada Lovelace' });
      const g = await api('GET', `/customers/external-accounts/${encodeURIComponent(r.json.id)}`);
      expect(g.json.beneficiaryVerificationStatus, suffix).toBe(status);
    }
    const count = async () =>
      (await api('GET', `/customers/external-accounts?customerId=${encodeURIComponent(customerId)}&limit=1`))
        .json.totalCount as number;
    const before = await count();
    const invalid = await create('88881234105');
    expect(invalid.status, invalid.text).toBe(400);
    expect(JSON.stringify(invalid.json)).toContain('accountInfo.accountNumber');
    expect(await count()).toBe(before);
  });

  it('transfer-out succeeds: PROCESSING, then COMPLETED, the balance debited once, webhooks delivered; a retry is a replay', async () => {
    const dst = await external('12345678789');
    const first = await transferOut(dst, 10_000, 'xfer-ok');
    expect(first.status, first.text).toBe(201);
    expect(first.json).toMatchObject({
      type: 'OUTGOING',
      status: 'PROCESSING',
      customerId,
      platformCustomerId: 'xfer-user',
      sentAmount: { amount: 10_000, currency: { code: 'USD' } },
      source: { sourceType: 'ACCOUNT', accountId: usdAccount },
      destination: { destinationType: 'ACCOUNT', accountId: dst },
    });
    const replay = await transferOut(dst, 10_000, 'xfer-ok');
    expect(replay.json.id).toBe(first.json.id);
    const done = await statusOf(first.json.id, 'COMPLETED');
    expect(done.settledAt).toBeTruthy();
    expect(await balance()).toBe(90_000);
    const hook = await eventually(
      async () =>
        received.find((r) => r.type === 'OUTGOING_PAYMENT.COMPLETED' && r.data.id === first.json.id),
      30_000,
    );
    expect(hook.data).toMatchObject({
      status: 'COMPLETED',
      reconciliationInstructions: { reference: first.json.reconciliationInstructions.reference },
    });
    const list = await api(
      'GET',
      `/transactions?customerId=${encodeURIComponent(customerId)}&type=OUTGOING&status=COMPLETED`,
    );
    expect(list.json.data.map((t: any) => t.id)).toEqual([first.json.id]);
  });

  it('002 and 003 fail immediately; 004 and 005 fail after acceptance; the balance is intact each time', async () => {
    const before = await balance();
    for (const [suffix, detail] of [
      ['002', 'INSUFFICIENT_FUNDS'],
      ['003', 'ACCOUNT_CLOSED'],
    ]) {
      const r = await transferOut(await external(`99887766${suffix}`), 1_000);
      expect(r.status, r.text).toBe(201);
      expect(r.json).toMatchObject({
        status: 'FAILED',
        failureReason: 'QUOTE_EXECUTION_FAILED',
        failureDetail: detail,
      });
    }
    const rejected = await transferOut(await external('99887766004'), 1_000);
    const pending = await transferOut(await external('99887766005'), 1_000);
    expect(rejected.json.status).toBe('PROCESSING');
    expect(pending.json.status).toBe('PROCESSING');
    expect(await balance()).toBe(before); // held, not yet moved
    expect((await statusOf(rejected.json.id, 'FAILED')).failureDetail).toBe('REJECTED_BY_BANK');
    expect((await statusOf(pending.json.id, 'FAILED')).failureDetail).toBe('TIMED_OUT');
    expect(await balance()).toBe(before);
    // Every hold was released: the whole balance can still be held.
    const all = await transferOut(await external('12345678790'), before);
    expect(all.status, all.text).toBe(201);
    await statusOf(all.json.id, 'COMPLETED');
    expect(await balance()).toBe(0);
    await eventually(
      async () => received.find((r) => r.type === 'OUTGOING_PAYMENT.FAILED' && r.data.id === pending.json.id),
      30_000,
    );
  });

  it('refuses more than the available balance with 400 INSUFFICIENT_FUNDS and creates nothing', async () => {
    const total = (await api('GET', '/transactions')).json.totalCount;
    const r = await transferOut(await external('12345678791'), 1);
    expect(r.status, r.text).toBe(400);
    expect(r.json.code).toBe('INSUFFICIENT_FUNDS');
    expect((await api('GET', '/transactions')).json.totalCount).toBe(total);
  });

  it('transfer-in credits the internal account once settled and sends INCOMING_PAYMENT.COMPLETED', async () => {
    const src = await external('12345678792');
    const r = await api('POST', '/transfer-in', {
      source: { accountId: src },
      destination: { accountId: usdAccount },
      amount: 5_000,
    });
    expect(r.status, r.text).toBe(201);
    expect(r.json).toMatchObject({ type: 'INCOMING', receivedAmount: { amount: 5_000 } });
    await statusOf(r.json.id, 'COMPLETED');
    expect(await balance()).toBe(5_000);
    await eventually(
      async () => received.find((x) => x.type === 'INCOMING_PAYMENT.COMPLETED' && x.data.id === r.json.id),
      30_000,
    );
    const theirs = await api('GET', `/transactions/${encodeURIComponent(r.json.id)}`, undefined, {
      authorization: basic(production),
    });
    expect(theirs.status).toBe(404);
  });

  it('transfer-in by suffix: 002 and 003 fail at once, 004 and 005 fail after acceptance, nothing is credited; INCOMING_PAYMENT.FAILED', async () => {
    const before = await balance();
    const transferIn = async (accountNumber: string) =>
      api(
        'POST',
        '/transfer-in',
        {
          source: { accountId: await external(accountNumber) },
          destination: { accountId: usdAccount },
          amount: 2_000,
        },
        { 'idempotency-key': `in-${randomBytes(6).toString('hex')}` },
      );
    for (const [suffix, detail] of [
      ['002', 'INSUFFICIENT_FUNDS'],
      ['003', 'ACCOUNT_CLOSED'],
    ]) {
      const r = await transferIn(`55443322${suffix}`);
      expect(r.status, r.text).toBe(201);
      expect(r.json).toMatchObject({
        type: 'INCOMING',
        status: 'FAILED',
        failureReason: 'QUOTE_EXECUTION_FAILED',
        failureDetail: detail,
      });
    }
    const rejected = await transferIn('55443322004');
    const pending = await transferIn('55443322005');
    for (const r of [rejected, pending]) {
      expect(r.status, r.text).toBe(201);
      expect(r.json).toMatchObject({ type: 'INCOMING', status: 'PROCESSING' });
    }
    expect((await statusOf(rejected.json.id, 'FAILED')).failureDetail).toBe('REJECTED_BY_BANK');
    const timedOut = await statusOf(pending.json.id, 'FAILED');
    expect(timedOut).toMatchObject({ failureReason: 'OFFRAMP_FAILED', failureDetail: 'TIMED_OUT' });
    // 005 stayed pending for its ~30 s × SANDBOX_TIME_SCALE (0.01) before failing.
    expect(Date.parse(timedOut.updatedAt) - Date.parse(pending.json.createdAt)).toBeGreaterThanOrEqual(250);
    expect(await balance()).toBe(before);
    for (const id of [rejected.json.id, pending.json.id])
      await eventually(
        async () => received.find((x) => x.type === 'INCOMING_PAYMENT.FAILED' && x.data.id === id),
        30_000,
      );
    expect(
      received.filter(
        (x) =>
          x.type === 'INCOMING_PAYMENT.COMPLETED' && [rejected.json.id, pending.json.id].includes(x.data.id),
      ),
    ).toEqual([]);
  });

  it('a transfer-in the ledger cannot credit (the balance would pass the maximum) fails with CREDIT_REFUSED instead of staying PROCESSING', async () => {
    const fund = await api('POST', `/sandbox/internal-accounts/${encodeURIComponent(usdAccount)}/fund`, {
      amount: 1,
    });
    expect(fund.status, fund.text).toBe(200);
    const before = await balance();
    const r = await api('POST', '/transfer-in', {
      source: { accountId: await external('12345678880') },
      destination: { accountId: usdAccount },
      amount: 9_000_000_000_000_000,
    });
    expect(r.status, r.text).toBe(201);
    const failed = await statusOf(r.json.id, 'FAILED');
    expect(failed).toMatchObject({ failureReason: 'OFFRAMP_FAILED', failureDetail: 'CREDIT_REFUSED' });
    expect(await balance()).toBe(before);
    await eventually(
      async () => received.find((x) => x.type === 'INCOMING_PAYMENT.FAILED' && x.data.id === r.json.id),
      30_000,
    );
  });

  it('Idempotency-Key on /transfer-out and /transfer-in through the real processes: another body is 422, a request in flight is 409, and neither changes anything', async () => {
    const db = e2e.db();
    const platformId = e2e.stack.platforms.sandbox!.platformId;
    const world = async () => ({
      transactions: (
        await db.query<{ id: string }>(
          `SELECT id FROM payments.transactions WHERE platform_id = $1 ORDER BY id`,
          [platformId],
        )
      ).rows.map((r) => r.id),
      balance: await balance(),
    });
    const refused = (r: ApiResponse, status: number, code: string) =>
      expect([r.status, r.json?.code], r.text).toEqual([status, code]);
    const ok = await external('12345670789');
    const transferIn = (amount: number, key: string) =>
      api(
        'POST',
        '/transfer-in',
        { source: { accountId: ok }, destination: { accountId: usdAccount }, amount },
        { 'idempotency-key': key },
      );

    for (const [route, send, sign] of [
      ['/transfer-out', (amount: number, key: string) => transferOut(ok, amount, key), -1],
      ['/transfer-in', transferIn, 1],
    ] as const) {
      const key = `idem${route.replace('/', '-')}`;
      const first = await send(1_000, `${key}-1`);
      expect(first.status, first.text).toBe(201);
      await statusOf(first.json.id, 'COMPLETED');
      const afterFirst = await world();
      refused(await send(1_001, `${key}-1`), 422, 'IDEMPOTENCY_KEY_REUSED');
      const replay = await send(1_000, `${key}-1`);
      expect([replay.status, replay.headers.get('idempotent-replayed'), replay.json.id]).toEqual([
        201,
        'true',
        first.json.id,
      ]);
      expect(await world(), `${route}: a refused or replayed key changes nothing`).toEqual(afterFirst);

      const during: ApiResponse[] = [];
      const inFlight = await withRequestInFlight(e2e, {
        label: `payments frozen with ${route} in flight`,
        app: 'payments',
        key: `${key}-2`,
        send: () => send(2_000, `${key}-2`),
        whileInFlight: async () => {
          during.push(await send(2_000, `${key}-2`), await send(2_001, `${key}-2`));
        },
      });
      refused(during[0]!, 409, 'IDEMPOTENCY_KEY_IN_PROGRESS');
      refused(during[1]!, 422, 'IDEMPOTENCY_KEY_REUSED');
      expect(inFlight.status, inFlight.text).toBe(201);
      await statusOf(inFlight.json.id, 'COMPLETED');
      expect(await world(), `${route}: one transaction and one movement for the key held in flight`).toEqual({
        transactions: [...afterFirst.transactions, inFlight.json.id].sort(),
        balance: afterFirst.balance + sign * 2_000,
      });
    }
  });

  it('concurrent transfers never overdraw (the ledger refuses the excess, nothing is created for them) and the ledger reconciles', async () => {
    const fund = await api('POST', `/sandbox/internal-accounts/${encodeURIComponent(usdAccount)}/fund`, {
      amount: 10_000,
    });
    expect(fund.status, fund.text).toBe(200);
    const start = await balance();
    const dst = await external('12345678793');
    const total = (await api('GET', '/transactions')).json.totalCount;
    const results = await Promise.all(Array.from({ length: 8 }, () => transferOut(dst, 4_000)));
    const ok = results.filter((r) => r.status === 201);
    const refused = results.filter((r) => r.status === 400);
    expect(ok).toHaveLength(Math.floor(start / 4_000));
    expect(refused.every((r) => r.json.code === 'INSUFFICIENT_FUNDS')).toBe(true);
    expect(ok.length + refused.length).toBe(8);
    for (const r of ok) await statusOf(r.json.id, 'COMPLETED');
    expect(await balance()).toBe(start - ok.length * 4_000);
    expect((await api('GET', '/transactions')).json.totalCount).toBe(total + ok.length);

    const ledger = createRpcClient(accountsPb.AccountsServiceClient, e2e.stack.grpc.accounts!, {
      defaultDeadlineMs: 10_000,
    });
    try {
      const rec = await ledger.reconcileLedger({ platformId: e2e.stack.platforms.sandbox!.platformId });
      expect(
        rec.consistent,
        JSON.stringify(rec, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)),
      ).toBe(true);
      expect(rec.currencies.find((c) => c.currency === 'USD')).toMatchObject({
        postedBalanceSum: 0n,
        lineSum: 0n,
      });
    } finally {
      ledger.close();
    }
  });
});
