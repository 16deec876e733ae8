import {
  context,
  propagation,
  trace,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  type Attributes,
  type Context,
  type Span,
  type TextMapGetter,
  type TextMapSetter,
} from '@opentelemetry/api';
import { ConfigError } from '@sluice/config';

export { SpanKind, type Span, type Context, type Attributes };

/**
 * Traces (OpenTelemetry), in one place for every app.
 *
 * The SDK is configured by the standard `OTEL_*` variables and is OFF unless they ask for an exporter
 * (see `tracingSettings`). The code that makes spans lives at our own choke points (the gateway's
 * request hook, the gRPC client and server of `@sluice/rpc`, the outbox and consumers of
 * `@sluice/events`, the SQL of `@sluice/store`, the webhook dispatcher's HTTP sender) and calls the
 * helpers below, which do nothing when tracing is off: no span object, no context switch.
 */

let enabled = false;

/** True once `startTracing` registered an exporting SDK in this process. */
export function tracingEnabled(): boolean {
  return enabled;
}

/** The `OTEL_*` variables Sluice acts on, documented in docs/configuration.md (rendered from this list). */
export const OTEL_VARIABLES: { name: string; default: string; description: string }[] = [
  {
    name: 'OTEL_TRACES_EXPORTER',
    default: '`otlp` when an OTLP endpoint is set, else `none`',
    description:
      '`otlp` (OTLP over HTTP, JSON encoding), `console` (spans printed on stdout, for debugging) or `none`. Unlike the SDK default, tracing stays off unless an exporter is asked for or an endpoint is set.',
  },
  {
    name: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    default: '—',
    description:
      'base URL of the OTLP/HTTP receiver (an OpenTelemetry Collector, port 4318); spans go to `<endpoint>/v1/traces`. Setting it turns tracing on.',
  },
  {
    name: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    default: '—',
    description:
      'full URL for spans, instead of the one derived from `OTEL_EXPORTER_OTLP_ENDPOINT`. Setting it turns tracing on.',
  },
  {
    name: 'OTEL_EXPORTER_OTLP_PROTOCOL',
    default: '`http/json`',
    description:
      'only `http/json` is supported (every Collector accepts it on its OTLP/HTTP port); any other value stops the app at start (exit 78). `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` likewise.',
  },
  {
    name: 'OTEL_EXPORTER_OTLP_HEADERS',
    default: '—',
    description:
      '`key=value,...` headers sent with every export (e.g. an auth token of the receiver); read by the SDK.',
  },
  {
    name: 'OTEL_SERVICE_NAME',
    default: 'the app name',
    description:
      '`service.name` of the spans; `OTEL_RESOURCE_ATTRIBUTES` (`k=v,...`) adds resource attributes (e.g. `deployment.environment.name`).',
  },
  {
    name: 'OTEL_TRACES_SAMPLER',
    default: '`parentbased_always_on`',
    description:
      '`always_on`, `always_off`, `traceidratio`, `parentbased_always_on`, `parentbased_always_off` or `parentbased_traceidratio`, with `OTEL_TRACES_SAMPLER_ARG` the ratio; read by the SDK. The gateway starts every trace, so its sampler decides for the whole request.',
  },
  {
    name: 'OTEL_BSP_SCHEDULE_DELAY',
    default: '`5000`',
    description:
      'ms between two exports of the batch span processor; `OTEL_BSP_MAX_QUEUE_SIZE` (2048), `OTEL_BSP_MAX_EXPORT_BATCH_SIZE` (512) and `OTEL_BSP_EXPORT_TIMEOUT` (30000) likewise; read by the SDK.',
  },
  {
    name: 'OTEL_SDK_DISABLED',
    default: '`false`',
    description: '`true` turns tracing off whatever else is set.',
  },
];

export interface TracingSettings {
  exporter: 'otlp' | 'console' | 'none';
}

/**
 * Which exporter the `OTEL_*` variables ask for. Tracing is off (`none`) unless `OTEL_TRACES_EXPORTER`
 * names one or an OTLP endpoint is set; `OTEL_SDK_DISABLED=true` wins over both. Values it cannot honour
 * are a ConfigError naming the variable.
 */
export function tracingSettings(env: NodeJS.ProcessEnv = process.env): TracingSettings {
  const problems: { variable: string; message: string }[] = [];
  const value = (name: string) => (env[name]?.trim() ? env[name]!.trim() : undefined);
  const requested = value('OTEL_TRACES_EXPORTER')
    ?.split(',')
    .map((s) => s.trim().toLowerCase());
  let exporter: TracingSettings['exporter'] =
    value('OTEL_EXPORTER_OTLP_ENDPOINT') || value('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') ? 'otlp' : 'none';
  if (requested) {
    const known = requested.filter((e) => e === 'otlp' || e === 'console' || e === 'none');
    if (known.length !== requested.length || requested.length !== 1)
      problems.push({
        variable: 'OTEL_TRACES_EXPORTER',
        message: `expected one of otlp, console, none (got "${env.OTEL_TRACES_EXPORTER}")`,
      });
    else exporter = known[0] as TracingSettings['exporter'];
  }
  for (const name of ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL']) {
    const protocol = value(name);
    if (protocol && protocol !== 'http/json')
      problems.push({ variable: name, message: `only http/json is supported (got "${protocol}")` });
  }
  const disabled = value('OTEL_SDK_DISABLED')?.toLowerCase();
  if (disabled && disabled !== 'true' && disabled !== 'false')
    problems.push({ variable: 'OTEL_SDK_DISABLED', message: `expected true or false (got "${disabled}")` });
  if (problems.length) throw new ConfigError(problems);
  return { exporter: disabled === 'true' ? 'none' : exporter };
}

/** What `startTracing` started: flushes and stops the SDK (register it last on the lifecycle, so it closes last). */
export interface Tracing {
  enabled: boolean;
  shutdown(): Promise<void>;
}

/**
 * Starts tracing for an app when the `OTEL_*` variables ask for it: the Node SDK's tracer provider
 * (AsyncLocalStorage context, W3C trace context propagation, the sampler of `OTEL_TRACES_SAMPLER`),
 * a batch span processor (`OTEL_BSP_*`) and the exporter, all configured from `process.env`. When off,
 * the SDK is not even loaded.
 */
export async function startTracing(service: string): Promise<Tracing> {
  // The SDK's parts read process.env themselves (endpoint, headers, sampler, batch schedule).
  const settings = tracingSettings(process.env);
  if (settings.exporter === 'none') return { enabled: false, shutdown: async () => undefined };
  const [{ NodeTracerProvider, BatchSpanProcessor, ConsoleSpanExporter }, resources, { OTLPTraceExporter }] =
    await Promise.all([
      import('@opentelemetry/sdk-trace-node'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/exporter-trace-otlp-http'),
    ]);
  const { ATTR_SERVICE_NAME } = await import('@opentelemetry/semantic-conventions');
  // The app's name, unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES say otherwise (the env detector, last, wins).
  const resource = resources
    .defaultResource()
    .merge(resources.resourceFromAttributes({ [ATTR_SERVICE_NAME]: service }))
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const exporter = settings.exporter === 'otlp' ? new OTLPTraceExporter() : new ConsoleSpanExporter();
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
  provider.register();
  enabled = true;
  return {
    enabled: true,
    async shutdown() {
      enabled = false;
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}

const tracer = () => trace.getTracer('sluice');

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** The parent (default: the active context). */
  parent?: Context;
  /** Make no span when the parent has none (SQL of background loops would otherwise start traces of their own). */
  requireParent?: boolean;
}

/** Starts a span (undefined when tracing is off or, with `requireParent`, when there is no parent span). */
export function startSpan(name: string, opts: SpanOptions = {}): Span | undefined {
  if (!enabled) return undefined;
  const parent = opts.parent ?? context.active();
  if (opts.requireParent && !trace.getSpan(parent)) return undefined;
  return tracer().startSpan(
    name,
    { kind: opts.kind ?? SpanKind.INTERNAL, attributes: opts.attributes },
    parent,
  );
}

/** Runs `fn` with `span` as the active span (just `fn()` without one). */
export function withSpan<T>(span: Span | undefined, fn: () => T): T {
  return span ? context.with(trace.setSpan(context.active(), span), fn) : fn();
}

/**
 * Ends a span; with `error`, marks it failed with the error's code or name as `error.type` (never its
 * message, which may carry customer data).
 */
export function endSpan(span: Span | undefined, error?: unknown, attributes?: Attributes): void {
  if (!span) return;
  if (attributes) span.setAttributes(attributes);
  if (error !== undefined) {
    const e = error as { code?: unknown; name?: unknown };
    span.setAttribute('error.type', String(e?.code ?? e?.name ?? 'error'));
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}

/** Marks a span failed without ending it (a status code that means failure, e.g. HTTP 5xx). */
export function failSpan(span: Span | undefined, errorType: string): void {
  span?.setAttribute('error.type', errorType);
  span?.setStatus({ code: SpanStatusCode.ERROR });
}

/** Runs async `fn` in a new span, ended when it settles (failed when it throws). */
export async function inSpan<T>(
  name: string,
  opts: SpanOptions,
  fn: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  const span = startSpan(name, opts);
  if (!span) return fn(undefined);
  try {
    const result = await withSpan(span, () => fn(span));
    endSpan(span);
    return result;
  } catch (err) {
    endSpan(span, err);
    throw err;
  }
}

const recordSetter: TextMapSetter<Record<string, string>> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};

/** The W3C `traceparent` of the active span (or of `ctx`), to store with work done later; undefined when off or none. */
export function currentTraceparent(ctx?: Context): string | undefined {
  if (!enabled) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(ctx ?? context.active(), carrier, recordSetter);
  return carrier.traceparent;
}

/** The context a stored `traceparent` continues (undefined when off or none stored). */
export function contextOfTraceparent(traceparent: string | null | undefined): Context | undefined {
  if (!enabled || !traceparent) return undefined;
  return extractTraceContext((key) => (key === 'traceparent' ? traceparent : undefined));
}

/** Runs `fn` in the trace a stored `traceparent` continues (just `fn()` when off or none stored). */
export function withTraceparent<T>(traceparent: string | null | undefined, fn: () => T): T {
  const ctx = contextOfTraceparent(traceparent);
  return ctx ? context.with(ctx, fn) : fn();
}

/** Writes the active trace context (W3C `traceparent`, `tracestate`) into outgoing headers or metadata. */
export function injectTraceContext(set: (key: string, value: string) => void, ctx?: Context): void {
  if (!enabled) return;
  propagation.inject(ctx ?? context.active(), undefined, { set: (_c, k, v) => set(k, v) });
}

/** The context incoming headers or metadata carry (undefined when off or none). */
export function extractTraceContext(get: (key: string) => string | undefined): Context | undefined {
  if (!enabled) return undefined;
  const getter: TextMapGetter<undefined> = {
    get: (_c, k) => get(k),
    keys: () => ['traceparent', 'tracestate'],
  };
  const ctx = propagation.extract(ROOT_CONTEXT, undefined, getter);
  return trace.getSpan(ctx) ? ctx : undefined;
}
