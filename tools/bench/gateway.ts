/**
 * The system through the gateway: every app as its own process, started by
 * tools/stack.ts (the code `npm start` runs) on a fresh database and subject
 * prefix, driven over HTTP like a platform would.
 */
import { Agent, createServer, request as httpRequest, type Server } from 'node:http';
import { performance } from 'node:perf_hooks';
import { accounts as accountsPb } from '@sluice/contracts';
import { createRpcClient } from '@sluice/rpc';
import { dropStreams } from '@sluice/testing';
import { startStack, TEST_STACK_RATE_LIMITS, type Stack, type StackOptions } from '../stack.js';
import { formatCredential, generateCredential } from '../lib/credentials.js';
import { readAnswer, type HttpAnswer } from '../lib/http-answer.js';
import {
  eurAccountInfo,
  executeRetryingLater,
  type BenchSystem,
  type PairResult,
  type Payer,
} from './system.js';

/** What the JSON client answers: the one reader's answer (tools/lib/http-answer.ts). */
export type HttpResponse = HttpAnswer;

export type JsonCall = (
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<HttpResponse>;

/** A small keep-alive JSON client (node:http: far less CPU per request than fetch); a Buffer body is sent raw. */
function jsonClient(baseUrl: string, authorization: string, maxSockets: number) {
  const base = new URL(baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });
  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    new Promise<HttpResponse>((resolve, reject) => {
      // A Buffer goes as it is (a multipart form: its Content-Type comes with `headers`); anything else as JSON.
      const raw = Buffer.isBuffer(body);
      const payload = body === undefined ? undefined : raw ? body : JSON.stringify(body);
      const req = httpRequest(
        {
          agent,
          host: base.hostname,
          port: base.port,
          method,
          path: base.pathname + path,
          headers: {
            authorization,
            ...(payload !== undefined
              ? {
                  'content-type': raw ? 'application/octet-stream' : 'application/json',
                  'content-length': Buffer.byteLength(payload),
                }
              : {}),
            ...headers,
          },
        },
        (res) => readAnswer(res, resolve, reject),
      );
      req.on('error', reject);
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  return { call, close: () => agent.destroy() };
}

function failure(step: string, r: HttpResponse): string {
  return `${step}:${r.status}${r.json?.code ? ` ${r.json.code}` : ''}`;
}

/** A webhook the bench's endpoint received. */
export interface ReceivedWebhook {
  /** The `webhook-id` header (the same for every retry of one event). */
  id: string;
  type: string;
  /** `data.id` of the payload. */
  dataId?: string;
  /** `data.status` of the payload. */
  status?: string;
}

export interface GatewaySystem extends BenchSystem {
  stack: Stack;
  /** The platform's JSON client (keep-alive, the bench's credential). */
  call: JsonCall;
  /** Webhooks received (when the platform has an endpoint). */
  webhooksReceived(): number;
  /** Every webhook received, in arrival order (when the platform has an endpoint). */
  webhooks(): readonly ReceivedWebhook[];
  /** The last log lines of every app. */
  logTails(): Record<string, string[]>;
}

export async function startGatewaySystem(o: {
  baseDatabaseUrl: string;
  databaseUrl: string;
  databaseName: string;
  natsUrl: string;
  prefix: string;
  timeScale: number;
  logLevel: string;
  maxClients: number;
  webhooks: boolean;
  /** DATABASE_POOL_MAX of payments (default: the service's). */
  paymentsPoolMax?: number;
  /** Processes per app (the stack's `replicas`). */
  replicas?: number;
  /** Extra environment per app. */
  appEnv?: StackOptions['appEnv'];
  /**
   * The database and NATS addresses the processes are given, when they differ from the ones
   * the bench checks through (a forwarder the resilience runs interrupt: libs/testing/src/balancer.ts).
   */
  appDatabaseUrl?: string;
  appNatsUrl?: string;
  /** LOG_LEVEL-independent: print the apps' output (default silent). */
  silent?: boolean;
  /** Environment of every app (the transaction counter of --by-process). */
  env?: Record<string, string>;
}): Promise<GatewaySystem> {
  const credential = generateCredential();
  const stack = await startStack({
    databaseUrl: o.appDatabaseUrl ?? o.databaseUrl,
    natsUrl: o.appNatsUrl ?? o.natsUrl,
    prefix: o.prefix,
    freePorts: true,
    gatewayPort: 0,
    silent: o.silent ?? true,
    ...(o.replicas ? { replicas: o.replicas } : {}),
    localCredentialFile: false,
    credentials: { sandbox: formatCredential(credential) },
    sandboxTimeScale: o.timeScale,
    logLevel: o.logLevel,
    platformName: 'Bench platform',
    ...(o.env ? { env: o.env } : {}),
    appEnv: {
      ...o.appEnv,
      gateway: { ...TEST_STACK_RATE_LIMITS, ...o.appEnv?.gateway },
      ...(o.paymentsPoolMax
        ? { payments: { ...o.appEnv?.payments, DATABASE_POOL_MAX: String(o.paymentsPoolMax) } }
        : {}),
    },
  });
  let receiver: Server | undefined;
  let received = 0;
  const webhooks: ReceivedWebhook[] = [];
  const platform = stack.platforms.sandbox!;
  const http = jsonClient(stack.baseUrl, platform.authorization, o.maxClients + 4);
  const ledger = createRpcClient(accountsPb.AccountsServiceClient, stack.grpc.accounts!, {
    defaultDeadlineMs: 60_000,
  });
  const close = async () => {
    http.close();
    ledger.close();
    await stack.stop();
    await dropStreams(o.natsUrl, o.prefix).catch(() => undefined);
    if (receiver) await new Promise((r) => receiver!.close(r));
  };
  try {
    let webhookEndpoint: string | undefined;
    if (o.webhooks) {
      receiver = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          received++;
          try {
            const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
              type: string;
              data?: { id?: string; status?: string };
            };
            webhooks.push({
              id: String(req.headers['webhook-id'] ?? ''),
              type: body.type,
              ...(body.data?.id ? { dataId: body.data.id } : {}),
              ...(body.data?.status ? { status: body.data.status } : {}),
            });
          } catch {
            webhooks.push({ id: String(req.headers['webhook-id'] ?? ''), type: 'unparsable' });
          }
          res.writeHead(200).end('ok');
        });
      });
      await new Promise<void>((r) => receiver!.listen(0, '127.0.0.1', r));
      const addr = receiver.address();
      webhookEndpoint = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/hooks`;
    }
    const cfg = await http.call('PATCH', '/config', {
      ...(webhookEndpoint ? { webhookEndpoint } : {}),
      supportedCurrencies: [{ currencyCode: 'USD' }, { currencyCode: 'EUR' }],
    });
    if (cfg.status !== 200) throw new Error(`PATCH /config: ${cfg.status} ${cfg.text}`);
  } catch (err) {
    await close();
    throw err;
  }

  const expect = (r: HttpResponse, status: number, what: string) => {
    if (r.status !== status) throw new Error(`${what}: ${r.status} ${r.text.slice(0, 300)}`);
    return r.json;
  };

  return {
    name: 'gateway',
    stack,
    databaseUrl: o.databaseUrl,
    databaseName: o.databaseName,
    platformId: platform.platformId,
    call: http.call,
    webhooksReceived: () => received,
    webhooks: () => webhooks,
    logTails: () => Object.fromEntries(stack.apps.map((app) => [app, stack.logs(app, 300)])),
    cpuRoots() {
      const roots = new Map<number, string>();
      for (const app of stack.apps) {
        const pid = stack.pid(app);
        if (pid) roots.set(pid, app);
      }
      roots.set(process.pid, 'bench (HTTP load generator)');
      return roots;
    },
    async createPayer(index, fund) {
      const c = expect(
        await http.call(
          'POST',
          '/customers',
          {
            customerType: 'INDIVIDUAL',
            platformCustomerId: `bench-${index}`,
            fullName: `Bench Payer ${index}`,
            currencies: ['USD'],
          },
          { 'idempotency-key': `bench-customer-${index}` },
        ),
        201,
        'POST /customers',
      );
      const list = expect(
        await http.call(
          'GET',
          `/customers/internal-accounts?customerId=${encodeURIComponent(c.id)}&currency=USD`,
        ),
        200,
        'GET /customers/internal-accounts',
      );
      const accountId = list.data[0].id as string;
      const ext = expect(
        await http.call('POST', '/customers/external-accounts', {
          customerId: c.id,
          currency: 'EUR',
          accountInfo: eurAccountInfo(index),
        }),
        201,
        'POST /customers/external-accounts',
      );
      const funded = expect(
        await http.call(
          'POST',
          `/sandbox/internal-accounts/${encodeURIComponent(accountId)}/fund`,
          { amount: Number(fund) },
          { 'idempotency-key': `bench-fund-${index}` },
        ),
        200,
        'POST /sandbox/internal-accounts/{id}/fund',
      );
      return {
        index,
        customerId: c.id,
        accountId,
        externalAccountId: ext.id,
        funded: BigInt(funded.balance.amount),
      };
    },
    async pair(payer: Payer, amount: number, idempotencyKey: string): Promise<PairResult> {
      const t0 = performance.now();
      const q = await http.call('POST', '/quotes', {
        source: { sourceType: 'ACCOUNT', accountId: payer.accountId },
        destination: { destinationType: 'ACCOUNT', accountId: payer.externalAccountId },
        lockedCurrencySide: 'SENDING',
        lockedCurrencyAmount: amount,
      });
      const t1 = performance.now();
      if (q.status !== 201)
        return { ok: false, payer: payer.index, createMs: t1 - t0, error: failure('create', q) };
      const { answer: e, retries } = await executeRetryingLater(
        () =>
          http.call('POST', `/quotes/${encodeURIComponent(q.json.id)}/execute`, undefined, {
            'idempotency-key': idempotencyKey,
          }),
        (r) => (r.status === 503 && r.retryAfter ? (Number(r.retryAfter) || 1) * 1000 : undefined),
      );
      const t2 = performance.now();
      if (e.status !== 200)
        return {
          ok: false,
          payer: payer.index,
          createMs: t1 - t0,
          executeMs: t2 - t1,
          quoteId: q.json.id,
          error: failure('execute', e),
          retries,
        };
      return {
        ok: true,
        payer: payer.index,
        createMs: t1 - t0,
        executeMs: t2 - t1,
        quoteId: e.json.id,
        sent: BigInt(e.json.totalSendingAmount),
        retries,
      };
    },
    async reconcile() {
      const r = await ledger.reconcileLedger({ platformId: platform.platformId });
      return {
        consistent: r.consistent,
        detail: JSON.stringify(r, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)),
      };
    },
    close,
  };
}
