/**
 * Crash recovery through the real processes: payments is SIGKILLed while
 * transfer-outs and incoming payments are in flight (requests mid-call, holds
 * placed, settle jobs leased, approval windows open), then started again with
 * the same environment. Clients retry with the same Idempotency-Key, as they
 * must after a 5xx. Proven afterwards: every payment reaches a final state
 * exactly once per request key, the balance is exactly what the final states
 * say, the ledger reconciles with no hold left pending, and the webhook
 * receiver got every payments event exactly once (by `webhook-id`) with no
 * status announced twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import pg from 'pg';
import { eventually } from '@sluice/testing';
import { accounts as accountsPb } from '@sluice/contracts';
import { createRpcClient } from '@sluice/rpc';
import {
  apiClient,
  newCredential,
  startE2eStack,
  type Api,
  type ApiResponse,
  type E2eStack,
} from './support.js';

const FINAL = new Set(['COMPLETED', 'FAILED', 'REJECTED', 'REFUNDED', 'EXPIRED']);

describe('crash recovery: payments killed mid-flight', () => {
  let e2e: E2eStack;
  let client: Api;
  let receiver: Server;
  /** Every delivery the receiver got, duplicates included. */
  const deliveries: { webhookId: string; type: string; data: any }[] = [];
  const sandbox = newCredential();
  let customerId: string;
  let umaAddress: string;
  let usdAccount: string;
  const FUNDED = 1_000_000;
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

  async function external(accountNumber: string): Promise<string> {
    const r = await api('POST', '/customers/external-accounts', {
      customerId,
      currency: 'USD',
      accountInfo: {
        accountType: 'USD_ACCOUNT',
        accountNumber,
        routingNumber: '021000021',
        beneficiary: {
          beneficiaryType: 'INDIVIDUAL',
          fullName: 'Ada Lovelace',
          address: { line1: '1 Main St', postalCode: '94105', country: 'US' },
        },
      },
    });
    expect(r.status, r.text).toBe(201);
    return r.json.id;
  }

  /** A request the client retries with the same key until it gets a definitive answer (not 5xx / in progress). */
  async function untilAnswered(send: () => Promise<ApiResponse>): Promise<ApiResponse> {
    const end = Date.now() + 90_000;
    for (;;) {
      let r: ApiResponse | undefined;
      try {
        r = await send();
      } catch {
        r = undefined; // the gateway connection itself failed: retry
      }
      if (r && r.status < 500 && r.json?.code !== 'IDEMPOTENCY_KEY_IN_PROGRESS') return r;
      if (Date.now() > end) throw new Error(`no answer: ${r?.status} ${r?.text}`);
      await new Promise((res) => setTimeout(res, 200));
    }
  }

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const parsed = JSON.parse(body);
        deliveries.push({
          webhookId: String(req.headers['webhook-id']),
          type: parsed.type,
          data: parsed.data,
        });
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const addr = receiver.address();
    const receiverUrl = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/hooks`;
    e2e = await startE2eStack(
      'e2ecrash',
      { sandbox },
      {
        // Settlement 1 s → 100 ms; 005's 30 s pending → 3 s; approval window 450 s → 45 s (room for a slow restart on a loaded machine before the platform approves).
        env: { SANDBOX_TIME_SCALE: '0.1' },
        appEnv: {
          payments: {
            // A killed worker's leased jobs run again after 2 s (not the default minute).
            JOB_LEASE_MS: '2000',
            INCOMING_APPROVAL_THRESHOLD: String(THRESHOLD),
            INCOMING_APPROVAL_WINDOW_SECONDS: '450',
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
      platformCustomerId: 'crash-user',
      fullName: 'Ada Lovelace',
      region: 'US',
      currencies: ['USD'],
    });
    expect(c.status, c.text).toBe(201);
    customerId = c.json.id;
    umaAddress = c.json.umaAddress;
    const list = await eventually(async () => {
      const r = await api(
        'GET',
        `/customers/internal-accounts?customerId=${encodeURIComponent(customerId)}&currency=USD`,
      );
      return r.json?.data?.length ? r.json : undefined;
    }, 30_000);
    usdAccount = list.data[0].id;
    const fund = await api('POST', `/sandbox/internal-accounts/${encodeURIComponent(usdAccount)}/fund`, {
      amount: FUNDED,
    });
    expect(fund.status, fund.text).toBe(200);
  }, 240_000);

  afterAll(async () => {
    await e2e?.stop();
    await new Promise((r) => receiver?.close(r));
  });

  it('every payment ends final once, the ledger reconciles, no hold stays pending, every event is delivered once', async () => {
    const ok = await external('12345678789'); // settles (COMPLETED)
    const slow = await external('12345678005'); // pending ~3 s, then FAILED (hold voided)
    const transferOut = (key: string, destination: string, amount: number) => () =>
      api(
        'POST',
        '/transfer-out',
        { source: { accountId: usdAccount }, destination: { accountId: destination }, amount },
        { 'idempotency-key': key },
      );
    const receiveUma = (key: string, amount: number) => () =>
      api(
        'POST',
        '/sandbox/uma/receive',
        {
          senderUmaAddress: '$success.usd@sandbox.sluice.local',
          receiverUmaAddress: umaAddress,
          receivingCurrencyCode: 'USD',
          receivingCurrencyAmount: amount,
        },
        { 'idempotency-key': key },
      );

    // Before the crash, answered: slow payouts still PROCESSING, incoming payments awaiting approval.
    const early: Record<string, () => Promise<ApiResponse>> = {
      'slow-0': transferOut('slow-0', slow, 1_000),
      'slow-1': transferOut('slow-1', slow, 1_100),
      'approve-me': receiveUma('approve-me', THRESHOLD),
      'time-out': receiveUma('time-out', THRESHOLD + 1),
    };
    for (const [k, send] of Object.entries(early)) {
      const r = await send();
      expect(r.status, `${k}: ${r.text}`).toBeLessThan(300);
      // Mid-flight for sure: holds placed with settle jobs due after the crash, approval windows open.
      expect(r.json.status, k).toBe(k.startsWith('slow') ? 'PROCESSING' : 'PENDING');
    }
    // In flight at the crash: requests still being handled, holds being placed, settle jobs leased.
    const inFlight: Record<string, () => Promise<ApiResponse>> = {};
    for (let i = 0; i < 10; i++) inFlight[`ok-${i}`] = transferOut(`ok-${i}`, ok, 2_000 + i);
    for (let i = 0; i < 4; i++) inFlight[`slow-late-${i}`] = transferOut(`slow-late-${i}`, slow, 3_000 + i);
    for (let i = 0; i < 6; i++) inFlight[`in-${i}`] = receiveUma(`in-${i}`, 500 + i);
    const firstTries = Object.values(inFlight).map((send) => send().catch(() => undefined));

    const pidBefore = e2e.stack.pid('payments');
    // Kill as soon as the first of them is answered: the others are then somewhere inside payments.
    await Promise.race([...firstTries, new Promise((r) => setTimeout(r, 2_000))]);
    await e2e.stack.restart('payments', 'SIGKILL');
    expect(e2e.stack.pid('payments')).not.toBe(pidBefore);
    const cut = (await Promise.all(firstTries)).filter((r) => !r || r.status >= 500).length;
    console.info(`crash-recovery: ${cut} of ${firstTries.length} in-flight requests were cut by the kill`);

    // Clients retry every request (same key) until answered; each answer is a 2xx.
    const all = { ...early, ...inFlight };
    const answers: Record<string, ApiResponse> = {};
    await Promise.all(
      Object.entries(all).map(async ([k, send]) => {
        answers[k] = await untilAnswered(send);
        expect(answers[k]!.status, `${k}: ${answers[k]!.text}`).toBeLessThan(300);
      }),
    );
    const ids = Object.fromEntries(Object.entries(answers).map(([k, r]) => [k, r.json.id as string]));
    expect(new Set(Object.values(ids)).size).toBe(Object.keys(all).length);

    // The platform decides one pending incoming payment; the other's window elapses after the restart.
    const approved = await untilAnswered(() =>
      api('POST', `/transactions/${encodeURIComponent(ids['approve-me']!)}/approve`),
    );
    expect(approved.status, approved.text).toBe(200);

    // Every payment reaches a final state.
    const finals: Record<string, any> = {};
    for (const [k, id] of Object.entries(ids)) {
      finals[k] = await eventually(async () => {
        const r = await api('GET', `/transactions/${encodeURIComponent(id)}`);
        return FINAL.has(r.json?.status) ? r.json : undefined;
      }, 60_000);
    }
    for (let i = 0; i < 10; i++) expect(finals[`ok-${i}`].status).toBe('COMPLETED');
    for (const k of ['slow-0', 'slow-1', ...[0, 1, 2, 3].map((i) => `slow-late-${i}`)]) {
      expect(finals[k].status, k).toBe('FAILED');
    }
    for (let i = 0; i < 6; i++) expect(finals[`in-${i}`].status).toBe('COMPLETED');
    expect(finals['approve-me'].status).toBe('COMPLETED');
    expect(finals['time-out']).toMatchObject({
      status: 'FAILED',
      failureReason: 'PAYMENT_APPROVAL_TIMED_OUT',
    });

    // One transaction per request key (no retry created a second payment).
    const sql = new pg.Pool({ connectionString: e2e.stack.databaseUrl, max: 1 });
    try {
      const { rows } = await sql.query<{ request_key: string; n: string }>(
        `SELECT request_key, count(*) AS n FROM payments.transactions WHERE request_key = ANY($1) GROUP BY request_key`,
        [Object.keys(all)],
      );
      expect(rows).toHaveLength(Object.keys(all).length);
      expect(rows.every((r) => r.n === '1')).toBe(true);

      // The balance is exactly what the final states say: money moved once per completed payment.
      let expected = FUNDED;
      for (const f of Object.values(finals)) {
        if (f.status !== 'COMPLETED') continue;
        expected += f.type === 'INCOMING' ? f.receivedAmount.amount : -f.sentAmount.amount;
      }
      expect(await balance()).toBe(expected);

      // The ledger reconciles and no hold is left pending.
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
          pendingDebits: 0n,
          pendingCredits: 0n,
        });
      } finally {
        ledger.close();
      }

      // Every payments event of these transactions reaches the receiver exactly once.
      const txIds = new Set(Object.values(ids));
      const { rows: events } = await sql.query<{ id: string; type: string; tx: string }>(
        `SELECT id, type, envelope->'data'->>'id' AS tx FROM payments.outbox WHERE envelope->'data'->>'id' = ANY($1)`,
        [[...txIds]],
      );
      const expectedIds = new Set(events.map((e) => `Webhook:${e.id.slice(e.id.indexOf(':') + 1)}`));
      await eventually(async () => {
        const got = new Set(deliveries.map((d) => d.webhookId));
        return [...expectedIds].every((id) => got.has(id));
      }, 60_000);
      await new Promise((r) => setTimeout(r, 1_000)); // time for any duplicate to show up
      const mine = deliveries.filter((d) => txIds.has(d.data?.id));
      expect(mine.length).toBe(expectedIds.size);
      expect(new Set(mine.map((d) => d.webhookId)).size).toBe(mine.length);
      // No status was announced twice for a payment, and each final status was announced.
      const pairs = mine.map((d) => `${d.data.id} ${d.type}`);
      expect(new Set(pairs).size).toBe(pairs.length);
      for (const f of Object.values(finals)) {
        const want =
          f.type === 'OUTGOING'
            ? `OUTGOING_PAYMENT.${f.status}`
            : f.status === 'COMPLETED'
              ? 'INCOMING_PAYMENT.COMPLETED'
              : 'INCOMING_PAYMENT.FAILED';
        expect(pairs, `${f.id} ${f.status}`).toContain(`${f.id} ${want}`);
      }
    } finally {
      await sql.end();
    }
  }, 240_000);
});
