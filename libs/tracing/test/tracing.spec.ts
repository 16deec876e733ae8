import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { ConfigError } from '@sluice/config';
import { eventually } from '@sluice/testing';
import {
  contextOfTraceparent,
  currentTraceparent,
  extractTraceContext,
  inSpan,
  injectTraceContext,
  startSpan,
  startTracing,
  tracingEnabled,
  tracingSettings,
  withTraceparent,
  type Tracing,
} from '../src/index.js';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

describe('tracing settings (OTEL_*)', () => {
  it('is off unless an exporter or an OTLP endpoint is asked for; OTEL_SDK_DISABLED wins', () => {
    expect(tracingSettings({})).toEqual({ exporter: 'none' });
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toEqual({
      exporter: 'otlp',
    });
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' })).toEqual({
      exporter: 'otlp',
    });
    expect(tracingSettings({ OTEL_TRACES_EXPORTER: 'console' })).toEqual({ exporter: 'console' });
    expect(
      tracingSettings({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }),
    ).toEqual({ exporter: 'none' });
    expect(tracingSettings({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' })).toEqual({
      exporter: 'none',
    });
    expect(
      tracingSettings({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_TRACES_EXPORTER: 'otlp' }),
    ).toEqual({ exporter: 'otlp' });
  });

  it('refuses what it cannot honour, naming the variable', () => {
    const problem = (env: NodeJS.ProcessEnv) => {
      try {
        tracingSettings(env);
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as ConfigError).problems.map((p) => p.variable);
      }
      return [];
    };
    expect(problem({ OTEL_TRACES_EXPORTER: 'zipkin' })).toEqual(['OTEL_TRACES_EXPORTER']);
    expect(problem({ OTEL_TRACES_EXPORTER: 'otlp,console' })).toEqual(['OTEL_TRACES_EXPORTER']);
    expect(problem({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' })).toEqual([
      'OTEL_EXPORTER_OTLP_PROTOCOL',
    ]);
    expect(problem({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' })).toEqual([
      'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
    ]);
    expect(problem({ OTEL_SDK_DISABLED: 'yes' })).toEqual(['OTEL_SDK_DISABLED']);
  });

  it('off: no span, no trace context written or read, and the SDK is not started', async () => {
    const off = await startTracing('test');
    expect(off.enabled).toBe(false);
    expect(tracingEnabled()).toBe(false);
    expect(startSpan('x')).toBeUndefined();
    expect(currentTraceparent()).toBeUndefined();
    const written: string[] = [];
    injectTraceContext((k) => written.push(k));
    expect(written).toEqual([]);
    expect(
      extractTraceContext(() => '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'),
    ).toBeUndefined();
    expect(await inSpan('x', {}, async (span) => span)).toBeUndefined();
  });
});

describe('tracing on, exporting OTLP/HTTP JSON', () => {
  let server: Server;
  let tracing: Tracing;
  const bodies: {
    resourceSpans: {
      resource: unknown;
      scopeSpans: { spans: { name: string; traceId: string; spanId: string; parentSpanId?: string }[] }[];
    }[];
  }[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        if (req.url === '/v1/traces') bodies.push(JSON.parse(body));
        res.writeHead(200).end('{}');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const addr = server.address();
    // The SDK reads process.env itself.
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
    tracing = await startTracing('tracing-spec');
  });

  afterAll(async () => {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    await tracing?.shutdown();
    await new Promise((r) => server?.close(r));
  });

  it('a stored traceparent continues the trace: a span started under it is its child, exported to the endpoint', async () => {
    expect(tracing.enabled).toBe(true);
    const stored = await inSpan('request', {}, async () => currentTraceparent());
    const [, traceId, parentId] = TRACEPARENT.exec(stored ?? '') ?? [];
    expect(traceId).toBeDefined();
    // Later, in another async flow (a relay, a worker): the same trace goes on.
    const child = await withTraceparent(stored, () => inSpan('later', {}, async () => currentTraceparent()));
    expect(TRACEPARENT.exec(child ?? '')?.[1]).toBe(traceId);
    // Through headers too (what gRPC metadata and NATS headers carry).
    const headers: Record<string, string> = {};
    injectTraceContext((k, v) => (headers[k] = v), contextOfTraceparent(stored));
    expect(headers.traceparent).toBe(stored);
    // Without a parent, `requireParent` makes no span (SQL of background loops).
    expect(startSpan('orphan', { requireParent: true })).toBeUndefined();
    await tracing.shutdown(); // flushes
    const spans = await eventually(async () => {
      const all = bodies.flatMap((b) => b.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)));
      return all.length >= 2 ? all : undefined;
    });
    const later = spans.find((s) => s.name === 'later')!;
    expect(later).toMatchObject({ traceId, parentSpanId: parentId });
    expect(JSON.stringify(bodies[0]!.resourceSpans[0]!.resource)).toContain('tracing-spec');
    expect(tracingEnabled()).toBe(false);
  });
});
