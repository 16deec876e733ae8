import { describe, expect, it } from 'vitest';
import type { BadRequest } from './cases.js';
import { judge, namesField, type Answer } from './oracle.js';
import { ApiDocument } from './operations.js';

/** The oracle refuses what it must: a small document, hand-made answers. */
const api = new ApiDocument({
  openapi: '3.1.0',
  paths: {
    '/things': {
      post: {
        requestBody: { required: true, content: { 'application/json': { schema: { type: 'object' } } } },
        responses: { '201': {}, '400': {}, '401': {}, '413': {} },
      },
    },
  },
  components: {
    schemas: {
      Error: {
        type: 'object',
        required: ['status', 'code', 'message'],
        properties: { status: { type: 'integer' }, code: { type: 'string' }, message: { type: 'string' }, details: { type: 'object' } },
      },
    },
  },
});
const op = api.operations[0]!;
const bad: BadRequest = {
  operation: op.name,
  fault: 'wrong-type',
  what: 'name = 42',
  method: 'POST',
  path: '/things',
  query: '',
  headers: {},
  auth: 'valid',
  field: 'name',
  baseValid: true,
};
const answer = (status: number, json: unknown): Answer => ({
  status,
  contentType: 'application/json; charset=utf-8',
  text: JSON.stringify(json),
  json,
});
const invalid = (...fields: string[]) =>
  answer(400, {
    status: 400,
    code: 'INVALID_INPUT',
    message: 'Invalid input',
    details: { errors: fields.map((field) => ({ field, message: 'is wrong' })) },
  });

describe('the oracle of generated bad input', () => {
  it('passes a documented 400 naming the field (or the object holding it, or one inside it)', () => {
    expect(judge(api, op, bad, invalid('name'))).toEqual([]);
    expect(judge(api, op, { ...bad, field: 'address.line1' }, invalid('address'))).toEqual([]);
    expect(judge(api, op, { ...bad, field: 'address' }, invalid('address.line1'))).toEqual([]);
  });

  it('refuses a 5xx, an acceptance, an undocumented status and a status the class decides otherwise', () => {
    expect(judge(api, op, bad, answer(500, { status: 500, code: 'INTERNAL_ERROR', message: 'x' }))[0]).toMatch(/server error/);
    expect(judge(api, op, bad, answer(201, { id: 'x' }))[0]).toMatch(/accepted/);
    expect(judge(api, op, bad, answer(404, { status: 404, code: 'NOT_FOUND', message: 'x' }))[0]).toMatch(/does not document/);
    expect(judge(api, op, { ...bad, expect: [401] }, invalid('name'))[0]).toMatch(/expected 401/);
  });

  it('refuses a body that is not an Error, or says another status, and a 400 naming another field', () => {
    expect(judge(api, op, bad, answer(400, { error: 'bad' }))[0]).toMatch(/not an Error/);
    expect(judge(api, op, bad, answer(400, { status: 422, code: 'INVALID_INPUT', message: 'x' }))[0]).toMatch(/says status 422/);
    expect(judge(api, op, bad, invalid('other'))[0]).toMatch(/names other, not name/);
    expect(judge(api, op, bad, answer(400, { status: 400, code: 'INVALID_INPUT', message: 'x' }))[0]).toMatch(/without details/);
    // The field is not checked when the generator's base request was not valid itself.
    expect(judge(api, op, { ...bad, baseValid: false }, invalid('other'))).toEqual([]);
  });

  it('matches fields by path, not by prefix of a name', () => {
    expect(namesField('amount', 'amountCurrency')).toBe(false);
    expect(namesField('items[2].name', 'items')).toBe(true);
    expect(namesField('Idempotency-Key', 'idempotency-key')).toBe(true);
  });
});
