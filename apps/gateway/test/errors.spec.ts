import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@sluice/core';
import { FakeIdentity, basic } from './support/fake-identity.js';
import { testRoutes, type TestRouteState } from './support/test-routes.js';
import { API, startGateway, type Harness } from './support/harness.js';

/** Error model, input validation and request ids, through a real gRPC identity fake. */
let idp: FakeIdentity;
let h: Harness;
let auth: { authorization: string };
const state: TestRouteState = { widgetCalls: 0, flakyCalls: 0 };
let platformId: string;

beforeAll(async () => {
  idp = await new FakeIdentity().start();
  platformId = newId('Platform');
  const t = idp.add({ tokenId: newId('Token'), secret: 'sk_test_1', platformId, environment: 'SANDBOX' });
  auth = { authorization: basic(t.tokenId, t.secret) };
  h = await startGateway(idp.address, { test: testRoutes(state) });
});

afterAll(async () => {
  await h?.close();
  await idp?.stop();
});

const validWidget = { name: 'w', kind: 'SMALL', amount: 5 };

async function post(url: string, payload: unknown, headers: Record<string, string> = {}) {
  return h.app.inject({
    method: 'POST',
    url: `${API}${url}`,
    headers: { ...auth, ...headers },
    payload: payload as never,
  });
}

function expectInvalid(res: { statusCode: number; json(): unknown }, field: string, message?: RegExp) {
  expect(res.statusCode).toBe(400);
  const body = res.json() as {
    status: number;
    code: string;
    message: string;
    details: { errors: { field: string; message: string }[] };
  };
  expect(body.status).toBe(400);
  expect(body.code).toBe('INVALID_INPUT');
  expect(body.details.errors.map((e) => e.field)).toContain(field);
  if (message) expect(body.details.errors.find((e) => e.field === field)!.message).toMatch(message);
  return body;
}

describe('400 INVALID_INPUT with details.errors', () => {
  it('malformed JSON', async () => {
    const res = await post('/widgets', '{"name": "w", ', { 'content-type': 'application/json' });
    expectInvalid(res, 'body', /not valid JSON/);
  });

  it('a wrong type, without coercing a JSON string to an integer', async () => {
    expectInvalid(await post('/widgets', { ...validWidget, amount: '5' }), 'amount', /integer/);
    expectInvalid(await post('/widgets', { ...validWidget, name: 7 }), 'name', /string/);
  });

  it('an unknown field (an error, not silently dropped), top level and nested', async () => {
    expectInvalid(await post('/widgets', { ...validWidget, colour: 'red' }), 'colour', /not a known field/);
    expectInvalid(
      await post('/widgets', { ...validWidget, address: { line1: 'a', postalCode: '1', floor: 2 } }),
      'address.floor',
    );
  });

  it('a missing required field', async () => {
    expectInvalid(await post('/widgets', { kind: 'SMALL', amount: 1 }), 'name', /required/);
  });

  it('a bad enum value names the accepted values', async () => {
    expectInvalid(await post('/widgets', { ...validWidget, kind: 'MEDIUM' }), 'kind', /one of: SMALL, LARGE/);
  });

  it('field names are JSON paths (nested objects and array items)', async () => {
    expectInvalid(
      await post('/widgets', { ...validWidget, address: { line1: 'a', postalCode: 12345 } }),
      'address.postalCode',
      /string/,
    );
    expectInvalid(
      await post('/widgets', { ...validWidget, tags: ['ok', 'far too long'] }),
      'tags[1]',
      /at most 5/,
    );
  });

  it('limit 0 and 101 are out of range; querystrings are coerced', async () => {
    expectInvalid(await h.app.inject({ url: `${API}/widgets?limit=0`, headers: auth }), 'limit', />= 1/);
    expectInvalid(await h.app.inject({ url: `${API}/widgets?limit=101`, headers: auth }), 'limit', /<= 100/);
    expectInvalid(await h.app.inject({ url: `${API}/widgets?limit=ten`, headers: auth }), 'limit', /integer/);
    const ok = await h.app.inject({ url: `${API}/widgets?limit=100`, headers: auth });
    expect(ok.statusCode).toBe(200);
  });

  it('a bad cursor raised by the service comes back as 400 on field cursor', async () => {
    expectInvalid(
      await h.app.inject({ url: `${API}/widgets?cursor=not-a-cursor`, headers: auth }),
      'cursor',
      /cursor/,
    );
  });

  it('an unknown query parameter and a bad query enum', async () => {
    expectInvalid(
      await h.app.inject({ url: `${API}/widgets?colour=red`, headers: auth }),
      'colour',
      /not a known field/,
    );
    expectInvalid(
      await h.app.inject({ url: `${API}/widgets?kind=HUGE`, headers: auth }),
      'kind',
      /one of: SMALL, LARGE/,
    );
  });

  it('a malformed path id', async () => {
    expectInvalid(
      await h.app.inject({ url: `${API}/widgets/Customer:123`, headers: auth }),
      'widgetId',
      /Widget id/,
    );
  });

  it('a rejected request runs nothing', async () => {
    const before = state.widgetCalls;
    await post('/widgets', { ...validWidget, amount: -1 });
    await post('/widgets', { ...validWidget, extra: true });
    expect(state.widgetCalls).toBe(before);
  });
});

describe('other client errors', () => {
  it('unknown route: 404 NOT_FOUND json', async () => {
    const res = await h.app.inject({ url: `${API}/no-such-thing`, headers: auth });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ status: 404, code: 'NOT_FOUND' });
    expect(res.headers['content-type']).toMatch(/application\/json/);
  });

  it('a body over the limit: 413', async () => {
    const res = await post('/empty', JSON.stringify({ a: 'x'.repeat(h.config.BODY_LIMIT_BYTES) }), {
      'content-type': 'application/json',
    });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ status: 413, code: 'PAYLOAD_TOO_LARGE' });
  });

  it('a non-JSON body: 415', async () => {
    const res = await post('/empty', 'hello', { 'content-type': 'text/plain' });
    expect(res.statusCode).toBe(415);
    expect(res.json()).toMatchObject({ status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' });
  });

  it('an empty JSON body is no body', async () => {
    const res = await post('/empty', '', { 'content-type': 'application/json' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ body: null });
  });

  it('a gRPC NOT_FOUND keeps its public code and becomes 404', async () => {
    const id = 'Widget:0190a0a0-0000-7000-8000-000000000000';
    const res = await h.app.inject({ url: `${API}/widgets/${id}`, headers: auth });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({
      status: 404,
      code: 'PLATFORM_NOT_FOUND',
      message: `Platform ${id} not found`,
    });
  });

  it('a domain conflict is 409 with its code', async () => {
    const res = await post('/conflict', {});
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({
      status: 409,
      code: 'WIDGET_EXISTS',
      message: 'A widget with this name exists',
    });
  });
});

describe('5xx never leak internals', () => {
  it('an exception in a handler', async () => {
    const res = await h.app.inject({ url: `${API}/boom`, headers: auth });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({
      status: 500,
      code: 'INTERNAL_ERROR',
      message: 'An internal error occurred',
    });
    expect(res.body).not.toMatch(/password|10\.0\.0\.7|pg:/);
  });

  it('an unexpected failure inside a backend service', async () => {
    const res = await h.app.inject({ url: `${API}/upstream-crash`, headers: auth });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({
      status: 500,
      code: 'INTERNAL_ERROR',
      message: 'An internal error occurred',
    });
    expect(res.body).not.toMatch(/hunter2|db-internal/);
  });

  it('a domain UNAVAILABLE is 503 with Retry-After', async () => {
    const res = await post('/flaky', {});
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.json()).toMatchObject({ status: 503, code: 'LEDGER_UNAVAILABLE' });
  });

  it('a response never carries fields its schema does not declare', async () => {
    const res = await post('/widgets', validWidget);
    expect(res.statusCode).toBe(201);
    expect(res.json()).not.toHaveProperty('secretInternal');
  });
});

describe('responses', () => {
  it('int64 values (bigint) without a response schema are exact JSON integers', async () => {
    const res = await h.app.inject({ url: `${API}/bigint`, headers: auth });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('{"amount":9000000000000000,"nested":[{"fee":12}]}');
  });

  it('API responses are not cacheable', async () => {
    const res = await h.app.inject({ url: `${API}/whoami`, headers: auth });
    expect(res.headers['cache-control']).toBe('no-store');
  });
});

describe('request ids', () => {
  it('echoes a valid X-Request-Id and forwards it (and the platform id) over gRPC', async () => {
    const res = await h.app.inject({
      url: `${API}/widgets`,
      headers: { ...auth, 'x-request-id': 'req_abc-123.4:5' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-request-id']).toBe('req_abc-123.4:5');
    expect(idp.lastCall).toEqual({ requestId: 'req_abc-123.4:5', platformId });
  });

  it('generates a UUID when absent, and replaces an invalid one', async () => {
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    const none = await h.app.inject({ url: `${API}/whoami`, headers: auth });
    expect(none.headers['x-request-id']).toMatch(uuid);
    for (const bad of ['has space', 'x'.repeat(129), 'semi;colon', '']) {
      const res = await h.app.inject({ url: `${API}/whoami`, headers: { ...auth, 'x-request-id': bad } });
      expect(res.headers['x-request-id']).toMatch(uuid);
    }
  });

  it('puts request id and platform id in the handler logging context', async () => {
    const res = await h.app.inject({ url: `${API}/whoami`, headers: { ...auth, 'x-request-id': 'ctx-1' } });
    expect(res.json().context).toEqual({ requestId: 'ctx-1', platformId });
  });

  it('errors and public routes carry the request id too', async () => {
    const res = await h.app.inject({ url: `${API}/boom`, headers: { ...auth, 'x-request-id': 'err-1' } });
    expect(res.headers['x-request-id']).toBe('err-1');
    const health = await h.app.inject({ url: '/healthz', headers: { 'x-request-id': 'hz-1' } });
    expect(health.headers['x-request-id']).toBe('hz-1');
  });
});
