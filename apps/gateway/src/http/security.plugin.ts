import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import cors from '@fastify/cors';
import helmet, { type HelmetOptions } from 'helmet';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { ConfigError } from '@sluice/config';
import { isLoopbackHost } from '@sluice/core';
import { IDEMPOTENCY_HEADER, REPLAYED_HEADER } from './idempotency.hook.js';

/**
 * What helmet puts on the answers of a JSON API: a Content-Security-Policy under which nothing
 * loads and nothing frames the answer (the docs page replaces it with its own, see
 * openapi.plugin.ts), X-Content-Type-Options nosniff, Referrer-Policy no-referrer,
 * X-Frame-Options DENY for browsers without frame-ancestors, and helmet's other defaults
 * (Cross-Origin-Opener/Resource-Policy same-origin, ...). Strict-Transport-Security is added per
 * request, only over TLS (SecurityHeaders).
 */
const HELMET_OPTIONS = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] },
  },
  referrerPolicy: { policy: 'no-referrer' },
  xFrameOptions: { action: 'deny' },
  strictTransportSecurity: false,
} satisfies HelmetOptions;

/**
 * The headers helmet sets for `options`, read once from a response it decorated: the same
 * table is then set by one hook and written by the two answers Fastify gives before any hook
 * runs (router refusals in `frameworkErrors`, parser refusals in `clientErrorHandler`), which
 * the @fastify/helmet hook would miss.
 */
function helmetHeaders(options: HelmetOptions): Readonly<Record<string, string>> {
  const req = new IncomingMessage(new Socket());
  const res = new ServerResponse(req);
  helmet(options)(req, res, (err?: unknown) => {
    if (err) throw err;
  });
  return Object.freeze(Object.fromEntries(Object.entries(res.getHeaders()).map(([k, v]) => [k, String(v)])));
}

/** The security headers of every answer (without Strict-Transport-Security). */
export const SECURITY_HEADERS = helmetHeaders(HELMET_OPTIONS);

/** The security headers of an answer: SECURITY_HEADERS, plus Strict-Transport-Security when the request came over TLS. */
export class SecurityHeaders {
  private readonly overTls: Readonly<Record<string, string>>;

  constructor(hstsMaxAgeSeconds: number) {
    this.overTls = helmetHeaders({
      ...HELMET_OPTIONS,
      // The gateway answers for its own host only: whether subdomains are HTTPS-only is the domain owner's call.
      strictTransportSecurity: { maxAge: hstsMaxAgeSeconds, includeSubDomains: false },
    });
  }

  /**
   * For this request: over TLS when its socket is (the gateway serving HTTPS itself) or, with
   * TRUST_PROXY, when X-Forwarded-Proto says https. Sent over plain HTTP the header would be
   * ignored (RFC 6797 §8.1) and would only announce a policy the connection did not have.
   */
  for(request: FastifyRequest): Readonly<Record<string, string>> {
    return request.protocol === 'https' ? this.overTls : SECURITY_HEADERS;
  }
}

/** Methods of the API a browser may call cross-origin (HEAD comes with GET). */
const CORS_METHODS = ['GET', 'HEAD', 'POST', 'PATCH', 'PUT', 'DELETE'];
/** Request headers the API reads besides the CORS-safelisted ones. */
const CORS_REQUEST_HEADERS = [
  'Authorization',
  'Content-Type',
  IDEMPOTENCY_HEADER,
  'X-Request-Id',
  'Service-Wallet-Signature',
  'Request-Id',
];
/** Answer headers a cross-origin script may read (the rate-limit ones of draft-ietf-httpapi-ratelimit-headers, old and new names). */
const CORS_EXPOSED_HEADERS = [
  'X-Request-Id',
  REPLAYED_HEADER,
  'Retry-After',
  'Location',
  'Content-Disposition',
  'RateLimit',
  'RateLimit-Policy',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
];
/** How long a browser may cache a preflight answer. */
const CORS_PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * CORS_ALLOWED_ORIGINS as a list of exact origins (`scheme://host[:port]`, as a browser sends
 * `Origin`): https, or http on a loopback host. Throws ConfigError naming the variable and
 * every entry that is not one.
 */
export function parseAllowedOrigins(value: string | undefined): string[] {
  if (value === undefined || value.trim() === '') return [];
  const problems: string[] = [];
  const origins = value.split(',').map((o) => o.trim());
  for (const origin of origins) {
    let url: URL | undefined;
    try {
      url = new URL(origin);
    } catch {
      url = undefined;
    }
    // A URL host may hold "*", but no browser sends one: a wildcard would silently match nothing.
    if (origin.includes('*'))
      problems.push(`${JSON.stringify(origin)}: wildcards are not accepted, list each origin`);
    else if (!url || url.origin !== origin)
      problems.push(
        `${JSON.stringify(origin)} is not an origin (scheme://host[:port], lower case, no path or trailing slash)`,
      );
    else if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname)))
      problems.push(`${JSON.stringify(origin)} must use https (http only on localhost, 127.0.0.1 or [::1])`);
  }
  if (problems.length > 0)
    throw new ConfigError(problems.map((message) => ({ variable: 'CORS_ALLOWED_ORIGINS', message })));
  return [...new Set(origins)];
}

export interface SecurityOptions {
  headers: SecurityHeaders;
  /** Exact origins allowed cross-origin (parseAllowedOrigins); none: CORS is closed. */
  allowedOrigins: readonly string[];
}

/**
 * The security defaults of every answer, registered before anything else: the security
 * headers (errors, 404s and the docs page included) and CORS. CORS is closed unless origins
 * are configured: no answer then carries Access-Control-* headers and a preflight is a 404.
 * With origins, @fastify/cors answers a preflight from one of them (and adds
 * Access-Control-Allow-Origin to its requests, errors included); any other origin is
 * treated as if CORS were closed. No credentials mode: the API authenticates with the
 * Authorization header, never cookies.
 */
export async function registerSecurity(app: FastifyInstance, opts: SecurityOptions): Promise<void> {
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    reply.headers(opts.headers.for(request));
    done();
  });
  if (opts.allowedOrigins.length === 0) return;
  const allowed = new Set(opts.allowedOrigins);
  await app.register(cors, {
    origin: (origin, cb) => cb(null, origin !== undefined && allowed.has(origin) ? origin : false),
    methods: CORS_METHODS,
    allowedHeaders: CORS_REQUEST_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    credentials: false,
    maxAge: CORS_PREFLIGHT_MAX_AGE_SECONDS,
    // A bare OPTIONS from an allowed origin gets the preflight answer rather than a text/plain 400.
    strictPreflight: false,
  });
}
