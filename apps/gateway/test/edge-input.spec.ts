/* eslint-disable @typescript-eslint/no-explicit-any -- the test walks an arbitrary JSON document */
import { Agent, request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@sluice/core';
import { nonIntegerLiterals } from '../src/http/edge-input.js';
import { routeModules } from '../src/routes/index.js';
import { basic, startIdentity, type IdentityHarness } from './support/identity.js';
import { testRoutes, type TestRouteState } from './support/test-routes.js';
import { API, startGateway, type Harness } from './support/harness.js';

/**
 * The edge rules every request meets (src/http/edge-input.ts and the error
 * model of what the router and the HTTP parser refuse), through the real
 * gateway core with test routes and every real route module.
 */
let idp: IdentityHarness;
let h: Harness;
let auth: { authorization: string };
const state: TestRouteState = { widgetCalls: 0, flakyCalls: 0 };

beforeAll(async () => {
  idp = await startIdentity('gwedge');
  const t = await idp.token();
  auth = { authorization: basic(t.tokenId, t.secret) };
  h = await startGateway(idp.address, { ...routeModules, test: testRoutes(state) });
});

afterAll(async () => {
  await h?.close();
  await idp?.stop();
});

const raw = (method: 'POST' | 'PATCH', url: string, payload: string, headers: Record<string, string> = {}) =>
  h.app.inject({
    method,
    url: `${API}${url}`,
    headers: { ...auth, 'content-type': 'application/json', ...headers },
    payload,
  });

function expectInvalid(res: { statusCode: number; body: string }, field: string, message?: RegExp) {
  expect(res.statusCode, res.body).toBe(400);
  const body = JSON.parse(res.body);
  expect(body).toMatchObject({ status: 400, code: 'INVALID_INPUT' });
  const e = body.details.errors.find((x: { field: string }) => x.field === field);
  expect(e, `${field} in ${res.body}`).toBeDefined();
  if (message) expect(e.message).toMatch(message);
}

describe('numbers are decided from the JSON text', () => {
  it('finds the literals written with a fraction or an exponent, by JSON pointer', () => {
    expect([
      ...nonIntegerLiterals('{"a":1,"b":100.000000000000001,"c":[1,2e3,{"d/e":-0.5}],"s":"1.5","t":{"u":1E2}}'),
    ]).toEqual(['/b', '/c/1', '/c/2/d~1e', '/t/u']);
    expect(nonIntegerLiterals('{"amount":100}').size).toBe(0);
  });

  it('refuses 100.000000000000001, 5.0 and 5e0 in an integer field (JavaScript reads them as integers)', async () => {
    const before = state.widgetCalls;
    for (const amount of ['100.000000000000001', '5.0', '5e0', '50E-1'])
      expectInvalid(await raw('POST', '/widgets', `{"name":"w","kind":"SMALL","amount":${amount}}`), 'amount', /integer/);
    expect(state.widgetCalls).toBe(before);
    const ok = await raw('POST', '/widgets', '{"name":"w","kind":"SMALL","amount":5}');
    expect(ok.statusCode, ok.body).toBe(201);
  });

  it('keeps a fraction where the schema wants a number', async () => {
    const usd = { code: 'USD', name: 'US Dollar', symbol: '$', decimals: 2 };
    const res = await raw('POST', '/exchange', JSON.stringify({ from: usd, to: usd, rate: 1.08 }));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().rate).toBe(1.08);
  });

  it('refuses a fractional amount on the real money routes, naming the field', async () => {
    const account = newId('InternalAccount');
    expectInvalid(await raw('POST', `/sandbox/internal-accounts/${account}/fund`, '{"amount":100.000000000000001}'), 'amount');
    const transfer = `{"source":{"accountId":"${account}"},"destination":{"accountId":"${newId('ExternalAccount')}"},"amount":1e2}`;
    expectInvalid(await raw('POST', '/transfer-out', transfer), 'amount');
  });
});

describe('strings', () => {
  it('refuses control characters in body values, query and path, naming the field', async () => {
    expectInvalid(await raw('POST', '/widgets', JSON.stringify({ name: 'a\u0000b', kind: 'SMALL', amount: 1 })), 'name', /control/);
    expectInvalid(await raw('POST', '/widgets', JSON.stringify({ name: 'line\nbreak', kind: 'SMALL', amount: 1 })), 'name', /control/);
    expectInvalid(
      await raw('POST', '/widgets', JSON.stringify({ name: 'w', kind: 'SMALL', amount: 1, address: { line1: '\u0085', postalCode: '1' } })),
      'address.line1',
      /control/,
    );
    expectInvalid(await h.app.inject({ url: `${API}/transactions?reference=%00`, headers: auth }), 'reference', /control/);
    expectInvalid(await h.app.inject({ url: `${API}/transactions?customerId=a%01b`, headers: auth }), 'customerId', /control/);
    expectInvalid(await h.app.inject({ url: `${API}/receiver/uma/%24a%00%40b.example`, headers: auth }), 'receiverUmaAddress', /control/);
  });

  it('refuses lone surrogates instead of storing U+FFFD', async () => {
    expectInvalid(await raw('POST', '/widgets', '{"name":"\\ud800","kind":"SMALL","amount":1}'), 'name', /Unicode/);
    expectInvalid(await raw('POST', '/widgets', '{"name":"x\\udc00","kind":"SMALL","amount":1}'), 'name', /Unicode/);
    const ok = await raw('POST', '/widgets', '{"name":"\\ud83d\\ude00","kind":"SMALL","amount":1}');
    expect(ok.statusCode, ok.body).toBe(201);
  });

  it('refuses a string over 16384 characters anywhere, and nesting deeper than 32', async () => {
    expectInvalid(await raw('POST', '/widgets', JSON.stringify({ name: 'x'.repeat(16_385), kind: 'SMALL', amount: 1 })), 'name', /at most 16384/);
    const deep = `{"senderCustomerInfo":${'{"a":'.repeat(40)}1${'}'.repeat(40)}}`;
    expectInvalid(await raw('POST', '/quotes', deep), 'senderCustomerInfo.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a', /nested/);
  });

  it('every string, array and free-form object of every real route request is bounded by its schema', async () => {
    const real = await startGateway(idp.address, routeModules);
    const doc = (await real.app.inject({ url: `${API}/openapi.json` })).json();
    await real.close();
    const resolve = (s: any): any => (s?.$ref ? resolve(doc.components.schemas[s.$ref.split('/').pop()]) : s);
    const unbounded: string[] = [];
    const seen = new Set<any>();
    // `partOf`: a member of an allOf (another member closes the object, e.g. a discriminated union).
    const walk = (node: any, where: string, partOf = false): void => {
      const s = resolve(node);
      if (!s || typeof s !== 'object' || seen.has(s)) return;
      seen.add(s);
      const boundedPattern = typeof s.pattern === 'string' && /^\^[^*+]*\$$/.test(s.pattern) && !/\{\d+,\}/.test(s.pattern);
      if (s.type === 'string' && s.maxLength === undefined && !s.enum && s.const === undefined && !boundedPattern && s.format !== 'date')
        unbounded.push(`${where}: string`);
      if (s.type === 'array' && s.maxItems === undefined) unbounded.push(`${where}: array`);
      if (s.type === 'object' && s.additionalProperties !== false && s.maxProperties === undefined && !partOf)
        unbounded.push(`${where}: object`);
      for (const [k, v] of Object.entries(s.properties ?? {})) walk(v, `${where}.${k}`);
      for (const k of ['items', 'additionalProperties']) if (typeof s[k] === 'object') walk(s[k], `${where}[]`);
      for (const k of ['anyOf', 'oneOf', 'allOf'])
        for (const [i, v] of (s[k] ?? []).entries()) walk(v, `${where}/${k}${i}`, k === 'allOf');
    };
    const paths = Object.entries(doc.paths as Record<string, any>);
    expect(paths.length).toBeGreaterThan(30);
    for (const [path, item] of paths)
      for (const [method, op] of Object.entries(item as Record<string, any>)) {
        walk(op.requestBody?.content?.['application/json']?.schema, `${method} ${path} body`);
        for (const p of op.parameters ?? []) if (p.in !== 'header') walk(p.schema, `${method} ${path} ${p.in} ${p.name}`);
      }
    expect(unbounded).toEqual([]);
  });
});

describe('bodies', () => {
  it('a route without a body schema takes none: {} and no body pass, anything else is 400', async () => {
    expect((await raw('POST', '/conflict', '{}')).statusCode).toBe(409);
    expect((await h.app.inject({ method: 'POST', url: `${API}/conflict`, headers: auth })).statusCode).toBe(409);
    expectInvalid(await raw('POST', '/conflict', '[1,2]'), 'body', /empty/);
    expectInvalid(await raw('POST', '/conflict', '42'), 'body', /empty/);
    expectInvalid(await raw('POST', '/conflict', '{"rotate":true}'), 'rotate', /takes no body/);
  });

  it('POST /config/webhook-secret/rotate refuses arrays, numbers and 400 kB nestings without calling identity', async () => {
    for (const payload of ['[]', '7', '{"x":1}'])
      expect((await raw('POST', '/config/webhook-secret/rotate', payload)).statusCode, payload).toBe(400);
    const nested = '['.repeat(200_000) + ']'.repeat(200_000);
    const res = await raw('POST', '/config/webhook-secret/rotate', nested);
    expect(res.statusCode, res.body.slice(0, 200)).toBe(400);
    expect(res.json()).toMatchObject({ status: 400, code: 'INVALID_INPUT' });
  });

  it('Content-Encoding other than identity is 415 in the error model, never read as plain JSON', async () => {
    const before = state.widgetCalls;
    for (const encoding of ['gzip', 'br', 'deflate']) {
      const res = await raw('POST', '/widgets', '{"name":"w","kind":"SMALL","amount":1}', { 'content-encoding': encoding });
      expect(res.statusCode).toBe(415);
      expect(res.json()).toMatchObject({ status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: expect.stringMatching(/Content-Encoding/) });
    }
    expect(state.widgetCalls).toBe(before);
    const identity = await raw('POST', '/widgets', '{"name":"w","kind":"SMALL","amount":1}', { 'content-encoding': 'identity' });
    expect(identity.statusCode).toBe(201);
  });
});

describe('query parameters', () => {
  it('an unknown one is 400 on single-resource GETs and GET /config too', async () => {
    expectInvalid(await h.app.inject({ url: `${API}/whoami?debug=1`, headers: auth }), 'debug', /not a known field/);
    expectInvalid(await h.app.inject({ url: `${API}/config?expand=all`, headers: auth }), 'expand', /not a known field/);
    expectInvalid(
      await h.app.inject({ url: `${API}/transactions/${newId('Transaction')}?fields=id`, headers: auth }),
      'fields',
      /not a known field/,
    );
  });
});

describe('what the router and the HTTP parser refuse is in the error model too', () => {
  it('414 for a path segment over 500 characters, 400 for a malformed URL', async () => {
    const long = await h.app.inject({ url: `${API}/transactions/${'x'.repeat(600)}`, headers: auth });
    expect(long.statusCode).toBe(414);
    expect(long.json()).toEqual({ status: 414, code: 'URI_TOO_LONG', message: expect.any(String) });
    const bad = await h.app.inject({ url: `${API}/transactions/%E0%A4%A`, headers: auth });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({ status: 400, code: 'BAD_REQUEST', message: 'The request URL is malformed' });
  });

  it('431 for headers over the limit, as JSON', async () => {
    await h.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = h.app.server.address() as { port: number };
    const res = await new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port, path: `${API}/whoami`, headers: { 'x-filler': 'x'.repeat(20_000) } },
        (r) => {
          let body = '';
          r.on('data', (c) => (body += c));
          r.on('end', () => resolve({ status: r.statusCode!, type: String(r.headers['content-type']), body }));
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(res.status).toBe(431);
    expect(res.type).toMatch(/application\/json/);
    expect(JSON.parse(res.body)).toEqual({
      status: 431,
      code: 'REQUEST_HEADERS_TOO_LARGE',
      message: 'The request headers are too large',
    });
  });
});

describe('a body declared over the limit', () => {
  /** Sends `body` over one kept-alive connection; the answer, and whether the connection was reused. */
  const send = (agent: Agent, port: number, body: Buffer, path = `${API}/widgets`) =>
    new Promise<{ status: number; json: any; connection: string | undefined; reused: boolean }>((resolve, reject) => {
      const req = httpRequest(
        {
          agent,
          host: '127.0.0.1',
          port,
          method: 'POST',
          path,
          headers: { ...auth, 'content-type': 'application/json', 'content-length': String(body.length) },
        },
        (r) => {
          let text = '';
          r.on('data', (c) => (text += c));
          r.on('end', () => resolve({ status: r.statusCode!, json: JSON.parse(text), connection: r.headers.connection, reused: req.reusedSocket }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });

  it('is 413 before any route runs, its bytes read first: the client reads the answer and the connection serves the next request', async () => {
    if (!h.app.server.listening) await h.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = h.app.server.address() as { port: number };
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const before = state.widgetCalls;
      const limit = h.app.initialConfig.bodyLimit!;
      const big = Buffer.from(`{"name":"${'a'.repeat(limit + 10)}"}`);
      for (let i = 0; i < 3; i++) {
        const res = await send(agent, port, big);
        expect(res.status).toBe(413);
        expect(res.json).toEqual({ status: 413, code: 'PAYLOAD_TOO_LARGE', message: `The request body exceeds ${limit} bytes` });
        expect(res.connection).not.toBe('close');
        if (i > 0) expect(res.reused).toBe(true);
      }
      const ok = await send(agent, port, Buffer.from('{"name":"a","kind":"SMALL","amount":1}'));
      expect(ok.status).toBe(201);
      expect(ok.reused).toBe(true);
      expect(state.widgetCalls).toBe(before + 1);
    } finally {
      agent.destroy();
    }
  });
});

describe('what generated bad input found (issue 17, tools/fuzz)', () => {
  it('a body that is not UTF-8 is 400 on body, never stored as U+FFFD', async () => {
    const before = state.widgetCalls;
    for (const bytes of [[0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xe2, 0x82]]) {
      const payload = Buffer.concat([Buffer.from('{"name":"a'), Buffer.from(bytes), Buffer.from('b","kind":"SMALL","amount":1}')]);
      expectInvalid(
        await h.app.inject({ method: 'POST', url: `${API}/widgets`, headers: { ...auth, 'content-type': 'application/json' }, payload }),
        'body',
        /UTF-8/,
      );
    }
    expect(state.widgetCalls).toBe(before);
  });

  it('a GET with a body is 400 on body (it used to be ignored)', async () => {
    for (const payload of ['42', '{"a":1}', '[]'])
      expectInvalid(
        await h.app.inject({ method: 'GET', url: `${API}/whoami`, headers: { ...auth, 'content-type': 'application/json' }, payload }),
        'body',
        /GET takes no body/,
      );
    expect((await h.app.inject({ method: 'GET', url: `${API}/whoami`, headers: auth })).statusCode).toBe(200);
  });

  it('a query value whose percent-encoding is not UTF-8 is 400 on that parameter (it was searched literally)', async () => {
    for (const v of ['%FF', '%ED%A0%80', 'a%C0%AF'])
      expectInvalid(await h.app.inject({ url: `${API}/transactions?reference=${v}`, headers: auth }), 'reference', /UTF-8/);
  });

  it('numbers must be finite and integers safe: ?sendingAmount=1e999 was coerced to Infinity (500)', async () => {
    for (const v of ['1e999', '-1e999', '99999999999999999999'])
      expectInvalid(await h.app.inject({ url: `${API}/exchange-rates?sendingAmount=${v}`, headers: auth }), 'sendingAmount');
    const usd = { code: 'USD', name: 'US Dollar', symbol: '$', decimals: 2 };
    expectInvalid(await raw('POST', '/exchange', `{"from":${JSON.stringify(usd)},"to":${JSON.stringify(usd)},"rate":1e400}`), 'rate');
  });

  it('a malformed multipart body is 400 on body (the parser error was a 500)', async () => {
    const url = `${API}/documents/${newId('Document')}`;
    for (const [type, payload] of [
      ['multipart/form-data', '--x\r\n\r\n--x--'],
      ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="file"\r\n\r\nabc'],
    ])
      expectInvalid(await h.app.inject({ method: 'PUT', url, headers: { ...auth, 'content-type': type! }, payload }), 'body', /multipart/);
  });

  it('a __proto__ key is named, not reported as malformed JSON', async () => {
    expectInvalid(await raw('POST', '/widgets', '{"__proto__":{"x":1},"name":"w","kind":"SMALL","amount":1}'), '__proto__');
  });

  it('an id whose uuid a service would refuse (not RFC 9562) is refused by the gateway, naming the path parameter', async () => {
    expectInvalid(
      await h.app.inject({ url: `${API}/transactions/Transaction:ceaedfe8-2b3b-868b-c1cc-53d9161cedf6`, headers: auth }),
      'transactionId',
      /Transaction id/,
    );
  });

  it('every operation documents the answers given before any route runs: 413, 414, 415 and 431', async () => {
    const doc = (await h.app.inject({ url: `${API}/openapi.json` })).json();
    for (const [path, item] of Object.entries<Record<string, { responses: Record<string, unknown> }>>(doc.paths))
      for (const [method, op] of Object.entries(item))
        expect(Object.keys(op.responses), `${method} ${path}`).toEqual(expect.arrayContaining(['413', '414', '415', '431']));
  });
});
