import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compareDocuments, coverageReport, matches } from './coverage.js';
import { DIFFERENCES, referenceValidator, schemaOverrides } from './differences.js';
import { API_DIFFERENCES_DOC, renderDifferencesDoc } from './doc.js';
import { referenceDocument, ReferenceValidator, type Json } from './reference.js';
import { sluiceOpenApiDocument } from './sluice-document.js';

/** A one-operation document with the given component schemas. */
function doc(schemas: Json, op: Json = {}): Json {
  return {
    paths: {
      '/things/{id}': {
        post: {
          requestBody: {
            content: { 'application/json': { schema: { $ref: '#/components/schemas/ThingRequest' } } },
          },
          responses: {
            '200': { content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } } },
          },
          ...op,
        },
      },
    },
    components: { schemas },
  };
}

const thing = {
  type: 'object',
  required: ['id', 'kind'],
  properties: {
    id: { type: 'string' },
    kind: { type: 'string', enum: ['A', 'B'] },
    amount: { type: 'integer' },
  },
};
const request = {
  type: 'object',
  required: ['kind'],
  properties: { kind: { type: 'string', enum: ['A', 'B'] } },
};

describe('the coverage check', () => {
  it('finds each kind of difference, in the direction where it matters', () => {
    const reference = doc({ Thing: thing, ThingRequest: request });
    const same = compareDocuments(reference, doc({ Thing: thing, ThingRequest: request }));
    expect(same).toEqual([{ operation: 'POST /things/{id}', present: true, findings: [] }]);

    const ours = doc(
      {
        // id optional in a response, amount missing, kind with a value more, an extension
        Thing: {
          type: 'object',
          required: ['kind'],
          properties: { id: { type: 'string' }, kind: { enum: ['A', 'B', 'C'] }, extra: { type: 'string' } },
        },
        // a request that accepts less of the enum and requires more than the reference
        ThingRequest: {
          type: 'object',
          required: ['kind', 'note'],
          properties: { kind: { enum: ['A'] }, note: { type: 'string' } },
        },
      },
      {
        responses: {
          '201': { content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } } },
        },
      },
    );
    expect(compareDocuments(reference, ours)[0]!.findings.sort()).toEqual(
      [
        'ThingRequest.kind: enum lacks B',
        'ThingRequest.note: not in the reference (and required)',
        'POST /things/{id}: answers 201 (reference: 200)',
      ].sort(),
    );
    const responses = compareDocuments(
      reference,
      doc({ Thing: ours.components.schemas.Thing, ThingRequest: request }),
    );
    expect(responses[0]!.findings.sort()).toEqual(
      [
        'Thing.id: optional (required in the reference)',
        'Thing.kind: enum adds C',
        'Thing.amount: missing',
        'Thing.extra: not in the reference',
      ].sort(),
    );
    expect(compareDocuments(reference, { paths: {}, components: { schemas: {} } })[0]!.findings).toEqual([
      'POST /things/{id}: missing',
    ]);
  });

  it("reads OpenAPI 3.1's nullable arrays and objects (`type: [array, 'null']`) as arrays and objects", () => {
    const nullable = (t: Json) => ({
      type: 'object',
      required: ['kind'],
      properties: { kind: { type: 'string', enum: ['A', 'B'] }, ids: t },
    });
    const reference = doc({
      Thing: thing,
      ThingRequest: nullable({ type: ['array', 'null'], items: { type: 'string' } }),
    });
    const ours = (t: Json) => doc({ Thing: thing, ThingRequest: nullable(t) });
    expect(
      compareDocuments(reference, ours({ type: 'array', items: { type: 'string' } }))[0]!.findings,
    ).toEqual([]);
    expect(compareDocuments(reference, ours({ type: 'string' }))[0]!.findings).toEqual([
      'ThingRequest.ids: scalar (reference: array)',
    ]);
  });

  it('compares discriminated variants one by one', () => {
    const variants = (b: Json) => ({
      Thing: {
        oneOf: [{ $ref: '#/components/schemas/ThingA' }, { $ref: '#/components/schemas/ThingB' }],
        discriminator: {
          propertyName: 'kind',
          mapping: { A: '#/components/schemas/ThingA', B: '#/components/schemas/ThingB' },
        },
      },
      ThingA: { type: 'object', required: ['kind'], properties: { kind: { type: 'string', enum: ['A'] } } },
      ThingB: b,
      ThingRequest: request,
    });
    const reference = doc(
      variants({
        type: 'object',
        required: ['kind', 'b'],
        properties: { kind: { enum: ['B'] }, b: { type: 'string' } },
      }),
    );
    const ours = doc(variants({ type: 'object', required: ['kind'], properties: { kind: { enum: ['B'] } } }));
    expect(compareDocuments(reference, ours)[0]!.findings).toEqual([
      'ThingB.b: missing (required in the reference)',
    ]);
  });

  it('compares query parameters, and counts an operation Sluice adds as a difference unless documented', () => {
    const withQuery = (params: Json[]) =>
      doc({ Thing: thing, ThingRequest: request }, { parameters: params });
    const reference = withQuery([{ name: 'accountId', in: 'query', schema: { type: 'string' } }]);
    expect(compareDocuments(reference, withQuery([]))[0]!.findings).toEqual([
      'POST /things/{id}: query parameter accountId missing',
    ]);
    expect(
      compareDocuments(
        reference,
        withQuery([
          { name: 'accountId', in: 'query', required: true, schema: { type: 'string' } },
          { name: 'extra', in: 'query', schema: { type: 'string' } },
        ]),
      )[0]!.findings,
    ).toEqual([
      'POST /things/{id}: query parameter accountId required (optional in the reference)',
      'POST /things/{id}: query parameter extra not in the reference',
    ]);
    const ours = withQuery([{ name: 'accountId', in: 'query', schema: { type: 'string' } }]);
    ours.paths['/things/{thingId}/more'] = { get: { responses: {} } };
    const undocumented = coverageReport(reference, ours, []);
    expect(undocumented.undocumented).toEqual([
      'GET /things/{}/more: not in the reference (an undocumented extension)',
    ]);
    const documented = coverageReport(reference, ours, [
      { id: 'x', title: 'x', reason: 'a reason', extensions: ['GET /things/{id}/more'] },
    ]);
    expect([documented.undocumented, documented.extensions]).toEqual([[], ['GET /things/{}/more']]);
  });

  it('patterns: exact, or * for any text', () => {
    expect(matches('Quote.x: missing', 'Quote.x: missing')).toBe(true);
    expect(matches('Quote.x', 'Quote.x: missing')).toBe(false);
    expect(matches('* /agents*', 'GET /agents/me: missing')).toBe(true);
    expect(matches('*Beneficiary*', 'UsdBeneficiary.fullName: missing')).toBe(true);
    expect(matches('a.b*', 'axb')).toBe(false);
  });

  it("Sluice's OpenAPI document has every reference operation or a documented reason, and nothing undocumented", async () => {
    const report = coverageReport(referenceDocument(), await sluiceOpenApiDocument());
    const present = report.results.filter((r) => r.present).length;
    console.info(
      `reference coverage: ${present} of ${report.total} operations present (${report.same.length} with the same shapes, ` +
        `${report.documented.length} with documented differences); ${report.total - present} missing, each documented`,
    );
    expect(report.undocumented, 'differences not in tools/api-reference/differences.ts').toEqual([]);
    expect(report.stale, 'entries of differences.ts that match no difference any more').toEqual([]);
    expect(report.missingDocumented.length).toBe(report.total - present);
  });

  it('docs/api-differences.md is generated from differences.ts', () => {
    expect(readFileSync(API_DIFFERENCES_DOC, 'utf8'), 'run `npx tsx tools/api-coverage.ts --write`').toBe(
      renderDifferencesDoc(),
    );
    for (const d of DIFFERENCES) expect(d.reason.length, d.id).toBeGreaterThan(10);
  });
});

describe('the reference validator', () => {
  const validator = new ReferenceValidator();
  const quote = {
    id: 'Quote:019542f5-b3e7-1d02-0000-000000000006',
    status: 'PENDING',
    createdAt: '2025-10-03T12:00:00Z',
    expiresAt: '2025-10-03T12:05:00Z',
    source: { sourceType: 'ACCOUNT', accountId: 'InternalAccount:x' },
    destination: { destinationType: 'ACCOUNT', accountId: 'ExternalAccount:y' },
    sendingCurrency: { code: 'USD', name: 'US Dollar', symbol: '$', decimals: 2 },
    receivingCurrency: { code: 'EUR', name: 'Euro', symbol: '€', decimals: 2 },
    totalSendingAmount: 10000,
    totalReceivingAmount: 9200,
    exchangeRate: 0.92,
    feesIncluded: 10,
    transactionId: 'Transaction:019542f5-b3e7-1d02-0000-000000000005',
  };

  it('accepts a body of the reference shape, names what is wrong in one that is not', () => {
    expect(validator.response('POST', '/quotes', 201, quote)).toBeUndefined();
    const { transactionId: _, ...noTransaction } = quote;
    expect(validator.response('GET', '/quotes/Quote:abc', 200, noTransaction)).toEqual({
      what: 'GET /quotes/{quoteId} 200',
      errors: ["(body) must have required property 'transactionId'"],
    });
  });

  it('dispatches a discriminated union on its tag and checks the variant the tag names', () => {
    const bad = { ...quote, source: { sourceType: 'REALTIME_FUNDING' } };
    expect(validator.response('POST', '/quotes', 201, bad)?.errors).toEqual([
      "/source must have required property 'currency'",
    ]);
    const unknown = { ...quote, source: { sourceType: 'SOMETHING' } };
    expect(validator.response('POST', '/quotes', 201, unknown)?.errors).toEqual([
      '/source/sourceType "SOMETHING" is not a value the reference allows',
    ]);
  });

  it('checks error bodies against the error model of their status, and webhooks by type', () => {
    expect(
      validator.response('GET', '/quotes/Quote:abc', 404, {
        status: 404,
        code: 'QUOTE_NOT_FOUND',
        message: 'x',
      }),
    ).toBeUndefined();
    expect(
      validator.response('GET', '/quotes/Quote:abc', 404, {
        status: 404,
        code: 'NO_SUCH_THING',
        message: 'x',
      })?.errors,
    ).toEqual(['/code "NO_SUCH_THING" is not a value the reference allows']);
    // A status the operation does not declare (the gateway's 415): the error model with that status.
    expect(
      validator.response('POST', '/quotes', 415, {
        status: 415,
        code: 'UNSUPPORTED_MEDIA_TYPE',
        message: 'x',
      }),
    ).toBeUndefined();
    expect(
      validator.response('POST', '/quotes', 415, { status: 400, code: 'X', message: 'x' })?.errors,
    ).toEqual(['/status 400 is not a value the reference allows']);
    expect(validator.response('GET', '/nothing/here', 200, {})?.errors).toEqual([
      'the reference has no such operation',
    ]);
    expect(
      validator.webhook({ id: 'Webhook:1', type: 'NOT.A_TYPE', timestamp: '2025-01-01T00:00:00Z' })?.errors,
    ).toEqual(['the reference has no webhook of this type']);
  });

  it('applies overrides and extensions, and the suites use those of differences.ts', () => {
    const { transactionId: _, ...noTransaction } = quote;
    const relaxed = new ReferenceValidator(
      [{ pointer: '/components/schemas/Quote/required', value: ['id'] }],
      ['POST /config/webhook-secret/rotate'],
    );
    expect(relaxed.response('GET', '/quotes/Quote:abc', 200, noTransaction)).toBeUndefined();
    expect(validator.response('GET', '/quotes/Quote:abc', 200, noTransaction)).toBeDefined();
    expect(relaxed.response('POST', '/config/webhook-secret/rotate', 200, {})).toBeUndefined();
    expect(
      () => new ReferenceValidator([{ pointer: '/components/schemas/NoSuchSchema/required', value: [] }]),
    ).toThrow(/does not exist in the reference/);
    expect(schemaOverrides()).toContainEqual({
      pointer: '/components/schemas/OutgoingTransactionStatus/enum',
      value: expect.arrayContaining(['REFUNDED']),
    });
    expect(referenceValidator().response('POST', '/config/webhook-secret/rotate', 200, {})).toBeUndefined();
  });
});
