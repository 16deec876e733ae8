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

export const REFERENCE_NAME = 'grid-openapi-2026-05-13.yaml';
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/**
 * Where the reference document is: `SLUICE_REFERENCE_OPENAPI`, else `shared/reference/<name>`
 * beside the checkout or one of its parents (a worktree sits deeper than the clone).
 */
export function referencePath(): string {
  const explicit = process.env.SLUICE_REFERENCE_OPENAPI;
  if (explicit) return explicit;
  const tried: string[] = [];
  for (let dir = ROOT; ; dir = dirname(dir)) {
    const candidate = join(dir, 'shared', 'reference', REFERENCE_NAME);
    tried.push(candidate);
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) break;
  }
  throw new Error(
    `the reference OpenAPI document ${REFERENCE_NAME} was not found (tried ${tried.join(', ')}); ` +
      'set SLUICE_REFERENCE_OPENAPI to its path',
  );
}

let doc: any;
let ajv: Ajv2020 | undefined;
const BASE = 'https://reference.test/components/schemas/';

/** The parsed reference document (read once per process). */
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
