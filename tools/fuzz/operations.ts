/* eslint-disable @typescript-eslint/no-explicit-any -- an arbitrary OpenAPI document */
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/**
 * The operations of the gateway's own OpenAPI document (`<base>/openapi.json`, as served), each
 * with what the generator needs: its parameters, its body schema and content type, the statuses
 * it documents and how it authenticates. Schemas keep their `$ref`s; `resolve` follows one.
 */

export type Schema = Record<string, any>;

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: Schema;
}

export interface Operation {
  method: string;
  /** The document's path, `{name}` placeholders. */
  path: string;
  /** `METHOD /path`, the name used in every figure. */
  name: string;
  parameters: Parameter[];
  /** The JSON body schema, when the operation takes one. */
  body?: Schema;
  bodyRequired: boolean;
  /** A multipart operation (`multipart/form-data`): only wrong bodies and content types are sent. */
  multipart: boolean;
  /** The statuses the operation documents. */
  responses: Set<number>;
  auth: 'platform' | 'agent' | 'none';
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const BASE = 'https://sluice.local/schemas/';

/** The document's local `$ref`s made absolute, for Ajv (which resolves `#/...` against the schema at hand). */
function rewriteRefs(schema: unknown): unknown {
  return JSON.parse(JSON.stringify(schema), (k, v: unknown) =>
    k === '$ref' && typeof v === 'string' ? v.replace('#/components/schemas/', BASE) : v,
  );
}

export class ApiDocument {
  private readonly ajv: Ajv2020;
  private readonly validators = new Map<Schema, ValidateFunction>();
  readonly operations: Operation[];

  constructor(readonly doc: any) {
    this.ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
    addFormats(this.ajv);
    for (const [name, schema] of Object.entries(doc.components?.schemas ?? {}))
      this.ajv.addSchema(rewriteRefs(schema) as object, `${BASE}${name}`);
    this.operations = [];
    for (const [path, item] of Object.entries<any>(doc.paths ?? {})) {
      for (const method of METHODS) {
        const op = item[method];
        if (!op) continue;
        const parameters: Parameter[] = [...(item.parameters ?? []), ...(op.parameters ?? [])]
          .map((p: any) => this.resolve(p))
          .filter((p: any) => p.in === 'path' || p.in === 'query' || p.in === 'header')
          .map((p: any) => ({ name: p.name, in: p.in, required: Boolean(p.required), schema: p.schema ?? {} }));
        const content = op.requestBody?.content ?? {};
        const security = op.security ?? doc.security ?? [];
        this.operations.push({
          method: method.toUpperCase(),
          path,
          name: `${method.toUpperCase()} ${path}`,
          parameters,
          ...(content['application/json']?.schema ? { body: content['application/json'].schema } : {}),
          bodyRequired: Boolean(op.requestBody?.required),
          multipart: Boolean(content['multipart/form-data']),
          responses: new Set(Object.keys(op.responses ?? {}).map(Number).filter(Number.isInteger)),
          auth:
            security.length === 0
              ? 'none'
              : security.some((s: any) => 'AgentAuth' in s)
                ? 'agent'
                : 'platform',
        });
      }
    }
  }

  /** `schema` with its `$ref` followed (recursively), else itself. */
  resolve(schema: any): any {
    let s = schema;
    for (let i = 0; s && typeof s.$ref === 'string' && i < 32; i++) {
      const parts = (s.$ref as string).replace(/^#\//, '').split('/');
      const { $ref: _ref, ...rest } = s;
      s = { ...parts.reduce((o: any, k) => o?.[k], this.doc), ...rest };
    }
    return s;
  }

  /** Whether `value` satisfies `schema` (the document's JSON Schema, formats checked). */
  valid(schema: Schema, value: unknown): boolean {
    let v = this.validators.get(schema);
    if (!v) {
      v = this.ajv.compile(rewriteRefs(schema) as object);
      this.validators.set(schema, v);
    }
    return v(value) as boolean;
  }

  /** The error body schema (`components.schemas.Error`). */
  get errorSchema(): Schema {
    return { $ref: '#/components/schemas/Error' };
  }
}
