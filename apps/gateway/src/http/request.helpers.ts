import type { FastifyRequest } from 'fastify';
import { common } from '@sluice/contracts';
import { newId } from '@sluice/core';

/** What route handlers read from a request besides its validated body, params and query. */

const ENVIRONMENTS = { SANDBOX: common.Environment.SANDBOX, PRODUCTION: common.Environment.PRODUCTION } as const;

/** The environment of the caller's platform, as gRPC requests carry it. */
export function environmentOf(request: FastifyRequest): common.Environment {
  return ENVIRONMENTS[request.platform.environment];
}

/** A request header's first value; absent or empty: undefined. */
export function headerOf(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name.toLowerCase()];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s === '' ? undefined : s;
}

/**
 * The key a money-moving service uses to do an operation once: the
 * Idempotency-Key (the gateway also replays it), else a fresh one.
 */
export function requestKeyOf(request: FastifyRequest): string {
  return headerOf(request, 'Idempotency-Key') ?? newId('Request');
}

/** A route's `preValidation` when its body may be omitted: an absent (or null) body is validated as `{}`. */
export async function optionalBody(request: FastifyRequest): Promise<void> {
  if (request.body === undefined || request.body === null) request.body = {};
}
