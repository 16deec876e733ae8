/* eslint-disable @typescript-eslint/no-explicit-any -- the test walks an arbitrary JSON document */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { routeModules } from '../src/routes/index.js';
import { NOT_STARTED_ADDRESS } from '@sluice/testing';
import { testRoutes } from './support/test-routes.js';
import { API, startGateway, type Harness } from './support/harness.js';

/**
 * The OpenAPI 3.1 document, generated from the registered route schemas (the
 * test routes and every real route module in src/routes/index.ts).
 */
type Json = Record<string, any>;
let h: Harness;
let doc: Json;

beforeAll(async () => {
  // The document is public: no credential is checked, no backend is asked.
  h = await startGateway(NOT_STARTED_ADDRESS, {
    ...routeModules,
    test: testRoutes({ widgetCalls: 0, flakyCalls: 0 }),
  });
  const res = await h.app.inject({ url: `${API}/openapi.json` });
  expect(res.statusCode).toBe(200);
  doc = res.json();
});

afterAll(async () => {
  await h?.close();
});

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

function* walk(node: unknown, path: string): Generator<[string, Json]> {
  if (Array.isArray(node)) for (const [i, v] of node.entries()) yield* walk(v, `${path}/${i}`);
  else if (node && typeof node === 'object') {
    yield [path, node as Json];
    for (const [k, v] of Object.entries(node)) yield* walk(v, `${path}/${k}`);
  }
}

function resolvePointer(ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  return ref
    .slice(2)
    .split('/')
    .reduce<any>(
      (n, seg) => (n === undefined ? undefined : n[seg.replace(/~1/g, '/').replace(/~0/g, '~')]),
      doc,
    );
}

/** Ajv (JSON Schema 2020-12, the 3.1 dialect) with every component schema registered under its ref. */
function schemaCompiler() {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const base = 'https://schemas.test/components/';
  const rewrite = (s: unknown): object =>
    JSON.parse(JSON.stringify(s), (k, v) =>
      k === '$ref' && typeof v === 'string' ? v.replace('#/components/schemas/', base) : v,
    );
  for (const [name, schema] of Object.entries((doc.components?.schemas ?? {}) as Json))
    ajv.addSchema(rewrite(schema), `${base}${name}`);
  return (schema: unknown) => ajv.compile(rewrite(schema));
}

describe('OpenAPI document', () => {
  it('is an OpenAPI 3.1.0 document with info, server, Basic security', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info).toMatchObject({ title: expect.any(String), version: '2025-10-13' });
    expect(doc.servers).toEqual([expect.objectContaining({ url: API })]);
    expect(doc.components.securitySchemes.BasicAuth).toMatchObject({ type: 'http', scheme: 'basic' });
    expect(doc.security).toEqual([{ BasicAuth: [] }]);
    expect(
      Object.keys(doc).every(
        (k) =>
          [
            'openapi',
            'info',
            'servers',
            'paths',
            'components',
            'security',
            'tags',
            'externalDocs',
            'webhooks',
            'jsonSchemaDialect',
          ].includes(k) || k.startsWith('x-'),
      ),
    ).toBe(true);
  });

  it('documents every registered API route, and nothing public or internal', () => {
    const routes = h.app.gateway.apiRoutes;
    expect(routes.length).toBeGreaterThan(10);
    for (const r of routes) {
      const path = r.url.slice(API.length).replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      expect(doc.paths[path]?.[r.method.toLowerCase()], `${r.method} ${path}`).toBeDefined();
    }
    const documented = Object.entries(doc.paths as Json).flatMap(([p, item]) =>
      Object.keys(item)
        .filter((m) => METHODS.includes(m))
        .map((m) => `${m} ${p}`),
    );
    expect(documented.length).toBe(routes.length);
    expect(Object.keys(doc.paths).some((p) => /openapi|docs|healthz|readyz/.test(p))).toBe(false);
  });

  it('every route schema compiles: validators and response serializers (compiled on first use otherwise)', () => {
    // A broken schema would otherwise surface as an error at its route's first request.
    let compiled = 0;
    expect(() => (compiled = h.app.gateway.compileSchemas())).not.toThrow();
    // At least a response serializer per route, and validators besides.
    expect(compiled).toBeGreaterThan(h.app.gateway.apiRoutes.length * 2);
  });

  it('every operation is well formed (responses, parameters, unique operationId)', () => {
    const ids = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths as Json)) {
      expect(path.startsWith('/')).toBe(true);
      const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      for (const [method, op] of Object.entries(item as Json)) {
        if (!METHODS.includes(method)) continue;
        const where = `${method} ${path}`;
        expect(typeof op.operationId, where).toBe('string');
        expect(ids.has(op.operationId), `duplicate operationId ${op.operationId}`).toBe(false);
        ids.add(op.operationId);
        expect(Object.keys(op.responses).length, where).toBeGreaterThan(0);
        for (const [status, r] of Object.entries(op.responses as Json)) {
          expect(/^([1-5]\d\d|[1-5]XX|default)$/.test(status), `${where} ${status}`).toBe(true);
          expect(typeof r.description, `${where} ${status} description`).toBe('string');
        }
        for (const p of op.parameters ?? []) {
          expect(['query', 'header', 'path', 'cookie']).toContain(p.in);
          expect(typeof p.name).toBe('string');
          expect(p.schema, `${where} ${p.name}`).toBeDefined();
          if (p.in === 'path') {
            expect(p.required).toBe(true);
            expect(templated).toContain(p.name);
          }
        }
        for (const t of templated)
          expect(
            (op.parameters ?? []).some((p: Json) => p.in === 'path' && p.name === t),
            `${where} {${t}}`,
          ).toBe(true);
        expect(op.responses['401'], where).toBeDefined();
        if (method === 'post')
          expect(
            (op.parameters ?? []).some((p: Json) => p.in === 'header' && p.name === 'Idempotency-Key'),
            where,
          ).toBe(true);
      }
    }
  });

  it('every $ref resolves and every schema is valid JSON Schema 2020-12', () => {
    for (const [where, node] of walk(doc, '#')) {
      if (typeof node.$ref === 'string')
        expect(resolvePointer(node.$ref), `${where} -> ${node.$ref}`).toBeDefined();
    }
    const compile = schemaCompiler();
    for (const [path, item] of Object.entries(doc.paths as Json)) {
      for (const [method, op] of Object.entries(item as Json)) {
        if (!METHODS.includes(method)) continue;
        const schemas = [
          op.requestBody?.content?.['application/json']?.schema,
          ...Object.values(op.responses as Json).map((r: Json) => r.content?.['application/json']?.schema),
          ...(op.parameters ?? []).map((p: Json) => p.schema),
        ].filter(Boolean);
        for (const s of schemas) expect(() => compile(s), `${method} ${path}`).not.toThrow();
      }
    }
  });

  it('carries the route schemas themselves (request body, parameters, named response schemas)', () => {
    const create = doc.paths['/widgets'].post;
    const body = create.requestBody.content['application/json'].schema;
    expect(body.additionalProperties).toBe(false);
    expect(Object.keys(body.properties)).toEqual(['name', 'kind', 'amount', 'address', 'tags']);
    expect(body.required).toEqual(['name', 'kind', 'amount']);
    expect(create.responses['201'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/Widget',
    });
    expect(doc.components.schemas.Widget.properties.createdAt).toMatchObject({
      type: 'string',
      format: 'date-time',
    });
    const list = doc.paths['/widgets'].get;
    expect(list.parameters.find((p: Json) => p.name === 'limit').schema).toMatchObject({
      type: 'integer',
      minimum: 1,
      maximum: 100,
    });
    expect(doc.paths['/widgets/{widgetId}'].get.parameters[0]).toMatchObject({
      in: 'path',
      name: 'widgetId',
      required: true,
    });
    const exchange = doc.paths['/exchange'].post.requestBody.content['application/json'].schema;
    expect(exchange.properties.from).toEqual({ $ref: '#/components/schemas/Currency' });
    expect(doc.components.schemas.Currency.required).toEqual(['code', 'name', 'symbol', 'decimals']);
  });

  it('validates what the gateway accepts: a body the route accepts passes the documented schema', () => {
    const compile = schemaCompiler();
    const validate = compile(doc.paths['/widgets'].post.requestBody.content['application/json'].schema);
    expect(validate({ name: 'w', kind: 'LARGE', amount: 1 })).toBe(true);
    expect(validate({ name: 'w', kind: 'LARGE', amount: 1, extra: 1 })).toBe(false);
  });
});

describe('docs page', () => {
  it('serves the Swagger UI HTML and its assets locally (no CDN), with a CSP', async () => {
    const page = await h.app.inject({ url: `${API}/docs/` });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.body).toMatch(/swagger-ui/);
    expect(page.body).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)[a-z0-9.-]+\.[a-z]{2,}\//i);
    expect(page.headers['content-security-policy']).toMatch(/script-src 'self'/);
    const css = await h.app.inject({ url: `${API}/docs/static/swagger-ui.css` });
    expect(css.statusCode).toBe(200);
    const spec = await h.app.inject({ url: `${API}/docs/json` });
    expect(spec.json().openapi).toBe('3.1.0');
  });
});

describe('OpenAPI webhooks section (generated from the event catalogue)', () => {
  it('names the reference’s webhooks, lists every catalogue webhook type once, and refers to the public resources', async () => {
    const { TEST_WEBHOOK, WEBHOOK_EVENT_TYPES } = await import('@sluice/api');
    const webhooks = doc.webhooks as Json;
    expect(Object.keys(webhooks)).toEqual(
      expect.arrayContaining([
        'incoming-payment',
        'outgoing-payment',
        'internal-account-status',
        'test-webhook',
      ]),
    );
    const typesOf = (name: string): string[] => {
      const schema = webhooks[name].post.requestBody.content['application/json'].schema;
      const t = schema.properties.type;
      // A union of literals is written as a plain enum in the document (as the reference writes them).
      return t.enum ?? (t.anyOf ?? [t]).map((x: Json) => x.const);
    };
    const listed = Object.keys(webhooks).flatMap(typesOf);
    expect([...listed].sort()).toEqual([...WEBHOOK_EVENT_TYPES, TEST_WEBHOOK].sort());
    const data = (name: string) =>
      webhooks[name].post.requestBody.content['application/json'].schema.properties.data;
    expect(resolvePointer(data('incoming-payment').$ref)).toBeDefined();
    expect(data('incoming-payment').$ref).toBe('#/components/schemas/Transaction');
    expect(data('internal-account-status').$ref).toBe('#/components/schemas/InternalAccount');
    // The approval webhook documents the answers; the others only that any 2xx is received.
    expect(Object.keys(webhooks['incoming-payment'].post.responses)).toEqual(
      expect.arrayContaining(['200', '202', '403', '422']),
    );
    expect(webhooks['outgoing-payment'].post.responses['202']).toBeUndefined();
    expect(webhooks['outgoing-payment'].post.parameters.map((p: Json) => p.name)).toEqual([
      'webhook-id',
      'webhook-timestamp',
      'webhook-signature',
    ]);
  });
});
