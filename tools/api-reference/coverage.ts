/**
 * The coverage check: every operation of the reference document, and whether Sluice's
 * generated OpenAPI document has it with the same success statuses, the same request and
 * response schema names and the same shapes (properties, which are required, types, enum
 * values, discriminated variants), compared recursively. Each difference is a finding (one line
 * of text, named after the reference component it is in, so a shape shared by many operations
 * is one finding); `differences.ts` documents findings, and a finding it does not document fails.
 */
import { DIFFERENCES, type Difference } from './differences.js';
import { operationsOf, type Json, type Operation } from './reference.js';

type Side = { doc: Json; schema: Json | undefined; name?: string };

function resolveRef(doc: Json, schema: Json | undefined): { schema: Json | undefined; name?: string } {
  let name: string | undefined;
  let s = schema;
  for (let i = 0; s && typeof s.$ref === 'string' && i < 20; i++) {
    name = (s.$ref as string).split('/').pop();
    s = doc.components?.schemas?.[name!] as Json | undefined;
  }
  return { schema: s, name };
}

interface View {
  kind: 'object' | 'array' | 'union' | 'scalar' | 'any';
  name?: string;
  properties?: Record<string, Side>;
  required?: Set<string>;
  freeForm?: boolean;
  items?: Side;
  /** union: discriminator tag and variants by tag value (reference), or its members (Sluice). */
  tag?: string;
  variants?: Map<string, Side>;
  members?: Side[];
  types?: Set<string>;
  enum?: unknown[];
}

function literalOf(s: Json | undefined): unknown[] | undefined {
  if (!s) return undefined;
  if ('const' in s) return [s.const];
  if (Array.isArray(s.enum)) return s.enum as unknown[];
  return undefined;
}

/** The comparable view of a schema: allOf merged, refs followed, literal unions as enums. */
function view(side: Side): View {
  const { doc } = side;
  const r = resolveRef(doc, side.schema);
  const s = r.schema ?? {};
  const name = r.name ?? side.name;
  const union = (s.oneOf ?? s.anyOf) as Json[] | undefined;
  if (Array.isArray(union)) {
    const members = union.map((m) => resolveRef(doc, m).schema);
    const literals = members.map(literalOf);
    if (literals.every((l) => l !== undefined)) {
      const types = new Set(members.map((m) => String(m?.type ?? typeof literals[0]![0])));
      return { kind: 'scalar', name, types, enum: literals.flat() };
    }
    const nonNull = union.filter((m) => resolveRef(doc, m).schema?.type !== 'null');
    if (nonNull.length === 1) return view({ doc, schema: nonNull[0], name });
    const d = s.discriminator as Json | undefined;
    if (d?.mapping) {
      const variants = new Map<string, Side>();
      for (const [value, ref] of Object.entries(d.mapping as Record<string, string>))
        variants.set(value, { doc, schema: { $ref: ref } });
      return { kind: 'union', name, tag: d.propertyName as string, variants };
    }
    return { kind: 'union', name, members: union.map((m) => ({ doc, schema: m })) };
  }
  if (Array.isArray(s.allOf)) {
    const properties: Record<string, Side> = {};
    const required = new Set<string>();
    let inner: View | undefined;
    for (const part of s.allOf as Json[]) {
      const v = view({ doc, schema: part });
      if (v.kind === 'union') inner = v;
      for (const [k, p] of Object.entries(v.properties ?? {})) properties[k] = p; // the later, narrower part wins
      for (const k of v.required ?? []) required.add(k);
    }
    for (const [k, p] of Object.entries((s.properties ?? {}) as Json))
      properties[k] = { doc, schema: p as Json };
    for (const k of (s.required as string[] | undefined) ?? []) required.add(k);
    if (inner && !Object.keys(properties).length) return { ...inner, name };
    if (inner?.members) {
      // Common properties beside a union of variants: each variant with the common part.
      const common = {
        properties: Object.fromEntries(Object.entries(properties).map(([k, p]) => [k, p.schema])),
        required: [...required],
      };
      return {
        kind: 'union',
        name,
        members: inner.members.map((m) => ({ doc, schema: { allOf: [common, m.schema] } })),
      };
    }
    return { kind: 'object', name, properties, required };
  }
  // `type: [array, 'null']` (a nullable array or object, as OpenAPI 3.1 writes it) is that type.
  const nonNullTypes = Array.isArray(s.type) ? (s.type as string[]).filter((t) => t !== 'null') : [s.type];
  const single = nonNullTypes.length === 1 ? nonNullTypes[0] : undefined;
  if (single === 'object' || s.properties) {
    const properties: Record<string, Side> = {};
    for (const [k, p] of Object.entries((s.properties ?? {}) as Json))
      properties[k] = { doc, schema: p as Json };
    return {
      kind: 'object',
      name,
      properties,
      required: new Set((s.required as string[] | undefined) ?? []),
      freeForm: !s.properties || (s.additionalProperties !== undefined && s.additionalProperties !== false),
    };
  }
  if (single === 'array') return { kind: 'array', name, items: { doc, schema: s.items as Json } };
  const types = new Set<string>(
    (Array.isArray(s.type) ? s.type : s.type ? [s.type] : []).filter((t: string) => t !== 'null'),
  );
  if (!types.size && literalOf(s) === undefined) return { kind: 'any', name };
  return { kind: 'scalar', name, types, ...(literalOf(s) ? { enum: literalOf(s) } : {}) };
}

/** The tag values a (Sluice) member can carry. */
function tagValues(v: View, tag: string): unknown[] | 'any' | undefined {
  const p = v.properties?.[tag];
  if (!p) return undefined;
  const pv = view(p);
  return pv.enum ?? 'any';
}

/**
 * Which differences matter depends on the direction: a response may carry less of an enum or
 * fewer variants than the reference allows, and always send a field the reference marks
 * optional; a request may accept more than the reference (an optional field it requires).
 */
export type Direction = 'request' | 'response';

export class ShapeComparer {
  private readonly memo = new Map<string, string[]>();

  constructor(private readonly direction: Direction) {}

  /** Findings of `sluice` against `reference` at `path` (the reference component name restarts the path). */
  compare(ref: Side, sluice: Side, path: string, depth = 0): string[] {
    const rv = view(ref);
    const here = rv.name ?? path;
    const key = `${this.direction}|${here}|${JSON.stringify(sluice.schema)}`;
    const cached = this.memo.get(key);
    if (cached) return cached;
    this.memo.set(key, []); // a cycle compares to nothing more
    const out = depth > 12 ? [] : this.compareViews(rv, view(sluice), here, depth);
    this.memo.set(key, out);
    return out;
  }

  private compareViews(rv: View, sv: View, path: string, depth: number): string[] {
    const out: string[] = [];
    if (rv.kind === 'any' || sv.kind === 'any') return out;
    if (rv.kind === 'union' && rv.tag && rv.variants) {
      for (const [value, variant] of rv.variants) {
        const vname = view(variant).name ?? `${path}[${rv.tag}=${value}]`;
        const candidates: Side[] =
          sv.kind === 'union'
            ? (sv.members ?? [...(sv.variants?.values() ?? [])])
            : [{ doc: {}, schema: undefined }];
        const match =
          sv.kind === 'union'
            ? candidates.find((m) => {
                const t = tagValues(view(m), rv.tag!);
                return t === 'any' || (Array.isArray(t) && t.includes(value));
              })
            : undefined;
        if (sv.kind === 'union') {
          if (!match) {
            if (this.direction === 'request') out.push(`${vname}: no variant with ${rv.tag} ${value}`);
          } else out.push(...this.compare(variant, match, vname, depth + 1));
        } else if (sv.kind === 'object') {
          const t = tagValues(sv, rv.tag);
          if (t !== 'any' && !(Array.isArray(t) && t.includes(value))) {
            if (this.direction === 'request') out.push(`${vname}: no variant with ${rv.tag} ${value}`);
          } else out.push(...this.compareViews(view(variant), sv, vname, depth + 1));
        } else out.push(`${path}: ${sv.kind} (reference: a union on ${rv.tag})`);
      }
      return out;
    }
    if (rv.kind === 'union') {
      // An undiscriminated union: the same number of alternatives is all that is compared.
      if (sv.kind !== 'union') out.push(`${path}: ${sv.kind} (reference: a union)`);
      return out;
    }
    if (rv.kind !== sv.kind) {
      if (sv.kind === 'union' && sv.members?.length) {
        // A Sluice union against a reference object: each member is compared.
        for (const m of sv.members) out.push(...this.compareViews(rv, view(m), path, depth + 1));
        return [...new Set(out)];
      }
      out.push(`${path}: ${sv.kind} (reference: ${rv.kind})`);
      return out;
    }
    if (rv.kind === 'array') return this.compare(rv.items!, sv.items!, `${path}[]`, depth + 1);
    if (rv.kind === 'scalar') {
      const rt = [...rv.types!].sort().join('|');
      const st = [...sv.types!].sort().join('|');
      const compatible = rt === st || (rt === 'number' && st === 'integer') || !rt || !st;
      if (!compatible) out.push(`${path}: type ${st} (reference: ${rt})`);
      if (rv.enum && !sv.enum) out.push(`${path}: not an enum (reference: ${rv.enum.join(', ')})`);
      if (rv.enum && sv.enum) {
        const lacks = rv.enum.filter((e) => !sv.enum!.includes(e));
        const adds = sv.enum.filter((e) => !rv.enum!.includes(e));
        if (lacks.length && this.direction === 'request') out.push(`${path}: enum lacks ${lacks.join(', ')}`);
        if (adds.length) out.push(`${path}: enum adds ${adds.join(', ')}`);
      }
      return out;
    }
    // objects
    if (rv.freeForm && !Object.keys(rv.properties!).length) return out;
    if (sv.freeForm && !Object.keys(sv.properties!).length) return out;
    for (const [k, p] of Object.entries(rv.properties!)) {
      const sp = sv.properties![k];
      if (!sp) {
        out.push(`${path}.${k}: missing${rv.required!.has(k) ? ' (required in the reference)' : ''}`);
        continue;
      }
      if (this.direction === 'response' && rv.required!.has(k) && !sv.required!.has(k))
        out.push(`${path}.${k}: optional (required in the reference)`);
      if (this.direction === 'request' && !rv.required!.has(k) && sv.required!.has(k))
        out.push(`${path}.${k}: required (optional in the reference)`);
      out.push(...this.compare(p, sp, `${path}.${k}`, depth + 1));
    }
    for (const k of Object.keys(sv.properties!))
      if (!(k in rv.properties!))
        out.push(
          `${path}.${k}: not in the reference${this.direction === 'request' && sv.required!.has(k) ? ' (and required)' : ''}`,
        );
    return out;
  }
}

function bodySchema(op: Json): { contentType?: string; schema?: Json } {
  const content = op.requestBody?.content as Json | undefined;
  if (!content) return {};
  const [contentType, c] = Object.entries(content)[0]!;
  return { contentType, schema: (c as Json).schema as Json | undefined };
}

function responseSchemas(op: Json): Map<string, Json | undefined> {
  const out = new Map<string, Json | undefined>();
  for (const [status, r] of Object.entries((op.responses ?? {}) as Json))
    if (/^2\d\d$/.test(status))
      out.set(status, (r as Json).content?.['application/json']?.schema as Json | undefined);
  return out;
}

/** The query parameters of an operation (refs to components/parameters resolved): name → required. */
function queryParameters(op: Json, doc: Json): Map<string, boolean> {
  const out = new Map<string, boolean>();
  for (const p of (op.parameters ?? []) as Json[]) {
    const param =
      typeof p.$ref === 'string' ? (doc.components?.parameters?.[p.$ref.split('/').pop()!] as Json) : p;
    if (param?.in === 'query') out.set(String(param.name), param.required === true);
  }
  return out;
}

/** Query parameters: one the reference has and Sluice does not take (a client sending it gets 400), one Sluice requires. */
function compareParameters(operation: string, ref: Json, ours: Json, reference: Json): string[] {
  const theirs = queryParameters(ref, reference);
  const mine = queryParameters(ours, {});
  const out: string[] = [];
  for (const name of theirs.keys())
    if (!mine.has(name)) out.push(`${operation}: query parameter ${name} missing`);
  for (const [name, required] of mine) {
    if (!theirs.has(name)) out.push(`${operation}: query parameter ${name} not in the reference`);
    else if (required && !theirs.get(name))
      out.push(`${operation}: query parameter ${name} required (optional in the reference)`);
  }
  return out;
}

const refName = (s: Json | undefined) =>
  typeof s?.$ref === 'string' ? (s.$ref as string).split('/').pop() : undefined;

export interface OperationResult {
  operation: string;
  operationId?: string;
  present: boolean;
  findings: string[];
}

/** Every reference operation against Sluice's document. */
export function compareDocuments(reference: Json, sluice: Json): OperationResult[] {
  const requests = new ShapeComparer('request');
  const responses = new ShapeComparer('response');
  const ours = operationsOf(sluice);
  return operationsOf(reference).map((r: Operation) => {
    const operation = `${r.method} ${r.path}`;
    const s = ours.find((o) => o.method === r.method && o.key === r.key);
    if (!s)
      return { operation, operationId: r.operationId, present: false, findings: [`${operation}: missing`] };
    const findings: string[] = [];
    const rb = bodySchema(r.op);
    const sb = bodySchema(s.op);
    if (rb.contentType !== sb.contentType)
      findings.push(
        `${operation}: request body ${sb.contentType ?? 'none'} (reference: ${rb.contentType ?? 'none'})`,
      );
    else if (rb.schema && sb.schema) {
      const rn = refName(rb.schema);
      if (rn && refName(sb.schema) !== rn)
        findings.push(`${operation}: request schema ${refName(sb.schema) ?? '(inline)'} (reference: ${rn})`);
      findings.push(
        ...requests.compare(
          { doc: reference, schema: rb.schema },
          { doc: sluice, schema: sb.schema },
          rn ?? `${operation} request`,
        ),
      );
    }
    findings.push(...compareParameters(operation, r.op, s.op, reference));
    const rr = responseSchemas(r.op);
    const sr = responseSchemas(s.op);
    const statuses = (m: Map<string, unknown>) => [...m.keys()].sort().join(', ');
    if (statuses(rr) !== statuses(sr))
      findings.push(`${operation}: answers ${statuses(sr)} (reference: ${statuses(rr)})`);
    for (const [status, schema] of rr) {
      const mine = sr.get(status);
      if (!schema || !mine) continue;
      const rn = refName(schema);
      if (rn && refName(mine) !== rn)
        findings.push(
          `${operation} ${status}: response schema ${refName(mine) ?? '(inline)'} (reference: ${rn})`,
        );
      findings.push(
        ...responses.compare(
          { doc: reference, schema },
          { doc: sluice, schema: mine },
          rn ?? `${operation} ${status}`,
        ),
      );
    }
    return { operation, operationId: r.operationId, present: true, findings: [...new Set(findings)] };
  });
}

/** The difference that documents a finding, if any. */
export function documentedBy(
  finding: string,
  differences: Difference[] = DIFFERENCES,
): Difference | undefined {
  return differences.find((d) => (d.coverage ?? []).some((p) => matches(p, finding)));
}

/** A coverage pattern: the exact finding, or with `*` standing for any text. */
export function matches(pattern: string, finding: string): boolean {
  if (!pattern.includes('*')) return pattern === finding;
  const literal = (t: string) => t.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${pattern.split('*').map(literal).join('.*')}$`).test(finding);
}

export interface CoverageReport {
  total: number;
  /** present with exactly the reference's shapes */
  same: string[];
  /** present; every difference documented */
  documented: string[];
  /** missing, documented as pending in another issue or as a decision */
  missingDocumented: string[];
  /** any finding no difference documents */
  undocumented: string[];
  /** coverage patterns of differences.ts that match no finding any more */
  stale: string[];
  /** operations Sluice has and the reference does not (each documented in differences.ts) */
  extensions: string[];
  results: OperationResult[];
}

export function coverageReport(
  reference: Json,
  sluice: Json,
  differences: Difference[] = DIFFERENCES,
): CoverageReport {
  const results = compareDocuments(reference, sluice);
  const all = [...new Set(results.flatMap((r) => r.findings))];
  const undocumented = all.filter((f) => !documentedBy(f, differences));
  // Operations Sluice adds are differences too: each must be a documented extension.
  const theirs = operationsOf(reference);
  const declared = new Set(
    differences.flatMap((d) => d.extensions ?? []).map((e) => e.replace(/\{[^}]+\}/g, '{}')),
  );
  const extensions = operationsOf(sluice)
    .filter((o) => !theirs.some((r) => r.method === o.method && r.key === o.key))
    .map((o) => `${o.method} ${o.key}`);
  for (const e of extensions)
    if (!declared.has(e)) undocumented.push(`${e}: not in the reference (an undocumented extension)`);
  for (const e of declared)
    if (!extensions.includes(e)) undocumented.push(`${e}: a documented extension Sluice does not have`);
  const used = new Set<string>();
  for (const f of all)
    for (const d of differences) for (const p of d.coverage ?? []) if (matches(p, f)) used.add(p);
  const stale = differences.flatMap((d) => (d.coverage ?? []).filter((p) => !used.has(p)));
  return {
    total: results.length,
    same: results.filter((r) => r.present && !r.findings.length).map((r) => r.operation),
    documented: results
      .filter((r) => r.present && r.findings.length && r.findings.every((f) => documentedBy(f, differences)))
      .map((r) => r.operation),
    missingDocumented: results
      .filter((r) => !r.present && r.findings.every((f) => documentedBy(f, differences)))
      .map((r) => r.operation),
    undocumented,
    stale,
    extensions,
    results,
  };
}
