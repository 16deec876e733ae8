/**
 * The public reference OpenAPI document (`grid-openapi-2026-05-13.yaml`, kept outside the
 * repository: see /work/shared/reference/README.md), read once: its operations, and an Ajv
 * (JSON Schema 2020-12, the OpenAPI 3.1 dialect) compiled from its component schemas with the
 * documented differences of `differences.ts` applied as explicit overrides.
 *
 * Discriminators: the reference's unions are `oneOf` + `discriminator.mapping` over variants
 * built with `allOf`, which Ajv's own `discriminator` keyword refuses (it wants the tag in each
 * variant's top-level `properties`). Each such union is compiled as what a discriminator means:
 * the tag must be one of the mapping's values, and the variant the tag names must hold
 * (`if tag = X then $ref variant X`), so an error names the variant and the field at fault.
 */
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { referenceDocument as loadReference } from '@sluice/testing/reference';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- an arbitrary JSON document
export type Json = Record<string, any>;

/** The reference document, parsed once per process by the testing kit (its one loader). */
export function referenceDocument(): Json {
  return loadReference() as Json;
}

export const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

export interface Operation {
  method: string;
  /** The path template with its parameter names erased (`/quotes/{}/execute`), for matching. */
  key: string;
  /** The path as the document writes it. */
  path: string;
  operationId?: string;
  op: Json;
}

/** `/quotes/{quoteId}/execute` → `/quotes/{}/execute` (Fastify's `:id` too). */
export function templateKey(path: string): string {
  return path.replace(/\{[^}]+\}/g, '{}').replace(/:[A-Za-z0-9_]+/g, '{}');
}

/** Every operation of an OpenAPI document, in document order. */
export function operationsOf(doc: Json): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Json))
    for (const method of HTTP_METHODS) {
      const op = (item as Json)[method] as Json | undefined;
      if (op)
        out.push({
          method: method.toUpperCase(),
          key: templateKey(path),
          path,
          operationId: op.operationId,
          op,
        });
    }
  return out;
}

/** The operation of `doc` a concrete request path (`/quotes/Quote:abc/execute?x=1`) is an instance of. */
export function matchOperation(ops: Operation[], method: string, url: string): Operation | undefined {
  const segments = url.split('?')[0]!.split('/').filter(Boolean);
  const candidates = ops.filter((o) => {
    if (o.method !== method.toUpperCase()) return false;
    const t = o.path.split('/').filter(Boolean);
    return t.length === segments.length && t.every((s, i) => s.startsWith('{') || s === segments[i]);
  });
  // A literal segment beats a parameter: /agents/me over /agents/{agentId}.
  const literals = (o: Operation) => o.path.split('/').filter((s) => s && !s.startsWith('{')).length;
  return candidates.sort((a, b) => literals(b) - literals(a))[0];
}

const BASE = 'https://reference.sluice/components/schemas/';

/** Rewrites component refs to Ajv ids and each discriminated `oneOf` to its if/then dispatch. */
function compilable(schema: unknown): unknown {
  return JSON.parse(JSON.stringify(schema), (_k, v: unknown) => {
    if (!v || typeof v !== 'object' || Array.isArray(v)) return v;
    const node = { ...(v as Json) };
    if (typeof node.$ref === 'string') node.$ref = node.$ref.replace('#/components/schemas/', BASE);
    const d = node.discriminator as Json | undefined;
    if (d && typeof d.propertyName === 'string' && d.mapping && Array.isArray(node.oneOf)) {
      const tag = d.propertyName;
      const mapping = Object.entries(d.mapping as Record<string, string>);
      const rest = Object.fromEntries(
        Object.entries(node).filter(([k]) => k !== 'oneOf' && k !== 'discriminator'),
      );
      return {
        ...rest,
        type: 'object',
        required: [...new Set([...((rest.required as string[]) ?? []), tag])],
        allOf: [
          ...((rest.allOf as unknown[]) ?? []),
          { properties: { [tag]: { enum: mapping.map(([value]) => value) } } },
          ...mapping.map(([value, ref]) => ({
            if: { properties: { [tag]: { const: value } }, required: [tag] },
            then: { $ref: ref.replace('#/components/schemas/', BASE) },
          })),
        ],
      };
    }
    return node;
  });
}

/** A schema override: replaces (or with `undefined`, deletes) the value at a JSON pointer into the reference's components. */
export interface SchemaOverride {
  /** `/components/schemas/Quote/required` */
  pointer: string;
  value: unknown;
}

function applyOverride(doc: Json, o: SchemaOverride): void {
  const parts = o.pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  const last = parts.pop()!;
  let node: Json = doc;
  for (const p of parts) {
    if (node[p] === undefined) throw new Error(`override ${o.pointer}: ${p} does not exist in the reference`);
    node = node[p] as Json;
  }
  if (o.value === undefined) delete node[last];
  else node[last] = o.value;
}

export interface Mismatch {
  what: string;
  errors: string[];
}

function describe(errors: ErrorObject[] | null | undefined): string[] {
  // if/then dispatch reports the failed `if` too; it says nothing the variant's own errors do not.
  return (
    (errors ?? [])
      .filter((e) => e.keyword !== 'if')
      // `/data/3/x` and `/data/0/x` are the same finding.
      .map((e) => ({ ...e, instancePath: e.instancePath.replace(/\/\d+(?=\/|$)/g, '/*') }))
      .map((e) =>
        e.keyword === 'enum' || e.keyword === 'const'
          ? `${e.instancePath || '(body)'} ${JSON.stringify(e.data)} is not a value the reference allows`
          : `${e.instancePath || '(body)'} ${e.message}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`,
      )
  );
}

/**
 * Validates REST response bodies and webhook payloads against the reference: the schema of the
 * matched operation and status, or the webhook whose `type` enum holds the payload's type.
 */
export class ReferenceValidator {
  readonly ops: Operation[];
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly webhookSchemas = new Map<string, string>();

  private readonly extensions: Operation[];
  private readonly errorSchemas: Set<string>;

  /**
   * `overrides`: documented differences of shape; `extensions`: operations Sluice has and the
   * reference does not (`GET /internal-accounts/{id}`), whose answers are not checked here.
   */
  constructor(overrides: SchemaOverride[] = [], extensions: string[] = []) {
    const doc = structuredClone(referenceDocument());
    for (const o of overrides) applyOverride(doc, o);
    this.ops = operationsOf(doc);
    this.extensions = extensions.map((e) => {
      const [method, path] = e.split(' ') as [string, string];
      return { method, path, key: templateKey(path), op: {} };
    });
    this.errorSchemas = new Set(Object.keys(doc.components.schemas).filter((n) => /^Error\d{3}$/.test(n)));
    this.ajv = new Ajv2020({ strict: false, allErrors: true, verbose: true });
    addFormats(this.ajv);
    for (const [name, schema] of Object.entries(doc.components.schemas as Json))
      this.ajv.addSchema(compilable(schema) as object, BASE + name);
    for (const w of Object.values((doc.webhooks ?? {}) as Json)) {
      const ref = (w as Json).post?.requestBody?.content?.['application/json']?.schema?.$ref as
        string | undefined;
      if (!ref) continue;
      const name = ref.split('/').pop()!;
      const schema = doc.components.schemas[name] as Json;
      for (const part of [schema, ...((schema.allOf as Json[]) ?? [])])
        for (const type of (part.properties?.type?.enum as string[] | undefined) ?? [])
          this.webhookSchemas.set(type, name);
    }
  }

  private schema(key: string, schema: unknown): ValidateFunction {
    let fn = this.compiled.get(key);
    if (!fn) {
      fn = this.ajv.compile(compilable(schema) as object);
      this.compiled.set(key, fn);
    }
    return fn;
  }

  /**
   * A response body: undefined when it matches, or what is wrong. A path the reference does not
   * have, or a status it does not declare, is a mismatch too (unless `unknownOk`).
   */
  response(method: string, url: string, status: number, body: unknown): Mismatch | undefined {
    const op = matchOperation(this.ops, method, url);
    const what = `${method} ${op?.path ?? url.split('?')[0]} ${status}`;
    if (!op) {
      if (matchOperation(this.extensions, method, url)) return undefined;
      // An unknown route, or a method the path does not take: the error model still holds.
      return status >= 400
        ? this.error(what, status, body)
        : { what, errors: ['the reference has no such operation'] };
    }
    const responses = (op.op.responses ?? {}) as Json;
    const response = (responses[String(status)] ?? responses.default) as Json | undefined;
    if (!response) {
      // An answer of the edge every operation may give (401, 413, 415, 429, 503, ...): the error model.
      if (status >= 400) return this.error(what, status, body);
      return { what, errors: [`the reference declares no ${status} answer for ${op.method} ${op.path}`] };
    }
    const schema = response.content?.['application/json']?.schema;
    if (!schema) {
      return body === undefined || body === ''
        ? undefined
        : { what, errors: ['the reference declares no body for this answer'] };
    }
    const fn = this.schema(`${op.method} ${op.path} ${status}`, schema);
    return fn(body) ? undefined : { what, errors: describe(fn.errors) };
  }

  /**
   * An error answer the operation does not declare: the reference's `Error<status>` when it has
   * one, else its error model with that status (`{status, code, message, details?}`).
   */
  private error(what: string, status: number, body: unknown): Mismatch | undefined {
    const name = `Error${status}`;
    const schema = this.errorSchemas.has(name)
      ? { $ref: `#/components/schemas/${name}` }
      : {
          type: 'object',
          required: ['status', 'code', 'message'],
          properties: {
            status: { const: status },
            code: { type: 'string', pattern: '^[A-Z][A-Z0-9_]*$' },
            message: { type: 'string' },
            details: { type: 'object' },
          },
          additionalProperties: false,
        };
    const fn = this.schema(`error ${status}`, schema);
    return fn(body) ? undefined : { what, errors: describe(fn.errors) };
  }

  /** A webhook payload (`{id, type, timestamp, data}`). */
  webhook(payload: Json): Mismatch | undefined {
    const what = `webhook ${String(payload.type)}`;
    const name = this.webhookSchemas.get(String(payload.type));
    if (!name) return { what, errors: ['the reference has no webhook of this type'] };
    const fn = this.schema(`webhook ${name}`, { $ref: `#/components/schemas/${name}` });
    return fn(payload) ? undefined : { what, errors: describe(fn.errors) };
  }
}
