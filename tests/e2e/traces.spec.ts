/**
 * End to end: traces (OpenTelemetry) of the real processes. Every app exports its spans over OTLP/HTTP
 * (JSON) to a receiver this test runs on loopback. One payment (quote, then execute to another
 * customer's internal account, booked at once) with a platform webhook endpoint: the spans of the
 * execute request form one tree — one trace id, one root (the gateway's server span), every parent
 * present — across gateway → gRPC → payments → accounts → outbox → NATS → the webhook dispatcher's
 * consumer and its HTTP delivery of the payment's webhooks; its SQL spans carry the statement text
 * and none of the values; the log context ties its request id to the trace.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { Writable } from 'node:stream';
import { eventually } from '@sluice/testing';
import {
  apiClient,
  newCredential,
  startE2eStack,
  startWebhookReceiver,
  type Api,
  type E2eStack,
  type ReceivedWebhook,
} from './support.js';

/** A span as the OTLP/JSON body carries it, with its resource's service name and flattened attributes. */
interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
}

// OTLP span kinds (the enum of the proto: 0 is UNSPECIFIED).
const SERVER = 2;
const CLIENT = 3;
const PRODUCER = 4;
const CONSUMER = 5;

type OtlpValue = {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
};
type OtlpAttribute = { key: string; value: OtlpValue };

function flatten(attrs: OtlpAttribute[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const a of attrs ?? []) {
    const v = a.value;
    out[a.key] =
      v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue ?? ''));
  }
  return out;
}

/** An OTLP/HTTP receiver of traces (JSON encoding) on 127.0.0.1: keeps every span it is sent. */
async function startOtlpReceiver(): Promise<{ url: string; spans: ReceivedSpan[]; close(): Promise<void> }> {
  const spans: ReceivedSpan[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (
        req.method !== 'POST' ||
        req.url !== '/v1/traces' ||
        !String(req.headers['content-type']).includes('json')
      ) {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: {
          resource: { attributes: OtlpAttribute[] };
          scopeSpans: {
            spans: (Omit<ReceivedSpan, 'service' | 'attributes'> & { attributes?: OtlpAttribute[] })[];
          }[];
        }[];
      };
      for (const rs of body.resourceSpans) {
        const service = String(flatten(rs.resource.attributes)['service.name']);
        for (const ss of rs.scopeSpans)
          for (const s of ss.spans)
            spans.push({
              service,
              traceId: s.traceId,
              spanId: s.spanId,
              ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
              name: s.name,
              kind: s.kind,
              attributes: flatten(s.attributes),
            });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  return {
    url: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`,
    spans,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

describe('traces of the real processes', () => {
  let e2e: E2eStack;
  let api: Api;
  let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let hooks: Awaited<ReturnType<typeof startWebhookReceiver>>;
  const sandbox = newCredential();
  /** The apps' JSON log lines. */
  const logs: Record<string, string>[] = [];

  /**
   * The trace of one HTTP request: its root is the gateway's server span of that request id; waits until
   * every span's parent arrived, then checks it is one tree (one root, every parent present, no span twice).
   */
  async function treeOf(requestId: string, name: string): Promise<ReceivedSpan[]> {
    const root = await eventually(
      async () =>
        otlp.spans.find(
          (s) =>
            s.service === 'gateway' && s.kind === SERVER && s.attributes['sluice.request_id'] === requestId,
        ),
      30_000,
    );
    expect(root.name).toBe(name);
    expect(root.parentSpanId).toBeUndefined();
    const spans = await eventually(async () => {
      const mine = otlp.spans.filter((s) => s.traceId === root.traceId);
      const ids = new Set(mine.map((s) => s.spanId));
      return mine.every((s) => !s.parentSpanId || ids.has(s.parentSpanId)) ? mine : undefined;
    }, 30_000);
    expect(spans.filter((s) => !s.parentSpanId).map((s) => s.spanId)).toEqual([root.spanId]);
    expect(new Set(spans.map((s) => s.spanId)).size).toBe(spans.length);
    return spans;
  }

  beforeAll(async () => {
    otlp = await startOtlpReceiver();
    hooks = await startWebhookReceiver();
    e2e = await startE2eStack(
      'e2etrace',
      { sandbox },
      {
        migrate: false,
        // The apps' logs are read (info: the gateway's line per request).
        silent: false,
        logLevel: 'info',
        stdout: new Writable({
          write(chunk: Buffer, _enc, done) {
            for (const line of chunk.toString('utf8').split('\n')) {
              const at = line.indexOf('{');
              if (at < 0) continue;
              try {
                logs.push(JSON.parse(line.slice(at)) as Record<string, string>);
              } catch {
                // a line that is not JSON (the stack's own)
              }
            }
            done();
          },
        }),
        env: {
          OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
          OTEL_BSP_SCHEDULE_DELAY: '200',
          SANDBOX_TIME_SCALE: '0.01',
        },
      },
    );
    api = apiClient(e2e.stack, sandbox);
  }, 240_000);

  afterAll(async () => {
    await e2e?.stop();
    await hooks?.close();
    await otlp?.close();
  });

  it('one payment is one trace: a single tree from the gateway through payments, accounts, the outbox, NATS and the webhook delivery, SQL without values', async () => {
    // A health probe makes no trace (the gateway's span for it would be noise every few seconds per pod).
    expect((await fetch(`${e2e.stack.gatewayUrl}/healthz`)).status).toBe(200);
    const cfg = await api('PATCH', '/config', {
      body: {
        webhookEndpoint: hooks.url,
        supportedCurrencies: [{ currencyCode: 'USD' }, { currencyCode: 'EUR' }],
      },
    });
    expect(cfg.status, cfg.text).toBe(200);
    const customer = async (platformCustomerId: string, currency: string) => {
      const c = await api('POST', '/customers', {
        body: {
          customerType: 'INDIVIDUAL',
          platformCustomerId,
          fullName: 'Ada Lovelace',
          region: 'US',
          currencies: [currency],
        },
      });
      expect(c.status, c.text).toBe(201);
      const list = await api(
        'GET',
        `/customers/internal-accounts?customerId=${encodeURIComponent(c.json.id)}&currency=${currency}`,
      );
      return list.json.data[0].id as string;
    };
    const usdAccount = await customer('trace-payer', 'USD');
    const eurAccount = await customer('trace-payee', 'EUR');
    const fund = await api('POST', `/sandbox/internal-accounts/${encodeURIComponent(usdAccount)}/fund`, {
      body: { amount: 100_000 },
    });
    expect(fund.status, fund.text).toBe(200);
    const quote = await api('POST', '/quotes', {
      body: {
        source: { sourceType: 'ACCOUNT', accountId: usdAccount },
        destination: { destinationType: 'ACCOUNT', accountId: eurAccount },
        lockedCurrencySide: 'RECEIVING',
        lockedCurrencyAmount: 5_000,
      },
    });
    expect(quote.status, quote.text).toBe(201);
    const executed = await api('POST', `/quotes/${encodeURIComponent(quote.json.id)}/execute`, {
      headers: { 'idempotency-key': 'trace-execute' },
    });
    expect(executed.status, executed.text).toBe(200);
    expect(executed.json.status).toBe('COMPLETED');
    const transactionId = executed.json.transactionId as string;
    const requestId = executed.headers.get('x-request-id')!;
    expect(requestId).toBeTruthy();

    // The payment's webhooks, as the platform received them: its transaction's, and the payee's balance.
    const paymentHooks = await eventually(async () => {
      const mine = hooks.received.filter(
        (w) => w.type.startsWith('OUTGOING_PAYMENT.') && w.data.id === transactionId,
      );
      return mine.some((w) => w.type === 'OUTGOING_PAYMENT.COMPLETED') ? mine : undefined;
    }, 30_000);
    const balanceHook = await eventually(
      async () =>
        hooks.received.find(
          (w) =>
            w.type === 'INTERNAL_ACCOUNT.BALANCE_UPDATED' &&
            w.data.id === eurAccount &&
            w.data.balance.amount === 5_000,
        ),
      30_000,
    );
    const webhookId = (w: ReceivedWebhook) => w.headers['webhook-id']!;
    const deliveryOf = (id: string) =>
      otlp.spans.find(
        (s) =>
          s.service === 'webhook-dispatcher' && s.kind === CLIENT && s.attributes['sluice.webhook_id'] === id,
      );
    // Every webhook's delivery span exported (spans are exported in batches, as they end).
    const deliveries = await eventually(async () => {
      const found = [...paymentHooks, balanceHook].map((w) => deliveryOf(webhookId(w)));
      return found.every(Boolean) ? (found as ReceivedSpan[]) : undefined;
    }, 30_000);
    for (const d of deliveries) {
      expect(d.name).toBe('POST');
      expect(d.attributes).toMatchObject({ 'url.full': hooks.url, 'http.response.status_code': 200 });
    }

    // Each request (quote, execute) is one tree, whose root is the gateway's server span of its request id.
    const quoteTrace = await treeOf(quote.headers.get('x-request-id')!, 'POST /2025-10-13/quotes');
    const trace = await treeOf(requestId, 'POST /2025-10-13/quotes/:quoteId/execute');
    const root = trace.find((s) => !s.parentSpanId)!;
    // The payment's webhooks are delivered in the trace of the request that caused them: the execute
    // (the payment COMPLETED, the payee credited), or the quote (the transaction PENDING since then).
    const inTrace = (spans: ReceivedSpan[], w: ReceivedWebhook) =>
      spans.some((s) => s.spanId === deliveryOf(webhookId(w))!.spanId);
    for (const w of [...paymentHooks, balanceHook])
      expect(inTrace(trace, w) || inTrace(quoteTrace, w), `${w.type} delivered in neither trace`).toBe(true);
    expect(
      inTrace(
        trace,
        paymentHooks.find((w) => w.type === 'OUTGOING_PAYMENT.COMPLETED')!,
      ),
    ).toBe(true);
    expect(inTrace(trace, balanceHook)).toBe(true);

    // Across every service the payment touched, each link of the chain present.
    const services = new Set(trace.map((s) => s.service));
    for (const app of ['gateway', 'payments', 'accounts', 'webhook-dispatcher'])
      expect(services, app).toContain(app);
    const has = (service: string, kind: number, name: RegExp) =>
      expect(
        trace.some((s) => s.service === service && s.kind === kind && name.test(s.name)),
        `${service} ${kind} ${name}`,
      ).toBe(true);
    has('gateway', CLIENT, /^sluice\.payments\.v1\.PaymentsService\/ExecuteQuote$/);
    has('payments', SERVER, /^sluice\.payments\.v1\.PaymentsService\/ExecuteQuote$/);
    has('payments', CLIENT, /^sluice\.accounts\.v1\.AccountsService\//);
    has('accounts', SERVER, /^sluice\.accounts\.v1\.AccountsService\//);
    has('payments', PRODUCER, /^send .*\.payments\.outgoing_payment\.completed$/);
    has('accounts', PRODUCER, /^send .*\.accounts\.internal_account\.balance_updated$/);
    has('webhook-dispatcher', CONSUMER, /^process .*\.payments\.outgoing_payment\.completed$/);
    // Each gRPC server span is the child of its caller's client span, in another process.
    const byId = new Map(trace.map((s) => [s.spanId, s]));
    for (const server of trace.filter((s) => s.kind === SERVER && s !== root)) {
      const parent = byId.get(server.parentSpanId!)!;
      expect(parent.kind, server.name).toBe(CLIENT);
      expect(parent.name, server.name).toBe(server.name);
      expect(parent.service, server.name).not.toBe(server.service);
    }
    // Each consumer span continues a producer span of another process (the event's traceparent header).
    for (const consumer of trace.filter((s) => s.kind === CONSUMER)) {
      const parent = byId.get(consumer.parentSpanId!)!;
      expect(parent.kind, consumer.name).toBe(PRODUCER);
      expect(parent.service, consumer.name).not.toBe(consumer.service);
    }
    // Every span of this request id anywhere (the gateway's and each gRPC server's) is in that trace.
    const ofRequest = otlp.spans.filter((s) => s.attributes['sluice.request_id'] === requestId);
    expect(ofRequest.length).toBeGreaterThan(2);
    expect(new Set(ofRequest.map((s) => s.traceId))).toEqual(new Set([root.traceId]));

    // Spans are exported in the order they end: the probe's, had there been one, would be here by now.
    expect(otlp.spans.filter((s) => s.attributes['http.route'] === '/healthz')).toEqual([]);
    expect(
      otlp.spans.some((s) => s.service === 'gateway' && s.attributes['http.route'] === '/2025-10-13/config'),
    ).toBe(true);

    // Logs: the lines written while serving the request carry its request id and its trace id.
    const tied = logs.filter((l) => l.trace_id === root.traceId);
    expect(tied.length, 'log lines with the trace id').toBeGreaterThan(0);
    for (const l of tied) if (l.requestId) expect(l.requestId, JSON.stringify(l)).toBe(requestId);
    expect(tied.some((l) => l.requestId === requestId && l.service === 'gateway')).toBe(true);
    const webhookIds = [...paymentHooks, balanceHook].map(webhookId);

    // SQL: spans with the statement text, in every service that wrote, and never a value.
    const sql = trace.filter((s) => s.attributes['db.system.name'] === 'postgresql');
    for (const app of ['payments', 'accounts', 'webhook-dispatcher'])
      expect(
        sql.some((s) => s.service === app),
        `${app} SQL spans`,
      ).toBe(true);
    expect(sql.some((s) => /^INSERT INTO outbox /i.test(String(s.attributes['db.query.text'])))).toBe(true);
    const values = [
      transactionId,
      quote.json.id,
      usdAccount,
      eurAccount,
      requestId,
      'trace-execute',
      ...webhookIds,
    ];
    for (const s of sql) {
      const text = String(s.attributes['db.query.text']);
      expect(text.length, s.name).toBeGreaterThan(0);
      for (const v of values) expect(text, `${s.service} ${s.name}`).not.toContain(v);
      expect(text, `${s.service} ${s.name}`).not.toMatch(/'[A-Za-z]+:[0-9a-f]{8}-/);
    }
    // Statements with parameters keep their placeholders.
    expect(sql.filter((s) => String(s.attributes['db.query.text']).includes('?')).length).toBeGreaterThan(0);
  }, 120_000);
});
