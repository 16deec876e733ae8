import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { TSchema } from '@sinclair/typebox';
import type { EventContract } from '@sluice/api';

/** A compiled check of one contract's data schema. */
export interface ContractCheck {
  /** The first problem (`/path: message`), or undefined when the data satisfies the schema. */
  firstError(data: unknown): string | undefined;
}

const compiled = new WeakMap<TSchema, ValidateFunction>();

/** The schema as plain JSON without `$id`s (they name OpenAPI components; a public schema repeats some, such as Currency). */
function anonymous(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(anonymous);
  if (schema === null || typeof schema !== 'object') return schema;
  return Object.fromEntries(
    Object.entries(schema)
      .filter(([k]) => k !== '$id')
      .map(([k, v]) => [k, anonymous(v)]),
  );
}

/**
 * The compiled check of a contract's data (Ajv, the JSON Schema validator the
 * gateway uses too; compiled once per schema).
 */
export function contractCheck(contract: EventContract): ContractCheck {
  let validate = compiled.get(contract.data);
  if (!validate) {
    validate = addFormats(new Ajv({ strict: false, allErrors: false })).compile(anonymous(contract.data) as object);
    compiled.set(contract.data, validate);
  }
  const v = validate;
  return {
    firstError(data) {
      if (v(data)) return undefined;
      const e = v.errors?.[0];
      return e ? `${e.instancePath || '/'}: ${e.message ?? 'is invalid'}` : 'does not match';
    },
  };
}
