import type { FastifySchema } from 'fastify';

type Json = Record<string, unknown>;

function isPlainObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Stable JSON (sorted keys) used to compare two schemas that claim the same `$id`. */
function stable(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stable).join(',')}]`;
  if (isPlainObject(v)) {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stable(v[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** `anyOf` of one-value schemas of one type (`{const: 'A', type: 'string'}`, ...): its type and values. */
function literalUnion(schema: Json): { type: string; values: unknown[] } | undefined {
  const members = schema.anyOf;
  if (!Array.isArray(members) || members.length === 0) return undefined;
  const values: unknown[] = [];
  let type: string | undefined;
  for (const m of members) {
    if (!isPlainObject(m) || !('const' in m) || Object.keys(m).some((k) => k !== 'const' && k !== 'type')) return undefined;
    const t = typeof m.type === 'string' ? m.type : typeof m.const;
    if (type !== undefined && t !== type) return undefined;
    type = t;
    values.push(m.const);
  }
  return type === 'string' || type === 'number' || type === 'integer' || type === 'boolean' ? { type, values } : undefined;
}

/**
 * The named schemas (`$id`) found in route schemas. Shared schemas such as
 * `Currency` are embedded in many routes, often twice in one schema (a quote's
 * sending and receiving currency); Ajv and fast-json-stringify refuse the same
 * `$id` twice in one schema. So route schemas are compiled with every `$id`
 * removed (the name is kept as `title`), `$ref`s to a named schema are inlined,
 * and the names come back as `#/components/schemas/<name>` in the OpenAPI
 * document. Two different schemas under one `$id` fail at start.
 */
export class SchemaRegistry {
  private readonly byId = new Map<string, { schema: Json; key: string }>();

  register(id: string, schema: Json): void {
    const key = stable(schema);
    const existing = this.byId.get(id);
    if (existing && existing.key !== key) {
      throw new Error(`Two different schemas use $id "${id}"; give one of them another $id`);
    }
    if (!existing) this.byId.set(id, { schema, key });
  }

  get(id: string): Json | undefined {
    return this.byId.get(id)?.schema;
  }

  /** The registered schema `node` is an inline copy of (same content, title = its name), if any. */
  nameOf(node: Json): string | undefined {
    const title = node.title;
    if (typeof title !== 'string') return undefined;
    const entry = this.byId.get(title);
    return entry && entry.key === stable(node) ? title : undefined;
  }

  entries(): [string, Json][] {
    return [...this.byId.entries()].map(([id, e]) => [id, e.schema]);
  }

  /** Deep copy of `schema` without `$id`s, named schemas registered, known `$ref`s inlined. */
  normalize(schema: unknown, expanding: string[] = []): unknown {
    if (Array.isArray(schema)) return schema.map((s) => this.normalize(s, expanding));
    if (!isPlainObject(schema)) return schema;
    if (typeof schema.$ref === 'string') {
      const id = schema.$ref.replace(/#$/, '');
      const target = this.byId.get(id);
      if (target) {
        if (expanding.includes(id))
          throw new Error(`Recursive schema "${id}" is not supported in route schemas`);
        return this.normalize(target.schema, [...expanding, id]);
      }
    }
    const literals = literalUnion(schema);
    const out: Json = {};
    if (literals) {
      // A union of literals (TypeBox Union of Literal) is an enum: written as one, so code generators
      // and the docs page show an enum (validation and its `must be one of: ...` message are alike).
      out.type = literals.type;
      out.enum = literals.values;
    }
    for (const [k, v] of Object.entries(schema)) {
      if (k === '$id' || (literals && k === 'anyOf')) continue;
      // `properties`, `patternProperties`, `$defs` map names to schemas; everything else is a keyword.
      out[k] = this.normalize(v, expanding);
    }
    if (typeof schema.$id === 'string' && !schema.$id.startsWith('#')) {
      out.title ??= schema.$id;
      this.register(schema.$id, out);
    }
    return out;
  }

  /** Normalizes every part of a route schema (body, querystring, params, headers, responses). */
  normalizeRoute(schema: FastifySchema): FastifySchema {
    const out: FastifySchema & Json = { ...(schema as Json) };
    for (const part of ['body', 'querystring', 'params', 'headers'] as const) {
      if (schema[part] !== undefined) out[part] = this.normalize(schema[part]);
    }
    if (isPlainObject(schema.response)) {
      const responses: Json = {};
      for (const [status, r] of Object.entries(schema.response)) {
        if (isPlainObject(r) && isPlainObject(r.content)) {
          const content: Json = {};
          for (const [type, c] of Object.entries(r.content)) {
            content[type] = isPlainObject(c) ? { ...c, schema: this.normalize(c.schema) } : c;
          }
          responses[status] = { ...r, content };
        } else {
          responses[status] = this.normalize(r);
        }
      }
      out.response = responses;
    }
    return out;
  }

  /**
   * For the OpenAPI document: replaces inline copies of named schemas below the
   * root by `#/components/schemas/<name>`.
   */
  toRefs(schema: unknown, root = true): unknown {
    if (Array.isArray(schema)) return schema.map((s) => this.toRefs(s, false));
    if (!isPlainObject(schema)) return schema;
    if (!root) {
      const name = this.nameOf(schema);
      if (name) return { $ref: `#/components/schemas/${name}` };
    }
    const out: Json = {};
    for (const [k, v] of Object.entries(schema)) out[k] = this.toRefs(v, false);
    return out;
  }
}
