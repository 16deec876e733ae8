import { AsyncResource } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { withContext, type RequestContext } from '@sluice/logging';
import { endSpan, failSpan, SpanKind, startSpan, withSpan, type Span } from '@sluice/tracing';
import { UNMATCHED_ROUTE } from './metrics.hook.js';

/** Accepted client request ids: at most 128 of `[A-Za-z0-9._:-]`. Anything else is replaced. */
const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;

export const REQUEST_ID_HEADER = 'x-request-id';

/** The client's X-Request-Id when acceptable, else a new UUID. */
export function requestIdFrom(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  return value !== undefined && REQUEST_ID_RE.test(value) ? value : randomUUID();
}

const kResource = Symbol('sluice.requestContext');
const kSpan = Symbol('sluice.requestSpan');
type WithResource = FastifyRequest & { [kResource]?: AsyncResource; [kSpan]?: Span };

/**
 * Runs the rest of the request (`done`) inside the logging context `ctx`
 * (merged onto the current one), so every log line and every gRPC call made
 * while serving it carries the request id and platform id; when tracing is on,
 * also inside the request's server span, the root of its trace (a client's
 * `traceparent` is not trusted: the public API starts its own traces).
 */
export function enterRequestContext(request: FastifyRequest, ctx: RequestContext, done: () => void): void {
  // Entered again once authenticated (with the platform id): the span started on the first entry stays.
  const span = (request as WithResource)[kSpan] ?? requestSpan(request);
  (request as WithResource)[kSpan] = span;
  withSpan(span, () =>
    withContext(ctx, () => {
      const resource = new AsyncResource('sluice.request');
      (request as WithResource)[kResource] = resource;
      resource.runInAsyncScope(done);
    }),
  );
}

function requestSpan(request: FastifyRequest): Span | undefined {
  if (request.routeOptions.config?.untraced) return undefined;
  const route = request.routeOptions.url ?? UNMATCHED_ROUTE;
  return startSpan(`${request.method} ${route}`, {
    kind: SpanKind.SERVER,
    attributes: {
      'http.request.method': request.method,
      'http.route': route,
      'url.path': request.url.split('?')[0]!,
      'sluice.request_id': request.id,
    },
  });
}

/** Ends the request's server span (if any) with its status code; a 5xx marks it failed. */
export function endRequestSpan(
  request: FastifyRequest,
  statusCode: number,
  platformId: string | undefined,
): void {
  const span = (request as WithResource)[kSpan];
  if (!span) return;
  if (statusCode >= 500) failSpan(span, String(statusCode));
  endSpan(span, undefined, {
    'http.response.status_code': statusCode,
    ...(platformId ? { 'sluice.platform_id': platformId } : {}),
  });
}

/**
 * Body parsing runs on the socket's stream events, outside the context entered
 * at onRequest; a preValidation hook calls this to re-enter it for the rest.
 */
export function resumeRequestContext(request: FastifyRequest, done: () => void): void {
  const resource = (request as WithResource)[kResource];
  if (resource) resource.runInAsyncScope(done);
  else done();
}
