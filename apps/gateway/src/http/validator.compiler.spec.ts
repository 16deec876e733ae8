import { describe, expect, it } from 'vitest';
import { Type } from '@sinclair/typebox';
import { createValidatorCompiler, pointerToField, toFieldErrors } from './validator.compiler.js';

const compile = createValidatorCompiler();

function errorsOf(schema: object, data: unknown, httpPart = 'body') {
  const validate = compile({ schema, httpPart, method: 'POST', url: '/x' }) as unknown as ((
    d: unknown,
  ) => boolean) & { errors: never[] };
  return validate(data) ? [] : toFieldErrors(validate.errors, httpPart);
}

describe('request validation', () => {
  it('turns JSON pointers into JSON paths', () => {
    expect(pointerToField('/address/postalCode')).toBe('address.postalCode');
    expect(pointerToField('/items/0/name')).toBe('items[0].name');
    expect(pointerToField('/a~1b/c~0d')).toBe('a/b.c~d');
    expect(pointerToField('')).toBe('');
  });

  it('never coerces body types but coerces querystrings', () => {
    const schema = Type.Object({ limit: Type.Integer() }, { additionalProperties: false });
    expect(errorsOf(schema, { limit: '5' })).toEqual([{ field: 'limit', message: 'must be integer' }]);
    expect(errorsOf(schema, { limit: '5' }, 'querystring')).toEqual([]);
  });

  it('reports unknown fields instead of removing them', () => {
    const schema = Type.Object(
      { a: Type.Object({ b: Type.String() }, { additionalProperties: false }) },
      { additionalProperties: false },
    );
    const data = { a: { b: 'x', c: 1 } };
    expect(errorsOf(schema, data)).toEqual([{ field: 'a.c', message: 'is not a known field' }]);
    expect(data.a).toHaveProperty('c');
  });

  it('names the body when the body itself is wrong', () => {
    expect(errorsOf(Type.Object({}), [1])).toEqual([{ field: 'body', message: 'must be object' }]);
  });

  it('reports the branch of a discriminated union that matched best', () => {
    const Individual = Type.Object(
      { type: Type.Literal('INDIVIDUAL'), birthDate: Type.String({ format: 'date' }) },
      { additionalProperties: false },
    );
    const Business = Type.Object(
      { type: Type.Literal('BUSINESS'), legalName: Type.String({ minLength: 1 }) },
      { additionalProperties: false },
    );
    const schema = Type.Union([Individual, Business]);
    expect(errorsOf(schema, { type: 'BUSINESS', legalName: '' })).toEqual([
      { field: 'legalName', message: 'must have at least 1 character' },
    ]);
    expect(errorsOf(schema, { type: 'INDIVIDUAL', birthDate: 'yesterday' })).toEqual([
      { field: 'birthDate', message: 'must be a valid date' },
    ]);
  });

  it('lists accepted values for a union of literals and types for a nullable', () => {
    expect(
      errorsOf(Type.Object({ k: Type.Union([Type.Literal('A'), Type.Literal('B')]) }), { k: 'C' }),
    ).toEqual([{ field: 'k', message: 'must be one of: A, B' }]);
    expect(errorsOf(Type.Object({ k: Type.Union([Type.String(), Type.Null()]) }), { k: 1 })).toEqual([
      { field: 'k', message: 'must be string or null' },
    ]);
  });
});
