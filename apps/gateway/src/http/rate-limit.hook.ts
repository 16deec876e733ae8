import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '@sluice/logging';
import type { GatewayConfig } from '../config.js';
import type { RateLimitStore, Taken, WindowCount } from '../store/rate-limit.repository.js';
import { parseBasic, UnauthorizedError } from './auth.hook.js';
import { parseBearer } from './agent-auth.js';
import { CredentialCache } from './credential.cache.js';
import { HttpError } from './error-mapping.js';

/** The rate-limit headers (draft-ietf-httpapi-ratelimit-headers, the three-field form; see the README). */
export const RATE_LIMIT_HEADERS = {
  limit: 'ratelimit-limit',
  remaining: 'ratelimit-remaining',
  reset: 'ratelimit-reset',
} as const;

export interface RateLimitOptions {
  store: RateLimitStore;
  config: Pick<
    GatewayConfig,
    | 'API_BASE_PATH'
    | 'RATE_LIMIT_PER_TOKEN'
    | 'RATE_LIMIT_PER_AGENT'
    | 'RATE_LIMIT_PER_ADDRESS'
    | 'RATE_LIMIT_AUTH_FAILURES'
    | 'RATE_LIMIT_PLATFORMS'
  >;
  logger: Logger;
  /** Verified credentials: a request whose credential is cached is not a guess, and skips the failure check. */
  credentialCache: CredentialCache<{ tokenId: string }>;
  agentCredentialCache?: CredentialCache<{ tokenId: string }>;
}

/** RATE_LIMIT_PLATFORMS (its shape checked by the config schema) → limits per platform id. */
export function platformLimits(value: string): Map<string, { perToken: number; perAgent?: number }> {
  const out = new Map<string, { perToken: number; perAgent?: number }>();
  for (const entry of value.split(',').filter(Boolean)) {
    const [platformId, limits] = entry.split('=') as [string, string];
    const [perToken, perAgent] = limits.split('/');
    out.set(platformId, { perToken: Number(perToken), ...(perAgent !== undefined ? { perAgent: Number(perAgent) } : {}) });
  }
  return out;
}

function headers(limit: number, c: WindowCount): Record<string, string> {
  return {
    [RATE_LIMIT_HEADERS.limit]: String(limit),
    [RATE_LIMIT_HEADERS.remaining]: String(Math.max(0, limit - c.count)),
    [RATE_LIMIT_HEADERS.reset]: String(c.resetSeconds),
  };
}

function rateLimited(limit: number, c: WindowCount, message: string): HttpError {
  return new HttpError(429, 'RATE_LIMITED', message, undefined, {
    ...headers(limit, c),
    'retry-after': String(c.resetSeconds),
  });
}

/** A refused API or agent credential (the 401 of the auth hooks), not a refusal by a service. */
function isCredentialFailure(err: unknown): boolean {
  return err instanceof UnauthorizedError || (err instanceof HttpError && err.status === 401 && err.code === 'UNAUTHORIZED');
}

/**
 * Rate limits of the API, counted in Postgres so every replica shares them (RateLimitStore; the
 * per-token, per-agent and per-address counts by leases a replica reserves and spends in memory):
 *
 * - per API token and per agent access token (limits of the config, or of the platform in
 *   RATE_LIMIT_PLATFORMS): counted once authenticated (preParsing, before the body is
 *   read and before an Idempotency-Key is claimed), every answer carries the RateLimit headers;
 * - per source address on the routes that take no credentials (device-code status and redeem, the
 *   OpenAPI document and docs page), counted before anything else runs;
 * - failed authentications per source address: each 401 of the auth hooks counts; once an address has
 *   RATE_LIMIT_AUTH_FAILURES in the window its requests with credentials the gateway has not verified
 *   recently (not in the credential cache) are 429 before identity or agents is asked.
 *
 * The N+1-th request of a window is 429 `RATE_LIMITED` with `Retry-After` (seconds to the window's end).
 * /healthz, /readyz and unknown routes are not limited. When the database fails, the request is let
 * through (logged): the limiter protects the API, it must not take it down.
 */
export function registerRateLimits(app: FastifyInstance, opts: RateLimitOptions): void {
  const { store, config, logger } = opts;
  const base = config.API_BASE_PATH;
  const perPlatform = platformLimits(config.RATE_LIMIT_PLATFORMS);
  const publicDocs = (url: string) => url === `${base}/openapi.json` || url === `${base}/docs` || url.startsWith(`${base}/docs/`);

  /** Counts the request under `key`; throws the 429 above `limit`, else sets the headers. */
  async function enforce(reply: FastifyReply, key: string, limit: number, message: string): Promise<void> {
    if (limit <= 0) return;
    let c: Taken;
    try {
      c = await store.take(key, limit);
    } catch (err) {
      logger.warn({ err }, 'rate limit not counted (database)');
      return;
    }
    if (!c.allowed) throw rateLimited(limit, c, message);
    reply.headers(headers(limit, c));
  }

  /** Whether the request's credential was verified recently (a cache hit), so it is not a guess. */
  function verified(request: FastifyRequest, agent: boolean): boolean {
    const header = request.headers.authorization;
    if (agent) {
      const token = parseBearer(header);
      return token !== undefined && opts.agentCredentialCache?.get(CredentialCache.key('agent', token)) !== undefined;
    }
    const creds = parseBasic(header);
    return creds !== undefined && opts.credentialCache.get(CredentialCache.key(creds.tokenId, creds.secret)) !== undefined;
  }

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const url = request.routeOptions.url;
    if (!url?.startsWith(base)) return;
    const auth = request.routeOptions.config.auth;
    if (auth === 'none' || publicDocs(url)) {
      await enforce(reply, `address:${request.ip}`, config.RATE_LIMIT_PER_ADDRESS, 'Too many requests from this address; retry later');
      return;
    }
    const maxFailures = config.RATE_LIMIT_AUTH_FAILURES;
    if (maxFailures <= 0 || verified(request, auth === 'agent')) return;
    let failures: WindowCount;
    try {
      failures = await store.peek(`auth-failures:${request.ip}`);
    } catch (err) {
      logger.warn({ err }, 'failed authentications not checked (database)');
      return;
    }
    if (failures.count >= maxFailures)
      throw rateLimited(maxFailures, failures, 'Too many failed authentications from this address; retry later');
  });

  // After the auth hooks of the API scope (every onRequest hook runs before any preParsing hook).
  app.addHook('preParsing', async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.agent) {
      const limit = perPlatform.get(request.agent.platformId)?.perAgent ?? config.RATE_LIMIT_PER_AGENT;
      await enforce(reply, `agent:${request.agent.id}`, limit, 'Too many requests with this agent token; retry later');
    } else if (request.platform) {
      const limit = perPlatform.get(request.platform.id)?.perToken ?? config.RATE_LIMIT_PER_TOKEN;
      await enforce(reply, `token:${request.platform.tokenId}`, limit, 'Too many requests with this API token; retry later');
    }
  });

  app.addHook('onError', async (request: FastifyRequest, _reply: FastifyReply, err: FastifyError) => {
    if (config.RATE_LIMIT_AUTH_FAILURES <= 0 || !isCredentialFailure(err)) return;
    await store.hit(`auth-failures:${request.ip}`).catch((e: unknown) => {
      logger.warn({ err: e }, 'failed authentication not counted (database)');
    });
  });
}
