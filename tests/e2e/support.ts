/**
 * Shared set-up of the end-to-end suites: each file gets its own database,
 * subject prefix and free ports, and starts every process exactly as
 * `npm start` does (tools/stack.ts).
 *
 * A 5xx answer is a failure unless it happens inside a deliberate fault: the API
 * client throws on one (and the stack remembers it, so a poll that swallows the
 * throw still fails the file when the stack stops). A test that breaks the stack
 * on purpose (kills or freezes a process) wraps that part in `e2e.fault(label, fn)`;
 * the 5xx answered inside are counted and printed instead.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import pg from 'pg';
import { expect } from 'vitest';
import { createTestDatabase, dropStreams, natsUrl, testPrefix } from '@sluice/testing';
import { newId } from '@sluice/core';
import { TEST_WEBHOOK, WEBHOOK_EVENT_TYPES } from '@sluice/api';
import { startStack, TEST_STACK_RATE_LIMITS, type AppName, type Stack, type StackOptions } from '../../tools/stack.js';
import { ReferenceCapture } from '../../tools/api-reference/capture.js';

export interface Credential {
  tokenId: string;
  secret: string;
}

export function newCredential(): Credential {
  return { tokenId: newId('Token'), secret: randomBytes(32).toString('base64url') };
}

export function basic(c: Credential): string {
  return 'Basic ' + Buffer.from(`${c.tokenId}:${c.secret}`).toString('base64');
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are asserted field by field
  json: any;
  text: string;
}

export interface ApiOptions {
  body?: unknown;
  /** A raw request body (sent as application/json), e.g. malformed JSON. */
  raw?: string;
  /** Authorization header value; `null` sends none. Default: an `authorization` in `headers`, else the client's credential. */
  auth?: string | null;
  headers?: Record<string, string>;
  /** A multipart/form-data body (fetch writes its content type and boundary). */
  form?: FormData;
}

export type Api = (method: string, path: string, opts?: ApiOptions) => Promise<ApiResponse>;

/**
 * Which 5xx answers a stack gave, inside and outside deliberate faults. Outside one, a 5xx
 * is an unexpected failure of the system under test: it is recorded and thrown.
 */
class FaultWatch {
  /** 5xx answers outside any fault window. */
  readonly unexpected: string[] = [];
  /** Open fault windows, each counting the 5xx answered while it is open (by status and code). */
  private readonly windows: Map<string, number>[] = [];

  get inFault(): boolean {
    return this.windows.length > 0;
  }

  /** Notes a 5xx; returns the error to throw when it happened outside a fault. */
  note(method: string, path: string, r: ApiResponse): Error | undefined {
    const key = `${r.status}${r.json?.code ? ` ${r.json.code}` : ''}`;
    if (this.inFault) {
      for (const w of this.windows) w.set(key, (w.get(key) ?? 0) + 1);
      return undefined;
    }
    const what = `${method} ${path} answered ${r.status} outside a deliberate fault: ${r.text.slice(0, 300)}`;
    this.unexpected.push(what);
    return new Error(what);
  }

  async during<T>(label: string, fn: () => Promise<T>): Promise<T> {
    const counts = new Map<string, number>();
    this.windows.push(counts);
    try {
      return await fn();
    } finally {
      this.windows.splice(this.windows.indexOf(counts), 1);
      const total = [...counts.values()].reduce((a, b) => a + b, 0);
      console.info(
        `fault "${label}": ${total} 5xx answer(s) retried inside it${total ? ` ${JSON.stringify(Object.fromEntries(counts))}` : ''}`,
      );
    }
  }
}

const watches = new WeakMap<Stack, FaultWatch>();
/** Every answer of the stack's API, checked against the reference document when the stack stops. */
const captures = new WeakMap<Stack, ReferenceCapture>();

/** An HTTP client of the stack's versioned API, authenticated with `credential` by default. */
export function apiClient(stack: Stack, credential: Credential): Api {
  return async (method, path, opts = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    const explicit = Object.keys(headers).some((h) => h.toLowerCase() === 'authorization');
    if (opts.auth !== null && !explicit) headers.authorization = opts.auth ?? basic(credential);
    if (opts.body !== undefined || opts.raw !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(stack.baseUrl + path, {
      method,
      headers,
      body: opts.form ?? opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    const answer = { status: res.status, headers: res.headers, json, text };
    captures.get(stack)?.response(method, path, res.status, json ?? (text || undefined));
    if (res.status >= 500) {
      const unexpected = watches.get(stack)?.note(method, path, answer);
      if (unexpected) throw unexpected;
    }
    return answer;
  };
}

/** The accountInfo of a US bank account of Ada Lovelace (its last 3 digits pick the sandbox outcome). */
export function usdAccountInfo(accountNumber: string) {
  return {
    accountType: 'USD_ACCOUNT',
    accountNumber,
    routingNumber: '021000021',
    beneficiary: {
      beneficiaryType: 'INDIVIDUAL',
      fullName: 'Ada Lovelace',
      address: { line1: '1 Main St', postalCode: '94105', country: 'US' },
    },
  };
}

/** A German IBAN (mod-97 valid) whose account number is `account` (10 digits). */
export { germanIban } from '@sluice/testing';

/**
 * Read your writes (README: a customer's internal accounts "exist when POST /customers
 * returns"): its account in `currency`, read once right after the create answered.
 */
export async function accountRightAfterCreate(
  api: Api,
  customerId: string,
  currency: string,
): Promise<string> {
  const list = await api(
    'GET',
    `/customers/internal-accounts?customerId=${encodeURIComponent(customerId)}&currency=${currency}`,
  );
  expect(list.status, list.text).toBe(200);
  expect(list.json.data, `the ${currency} account right after POST /customers`).toHaveLength(1);
  return list.json.data[0].id as string;
}

export interface E2eStack {
  stack: Stack;
  /**
   * Runs `fn` as a deliberate fault (a process killed, frozen, restarted): 5xx answers inside
   * it are allowed, counted and printed. Outside every fault a 5xx throws and fails the file.
   */
  fault<T>(label: string, fn: () => Promise<T>): Promise<T>;
  /** Whether a fault window is open (a retry loop may retry a 5xx only then). */
  readonly inFault: boolean;
  /** A connection pool to the stack's database (opened on first use, closed by stop()). */
  db(): pg.Pool;
  /**
   * Freezes an app's process (SIGSTOP): requests that need it hang until `resume()` (SIGCONT).
   * A deliberate fault: call it inside `fault()`.
   */
  freeze(app: AppName): { resume(): void };
  /** Tears down the processes, the database and the streams; throws if a 5xx was answered outside a fault. */
  stop(): Promise<void>;
}

/**
 * Starts every process on a fresh database and prefix, with the given platform credentials.
 * `migrate: false` lets each service apply its own migrations at start instead of one
 * `main.ts migrate` process per app first (much quicker on a busy machine).
 */
export async function startE2eStack(
  label: string,
  credentials: { sandbox?: Credential; production?: Credential },
  opts: Pick<StackOptions, 'env' | 'appEnv' | 'migrate' | 'logLevel' | 'silent' | 'stdout' | 'stderr'> = {},
): Promise<E2eStack> {
  // The reference check loads the reference document: fail here, before any process exists to leak.
  const capture = new ReferenceCapture(label);
  const db = await createTestDatabase(label);
  const nats = await natsUrl();
  const prefix = testPrefix(label);
  const asString = (c?: Credential) => (c ? `${c.tokenId}:${c.secret}` : undefined);
  let stack: Stack;
  try {
    stack = await startStack({
      databaseUrl: db.url,
      natsUrl: nats,
      prefix,
      freePorts: true,
      gatewayPort: 0,
      // E2E_LOGS=1 prints the processes' logs (debugging a failing file).
      silent: !process.env.E2E_LOGS,
      localCredentialFile: false,
      credentials: {
        ...(credentials.sandbox ? { sandbox: asString(credentials.sandbox) } : {}),
        ...(credentials.production ? { production: asString(credentials.production) } : {}),
      },
      logLevel: 'warn',
      // E2E_REPLICAS=2 runs every file against two processes of every app (callers balance over them).
      ...(process.env.E2E_REPLICAS ? { replicas: Number(process.env.E2E_REPLICAS) } : {}),
      ...opts,
      // Limits no ordinary e2e file reaches (the limiter has its own tests: apps/gateway/test/rate-limit.spec.ts).
      appEnv: { ...opts.appEnv, gateway: { ...TEST_STACK_RATE_LIMITS, ...opts.appEnv?.gateway } },
    });
  } catch (err) {
    await db.drop().catch(() => undefined);
    throw err;
  }
  const watch = new FaultWatch();
  watches.set(stack, watch);
  captures.set(stack, capture);
  let pool: pg.Pool | undefined;
  /** Frozen processes, thawed by stop() if a test failed before resuming them. */
  const frozen = new Set<() => void>();
  const database = () => {
    pool ??= new pg.Pool({ connectionString: stack.databaseUrl, max: 2, idleTimeoutMillis: 0 });
    return pool;
  };
  return {
    stack,
    fault: (label, fn) => watch.during(label, fn),
    get inFault() {
      return watch.inFault;
    },
    db: database,
    freeze(app) {
      if (!watch.inFault) throw new Error(`freezing ${app} is a deliberate fault: do it inside e2e.fault()`);
      const pid = stack.pid(app);
      if (pid === undefined) throw new Error(`${app} is not running`);
      process.kill(pid, 'SIGSTOP');
      const resume = () => {
        if (!frozen.delete(resume)) return;
        process.kill(pid, 'SIGCONT');
      };
      frozen.add(resume);
      return { resume };
    },
    async stop() {
      for (const resume of [...frozen]) resume();
      // Every webhook the stack produced (delivered or not), from the dispatcher's own record; the
      // log's internal entries (WEBHOOK_ENDPOINT.DISABLED, recorded and never sent) are no webhooks.
      const webhooks = await database()
        .query<{ payload: string }>(
          `SELECT payload FROM webhooks.webhook_deliveries WHERE type = ANY($1) ORDER BY seq`,
          [[...WEBHOOK_EVENT_TYPES, TEST_WEBHOOK]],
        )
        .catch(() => ({ rows: [] }));
      for (const r of webhooks.rows) capture.webhook(JSON.parse(r.payload));
      await pool?.end();
      await stack.stop();
      await db.drop();
      await dropStreams(nats, prefix);
      const mismatches = capture.check();
      if (watch.unexpected.length)
        throw new Error(
          `${watch.unexpected.length} 5xx answer(s) outside a deliberate fault:\n${watch.unexpected.join('\n')}`,
        );
      if (mismatches) throw mismatches;
    },
  };
}

/**
 * Holds a request in flight, deterministically: inside a fault window, freezes `app` (the service
 * the request waits on), sends `send()`, waits until the gateway has claimed its Idempotency-Key
 * (`gateway.idempotency_keys` row IN_PROGRESS), runs `whileInFlight()`, then thaws the app and
 * returns the request's answer. Should the freeze outlast the gateway's deadline, the 5xx is
 * retried with the same key (counted and printed by the fault window) until the answer is final.
 */
export async function withRequestInFlight(
  e2e: E2eStack,
  opts: {
    label: string;
    app: AppName;
    key: string;
    send: () => Promise<ApiResponse>;
    whileInFlight: () => Promise<void>;
  },
): Promise<ApiResponse> {
  return e2e.fault(opts.label, async () => {
    const frozen = e2e.freeze(opts.app);
    let pending: Promise<ApiResponse> | undefined;
    try {
      pending = opts.send();
      pending.catch(() => undefined);
      const started = Date.now();
      for (;;) {
        const { rows } = await e2e
          .db()
          .query<{ state: string }>(`SELECT state FROM gateway.idempotency_keys WHERE idempotency_key = $1`, [
            opts.key,
          ]);
        if (rows[0]?.state === 'IN_PROGRESS') break;
        if (Date.now() - started > 60_000)
          throw new Error(`${opts.label}: the gateway never claimed Idempotency-Key ${opts.key}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      await opts.whileInFlight();
    } finally {
      frozen.resume();
    }
    let answer = await pending;
    for (let retry = 0; answer.status >= 500; retry++) {
      if (retry === 40)
        throw new Error(`${opts.label}: still ${answer.status} after ${retry} retries: ${answer.text}`);
      await new Promise((r) => setTimeout(r, 250));
      answer = await opts.send();
    }
    return answer;
  });
}

/** A webhook as a loopback receiver got it. */
export interface ReceivedWebhook {
  type: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- webhook bodies are asserted field by field
  data: any;
  body: string;
  headers: Record<string, string>;
}

/** The answer a loopback receiver gives one webhook: an HTTP status, a body, and an optional delay. */
export interface WebhookAnswer {
  status: number;
  body?: string;
  delayMs?: number;
}

/**
 * A platform's webhook endpoint on 127.0.0.1: records every webhook (raw body and headers, for
 * signature checks) and answers with `answer(webhook)` (200 "ok" by default).
 */
export async function startWebhookReceiver(
  answer: (w: ReceivedWebhook) => WebhookAnswer = () => ({ status: 200 }),
): Promise<{ url: string; received: ReceivedWebhook[]; close(): Promise<void> }> {
  const received: ReceivedWebhook[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const parsed = JSON.parse(body) as { type: string; data: unknown };
      const w: ReceivedWebhook = {
        type: parsed.type,
        data: parsed.data,
        body,
        headers: req.headers as Record<string, string>,
      };
      received.push(w);
      const a = answer(w);
      const send = () => {
        if (!res.destroyed) res.writeHead(a.status, { 'content-type': 'application/json' }).end(a.body ?? '');
      };
      if (a.delayMs) setTimeout(send, a.delayMs).unref();
      else send();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
