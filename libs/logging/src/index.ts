import { AsyncLocalStorage } from 'node:async_hooks';
import { pino, type Logger, type LevelWithSilent } from 'pino';
import { context, isSpanContextValid, trace } from '@opentelemetry/api';

export type { Logger };

/** Per-request context carried across async calls, gRPC hops and events. */
export interface RequestContext {
  requestId?: string;
  platformId?: string;
  /** Extra ids worth logging (customer id, event id...). */
  [key: string]: string | undefined;
}

const storage = new AsyncLocalStorage<RequestContext>();

/** Runs `fn` with the given context (merged onto the current one). */
export function withContext<T>(ctx: RequestContext, fn: () => T): T {
  return storage.run({ ...storage.getStore(), ...ctx }, fn);
}

export function currentContext(): RequestContext {
  return storage.getStore() ?? {};
}

/**
 * JSON logger for a service. Every line carries `service` and, when known,
 * the request id and platform id of the request being served, and the
 * `trace_id`/`span_id` of the active span when tracing is on (@sluice/tracing),
 * which ties a request id to its trace.
 */
export function createLogger(service: string, level: LevelWithSilent | string = 'info'): Logger {
  return pino({
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: {
      paths: ['secret', '*.secret', 'clientSecret', '*.clientSecret', 'authorization', '*.authorization', 'password', '*.password'],
      censor: '[redacted]',
    },
    mixin() {
      const ctx = storage.getStore();
      const out: Record<string, string> = {};
      if (ctx) for (const [k, v] of Object.entries(ctx)) if (v !== undefined) out[k] = v;
      // Without a registered SDK, the active context is always the empty root: no span, nothing added.
      const span = trace.getSpan(context.active())?.spanContext();
      if (span && isSpanContextValid(span)) {
        out.trace_id = span.traceId;
        out.span_id = span.spanId;
      }
      return out;
    },
  });
}
