/* eslint-disable @typescript-eslint/no-explicit-any -- schemas of an arbitrary OpenAPI document */
import fc from 'fast-check';
import type { ApiDocument, Operation, Parameter, Schema } from './operations.js';

/**
 * fast-check arbitraries of bad requests, built from each operation's schemas: a request valid
 * in every part the document describes (path ids, required query parameters, a minimal body),
 * then exactly one fault of one class. Because the rest is valid, the answer must name the
 * field at fault (`field`). Each case is checked invalid against the document before it is
 * sent (`invalidBy`), so an accepted case is the gateway's fault, never the generator's.
 */

/** One class of bad input. */
export type FaultClass =
  | 'wrong-type'
  | 'missing-required'
  | 'unknown-field'
  | 'number-boundary'
  | 'huge-string'
  | 'huge-array'
  | 'deep-nesting'
  | 'unicode'
  | 'invalid-utf8'
  | 'malformed-json'
  | 'not-an-object'
  | 'unexpected-body'
  | 'oversized-body'
  | 'content-type'
  | 'content-encoding'
  | 'query-value'
  | 'query-unknown'
  | 'query-duplicate'
  | 'query-missing'
  | 'query-huge'
  | 'path-malformed-id'
  | 'path-traversal'
  | 'path-unicode'
  | 'path-long'
  | 'bad-auth'
  | 'bad-idempotency-key'
  | 'huge-header'
  | 'multipart-body';

export interface BadRequest {
  operation: string;
  fault: FaultClass;
  /** What exactly is wrong, for the report (one line). */
  what: string;
  method: string;
  /** Path below the API base, already percent-encoded where meant to be. */
  path: string;
  /** Raw query string (no `?`), possibly empty. */
  query: string;
  /** Extra headers; `null` leaves a header out (e.g. no Content-Type with a body). */
  headers: Record<string, string | null>;
  /** `valid` = the run's platform credential; `null` = no Authorization header. */
  auth: string | null;
  body?: Buffer;
  /** The field the error must name (INVALID_INPUT), when the fault sits in one field. */
  field?: string;
  /** The only acceptable statuses, when the class decides it (e.g. 401 for bad credentials). */
  expect?: number[];
  /** Whether the rest of the request is valid by the document (then `field` must be named). */
  baseValid: boolean;
  /** The body as the schema sees it, for the check that a schema fault really is one. */
  schemaFault?: unknown;
}

export const VALID_AUTH = 'valid';
const SAFE = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'.split('');
const UNSAFE_TEXT = /[\u0000-\u001f\u007f-\u009f\ud800-\udfff]/;
const MAX_DEPTH = 12;
/** The gateway's longest string anywhere (edge-input.ts MAX_STRING_LENGTH): huge strings go past it. */
const EDGE_STRING = 16_384;

type Segment = string | number;
interface Slot {
  path: Segment[];
  schema: Schema;
}
interface Generated {
  value: unknown;
  /** Every value generated, with its (resolved) schema: where a fault can go. */
  slots: Slot[];
  /** Every object generated, with its schema. */
  objects: Slot[];
}

function fieldName(path: Segment[], root = 'body'): string {
  let out = '';
  for (const seg of path) out += typeof seg === 'number' ? `[${seg}]` : out ? `.${seg}` : seg;
  return out || root;
}

function typesOf(s: Schema): string[] {
  if (Array.isArray(s.type)) return s.type;
  if (typeof s.type === 'string') return [s.type];
  return [];
}

/** Valid strings of a string schema (visible ASCII, the bounds and format respected). */
function stringArb(s: Schema): fc.Arbitrary<string> {
  switch (s.format) {
    case 'date-time':
      return fc.constantFrom('2026-01-02T03:04:05Z', '2025-12-31T23:59:59.000Z');
    case 'date':
      return fc.constant('2026-01-02');
    case 'email':
      return fc.constant('ada@example.com');
    case 'uri':
    case 'url':
      return fc.constant('https://example.com/hooks');
    case 'uuid':
      return fc.uuid();
  }
  const min = Math.max(s.minLength ?? 1, 1);
  const max = Math.min(s.maxLength ?? min + 12, min + 12);
  if (typeof s.pattern === 'string') {
    let re: RegExp;
    try {
      re = new RegExp(s.pattern, 'u');
    } catch {
      return fc.constant('x'.repeat(min));
    }
    return fc
      .stringMatching(re)
      .filter((v) => v.length >= (s.minLength ?? 0) && v.length <= (s.maxLength ?? 255) && !UNSAFE_TEXT.test(v));
  }
  return fc.string({ unit: fc.constantFrom(...SAFE), minLength: min, maxLength: Math.max(min, max) });
}

/** Valid numbers of an integer or number schema (integers only: they are valid numbers too). */
function numberArb(s: Schema): fc.Arbitrary<number> {
  let min = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : 1);
  let max = s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - 1 : Math.max(min, 1) + 1000);
  if (max < min) max = min;
  min = Math.ceil(min);
  max = Math.floor(max);
  return fc.integer({ min, max });
}

/** A valid value of `schema` (best effort: unions pick a branch, optional fields are left out). */
export function validValue(api: ApiDocument, schema: Schema, path: Segment[] = [], depth = 0): fc.Arbitrary<Generated> {
  const s = api.resolve(schema);
  const leaf = (a: fc.Arbitrary<unknown>): fc.Arbitrary<Generated> =>
    a.map((value) => ({ value, slots: [{ path, schema: s }], objects: [] }));
  if (!s || typeof s !== 'object' || depth > MAX_DEPTH) return leaf(fc.constant('x'));
  if (s.const !== undefined) return leaf(fc.constant(s.const));
  if (Array.isArray(s.enum) && s.enum.length) return leaf(fc.constantFrom(...s.enum.filter((v: unknown) => v !== null)));
  if (Array.isArray(s.allOf)) {
    // Nested allOf flattened: a discriminated union is `allOf [tag, oneOf]`, itself inside an allOf.
    const flat = (x: Schema): Schema[] => {
      const r = api.resolve(x);
      return Array.isArray(r.allOf) ? r.allOf.flatMap(flat) : [r];
    };
    const members = flat(s);
    const union = members.find((m: Schema) => m.oneOf || m.anyOf);
    if (union) return validValue(api, union, path, depth + 1);
    const merged: Schema = { type: 'object', properties: {}, required: [] };
    for (const m of members) {
      Object.assign(merged.properties, m.properties ?? {});
      merged.required.push(...(m.required ?? []));
      if (m.additionalProperties !== undefined) merged.additionalProperties = m.additionalProperties;
    }
    return validValue(api, merged, path, depth + 1);
  }
  const branches: Schema[] | undefined = s.oneOf ?? s.anyOf;
  if (Array.isArray(branches) && branches.length) {
    const usable = branches.filter((b) => !typesOf(api.resolve(b)).includes('null') || typesOf(api.resolve(b)).length > 1);
    return fc.oneof(...(usable.length ? usable : branches).map((b) => validValue(api, b, path, depth + 1)));
  }
  const type = typesOf(s).find((t) => t !== 'null') ?? (s.properties ? 'object' : undefined);
  switch (type) {
    case 'object': {
      const required: string[] = (s.required ?? []).filter((k: string) => s.properties?.[k] !== undefined);
      // `minProperties` (a PATCH must change something): the first optional fields make up the count.
      for (const k of Object.keys(s.properties ?? {}))
        if (required.length < (s.minProperties ?? 0) && !required.includes(k)) required.push(k);
      const parts = required.map((k) => validValue(api, s.properties[k], [...path, k], depth + 1));
      return fc.tuple(...parts).map((gens) => {
        const value: Record<string, unknown> = {};
        const slots: Slot[] = [{ path, schema: s }];
        const objects: Slot[] = [{ path, schema: s }];
        gens.forEach((g, i) => {
          value[required[i]!] = g.value;
          slots.push(...g.slots);
          objects.push(...g.objects);
        });
        return { value, slots, objects };
      });
    }
    case 'array': {
      const n = s.minItems ?? 0;
      if (n === 0 || !s.items) return leaf(fc.constant([]));
      return fc
        .tuple(...Array.from({ length: n }, (_, i) => validValue(api, s.items, [...path, i], depth + 1)))
        .map((gens) => ({
          value: gens.map((g) => g.value),
          slots: [{ path, schema: s }, ...gens.flatMap((g) => g.slots)],
          objects: gens.flatMap((g) => g.objects),
        }));
    }
    case 'string':
      return leaf(stringArb(s));
    case 'integer':
    case 'number':
      return leaf(numberArb(s));
    case 'boolean':
      return leaf(fc.boolean());
    default:
      return leaf(fc.constant('x'));
  }
}

function setAt(root: unknown, path: Segment[], value: unknown): unknown {
  if (path.length === 0) return value;
  const copy: any = Array.isArray(root) ? [...(root as unknown[])] : { ...(root as object) };
  copy[path[0]!] = setAt(copy[path[0]!], path.slice(1), value);
  return copy;
}

function deleteAt(root: unknown, path: Segment[], key: string): unknown {
  if (path.length === 0) {
    const { [key]: _gone, ...rest } = root as Record<string, unknown>;
    return rest;
  }
  const copy: any = Array.isArray(root) ? [...(root as unknown[])] : { ...(root as object) };
  copy[path[0]!] = deleteAt(copy[path[0]!], path.slice(1), key);
  return copy;
}

/** Stands for a raw JSON text in a value: replaced in the serialized body. */
const RAW = (i: number) => `\u0001raw${i}\u0001`;
function serialize(value: unknown, raws: (string | Buffer)[] = []): Buffer {
  let text = JSON.stringify(value);
  if (raws.length === 0) return Buffer.from(text, 'utf8');
  const parts: Buffer[] = [];
  for (let i = 0; i < raws.length; i++) {
    const marker = JSON.stringify(RAW(i));
    const at = text.indexOf(marker);
    parts.push(Buffer.from(text.slice(0, at), 'utf8'));
    const raw = raws[i]!;
    parts.push(typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw);
    text = text.slice(at + marker.length);
  }
  parts.push(Buffer.from(text, 'utf8'));
  return Buffer.concat(parts);
}

/** JSON values of another type than the schema's. */
function wrongTypes(s: Schema): unknown[] {
  const types = typesOf(s);
  const candidates: [string, unknown][] = [
    ['integer', 42],
    ['number', 4.5],
    ['string', 'text'],
    ['boolean', true],
    ['null', null],
    ['array', [1]],
    ['object', { a: 1 }],
  ];
  return candidates
    .filter(([t]) => !types.includes(t) && !(t === 'integer' && types.includes('number')))
    .map(([, v]) => v);
}

const UNUSUAL = ['\u202e', '\u200b', '\ufeff', '\u2028', 'é', '\u0301', '😀', 'ﷺ'];
const FORBIDDEN = ['\u0000', '\u0007', '\u001b', '\u007f', '\u0085', '\ud800', '\udfff', '\ud83d'];
const INVALID_UTF8 = [
  Buffer.from([0xff]),
  Buffer.from([0xc3, 0x28]),
  Buffer.from([0xed, 0xa0, 0x80]),
  Buffer.from([0xc0, 0xaf]),
  Buffer.from([0xf8, 0x88, 0x80, 0x80, 0x80]),
  Buffer.from([0xe2, 0x82]),
];
const NUMBER_LITERALS = [
  '1.5',
  '1e2',
  '1E400',
  '-1e400',
  '9223372036854775808',
  '-9223372036854775809',
  '99999999999999999999999999999999',
  '-0.0',
  '0.1e1',
  '1.0',
];
const UNKNOWN_FIELDS = ['unknownField', '__proto__', 'constructor', 'prototype', '$where', 'x'.repeat(90)];

/** Faults only the schema refuses (the others break an edge rule: text, depth, literals, bytes). */
const SCHEMA_FAULTS = new Set<FaultClass>(['wrong-type', 'missing-required', 'unknown-field', 'huge-array']);

interface Base {
  pathValues: Record<string, string>;
  query: [string, string][];
  body?: Generated;
  idempotencyKey?: string;
  bodyValid: boolean;
}

function pathOf(op: Operation, values: Record<string, string>): string {
  return op.path.replace(/\{([^}]+)\}/g, (_, name: string) => values[name] ?? encodeURIComponent(name));
}

function queryText(pairs: [string, string][]): string {
  return pairs.map(([k, v]) => `${k}=${v}`).join('&');
}

function baseArb(api: ApiDocument, op: Operation): fc.Arbitrary<Base> {
  const pathParams = op.parameters.filter((p) => p.in === 'path');
  const required = op.parameters.filter((p) => p.in === 'query' && p.required);
  const str = (p: Parameter) =>
    validValue(api, p.schema).map((g) => encodeURIComponent(String(g.value)));
  return fc.record({
    pathValues: fc.tuple(...pathParams.map(str)).map((vs) => Object.fromEntries(vs.map((v, i) => [pathParams[i]!.name, v]))),
    query: fc.tuple(...required.map(str)).map((vs) => vs.map((v, i) => [required[i]!.name, v] as [string, string])),
    body: op.body ? validValue(api, op.body) : fc.constant(undefined),
    idempotencyKey: op.method === 'POST' ? fc.option(fc.uuid(), { nil: undefined }) : fc.constant(undefined),
  }).map((b) => ({ ...b, bodyValid: !op.body || !b.body || api.valid(op.body, b.body.value) })) as fc.Arbitrary<Base>;
}

type Fault = Omit<BadRequest, 'operation' | 'method' | 'auth'> & { auth?: string | null };

/** The request `base` would be, with one part replaced (`over`). */
function request(op: Operation, base: Base, over: Partial<Fault> & Pick<Fault, 'fault' | 'what'>): BadRequest {
  const headers: Record<string, string | null> = {};
  if (base.idempotencyKey) headers['idempotency-key'] = base.idempotencyKey;
  if (base.body) headers['content-type'] = 'application/json';
  return {
    operation: op.name,
    method: op.method,
    path: pathOf(op, base.pathValues),
    query: queryText(base.query),
    ...(base.body ? { body: serialize(base.body.value) } : {}),
    auth: VALID_AUTH,
    baseValid: base.bodyValid,
    ...over,
    headers: { ...headers, ...over.headers },
  };
}

/** Faults inside the JSON body: one value or object of it. */
function bodyFaults(api: ApiDocument, op: Operation, base: Base): fc.Arbitrary<BadRequest>[] {
  const gen = base.body;
  if (!gen) return [];
  const out: fc.Arbitrary<BadRequest>[] = [];
  const typed = gen.slots.filter((s) => typesOf(s.schema).length > 0 || s.schema.enum || s.schema.const !== undefined);
  const withBody = (fault: FaultClass, what: string, value: unknown, field: string, raws?: (string | Buffer)[]) =>
    request(op, base, { fault, what, body: serialize(value, raws), field, ...(SCHEMA_FAULTS.has(fault) ? { schemaFault: value } : {}) });
  if (typed.length) {
    out.push(
      fc.tuple(fc.constantFrom(...typed), fc.nat()).map(([slot, i]) => {
        const options = wrongTypes(slot.schema);
        const v = options[i % options.length] ?? 'text';
        return withBody('wrong-type', `${fieldName(slot.path)} = ${JSON.stringify(v)}`, setAt(gen.value, slot.path, v), fieldName(slot.path));
      }),
    );
  }
  const numbers = gen.slots.filter((s) => typesOf(s.schema).some((t) => t === 'integer' || t === 'number'));
  if (numbers.length) {
    out.push(
      fc.tuple(fc.constantFrom(...numbers), fc.nat()).map(([slot, i]) => {
        const s = slot.schema;
        const literals = [...NUMBER_LITERALS.filter((l) => typesOf(s).includes('integer') || !/^-?\d+$|\.0$/.test(l))];
        if (typeof s.maximum === 'number') literals.push(String(s.maximum + 1));
        if (typeof s.minimum === 'number') literals.push(String(s.minimum - 1));
        const raw = literals[i % literals.length]!;
        return withBody('number-boundary', `${fieldName(slot.path)} = ${raw}`, setAt(gen.value, slot.path, RAW(0)), fieldName(slot.path), [raw]);
      }),
    );
  }
  const strings = gen.slots.filter((s) => typesOf(s.schema).includes('string') && !s.schema.enum && s.schema.const === undefined);
  if (strings.length) {
    out.push(
      fc.tuple(fc.constantFrom(...strings), fc.integer({ min: 0, max: 60_000 })).map(([slot, extra]) => {
        const limit = Math.min(slot.schema.maxLength ?? EDGE_STRING, EDGE_STRING);
        const n = limit + 1 + extra;
        return withBody('huge-string', `${fieldName(slot.path)}: ${n} characters`, setAt(gen.value, slot.path, 'x'.repeat(n)), fieldName(slot.path));
      }),
      fc
        .tuple(
          fc.constantFrom(...strings),
          fc.array(fc.constantFrom(...UNUSUAL, ...SAFE), { maxLength: 6 }),
          fc.constantFrom(...FORBIDDEN),
          fc.nat(6),
        )
        .map(([slot, decoration, bad, at]) => {
          const text = [...decoration.slice(0, at), bad, ...decoration.slice(at)].join('');
          return withBody('unicode', `${fieldName(slot.path)} = ${JSON.stringify(text)}`, setAt(gen.value, slot.path, text), fieldName(slot.path));
        }),
      fc.tuple(fc.constantFrom(...strings), fc.constantFrom(...INVALID_UTF8)).map(([slot, bytes]) => {
        const raw = Buffer.concat([Buffer.from('"ab'), bytes, Buffer.from('cd"')]);
        return {
          ...withBody('invalid-utf8', `${fieldName(slot.path)} holds bytes ${bytes.toString('hex')}`, setAt(gen.value, slot.path, RAW(0)), 'body', [raw]),
        };
      }),
    );
  }
  out.push(
    fc.tuple(fc.constantFrom(...gen.slots), fc.integer({ min: 33, max: 5_000 }), fc.boolean()).map(([slot, depth, arrays]) => {
      const raw = arrays ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
      const what = `${fieldName(slot.path)}: ${depth} levels of ${arrays ? 'arrays' : 'objects'}`;
      const c = withBody('deep-nesting', what, setAt(gen.value, slot.path, RAW(0)), fieldName(slot.path), [raw]);
      // Nested at the root, the problem is named at the depth it is found (`[0][0]…`): no one field.
      return slot.path.length ? c : { ...c, field: undefined };
    }),
  );
  const arrays = gen.slots.filter((s) => typesOf(s.schema).includes('array') && s.schema.items);
  if (arrays.length) {
    out.push(
      fc.tuple(fc.constantFrom(...arrays), fc.integer({ min: 1_000, max: 20_000 })).chain(([slot, n]) =>
        validValue(api, slot.schema.items).map((item) => {
          const over = Math.max(n, (slot.schema.maxItems ?? 0) + 1);
          return withBody('huge-array', `${fieldName(slot.path)}: ${over} items`, setAt(gen.value, slot.path, Array(over).fill(item.value)), fieldName(slot.path));
        }),
      ),
    );
  }
  const withRequired = gen.objects.filter((o) => (o.schema.required ?? []).some((k: string) => o.schema.properties?.[k]));
  if (withRequired.length) {
    out.push(
      fc.tuple(fc.constantFrom(...withRequired), fc.nat()).map(([o, i]) => {
        const keys = (o.schema.required as string[]).filter((k) => o.schema.properties?.[k]);
        const key = keys[i % keys.length]!;
        return withBody('missing-required', `${fieldName([...o.path, key])} left out`, deleteAt(gen.value, o.path, key), fieldName([...o.path, key]));
      }),
    );
  }
  const closed = gen.objects.filter((o) => o.schema.additionalProperties === false);
  if (closed.length) {
    out.push(
      fc.tuple(fc.constantFrom(...closed), fc.constantFrom(...UNKNOWN_FIELDS), fc.constantFrom<unknown>(1, 'x', null, { a: 1 })).map(([o, key, v]) => {
        const target = o.path.reduce((x: any, k) => x[k], gen.value) as Record<string, unknown>;
        const withKey = JSON.parse(JSON.stringify(target).replace(/^\{/, `{${JSON.stringify(key)}:${JSON.stringify(v)}${Object.keys(target).length ? ',' : ''}`));
        // A `__proto__` key is refused by the JSON parser, before the body has a shape: named alone.
        const field = key === '__proto__' ? key : fieldName([...o.path, key]);
        return withBody('unknown-field', `${fieldName([...o.path, key])} added`, setAt(gen.value, o.path, withKey), field);
      }),
    );
  }
  return out;
}

/** Faults of the body as a whole and of its content type. */
function wholeBodyFaults(op: Operation, base: Base, bodyLimit: number): fc.Arbitrary<BadRequest>[] {
  const body = base.body ? serialize(base.body.value) : Buffer.from('{}');
  const out: fc.Arbitrary<BadRequest>[] = [];
  const takesJson = Boolean(op.body);
  if (takesJson) {
    out.push(
      fc.constantFrom('{', '{"a":', '{"a":1,}', "{'a':1}", 'nul', '[1,2', '{"a":1}garbage', 'NaN', '{"a":01}', '\u00a0{}x').map((raw) =>
        request(op, base, { fault: 'malformed-json', what: JSON.stringify(raw), body: Buffer.from(raw), field: 'body' }),
      ),
      fc.constantFrom('[]', '"text"', '123', 'true', '[{}]').map((raw) =>
        request(op, base, { fault: 'not-an-object', what: raw, body: Buffer.from(raw), field: 'body' }),
      ),
    );
  } else if (!op.multipart) {
    out.push(
      fc.constantFrom('{"unexpected":1}', '[1]', '"text"', '42', '{"a":{"b":[]}}').map((raw) =>
        request(op, base, {
          fault: 'unexpected-body',
          what: raw,
          body: Buffer.from(raw),
          headers: { 'content-type': 'application/json' },
          // A GET's body is not read: refused as a whole.
          field: op.method === 'GET' ? 'body' : raw.startsWith('{"unexpected"') ? 'unexpected' : raw.startsWith('{') ? 'a' : 'body',
        }),
      ),
    );
  }
  if (takesJson || op.multipart) {
    out.push(
      fc.integer({ min: 1, max: 64 * 1024 }).map((extra) => {
        const filler = 'x'.repeat(bodyLimit + extra);
        return request(op, base, {
          fault: 'oversized-body',
          what: `${bodyLimit + extra + 8} bytes`,
          body: Buffer.from(`{"x":"${filler}"}`),
          headers: { 'content-type': 'application/json' },
          expect: [413],
        });
      }),
      fc
        .constantFrom(
          null,
          '',
          'text/plain',
          'application/xml',
          'application/x-www-form-urlencoded',
          'application/octet-stream',
          'application/jsonx',
          'json',
          'text/json',
          '%%%',
          ...(op.multipart ? ['application/json'] : ['multipart/form-data; boundary=x']),
        )
        .map((type) =>
          request(op, base, {
            fault: 'content-type',
            what: type === null ? 'no Content-Type' : `Content-Type: ${JSON.stringify(type)}`,
            body,
            headers: { 'content-type': type },
            ...(op.multipart ? {} : { expect: [415] }),
          }),
        ),
      fc.constantFrom('gzip', 'br', 'deflate', 'compress, gzip').map((encoding) =>
        request(op, base, {
          fault: 'content-encoding',
          what: `Content-Encoding: ${encoding}`,
          body,
          headers: { 'content-encoding': encoding, 'content-type': op.multipart ? 'multipart/form-data; boundary=x' : 'application/json' },
          expect: [415],
        }),
      ),
    );
  }
  if (op.multipart) {
    out.push(
      fc
        .constantFrom(
          ['multipart/form-data; boundary=x', ''],
          ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="file"\r\n\r\nabc'],
          ['multipart/form-data', '--x\r\n\r\n--x--'],
          ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="unknown"\r\n\r\nv\r\n--x--\r\n'],
          ['multipart/form-data; boundary=x', 'garbage'],
        )
        .map(([type, raw]) =>
          request(op, base, { fault: 'multipart-body', what: `${type}: ${JSON.stringify(raw.slice(0, 40))}`, body: Buffer.from(raw), headers: { 'content-type': type } }),
        ),
    );
  }
  return out;
}

/** Cursors the gateway never issued: plain text, base64url JSON, a traversal. */
const BAD_CURSORS = ['not-a-cursor', 'eyJhIjoxfQ', 'AAAA', '..%2F..%2Fconfig', 'eyJwbGF0Zm9ybUlkIjoiUGxhdGZvcm06eCJ9.sig'];

/** Values of a query parameter that its schema (or, for a cursor, the gateway) refuses, as query strings are coerced. */
function badQueryValues(name: string, s: Schema): string[] {
  if (name === 'cursor') return [...BAD_CURSORS, '%FF', 'c'.repeat((s.maxLength ?? 2048) + 1)];
  const types = typesOf(s);
  if (types.includes('integer') || types.includes('number'))
    return ['abc', '1.5', '-1', '1e999', '99999999999999999999', 'true', '%00', '0x'];
  if (types.includes('boolean')) return ['maybe', '2', 'yes%00'];
  if (s.enum) return ['NOT_A_VALUE', 'usd', '%E2%80%AE'];
  if (s.format === 'date-time') return ['yesterday', '2026-13-45T99:00:00Z', '0'];
  const bad = ['%00', '%ED%A0%80', '%FF', '%E2%80%AEabc%00', '%C0%AF'];
  if (s.pattern) bad.push('not-an-id', 'Customer%3A..%2F..%2Fx', '..%2F..%2Fconfig');
  if (s.maxLength !== undefined && s.maxLength < 5_000) bad.push('y'.repeat(s.maxLength + 1));
  if ((s.minLength ?? 0) >= 1) bad.push('');
  return bad;
}

function queryFaults(api: ApiDocument, op: Operation, base: Base): fc.Arbitrary<BadRequest>[] {
  const params = op.parameters.filter((p) => p.in === 'query');
  const out: fc.Arbitrary<BadRequest>[] = [
    fc.constantFrom('unknownParam=1', 'limit2=5', '__proto__=x', 'a[b]=c').map((extra) =>
      request(op, base, {
        fault: 'query-unknown',
        what: extra,
        query: queryText([...base.query, extra.split('=') as [string, string]]),
        field: extra.split('=')[0]!,
      }),
    ),
    fc.integer({ min: 17_000, max: 80_000 }).map((n) =>
      request(op, base, { fault: 'query-huge', what: `${n} characters`, query: queryText([...base.query, ['q', 'q'.repeat(n)]]) }),
    ),
  ];
  if (params.length) {
    out.push(
      fc.tuple(fc.constantFrom(...params), fc.nat()).map(([p, i]) => {
        const values = badQueryValues(p.name, api.resolve(p.schema));
        const v = values[i % values.length]!;
        const query = [...base.query.filter(([k]) => k !== p.name), [p.name, v] as [string, string]];
        return request(op, base, { fault: 'query-value', what: `${p.name}=${v}`, query: queryText(query), field: p.name });
      }),
      fc.constantFrom(...params).chain((p) =>
        fc.tuple(validValue(api, p.schema), validValue(api, p.schema)).map(([a, b]) => {
          const pairs: [string, string][] = [
            ...base.query.filter(([k]) => k !== p.name),
            [p.name, encodeURIComponent(String(a.value))],
            [p.name, encodeURIComponent(String(b.value))],
          ];
          return request(op, base, { fault: 'query-duplicate', what: `${p.name} twice`, query: queryText(pairs), field: p.name });
        }),
      ),
    );
  }
  const required = params.filter((p) => p.required);
  if (required.length) {
    out.push(
      fc.constantFrom(...required).map((p) =>
        request(op, base, {
          fault: 'query-missing',
          what: `${p.name} left out`,
          query: queryText(base.query.filter(([k]) => k !== p.name)),
          field: p.name,
        }),
      ),
    );
  }
  return out;
}

function pathFaults(op: Operation, base: Base): fc.Arbitrary<BadRequest>[] {
  const params = op.parameters.filter((p) => p.in === 'path');
  if (!params.length) return [];
  const withValue = (fault: FaultClass, p: Parameter, v: string, field: string | undefined, expect?: number[]) =>
    request(op, base, {
      fault,
      what: `${p.name} = ${v.length > 60 ? `${v.slice(0, 20)}… (${v.length})` : v}`,
      path: pathOf(op, { ...base.pathValues, [p.name]: v }),
      ...(field ? { field } : {}),
      ...(expect ? { expect } : {}),
    });
  return [
    fc
      .tuple(
        fc.constantFrom(...params),
        fc.oneof(
          fc.constantFrom('0', '-1', 'null', 'undefined', '%20', 'Quote%3A00000000-0000-0000-0000-000000000000', '00000000-0000-0000-0000-000000000000', 'Customer%3Anot-a-uuid', 'Customer%3A', '%3A'),
          fc.string({ unit: fc.constantFrom(...SAFE, '-', '_', '.', '~'), minLength: 1, maxLength: 40 }).filter((s) => s !== '.' && s !== '..'),
        ),
      )
      .map(([p, v]) => withValue('path-malformed-id', p, v, undefined)),
    fc
      .tuple(
        fc.constantFrom(...params),
        fc.constantFrom('..', '..%2F..%2Fconfig', '%2e%2e%2f%2e%2e%2fconfig', '..%5C..%5Cwindows', '%252e%252e%252f', '....%2F%2F', '%2Fetc%2Fpasswd', '..%3B', 'Customer%3A..%2F..%2Ftokens', '.%2E'),
      )
      .map(([p, v]) => withValue('path-traversal', p, v, undefined)),
    fc
      .tuple(fc.constantFrom(...params), fc.constantFrom('%00', 'a%00b', '%E2%80%AE', '%ED%A0%80', '%FF', '%C0%AF', '%F0%9F%98%80', '%0A', '%7F', '%'))
      .map(([p, v]) => withValue('path-unicode', p, v, undefined)),
    fc.tuple(fc.constantFrom(...params), fc.integer({ min: 501, max: 20_000 })).map(([p, n]) => withValue('path-long', p, 'L'.repeat(n), undefined)),
  ];
}

const BAD_AUTH = (tokenId: string): (string | null)[] => [
  null,
  '',
  'Basic',
  'Basic ',
  'Basic !!!',
  `Basic ${Buffer.from('no-colon').toString('base64')}`,
  `Basic ${Buffer.from(':').toString('base64')}`,
  `Basic ${Buffer.from(`${tokenId}:wrong-secret`).toString('base64')}`,
  `Basic ${Buffer.from(`${tokenId}:`).toString('base64')}`,
  `Basic ${Buffer.from('Token:00000000-0000-0000-0000-000000000000:x').toString('base64')}`,
  'Bearer abc',
  `Bearer ${'t'.repeat(4000)}`,
  'Digest username="x"',
  'Basic \u00fc\u00ff',
  `Basic ${'A'.repeat(8000)}`,
];

function headerFaults(op: Operation, base: Base, tokenId: string, other: fc.Arbitrary<BadRequest>[]): fc.Arbitrary<BadRequest>[] {
  const out: fc.Arbitrary<BadRequest>[] = [];
  // A public operation ignores credentials: its bad-auth case carries one more fault, so it stays invalid.
  const carrier = op.auth === 'none' ? fc.oneof(...other) : fc.constant(request(op, base, { fault: 'bad-auth', what: '' }));
  out.push(
    fc.tuple(carrier, fc.constantFrom(...BAD_AUTH(tokenId))).map(([c, auth]) => ({
      ...c,
      fault: 'bad-auth' as const,
      what: `Authorization: ${auth === null ? '(none)' : JSON.stringify(auth.length > 60 ? `${auth.slice(0, 20)}… (${auth.length})` : auth)}${op.auth === 'none' ? `; ${c.what}` : ''}`,
      auth,
      ...(op.auth === 'none' ? {} : { expect: [401], field: undefined }),
    })),
  );
  if (op.method === 'POST' && op.auth !== 'none') {
    out.push(
      fc.constantFrom('', ' ', 'k'.repeat(256), 'k'.repeat(5000), 'key\u00e9').map((key) =>
        request(op, base, {
          fault: 'bad-idempotency-key',
          what: `Idempotency-Key of ${key.length} characters`,
          headers: { 'idempotency-key': key },
          field: 'Idempotency-Key',
        }),
      ),
    );
  }
  out.push(
    fc.integer({ min: 17_000, max: 60_000 }).map((n) =>
      request(op, base, { fault: 'huge-header', what: `X-Filler of ${n} characters`, headers: { 'x-filler': 'f'.repeat(n) }, expect: [431] }),
    ),
  );
  return out;
}

/** Every bad request of `op`: one arbitrary, every class that applies weighted alike. */
export function badRequests(api: ApiDocument, op: Operation, o: { tokenId: string; bodyLimit: number }): fc.Arbitrary<BadRequest> {
  return baseArb(api, op).chain((base) => {
    const inBody = bodyFaults(api, op, base);
    const inner = [...inBody, ...wholeBodyFaults(op, base, o.bodyLimit), ...queryFaults(api, op, base), ...pathFaults(op, base)];
    // The field-level body classes weigh three times as much: they are where the schemas are richest.
    return fc.oneof(
      ...inBody.map((arbitrary) => ({ arbitrary, weight: 3 })),
      ...[...inner.slice(inBody.length), ...headerFaults(op, base, o.tokenId, inner)].map((arbitrary) => ({ arbitrary, weight: 1 })),
    );
  });
}

/** One line naming the request and its fault. */
export function describeCase(c: BadRequest): string {
  return `${c.method} ${c.path}${c.query ? `?${c.query.length > 200 ? `${c.query.slice(0, 200)}…` : c.query}` : ''} [${c.fault}] ${c.what}`;
}
