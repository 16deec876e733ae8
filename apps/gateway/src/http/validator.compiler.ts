import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import type { FieldError } from '@sluice/core';
import { INTEGER_LITERAL_KEYWORD, writtenAsNonInteger } from './edge-input.js';

/**
 * Request validation. Two Ajv instances:
 * - bodies: no type coercion (a JSON "5" is not the integer 5), unknown fields
 *   are errors (never silently removed), defaults applied;
 * - querystring, path params and headers: strings coerced to the declared type
 *   (`?limit=20` is an integer), unknown query fields are errors too.
 * allErrors stays off (Fastify's default: with it on, a crafted body can make
 * validation expensive); the first problem is reported with its field (with
 * its sibling unknown fields, see firstProblem).
 */
function makeAjv(coerce: boolean, allErrors = false): Ajv {
  const ajv = new Ajv({
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    removeAdditional: false,
    allErrors,
    addUsedSchema: false,
    discriminator: true,
    strictTypes: false,
    strictTuples: false,
  });
  addFormats(ajv);
  // OpenAPI annotations that are not JSON Schema keywords.
  ajv.addKeyword({ keyword: 'example' });
  // Bodies: an integer must be written as one in the JSON text (edge-input.ts).
  ajv.addKeyword({
    keyword: INTEGER_LITERAL_KEYWORD,
    schemaType: 'boolean',
    errors: false,
    validate: (_enabled: boolean, _data: unknown, _schema: unknown, cxt?: { instancePath: string; rootData: unknown }) =>
      !cxt || !writtenAsNonInteger(cxt.rootData, cxt.instancePath),
  });
  // Every number: finite, and an integer exactly representable (coercion turns `?n=1e999` into Infinity, JSON `1e400` too).
  ajv.addKeyword({
    keyword: REPRESENTABLE_KEYWORD,
    schemaType: 'boolean',
    errors: false,
    validate: (_enabled: boolean, data: unknown) =>
      typeof data !== 'number' || (Number.isInteger(data) ? Number.isSafeInteger(data) : Number.isFinite(data)),
  });
  return ajv;
}

/** Ajv keyword added to every `integer` and `number`: fails on Infinity, NaN and integers beyond ±(2^53 − 1). */
const REPRESENTABLE_KEYWORD = 'representableNumber';

/**
 * A copy of a schema whose every `integer` and `number` must be representable
 * (REPRESENTABLE_KEYWORD) and, in a body, every `integer` written as an integer
 * literal (INTEGER_LITERAL_KEYWORD).
 */
function withNumberRules(schema: unknown, body: boolean): unknown {
  if (Array.isArray(schema)) return schema.map((s) => withNumberRules(s, body));
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) out[k] = k === 'enum' || k === 'const' ? v : withNumberRules(v, body);
  const type = (schema as { type?: unknown }).type;
  const types = Array.isArray(type) ? type : [type];
  if (body && types.includes('integer')) out[INTEGER_LITERAL_KEYWORD] = true;
  if (types.includes('integer') || types.includes('number')) out[REPRESENTABLE_KEYWORD] = true;
  return out;
}

/**
 * A validator that stops at the first problem, except that an unknown field
 * brings every unknown field of the same object with it (a request naming
 * `umaAddress` and `currency` of another variant hears of both). Those are
 * found by a second, all-errors pass over the request that already failed.
 */
function firstProblem(fast: ValidateFunction, compileFull: () => ValidateFunction): ValidateFunction {
  let full: ValidateFunction | undefined;
  const validate = ((data: unknown) => {
    if (fast(data)) return true;
    let errors = fast.errors ?? [];
    const first = errors[0];
    if (first?.keyword === 'additionalProperties') {
      full ??= compileFull();
      full(data);
      const unknown = (full.errors ?? []).filter(
        (e) =>
          e.keyword === 'additionalProperties' &&
          e.instancePath === first.instancePath &&
          e.schemaPath === first.schemaPath,
      );
      if (unknown.length) errors = unknown;
    }
    validate.errors = errors;
    return false;
  }) as ValidateFunction;
  return validate;
}

/**
 * A validator compiled on its first use. Compiling every route's schemas at start-up cost the
 * gateway about 1.3 s of CPU before it could serve (a restart under load waited on it); a route's
 * first request now pays its own few milliseconds. `deferred` collects each pending compilation,
 * so tests (and anyone who wants the start-up cost back) can compile them all at once.
 */
function compiledOnFirstUse(compile: () => ValidateFunction, deferred?: Array<() => void>): ValidateFunction {
  let fn: ValidateFunction | undefined;
  const ensure = () => (fn ??= compile());
  const validate = ((data: unknown) => {
    const f = ensure();
    const ok = f(data);
    validate.errors = f.errors ?? null;
    return ok;
  }) as ValidateFunction;
  deferred?.push(() => void ensure());
  return validate;
}

export function createValidatorCompiler(deferred?: Array<() => void>): FastifySchemaCompiler<unknown> {
  const bodyAjv = makeAjv(false);
  const bodyAjvAllErrors = makeAjv(false, true);
  const paramsAjv = makeAjv(true);
  const paramsAjvAllErrors = makeAjv(true, true);
  return ({ schema, httpPart }) =>
    compiledOnFirstUse(() => {
      const s = withNumberRules(schema, httpPart === 'body') as object;
      if (httpPart === 'body') return firstProblem(bodyAjv.compile(s), () => bodyAjvAllErrors.compile(s));
      return firstProblem(paramsAjv.compile(s), () => paramsAjvAllErrors.compile(s));
    }, deferred);
}

/** `/address/postalCode` → `address.postalCode`, `/items/0/name` → `items[0].name`. */
export function pointerToField(pointer: string): string {
  if (!pointer) return '';
  let out = '';
  for (const raw of pointer.split('/').slice(1)) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (/^\d+$/.test(seg)) out += `[${seg}]`;
    else out += out ? `.${seg}` : seg;
  }
  return out;
}

function join(base: string, prop: string): string {
  return base ? `${base}.${prop}` : prop;
}

const PART_NAME: Record<string, string> = {
  body: 'body',
  querystring: 'query',
  params: 'path',
  headers: 'headers',
};

function describe(e: ErrorObject): string {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
    case 'unevaluatedProperties':
      return 'is not a known field';
    case 'enum':
      return `must be one of: ${(p.allowedValues as unknown[]).map((v) => String(v)).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(p.allowedValue)}`;
    case 'type':
      return `must be ${String(p.type).replace(/,/g, ' or ')}`;
    case 'format':
      return `must be a valid ${String(p.format)}`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `must be ${String(p.comparison)} ${String(p.limit)}`;
    case 'minLength':
      return `must have at least ${String(p.limit)} character${p.limit === 1 ? '' : 's'}`;
    case 'maxLength':
      return `must have at most ${String(p.limit)} characters`;
    case 'minItems':
      return `must have at least ${String(p.limit)} item${p.limit === 1 ? '' : 's'}`;
    case 'maxItems':
      return `must have at most ${String(p.limit)} items`;
    case 'pattern': {
      const id = /^\^([A-Za-z]+):\[0-9a-fA-F\]\{8\}/.exec(String(p.pattern));
      return id ? `must be a ${id[1]} id (${id[1]}:<uuid>)` : `must match the pattern ${String(p.pattern)}`;
    }
    case 'anyOf':
    case 'oneOf':
      return 'does not match any of the accepted shapes';
    case INTEGER_LITERAL_KEYWORD:
      return 'must be an integer, written without a fraction or an exponent';
    case REPRESENTABLE_KEYWORD:
      return 'must be a finite number (an integer of at most 9007199254740991 in magnitude)';
    case 'minProperties':
      return `must have at least ${String(p.limit)} field${p.limit === 1 ? '' : 's'}`;
    case 'maxProperties':
      return `must have at most ${String(p.limit)} fields`;
    default:
      return e.message ?? 'is invalid';
  }
}

function fieldOf(e: ErrorObject, part: string): string {
  const base = pointerToField(e.instancePath);
  const p = e.params as Record<string, unknown>;
  let field = base;
  if (e.keyword === 'required') field = join(base, String(p.missingProperty));
  else if (e.keyword === 'additionalProperties') field = join(base, String(p.additionalProperty));
  else if (e.keyword === 'unevaluatedProperties') field = join(base, String(p.unevaluatedProperty));
  return field || PART_NAME[part] || part;
}

/**
 * Of the errors Ajv reports for a failed anyOf/oneOf (one per branch, then the
 * union's own), keeps the branch that got furthest: the error deepest in the
 * document, preferring a real problem over a mismatched type/const/enum (the
 * branch's discriminator). Other errors pass through.
 */
function collapseUnions(errors: ErrorObject[]): ErrorObject[] {
  const unions = errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf');
  if (unions.length === 0) return errors;
  let rest = errors;
  for (const u of unions) {
    const prefix = `${u.schemaPath}/`;
    const branch = rest.filter((e) => e.schemaPath.startsWith(prefix));
    rest = rest.filter((e) => e !== u && !e.schemaPath.startsWith(prefix));
    if (branch.length === 0) {
      rest.push(u);
      continue;
    }
    const score = (e: ErrorObject) =>
      e.instancePath.split('/').length * 4 +
      (e.keyword === 'required' || e.keyword === 'additionalProperties' ? 1 : 0) +
      (['type', 'const', 'enum'].includes(e.keyword) ? 0 : 2);
    const shallow = branch.every(
      (e) => e.instancePath === u.instancePath && ['type', 'const', 'enum'].includes(e.keyword),
    );
    if (shallow) {
      rest.push(mergeShallow(u, branch));
      continue;
    }
    rest.push(branch.reduce((a, b) => (score(b) > score(a) ? b : a)));
  }
  return rest;
}

/**
 * Every branch of the union failed on the value itself (a union of literals, a
 * nullable): one error listing what is accepted, e.g. `must be one of: A, B`.
 */
function mergeShallow(u: ErrorObject, branch: ErrorObject[]): ErrorObject {
  const allowed: unknown[] = [];
  const types: string[] = [];
  for (const e of branch) {
    const p = e.params as Record<string, unknown>;
    if (e.keyword === 'const') allowed.push(p.allowedValue);
    else if (e.keyword === 'enum') allowed.push(...(p.allowedValues as unknown[]));
    else types.push(String(p.type));
  }
  if (types.length === 0) return { ...u, keyword: 'enum', params: { allowedValues: allowed } };
  if (allowed.length === 0) return { ...u, keyword: 'type', params: { type: [...new Set(types)].join(',') } };
  return u;
}

/** Ajv errors of one request part as `{field, message}` (field as a JSON path, e.g. `address.postalCode`). */
export function toFieldErrors(errors: ErrorObject[], part: string): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (const e of collapseUnions(errors)) {
    const fe = { field: fieldOf(e, part), message: describe(e) };
    const key = `${fe.field}\u0000${fe.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(fe);
  }
  return out;
}
