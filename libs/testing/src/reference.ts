/* eslint-disable @typescript-eslint/no-explicit-any -- an arbitrary OpenAPI document */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Ajv2020, { type ErrorObject } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';

/**
 * The public reference OpenAPI document (`shared/reference/grid-openapi-2026-05-13.yaml`, beside
 * the repository: `../shared` of a clone, or of a folder above it) and validators of its
 * component schemas, so tests check Sluice's bodies against the reference itself. The
 * document is read, never copied into the project. `SLUICE_REFERENCE_OPENAPI` names another
 * path.
 */

const FILE = join('shared', 'reference', 'grid-openapi-2026-05-13.yaml');

export function referencePath(): string {
  if (process.env.SLUICE_REFERENCE_OPENAPI) return process.env.SLUICE_REFERENCE_OPENAPI;
  let dir = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
  for (let i = 0; i < 4; i++) {
    dir = dirname(dir);
    if (existsSync(join(dir, FILE))) return join(dir, FILE);
  }
  throw new Error(
    `the reference OpenAPI document ${FILE} was not found beside the repository (set SLUICE_REFERENCE_OPENAPI)`,
  );
}

let doc: any;
let ajv: Ajv2020 | undefined;
const BASE = 'https://reference.test/components/schemas/';

/** The parsed reference document. */
export function referenceDocument(): any {
  doc ??= parse(readFileSync(referencePath(), 'utf8'));
  return doc;
}

/**
 * A validator of the reference's component schema `name` (JSON Schema 2020-12, the dialect of
 * OpenAPI 3.1; every `oneOf` must match exactly one branch, which for the discriminated unions
 * of the reference is the branch their discriminator names). Returns the errors, [] when valid.
 */
export function referenceValidator(name: string): (data: unknown) => ErrorObject[] {
  const schemas = referenceDocument().components.schemas;
  if (!schemas[name]) throw new Error(`the reference has no schema ${name}`);
  if (!ajv) {
    ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    const rewrite = (s: unknown) =>
      JSON.parse(JSON.stringify(s), (k, v) =>
        k === '$ref' && typeof v === 'string' ? v.replace('#/components/schemas/', BASE) : v,
      );
    for (const [n, s] of Object.entries(schemas)) ajv.addSchema(rewrite(s), `${BASE}${n}`);
  }
  const validate = ajv.getSchema(`${BASE}${name}`)!;
  return (data) => (validate(data) ? [] : [...(validate.errors ?? [])]);
}
