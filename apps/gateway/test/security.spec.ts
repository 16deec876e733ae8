import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '@sluice/config';
import { basic, startIdentity, type IdentityHarness, type TestToken } from './support/identity.js';
import { testRoutes } from './support/test-routes.js';
import { API, startGateway, type Harness } from './support/harness.js';

/**
 * Security headers, CORS and Strict-Transport-Security on what the gateway answers, with API
 * tokens of the real identity service: the defaults (CORS closed, no proxy trusted), and a
 * gateway configured with allowed origins behind a trusted proxy.
 */
let idp: IdentityHarness;
let closed: Harness;
let open: Harness;
let auth: string;
let token: TestToken;

const ALLOWED = 'https://app.example.com';
const LOCAL = 'http://localhost:3000';
const OTHER = 'https://evil.example.net';

type Headers = Record<string, string | string[] | number | undefined>;

beforeAll(async () => {
  idp = await startIdentity('gwsec');
  token = await idp.token();
  auth = basic(token.tokenId, token.secret);
  const routes = { test: testRoutes({ widgetCalls: 0, flakyCalls: 0 }) };
  closed = await startGateway(idp.address, routes, {}, { clients: idp.gatewayClients() });
  open = await startGateway(
    idp.address,
    routes,
    { CORS_ALLOWED_ORIGINS: `${ALLOWED},${LOCAL}`, TRUST_PROXY: 'true', HSTS_MAX_AGE_SECONDS: '600' },
    { clients: idp.gatewayClients() },
  );
});

afterAll(async () => {
  await closed?.close();
  await open?.close();
  await idp?.stop();
});

/** The headers every answer carries, and the banners none does. */
function expectSecurityHeaders(
  headers: Headers,
  csp: RegExp = /^default-src 'none';frame-ancestors 'none'$/,
) {
  expect(headers['x-content-type-options']).toBe('nosniff');
  expect(headers['content-security-policy']).toMatch(csp);
  expect(headers['referrer-policy']).toBe('no-referrer');
  expect(headers['x-frame-options']).toBe('DENY');
  expect(headers['x-powered-by']).toBeUndefined();
  expect(headers.server).toBeUndefined();
  expect(headers['strict-transport-security']).toBeUndefined();
}

function expectNoCors(headers: Headers) {
  for (const name of Object.keys(headers)) expect(name).not.toMatch(/^access-control-/);
}

const get = (h: Harness, url: string, headers: Record<string, string> = {}) =>
  h.app.inject({ url: `${API}${url}`, headers });

describe('security headers on every answer', () => {
  it('an authenticated success: plus Cache-Control no-store', async () => {
    const res = await get(closed, '/whoami', { authorization: auth });
    expect(res.statusCode).toBe(200);
    expectSecurityHeaders(res.headers);
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('errors: a refused credential (401, no-store too), bad input (400), a crash (500)', async () => {
    const unauthorized = await get(closed, '/whoami', {
      authorization: basic(token.tokenId, 'not-the-secret'),
    });
    expect(unauthorized.statusCode).toBe(401);
    expectSecurityHeaders(unauthorized.headers);
    expect(unauthorized.headers['cache-control']).toBe('no-store');

    const invalid = await closed.app.inject({
      method: 'POST',
      url: `${API}/widgets`,
      headers: { authorization: auth, 'content-type': 'application/json' },
      payload: '{"name": ',
    });
    expect(invalid.statusCode).toBe(400);
    expectSecurityHeaders(invalid.headers);

    const crash = await get(closed, '/boom', { authorization: auth });
    expect(crash.statusCode).toBe(500);
    expectSecurityHeaders(crash.headers);
  });

  it('404s, inside and outside the API, and what the router refuses before any hook (bad URL, long segment)', async () => {
    for (const url of [`${API}/no-such-route`, '/favicon.ico']) {
      const res = await closed.app.inject({ url });
      expect(res.statusCode, url).toBe(404);
      expect(res.json().code).toBe('NOT_FOUND');
      expectSecurityHeaders(res.headers);
    }
    const badUrl = await closed.app.inject({ url: `${API}/widgets/%E0%A4%A` });
    expect(badUrl.statusCode).toBe(400);
    expectSecurityHeaders(badUrl.headers);
    const longSegment = await closed.app.inject({ url: `${API}/widgets/${'a'.repeat(2000)}` });
    expect(longSegment.statusCode).toBe(414);
    expectSecurityHeaders(longSegment.headers);
  });

  it('public endpoints: health, the OpenAPI document', async () => {
    for (const url of ['/healthz', `${API}/openapi.json`]) {
      const res = await closed.app.inject({ url });
      expect(res.statusCode, url).toBe(200);
      expectSecurityHeaders(res.headers);
    }
  });

  it('the docs page keeps its own CSP (scripts and styles of its own origin), with the other headers', async () => {
    for (const url of [`${API}/docs/`, `${API}/docs/static/swagger-initializer.js`]) {
      const res = await closed.app.inject({ url });
      expect(res.statusCode, url).toBe(200);
      expectSecurityHeaders(res.headers, /^default-src 'self';.*frame-ancestors 'none';.*script-src 'self'/);
    }
  });

  it('over a real socket too: no Server or X-Powered-By banner, and the parser’s own refusals (431) carry the headers', async () => {
    // Listening until afterAll closes the gateway.
    await closed.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = closed.app.server.address() as { port: number };
    const overSocket = (path: string, headers: Record<string, string>) =>
      new Promise<{ status: number; headers: IncomingHttpHeaders }>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, path, headers }, (r) => {
          r.resume();
          r.on('end', () => resolve({ status: r.statusCode!, headers: r.headers }));
        });
        req.on('error', reject);
        req.end();
      });

    const ok = await overSocket(`${API}/whoami`, { authorization: auth });
    expect(ok.status).toBe(200);
    expectSecurityHeaders(ok.headers);
    const notFound = await overSocket('/nothing-here', {});
    expect(notFound.status).toBe(404);
    expectSecurityHeaders(notFound.headers);
    // Refused by Node's HTTP parser: written on the socket by clientErrorHandler, no hook runs.
    const tooLarge = await overSocket(`${API}/whoami`, { 'x-filler': 'x'.repeat(20_000) });
    expect(tooLarge.status).toBe(431);
    expectSecurityHeaders(tooLarge.headers);
  });
});

describe('CORS', () => {
  const preflight = (h: Harness, origin: string, method = 'POST') =>
    h.app.inject({
      method: 'OPTIONS',
      url: `${API}/widgets`,
      headers: {
        origin,
        'access-control-request-method': method,
        'access-control-request-headers': 'authorization,content-type,idempotency-key',
      },
    });

  it('is closed by default: a preflight from any origin is a 404 without allow headers; a request gets no Access-Control-Allow-Origin', async () => {
    for (const origin of [ALLOWED, OTHER, 'null']) {
      const pre = await preflight(closed, origin);
      expect(pre.statusCode, origin).toBe(404);
      expectNoCors(pre.headers);
      expectSecurityHeaders(pre.headers);
      const simple = await get(closed, '/whoami', { authorization: auth, origin });
      expect(simple.statusCode).toBe(200);
      expectNoCors(simple.headers);
    }
  });

  it('a configured origin: the preflight allows the API’s methods and headers; answers (errors too) allow it and expose the API’s headers', async () => {
    for (const origin of [ALLOWED, LOCAL]) {
      const pre = await preflight(open, origin);
      expect(pre.statusCode, origin).toBe(204);
      expect(pre.headers['access-control-allow-origin']).toBe(origin);
      expect(String(pre.headers['access-control-allow-methods']).split(', ')).toEqual(
        expect.arrayContaining(['GET', 'POST', 'PATCH', 'DELETE']),
      );
      expect(String(pre.headers['access-control-allow-headers']).toLowerCase().split(', ')).toEqual(
        expect.arrayContaining(['authorization', 'content-type', 'idempotency-key', 'x-request-id']),
      );
      expect(pre.headers['access-control-max-age']).toBe('600');
      expect(pre.headers['access-control-allow-credentials']).toBeUndefined();
      expect(pre.headers.vary).toMatch(/Origin/);
    }

    const ok = await get(open, '/whoami', { authorization: auth, origin: ALLOWED });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['access-control-allow-origin']).toBe(ALLOWED);
    expect(String(ok.headers['access-control-expose-headers']).split(', ')).toEqual(
      expect.arrayContaining(['X-Request-Id', 'Idempotent-Replayed', 'Retry-After', 'RateLimit']),
    );
    expect(ok.headers.vary).toMatch(/Origin/);
    expectSecurityHeaders(ok.headers);

    const refused = await get(open, '/whoami', { origin: ALLOWED });
    expect(refused.statusCode).toBe(401);
    expect(refused.headers['access-control-allow-origin']).toBe(ALLOWED);
  });

  it('any other origin (or none) is treated as if CORS were closed', async () => {
    for (const origin of [OTHER, 'https://app.example.com.evil.net', 'http://app.example.com', 'null']) {
      const pre = await preflight(open, origin);
      expect(pre.statusCode, origin).toBe(404);
      expectNoCors(pre.headers);
      const simple = await get(open, '/whoami', { authorization: auth, origin });
      expect(simple.statusCode).toBe(200);
      expectNoCors(simple.headers);
    }
    expectNoCors((await get(open, '/whoami', { authorization: auth })).headers);
  });

  it('a bad CORS_ALLOWED_ORIGINS stops the gateway at start, naming the variable', async () => {
    const err = await startGateway(
      idp.address,
      {},
      { CORS_ALLOWED_ORIGINS: 'http://app.example.com' },
      { clients: idp.gatewayClients(), readiness: {} },
    ).then(
      (h) => h.close().then(() => undefined),
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).message).toMatch(
      /CORS_ALLOWED_ORIGINS: "http:\/\/app\.example\.com" must use https/,
    );
  });
});

describe('Strict-Transport-Security', () => {
  it('is never sent over plain HTTP', async () => {
    for (const h of [closed, open]) {
      const res = await get(h, '/whoami', { authorization: auth });
      expect(res.headers['strict-transport-security']).toBeUndefined();
    }
  });

  it('is sent with the configured max-age when a trusted proxy says the request came over HTTPS (errors too)', async () => {
    const res = await get(open, '/whoami', { authorization: auth, 'x-forwarded-proto': 'https' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['strict-transport-security']).toBe('max-age=600');
    const notFound = await get(open, '/no-such-route', { 'x-forwarded-proto': 'https' });
    expect(notFound.statusCode).toBe(404);
    expect(notFound.headers['strict-transport-security']).toBe('max-age=600');
    const viaHttp = await get(open, '/whoami', { authorization: auth, 'x-forwarded-proto': 'http' });
    expect(viaHttp.headers['strict-transport-security']).toBeUndefined();
  });

  it('is not sent on X-Forwarded-Proto alone when no proxy is trusted (TRUST_PROXY=false, the default)', async () => {
    const res = await get(closed, '/whoami', { authorization: auth, 'x-forwarded-proto': 'https' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['strict-transport-security']).toBeUndefined();
  });
});
