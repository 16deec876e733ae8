/**
 * Crash recovery through the real processes. One stack; three services are
 * SIGKILLed in turn while payments are in flight and started again with the same
 * environment (`stack.restart`):
 *
 *  1. payments, with transfer-outs and incoming payments mid-request, holds
 *     placed, settle jobs leased and approval windows open;
 *  2. accounts (the ledger owner), with holds being placed, posted and voided and
 *     incoming payments being credited, and an approval decided during the crash;
 *  3. webhook-dispatcher, in the middle of a delivery (the receiver holds one
 *     webhook request open when the dispatcher dies).
 *
 * Inside a crash window (from the kill until every request that was in flight
 * is answered: `e2e.fault`), clients retry a request with its Idempotency-Key
 * until answered, as they must after a 5xx, and the retries are counted and
 * printed. Outside it a 5xx fails the test (the API client throws on one). After
 * each crash the test proves: every payment reaches its
 * final state; one transaction per request key; the balance is exactly funding ±
 * the completed payments; ReconcileLedger is consistent with no hold left
 * pending; and every webhook event of these payments reached the receiver exactly
 * once by `webhook-id`, no status announced twice. The last test checks every
 * public event of the file (payments, accounts' balance updates, …) against the
 * receiver: each delivered, deduplicated by webhook-id, nothing else delivered;
 * the delivery the dispatcher's death cut was sent again with the same body, and
 * any webhook id that arrived twice is a redelivery of the same event that the
 * dispatcher had not seen acknowledged (never one it had).
 *
 * Nothing here assumes a restart is quick: requests in a crash window are retried
 * and final states polled for minutes, the approval window never elapses by itself
 * (the last test makes its timeout job due), and a poll that gives up says what it
 * was waiting for, what it last saw and what the services last logged. "Nothing
 * more arrived" is read from the dispatcher's delivery records (every delivery
 * DELIVERED: nothing left to send), not waited for.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server, type ServerResponse } from 'node:http';
import pg from 'pg';
import { status } from '@grpc/grpc-js';
import { accounts as accountsPb } from '@sluice/contracts';
import { createRpcClient } from '@sluice/rpc';
import {
  isPublicWebhookType,
  webhookIdForEvent,
} from '../../apps/webhook-dispatcher/src/domain/webhook-types.js';
import type { AppName } from '../../tools/stack.js';
import {
  accountRightAfterCreate,
  apiClient,
  newCredential,
  startE2eStack,
  type Api,
  type ApiResponse,
  type E2eStack,
  usdAccountInfo,
} from './support.js';

const FINAL = new Set(['COMPLETED', 'FAILED', 'REJECTED', 'REFUNDED', 'EXPIRED']);
const TIME_SCALE = 0.1;
/**
 * Real seconds an incoming payment awaits approval: longer than the file, so `approve-me` is
 * approvable after the restarts however loaded the machine; `time-out`'s window is closed by
 * making its timeout job due (closeApprovalWindow) once the crashes are over.
 */
const APPROVAL_WINDOW_S = 3600;
/** How long a request is retried, or a state awaited, before the test gives up (generous on purpose). */
const PATIENCE_MS = 150_000;
/** The dispatcher's HTTP timeout; a delivery leased by a dead dispatcher is sent again 30 s after it. */
const WEBHOOK_TIMEOUT_MS = 3_000;
const FUNDED = 10_000_000;
const THRESHOLD = 100_000;

type Tx = {
  id: string;
  type: 'INCOMING' | 'OUTGOING';
  status: string;
  failureReason?: string;
  sentAmount: { amount: number };
  receivedAmount: { amount: number };
};

interface Receipt {
  webhookId: string;
  type: string;
  dataId?: string;
  body: string;
  at: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const secondsSince = (t: number) => `${((Date.now() - t) / 1000).toFixed(1)} s`;
/** Receipts by webhook id (Map.groupBy is Node 21+). */
function byWebhookId(list: Receipt[]): Map<string, Receipt[]> {
  const out = new Map<string, Receipt[]>();
  for (const r of list) out.set(r.webhookId, [...(out.get(r.webhookId) ?? []), r]);
  return out;
}
const bigintJson = (v: unknown) => JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x));

describe('crash recovery: services killed mid-payment and restarted', () => {
  let e2e: E2eStack;
  let client: Api;
  let receiver: Server;
  let sql: pg.Pool;
  const sandbox = newCredential();
  let customerId: string;
  let umaAddress: string;
  let usdAccount: string;
  let okDestination: string;
  let slowDestination: string;
  /** Only events written after the webhook endpoint was configured are expected at the receiver. */
  let configuredAt: Date;

  /** Every webhook request the receiver got, repeats included. */
  const receipts: Receipt[] = [];
  /** When armed, the receiver keeps the first matching webhook request open (no response) and reports it. */
  let hold:
    | {
        match: (body: { type?: string; data?: any }) => boolean;
        report: (r: { receipt: Receipt; res: ServerResponse }) => void;
      }
    | undefined;
  /** Webhook ids whose delivery was in flight when the dispatcher was killed. */
  const cutDeliveries = new Set<string>();

  /** Every payment of the file: request key → transaction id, and the final states seen. */
  const ids: Record<string, string> = {};
  const finals: Record<string, Tx> = {};

  const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    client(method, path, { body, headers });
  const balance = async () => {
    const r = await api(
      'GET',
      `/customers/internal-accounts?customerId=${encodeURIComponent(customerId)}&currency=USD`,
    );
    expect(r.status, r.text).toBe(200);
    return r.json.data[0].balance.amount as number;
  };
  const logsOf = (apps: AppName[]) =>
    apps
      .map(
        (a) =>
          `--- ${a} (last lines)\n${e2e.stack
            .logs(a, 25)
            .map((l) => l.slice(0, 600))
            .join('\n')}`,
      )
      .join('\n');

  /**
   * What the gateway's failed requests since `t` were made of (gRPC status of the
   * failed call → count), and the database pool timeouts payments logged: the
   * figures that tell a reconnect backoff (UNAVAILABLE) from a stalled service
   * (DEADLINE_EXCEEDED) in the output.
   */
  function failuresSince(t: number): Record<string, number> {
    const out: Record<string, number> = {};
    const count = (
      app: AppName,
      key: (l: { err?: { grpcCode?: number; type?: string } }) => string | undefined,
    ) => {
      for (const line of e2e.stack.logs(app, 300)) {
        try {
          const l = JSON.parse(line) as { time?: string; err?: { grpcCode?: number; type?: string } };
          if (!l.time || Date.parse(l.time) < t) continue;
          const k = key(l);
          if (k) out[k] = (out[k] ?? 0) + 1;
        } catch {
          /* not a log line */
        }
      }
    };
    count('gateway', (l) =>
      l.err?.grpcCode !== undefined ? `gateway: ${status[l.err.grpcCode]}` : undefined,
    );
    count('payments', (l) => (l.err?.type === 'KnexTimeoutError' ? 'payments: pool timeout' : undefined));
    return out;
  }

  /** Failed attempts of untilAnswered inside a crash window, by request label (printed by each crash). */
  const retried: Record<string, number> = {};

  /**
   * Inside a crash window only: a request the client retries with the same key
   * until it gets a definitive answer (anything but a transport failure, a 5xx or
   * "key in progress"). Every retry is counted in `retried`.
   */
  async function untilAnswered(label: string, send: () => Promise<ApiResponse>): Promise<ApiResponse> {
    if (!e2e.inFault) throw new Error(`${label}: retried outside a crash window`);
    const started = Date.now();
    const seen = new Map<string, number>();
    let last = '';
    for (;;) {
      let r: ApiResponse | undefined;
      try {
        r = await send();
      } catch (e) {
        last = `no HTTP response (${(e as Error).message})`;
      }
      if (r && r.status < 500 && r.json?.code !== 'IDEMPOTENCY_KEY_IN_PROGRESS') return r;
      retried[label] = (retried[label] ?? 0) + 1;
      if (r) last = `${r.status} ${r.text.slice(0, 300)}`;
      const key = r ? `${r.status}${r.json?.code ? ` ${r.json.code}` : ''}` : 'no response';
      seen.set(key, (seen.get(key) ?? 0) + 1);
      if (Date.now() - started > PATIENCE_MS) {
        throw new Error(
          `${label}: no definitive answer in ${secondsSince(started)}; answers so far ${JSON.stringify([...seen])}; last: ${last}\n` +
            logsOf(['gateway', 'payments', 'accounts']),
        );
      }
      await sleep(250);
    }
  }

  /** Polls every payment of `keys` (in parallel) until each is final; says which are not and why on timeout. */
  async function finalStatesOf(keys: string[]): Promise<void> {
    const started = Date.now();
    const last: Record<string, string> = {};
    await Promise.all(
      keys.map(async (k) => {
        for (;;) {
          // Outside a crash window: a 5xx or a transport failure fails the test (the client throws).
          const r = await api('GET', `/transactions/${encodeURIComponent(ids[k]!)}`);
          last[k] =
            r.status === 200
              ? String(r.json.status)
              : `HTTP ${r.status} ${r.json?.code ?? r.text.slice(0, 80)}`;
          if (r.status === 200 && FINAL.has(r.json.status)) {
            finals[k] = r.json as Tx;
            return;
          }
          if (Date.now() - started > PATIENCE_MS) {
            const pending = keys.filter((x) => !finals[x]).map((x) => `${x} (${ids[x]}): ${last[x]}`);
            throw new Error(
              `not final after ${secondsSince(started)}: ${pending.join('; ')}\n` +
                logsOf(['payments', 'accounts', 'gateway']),
            );
          }
          await sleep(250);
        }
      }),
    );
  }

  /** One transaction per request key: no retry created a second payment. */
  async function expectOneTransactionPerKey(keys: string[]): Promise<void> {
    const { rows } = await sql.query<{ request_key: string; n: string }>(
      `SELECT request_key, count(*) AS n FROM payments.transactions WHERE request_key = ANY($1) GROUP BY request_key`,
      [keys],
    );
    expect(rows.map((r) => r.request_key).sort()).toEqual([...keys].sort());
    expect(
      rows.filter((r) => r.n !== '1'),
      'request keys with more than one transaction',
    ).toEqual([]);
  }

  /**
   * The balance is funding ± every completed payment so far (money moved once per
   * completed payment, never for a failed one), and the ledger reconciles with
   * nothing pending. Call when every outgoing payment of the file is final.
   */
  async function expectLedgerBalanced(): Promise<void> {
    let expected = FUNDED;
    for (const f of Object.values(finals)) {
      if (f.status !== 'COMPLETED') continue;
      expected += f.type === 'INCOMING' ? f.receivedAmount.amount : -f.sentAmount.amount;
    }
    expect(await balance(), 'balance = funding ± completed payments').toBe(expected);
    const ledger = createRpcClient(accountsPb.AccountsServiceClient, e2e.stack.grpc.accounts!, {
      defaultDeadlineMs: 10_000,
    });
    try {
      const rec = await ledger.reconcileLedger({ platformId: e2e.stack.platforms.sandbox!.platformId });
      expect(rec.consistent, bigintJson(rec)).toBe(true);
      expect(rec.currencies.find((c) => c.currency === 'USD')).toMatchObject({
        postedBalanceSum: 0n,
        lineSum: 0n,
        pendingDebits: 0n,
        pendingCredits: 0n,
      });
    } finally {
      ledger.close();
    }
  }

  /**
   * Webhook ids of the public events in the schemas' outboxes written since the
   * endpoint was configured (or since `since`), optionally only those about `txIds`.
   */
  async function expectedWebhooks(
    schemas: string[],
    txIds?: Set<string>,
    since: Date = configuredAt,
  ): Promise<Map<string, { type: string; dataId?: string }>> {
    const out = new Map<string, { type: string; dataId?: string }>();
    for (const schema of schemas) {
      const { rows } = await sql.query<{ id: string; type: string; data_id: string | null }>(
        `SELECT id, type, envelope->'data'->>'id' AS data_id FROM ${schema}.outbox
         WHERE platform_id = $1 AND occurred_at >= $2`,
        [e2e.stack.platforms.sandbox!.platformId, since],
      );
      for (const r of rows) {
        if (!isPublicWebhookType(r.type)) continue;
        if (txIds && !(r.data_id && txIds.has(r.data_id))) continue;
        out.set(webhookIdForEvent(r.id), { type: r.type, ...(r.data_id ? { dataId: r.data_id } : {}) });
      }
    }
    return out;
  }

  /** The schemas of the services whose public events become webhooks. */
  async function outboxSchemas(): Promise<string[]> {
    const { rows } = await sql.query<{ schema: string }>(
      `SELECT table_schema AS schema FROM information_schema.tables WHERE table_name = 'outbox' AND table_schema = ANY($1)`,
      [['identity', 'accounts', 'payments', 'compliance', 'agents']],
    );
    return rows.map((r) => r.schema);
  }

  /** Waits until the receiver has every expected webhook; reports the missing ones on timeout. */
  async function allReceived(expected: Map<string, unknown>, what: string): Promise<void> {
    const started = Date.now();
    for (;;) {
      const got = new Set(receipts.map((r) => r.webhookId));
      const missing = [...expected.keys()].filter((id) => !got.has(id));
      if (missing.length === 0) return;
      if (Date.now() - started > PATIENCE_MS) {
        const { rows } = await sql
          .query(
            `SELECT webhook_id, type, status, attempt_count, next_attempt_at, lease_until, last_error
             FROM webhooks.webhook_deliveries WHERE webhook_id = ANY($1)`,
            [missing],
          )
          .catch((e: Error) => ({ rows: [`deliveries unreadable: ${e.message}`] }));
        throw new Error(
          `${what}: ${missing.length} of ${expected.size} webhooks not received after ${secondsSince(started)}: ` +
            `${JSON.stringify(missing.slice(0, 10).map((id) => [id, expected.get(id)]))}; dispatcher records: ${JSON.stringify(rows)}\n` +
            logsOf(['webhook-dispatcher', 'payments']),
        );
      }
      await sleep(250);
    }
  }

  /**
   * Delivery is at least once, deduplicated by webhook-id at the receiver: a
   * webhook id may arrive more than once only as a redelivery of the same event
   * (the same body), and one the dispatcher recorded as acknowledged it never sends
   * again (exactly one acknowledged attempt). Repeats happen when an attempt was
   * not seen acknowledged: cut by the dispatcher's death, or timed out on a busy
   * machine. Returns the repeats with the dispatcher's account of them (printed).
   */
  async function expectRepeatsAreRedeliveries(
    byId: Map<string, Receipt[]>,
    what: string,
  ): Promise<Record<string, string>> {
    const repeated = [...byId].filter(([, got]) => got.length > 1);
    if (repeated.length === 0) return {};
    const { rows } = await sql.query<{
      webhook_id: string;
      ok: string;
      failed: string;
      errors: string[] | null;
    }>(
      `SELECT d.webhook_id, count(a.id) FILTER (WHERE a.succeeded) AS ok, count(a.id) FILTER (WHERE NOT a.succeeded) AS failed,
              array_agg(a.error) FILTER (WHERE NOT a.succeeded) AS errors
       FROM webhooks.webhook_deliveries d LEFT JOIN webhooks.webhook_delivery_attempts a ON a.delivery_id = d.id
       WHERE d.webhook_id = ANY($1) GROUP BY d.webhook_id`,
      [repeated.map(([id]) => id)],
    );
    const out: Record<string, string> = {};
    for (const [webhookId, got] of repeated) {
      const r = rows.find((x) => x.webhook_id === webhookId);
      const account =
        `${got[0]!.type} received ${got.length}×; dispatcher: ${r?.ok ?? 0} acknowledged, ${r?.failed ?? 0} failed ` +
        `${JSON.stringify(r?.errors ?? [])}${cutDeliveries.has(webhookId) ? ', 1 cut by the kill' : ''}`;
      out[webhookId] = account;
      expect(new Set(got.map((g) => g.body)).size, `${what}: ${webhookId} repeated with another body`).toBe(
        1,
      );
      expect(Number(r?.ok ?? 0), `${what}: ${webhookId}: ${account}`).toBe(1);
    }
    return out;
  }

  /**
   * Every payments event about these transactions reached the receiver, exactly
   * once by webhook-id (a repeat only as a redelivery: see
   * expectRepeatsAreRedeliveries), no status announced twice per payment, each
   * final status announced.
   */
  async function expectPaymentWebhooksOnce(keys: string[], what: string): Promise<void> {
    const txIds = new Set(keys.map((k) => ids[k]!));
    const expected = await expectedWebhooks(['payments'], txIds);
    await allReceived(expected, what);
    await deliveriesSettled([...expected.keys()], what);
    const mine = receipts.filter((r) => r.dataId && txIds.has(r.dataId));
    const byId = byWebhookId(mine);
    expect([...byId.keys()].sort(), `${what}: webhook ids received = payments events written`).toEqual(
      [...expected.keys()].sort(),
    );
    const repeats = await expectRepeatsAreRedeliveries(byId, what);
    if (Object.keys(repeats).length)
      console.info(`crash-recovery: ${what}: repeated deliveries ${JSON.stringify(repeats)}`);
    const announced = [...byId.values()].map((g) => `${g[0]!.dataId} ${g[0]!.type}`);
    expect(announced.length - new Set(announced).size, `${what}: a status announced twice`).toBe(0);
    for (const k of keys) {
      const f = finals[k]!;
      const want =
        f.type === 'OUTGOING'
          ? `OUTGOING_PAYMENT.${f.status}`
          : f.status === 'COMPLETED'
            ? 'INCOMING_PAYMENT.COMPLETED'
            : 'INCOMING_PAYMENT.FAILED';
      expect(announced, `${what}: ${k} ${f.id} ${f.status} announced`).toContain(`${f.id} ${want}`);
    }
  }

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
  const approve = (key: string) => () =>
    api('POST', `/transactions/${encodeURIComponent(ids[key]!)}/approve`);

  /**
   * Waits until the dispatcher has nothing left to send for these webhook ids: each delivery is
   * DELIVERED (a cut attempt leaves it PENDING until its lease runs out and it is sent again).
   * After that, what the receiver has is all it will get.
   */
  async function deliveriesSettled(webhookIds: string[], what: string): Promise<void> {
    const started = Date.now();
    for (;;) {
      const { rows } = await sql.query<{ webhook_id: string; status: string }>(
        `SELECT webhook_id, status FROM webhooks.webhook_deliveries WHERE webhook_id = ANY($1)`,
        [webhookIds],
      );
      const open = webhookIds.filter((id) => rows.find((r) => r.webhook_id === id)?.status !== 'DELIVERED');
      if (open.length === 0) return;
      if (Date.now() - started > PATIENCE_MS)
        throw new Error(
          `${what}: deliveries not settled after ${secondsSince(started)}: ${JSON.stringify(open.slice(0, 10))}\n` +
            logsOf(['webhook-dispatcher']),
        );
      await sleep(250);
    }
  }

  /** The approval window of an incoming payment closes now: its end and its timeout job, moved together. */
  async function closeApprovalWindow(transactionId: string): Promise<void> {
    const { rowCount } = await sql.query(
      `WITH closed AS (UPDATE payments.incoming_approvals SET expires_at = now() WHERE transaction_id = $1 RETURNING expires_at)
       UPDATE payments.scheduled_jobs SET run_at = (SELECT expires_at FROM closed)
       WHERE id = 'incoming.approval-timeout:' || $1 AND done_at IS NULL`,
      [transactionId],
    );
    expect(rowCount, `the approval timeout job of ${transactionId} is pending`).toBe(1);
  }

  /** Sends requests that must be answered before the crash (no fault yet: a 5xx fails); checks their status. */
  async function before(requests: Record<string, [() => Promise<ApiResponse>, string]>): Promise<void> {
    for (const [k, [send, status]] of Object.entries(requests)) {
      const r = await send();
      expect(r.status, `${k}: ${r.text}`).toBeLessThan(300);
      expect(r.json.status, `${k} before the crash`).toBe(status);
      ids[k] = r.json.id;
    }
  }

  /**
   * Fires `inFlight` (and `alsoInFlight`, e.g. decisions), kills `app` as soon as
   * the first is answered (the others are then inside the system), starts it
   * again, and retries every request until answered: each answer is a 2xx, and a
   * payment request gets its own transaction.
   */
  async function crash(
    app: AppName,
    inFlight: Record<string, () => Promise<ApiResponse>>,
    alsoInFlight: Record<string, () => Promise<ApiResponse>> = {},
  ): Promise<void> {
    await e2e.fault(`${app} killed mid-payment`, () => crashWindow(app, inFlight, alsoInFlight));
  }

  async function crashWindow(
    app: AppName,
    inFlight: Record<string, () => Promise<ApiResponse>>,
    alsoInFlight: Record<string, () => Promise<ApiResponse>>,
  ): Promise<void> {
    const all = { ...inFlight, ...alsoInFlight };
    for (const k of Object.keys(retried)) delete retried[k];
    const firstTries = Object.values(all).map((send) => send().catch(() => undefined));
    const pidBefore = e2e.stack.pid(app);
    await Promise.race([...firstTries, sleep(2_000)]);
    const killedAt = Date.now();
    await e2e.stack.restart(app, 'SIGKILL');
    const readyAt = Date.now();
    expect(e2e.stack.pid(app)).not.toBe(pidBefore);
    const cut = (await Promise.all(firstTries)).filter((r) => !r || r.status >= 500).length;
    const answers = await Promise.all(
      Object.entries(all).map(async ([k, send]) => [k, await untilAnswered(k, send), Date.now()] as const),
    );
    for (const [k, r] of answers) {
      expect(r.status, `${k}: ${r.text}`).toBeLessThan(300);
      if (k in inFlight) ids[k] = r.json.id;
    }
    const lastAnswer = Math.max(...answers.map(([, , at]) => at));
    console.info(
      `crash-recovery: ${app} killed; ready again after ${((readyAt - killedAt) / 1000).toFixed(1)} s; ` +
        `${cut} of ${firstTries.length} in-flight requests were cut; all answered ${((lastAnswer - readyAt) / 1000).toFixed(1)} s after it was ready; ` +
        `failures since the kill ${JSON.stringify(failuresSince(killedAt))}, of which after it was ready ${JSON.stringify(failuresSince(readyAt))}; ` +
        `every request sent again after the restart, of which failed again ${JSON.stringify(retried)}`,
    );
    const keys = Object.keys(inFlight);
    expect(new Set(keys.map((k) => ids[k])).size, 'a transaction per request').toBe(keys.length);
  }

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const parsed = JSON.parse(body);
        const receipt: Receipt = {
          webhookId: String(req.headers['webhook-id']),
          type: parsed.type,
          dataId: parsed.data?.id,
          body,
          at: Date.now(),
        };
        receipts.push(receipt);
        if (hold?.match(parsed)) {
          const { report } = hold;
          hold = undefined;
          report({ receipt, res });
          return; // kept open: the dispatcher dies waiting for the answer
        }
        // The approval webhook is answered 202: the test decides each payment with approve, or lets it time out.
        res.writeHead(parsed.type === 'INCOMING_PAYMENT.PENDING' ? 202 : 200).end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const addr = receiver.address();
    const receiverUrl = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/hooks`;
    e2e = await startE2eStack(
      'e2ecrash',
      { sandbox },
      {
        // Each service applies its migrations as it starts (as a restarted one does anyway): no
        // separate migration process per app, which halves the start on a busy 2-core machine.
        // The Kubernetes-Job path of the stack is exercised by the other end-to-end files.
        migrate: false,
        // Settlement 1 s → 100 ms; suffix 005's 30 s pending → 3 s.
        env: { SANDBOX_TIME_SCALE: String(TIME_SCALE) },
        appEnv: {
          payments: {
            // A killed worker's leased jobs run again after 2 s (not the default minute).
            JOB_LEASE_MS: '2000',
            // Protocol deadlines, in real seconds (not scaled).
            INCOMING_APPROVAL_ANSWER_TIMEOUT_SECONDS: String(APPROVAL_WINDOW_S),
            INCOMING_APPROVAL_WINDOW_SECONDS: String(APPROVAL_WINDOW_S),
          },
          'webhook-dispatcher': { WEBHOOK_TIMEOUT_MS: String(WEBHOOK_TIMEOUT_MS) },
        },
      },
    );
    client = apiClient(e2e.stack, sandbox);
    // One connection, opened now and kept (the Postgres server may be busy with other suites later).
    sql = new pg.Pool({ connectionString: e2e.stack.databaseUrl, max: 1, idleTimeoutMillis: 0 });
    await sql.query('SELECT 1');
    const cfg = await api('PATCH', '/config', {
      webhookEndpoint: receiverUrl,
      supportedCurrencies: [{ currencyCode: 'USD', incomingPaymentApprovalThreshold: THRESHOLD }],
    });
    expect(cfg.status, cfg.text).toBe(200);
    configuredAt = (await sql.query<{ now: Date }>('SELECT now()')).rows[0]!.now;
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
    usdAccount = await accountRightAfterCreate(client, customerId, 'USD');
    const fund = await api('POST', `/sandbox/internal-accounts/${encodeURIComponent(usdAccount)}/fund`, {
      amount: FUNDED,
    });
    expect(fund.status, fund.text).toBe(200);
    const external = async (accountNumber: string) => {
      const r = await api('POST', '/customers/external-accounts', {
        customerId,
        currency: 'USD',
        accountInfo: usdAccountInfo(accountNumber),
      });
      expect(r.status, r.text).toBe(201);
      return r.json.id as string;
    };
    okDestination = await external('12345678789'); // settles (COMPLETED)
    slowDestination = await external('12345678005'); // pending ~3 s, then FAILED (hold voided)
  }, 240_000);

  afterAll(async () => {
    await sql?.end();
    await e2e?.stop();
    receiver?.closeAllConnections();
    await new Promise((r) => receiver?.close(r));
  });

  it('payments killed with payments mid-request, holds placed, settle jobs leased and approval windows open', async () => {
    // Answered before the crash: slow payouts PROCESSING (holds placed, settle jobs due after
    // the crash), incoming payments awaiting approval (one approved after the restart, one left to time out).
    const windowsOpened = Date.now();
    await before({
      'p-slow-0': [transferOut('p-slow-0', slowDestination, 1_000), 'PROCESSING'],
      'p-slow-1': [transferOut('p-slow-1', slowDestination, 1_100), 'PROCESSING'],
      'approve-me': [receiveUma('approve-me', THRESHOLD), 'PENDING'],
      'time-out': [receiveUma('time-out', THRESHOLD + 1), 'PENDING'],
    });
    const inFlight: Record<string, () => Promise<ApiResponse>> = {};
    for (let i = 0; i < 10; i++) inFlight[`p-ok-${i}`] = transferOut(`p-ok-${i}`, okDestination, 2_000 + i);
    for (let i = 0; i < 4; i++)
      inFlight[`p-slow-late-${i}`] = transferOut(`p-slow-late-${i}`, slowDestination, 3_000 + i);
    for (let i = 0; i < 6; i++) inFlight[`p-in-${i}`] = receiveUma(`p-in-${i}`, 500 + i);
    await crash('payments', inFlight);

    // The platform approves a payment whose window opened before the crash (no fault any more: a 5xx fails).
    const approved = await approve('approve-me')();
    expect(
      approved.status,
      `${approved.text} (decided ${secondsSince(windowsOpened)} after its ${APPROVAL_WINDOW_S} s window opened)`,
    ).toBe(200);

    const keys = ['p-slow-0', 'p-slow-1', 'approve-me', ...Object.keys(inFlight)];
    await finalStatesOf(keys);
    for (let i = 0; i < 10; i++) expect(finals[`p-ok-${i}`]!.status).toBe('COMPLETED');
    for (const k of ['p-slow-0', 'p-slow-1', ...[0, 1, 2, 3].map((i) => `p-slow-late-${i}`)]) {
      expect(finals[k]!.status, k).toBe('FAILED');
    }
    for (let i = 0; i < 6; i++) expect(finals[`p-in-${i}`]!.status).toBe('COMPLETED');
    expect(finals['approve-me']!.status).toBe('COMPLETED');
    await expectOneTransactionPerKey([...keys, 'time-out']);
    await expectLedgerBalanced();
    await expectPaymentWebhooksOnce(keys, 'payments crash');
  }, 420_000);

  it('accounts (the ledger owner) killed with holds being placed, posted and voided, credits and an approval in flight', async () => {
    await before({
      'a-slow-0': [transferOut('a-slow-0', slowDestination, 1_200), 'PROCESSING'],
      'a-approve': [receiveUma('a-approve', THRESHOLD + 2), 'PENDING'],
    });
    const inFlight: Record<string, () => Promise<ApiResponse>> = {};
    for (let i = 0; i < 10; i++) inFlight[`a-ok-${i}`] = transferOut(`a-ok-${i}`, okDestination, 4_000 + i);
    for (let i = 0; i < 3; i++)
      inFlight[`a-slow-late-${i}`] = transferOut(`a-slow-late-${i}`, slowDestination, 5_000 + i);
    for (let i = 0; i < 6; i++) inFlight[`a-in-${i}`] = receiveUma(`a-in-${i}`, 700 + i);
    // The approval credits the account through accounts: it is decided while accounts dies.
    await crash('accounts', inFlight, { 'a-approve (decision)': approve('a-approve') });

    const keys = ['a-slow-0', 'a-approve', ...Object.keys(inFlight)];
    await finalStatesOf(keys);
    for (let i = 0; i < 10; i++) expect(finals[`a-ok-${i}`]!.status).toBe('COMPLETED');
    for (const k of ['a-slow-0', ...[0, 1, 2].map((i) => `a-slow-late-${i}`)])
      expect(finals[k]!.status, k).toBe('FAILED');
    for (let i = 0; i < 6; i++) expect(finals[`a-in-${i}`]!.status).toBe('COMPLETED');
    expect(finals['a-approve']!.status).toBe('COMPLETED');
    await expectOneTransactionPerKey(keys);
    await expectLedgerBalanced();
    await expectPaymentWebhooksOnce(keys, 'accounts crash');
  }, 420_000);

  it('webhook-dispatcher killed in the middle of a delivery', async () => {
    // Quiet first: everything written so far has reached the receiver, so the delivery the receiver
    // holds open is the one in flight when the dispatcher dies. (A dead dispatcher's leases block the
    // platform's webhooks until they run out: one attempt's lease, timeout + 30 s, after its last
    // claim or attempt.)
    await allReceived(await expectedWebhooks(await outboxSchemas()), 'before the dispatcher crash');
    const held = new Promise<{ receipt: Receipt; res: ServerResponse }>((report) => {
      hold = {
        match: (b) =>
          b.type === 'INCOMING_PAYMENT.PENDING' && b.data?.receivedAmount?.amount === THRESHOLD + 3,
        report,
      };
    });
    // One payment, one webhook (INCOMING_PAYMENT.PENDING): the receiver keeps its request open.
    await before({ 'w-approve': [receiveUma('w-approve', THRESHOLD + 3), 'PENDING'] });
    const h = await Promise.race([
      held,
      sleep(PATIENCE_MS).then(() => {
        throw new Error(
          `no webhook reached the receiver in ${PATIENCE_MS} ms\n${logsOf(['webhook-dispatcher'])}`,
        );
      }),
    ]);
    expect(h.receipt).toMatchObject({ type: 'INCOMING_PAYMENT.PENDING', dataId: ids['w-approve'] });
    const peerGone = new Promise<boolean>((r) => {
      h.res.once('close', () => r(true));
      setTimeout(() => r(false), 30_000).unref();
    });
    // Payments go on while the dispatcher is dead and restarting: their events wait in JetStream.
    const requests: Record<string, () => Promise<ApiResponse>> = {};
    for (let i = 0; i < 6; i++) requests[`w-ok-${i}`] = transferOut(`w-ok-${i}`, okDestination, 6_000 + i);
    for (let i = 0; i < 2; i++)
      requests[`w-slow-${i}`] = transferOut(`w-slow-${i}`, slowDestination, 7_000 + i);
    for (let i = 0; i < 3; i++) requests[`w-in-${i}`] = receiveUma(`w-in-${i}`, 900 + i);
    const killedAt = Date.now();
    // The dispatcher is not on the path of an API request: these are answered at once, with no retry,
    // while it is dead and restarting.
    const restarted = e2e.fault('webhook-dispatcher killed mid-delivery', () =>
      e2e.stack.restart('webhook-dispatcher', 'SIGKILL'),
    );
    const answers = Promise.all(
      Object.entries(requests).map(async ([k, send]) => {
        const r = await send();
        expect(r.status, `${k}: ${r.text}`).toBeLessThan(300);
        ids[k] = r.json.id;
      }),
    );
    await restarted;
    // The dispatcher's connection died with it before any answer: the delivery was cut mid-request.
    expect(await peerGone, 'the held webhook request was cut by the kill').toBe(true);
    expect(h.res.headersSent).toBe(false);
    cutDeliveries.add(h.receipt.webhookId);
    const { rows: lease } = await sql.query<{ s: number }>(
      `SELECT extract(epoch FROM lease_until - now())::float AS s FROM webhooks.webhook_deliveries WHERE webhook_id = $1`,
      [h.receipt.webhookId],
    );
    console.info(
      `crash-recovery: webhook-dispatcher killed while delivering ${h.receipt.type} ${h.receipt.webhookId}; ready again after ${secondsSince(killedAt)}; ` +
        `the cut delivery's lease runs out in ${lease[0]?.s?.toFixed(1)} s`,
    );
    await answers;
    const approved = await approve('w-approve')();
    expect(approved.status, approved.text).toBe(200);
    const keys = ['w-approve', ...Object.keys(requests)];
    await finalStatesOf(keys);
    expect(finals['w-approve']!.status).toBe('COMPLETED');
    for (let i = 0; i < 6; i++) expect(finals[`w-ok-${i}`]!.status).toBe('COMPLETED');
    for (let i = 0; i < 2; i++) expect(finals[`w-slow-${i}`]!.status).toBe('FAILED');
    for (let i = 0; i < 3; i++) expect(finals[`w-in-${i}`]!.status).toBe('COMPLETED');
    await expectOneTransactionPerKey(keys);
    await expectLedgerBalanced();

    // The cut delivery is sent again (same webhook-id, same body) once its lease runs out.
    const started = Date.now();
    for (;;) {
      const again = receipts.filter((r) => r.webhookId === h.receipt.webhookId && r.at > killedAt);
      if (again.length) {
        expect(again.every((r) => r.body === h.receipt.body)).toBe(true);
        break;
      }
      if (Date.now() - started > PATIENCE_MS) {
        throw new Error(
          `the cut delivery ${h.receipt.webhookId} was not sent again in ${secondsSince(started)}\n${logsOf(['webhook-dispatcher'])}`,
        );
      }
      await sleep(250);
    }
    console.info(`crash-recovery: the cut delivery was sent again ${secondsSince(killedAt)} after the kill`);
    await expectPaymentWebhooksOnce(keys, 'dispatcher crash');
  }, 420_000);

  it('afterwards: the approval window open across the crashes elapses, and every event of the file was delivered once by webhook-id', async () => {
    expect((await api('GET', `/transactions/${encodeURIComponent(ids['time-out']!)}`)).json.status).toBe(
      'PENDING',
    );
    await closeApprovalWindow(ids['time-out']!);
    await finalStatesOf(['time-out']);
    expect(finals['time-out']).toMatchObject({
      status: 'FAILED',
      failureReason: 'PAYMENT_APPROVAL_TIMED_OUT',
    });
    await expectLedgerBalanced();

    // Every public event of every service (payments, accounts' balance updates, …) since the endpoint was set.
    const schemas = await outboxSchemas();
    const expected = await expectedWebhooks(schemas);
    await allReceived(expected, 'every event');
    await deliveriesSettled([...expected.keys()], 'every event');
    const written = await expectedWebhooks(schemas, undefined, new Date(0));
    const byId = byWebhookId(receipts);
    expect(
      [...byId.keys()].filter((id) => !written.has(id)).map((id) => `${id} ${byId.get(id)![0]!.type}`),
      'webhooks for events that were never written',
    ).toEqual([]);
    const repeated = await expectRepeatsAreRedeliveries(byId, 'every event');
    // The cut delivery was received twice; whatever the dispatcher acknowledged once, it never sent again.
    for (const id of cutDeliveries) expect(byId.get(id)?.length, id).toBeGreaterThan(1);
    const { rows: twice } = await sql.query<{ webhook_id: string; ok: string }>(
      `SELECT d.webhook_id, count(*) AS ok FROM webhooks.webhook_deliveries d
       JOIN webhooks.webhook_delivery_attempts a ON a.delivery_id = d.id AND a.succeeded
       WHERE d.platform_id = $1 GROUP BY d.webhook_id HAVING count(*) > 1`,
      [e2e.stack.platforms.sandbox!.platformId],
    );
    expect(twice, 'deliveries acknowledged more than once').toEqual([]);
    console.info(
      `crash-recovery: ${expected.size} events delivered, ${receipts.length} webhook requests received; repeated: ${JSON.stringify(repeated)}`,
    );
  }, 420_000);
});
