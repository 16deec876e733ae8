import { AsyncResource } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { withContext, type RequestContext } from '@sluice/logging';

/** Accepted client request ids: at most 128 of `[A-Za-z0-9._:-]`. Anything else is replaced. */
const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;

export const REQUEST_ID_HEADER = 'x-request-id';

/** The client's X-Request-Id when acceptable, else a new UUID. */
export function requestIdFrom(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  return value !== undefined && REQUEST_ID_RE.test(value) ? value : randomUUID();
}

const kResource = Symbol('sluice.requestContext');
type WithResource = FastifyRequest & { [kResource]?: AsyncResource };

/**
 * Runs the rest of the request (`done`) inside the logging context `ctx`
 * (merged onto the current one), so every log line and every gRPC call made
 * while serving it carries the request id and platform id.
 */
export function enterRequestContext(request: FastifyRequest, ctx: RequestContext, done: () => void): void {
  withContext(ctx, () => {
    const resource = new AsyncResource('sluice.request');
    (request as WithResource)[kResource] = resource;
    resource.runInAsyncScope(done);
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
