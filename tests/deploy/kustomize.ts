/**
 * A renderer of the kustomize subset deploy/k8s uses, so the manifests are rendered and checked
 * on every test run, on machines without `kubectl`.
 *
 * Why a renderer here and not the real tool: CI installs what .ci/run installs, from the npm
 * registry and Debian's packages only. The npm registry has no kustomize (only wrappers that
 * download a binary at install time, which CI cannot do), and Debian 12's `kubernetes-client`
 * is kubectl 1.20 with kustomize 2.0.3, which refuses this repository's kustomizations
 * (`json: unknown field "replicas"`; `labels:` came later still). So the subset the repository
 * uses is implemented here, following kustomize v5, and `manifests.spec.ts` compares its output
 * with `kubectl kustomize` wherever kubectl exists (this machine has one), resource by resource.
 *
 * What is implemented: `resources` (files and directories with a kustomization.yaml),
 * `namespace`, `labels` (`pairs`, `includeSelectors`, `includeTemplates`), `configMapGenerator`
 * and `secretGenerator` (`literals`, `behavior: create|merge|replace`, Secret `type`), `images`
 * (`newName`, `newTag`), `replicas`; generated names get kustomize's content hash suffix and every
 * reference to them in pod specs is rewritten. Everything else (a kustomization field, a generator
 * option, a resource kind) is refused with an error naming it, never ignored: a manifest change
 * that needs more of kustomize fails here until the renderer learns it (and the comparison with
 * kubectl proves it learnt it right).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- Kubernetes objects are walked field by field
export type Doc = Record<string, any>;

const KUSTOMIZATION_FIELDS = new Set([
  'apiVersion',
  'kind',
  'resources',
  'namespace',
  'labels',
  'configMapGenerator',
  'secretGenerator',
  'images',
  'replicas',
]);
const GENERATOR_FIELDS = new Set(['name', 'behavior', 'literals', 'type']);
const LABEL_FIELDS = new Set(['pairs', 'includeSelectors', 'includeTemplates']);
const IMAGE_FIELDS = new Set(['name', 'newName', 'newTag']);

/** Kinds the renderer knows how to transform (namespaced unless listed in CLUSTER_SCOPED). */
const KINDS = new Set([
  'Namespace',
  'ServiceAccount',
  'ConfigMap',
  'Secret',
  'Service',
  'Deployment',
  'StatefulSet',
  'DaemonSet',
  'ReplicaSet',
  'Job',
  'CronJob',
  'PodDisruptionBudget',
  'HorizontalPodAutoscaler',
  'NetworkPolicy',
  // Prometheus Operator resources (deploy/k8s/monitoring).
  'ServiceMonitor',
  'PodMonitor',
  'PrometheusRule',
]);
const CLUSTER_SCOPED = new Set(['Namespace']);
/** Kinds with a pod template at spec.template (kustomize's `spec/template/metadata/labels` field specs). */
const TEMPLATED = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job']);
/** Kinds whose spec.replicas the `replicas` field sets. */
const SCALABLE = new Set(['Deployment', 'StatefulSet', 'ReplicaSet']);

/** A resource with what the renderer must remember about it. */
interface Item {
  doc: Doc;
  /** Made by a generator: its name gets the content hash suffix. */
  generated: boolean;
}

export class KustomizeError extends Error {}

function readYaml(file: string): Doc[] {
  const docs = parseAllDocuments(readFileSync(file, 'utf8'));
  for (const d of docs)
    if (d.errors.length) throw new KustomizeError(`${file}: ${d.errors.map((e) => e.message).join('; ')}`);
  return docs.map((d) => d.toJS() as Doc).filter(Boolean);
}

function refuseUnknown(fields: Set<string>, obj: Doc, where: string): void {
  for (const k of Object.keys(obj))
    if (!fields.has(k))
      throw new KustomizeError(`${where}: "${k}" is not supported by tests/deploy/kustomize.ts`);
}

/** `KEY=VALUE`, the value's surrounding quotes removed (kustomize's parseLiteralSource). */
function literal(source: string, where: string): [string, string] {
  const at = source.indexOf('=');
  if (at <= 0) throw new KustomizeError(`${where}: literal "${source}" is not KEY=VALUE`);
  let value = source.slice(at + 1);
  if (value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.at(-1) === value[0])
    value = value.slice(1, -1);
  return [source.slice(0, at), value];
}

/** Base64 broken into lines of 70 characters, each ending in a newline when there is more than one (kustomize's encodeBase64). */
function secretValue(value: string): string {
  const b64 = Buffer.from(value, 'utf8').toString('base64');
  const lines = Math.floor(b64.length / 70) + 1;
  if (lines === 1) return b64;
  let out = '';
  for (let i = 0; i < b64.length; i += 70) out += `${b64.slice(i, i + 70)}\n`;
  return out;
}

/** Go's json.Marshal: map keys sorted, <, > and & escaped, U+2028/U+2029 escaped. */
function goJson(v: unknown): string {
  if (v === null || typeof v !== 'object')
    return JSON.stringify(v)
      .replace(/</g, '\\u003c')
      .replace(/>/g, '\\u003e')
      .replace(/&/g, '\\u0026')
      .replace(/\u2028/g, '\\u2028')
      .replace(/\u2029/g, '\\u2029');
  if (Array.isArray(v)) return `[${v.map(goJson).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .sort()
    .map((k) => `${goJson(k)}:${goJson(o[k])}`)
    .join(',')}}`;
}

/**
 * kustomize's name hash of a ConfigMap or Secret (api/hasher): sha256 of a JSON encoding of its
 * kind, name, data (and a Secret's type), 10 characters, a few letters swapped. kustomize v5 reads
 * the name with a path lookup that finds nothing, so the name it hashes is always empty: two
 * ConfigMaps with the same data get the same suffix (kubectl kustomize shows it, and so must we).
 */
export function nameHash(doc: Doc): string {
  const encoded =
    doc.kind === 'ConfigMap'
      ? { kind: 'ConfigMap', name: '', data: doc.data ?? '' }
      : { kind: 'Secret', type: doc.type ?? '', name: '', data: doc.data ?? '' };
  const hex = createHash('sha256').update(goJson(encoded)).digest('hex');
  const swap: Record<string, string> = { '0': 'g', '1': 'h', '3': 'k', a: 'm', e: 't' };
  return [...hex.slice(0, 10)].map((c) => swap[c] ?? c).join('');
}

/** `name[:tag][@digest]`; a colon before the last slash belongs to a registry port. */
function splitImage(image: string): { name: string; tag?: string; digest: string } {
  const at = image.indexOf('@');
  const digest = at >= 0 ? image.slice(at) : '';
  const rest = at >= 0 ? image.slice(0, at) : image;
  const colon = rest.lastIndexOf(':');
  return colon > rest.lastIndexOf('/')
    ? { name: rest.slice(0, colon), tag: rest.slice(colon + 1), digest }
    : { name: rest, digest };
}

function podTemplates(doc: Doc): Doc[] {
  if (TEMPLATED.has(doc.kind)) return doc.spec?.template ? [doc.spec.template] : [];
  if (doc.kind === 'CronJob')
    return doc.spec?.jobTemplate?.spec?.template ? [doc.spec.jobTemplate.spec.template] : [];
  return [];
}

function containersOf(doc: Doc): Doc[] {
  return podTemplates(doc).flatMap((t) => [...(t.spec?.containers ?? []), ...(t.spec?.initContainers ?? [])]);
}

/** Builds one kustomization directory: its resources (built recursively), generators, then transformers. */
function build(dir: string, root: string): Item[] {
  const file = join(dir, 'kustomization.yaml');
  const where = relative(root, file);
  if (!existsSync(file)) throw new KustomizeError(`${relative(root, dir)} has no kustomization.yaml`);
  const k = readYaml(file)[0] ?? {};
  refuseUnknown(KUSTOMIZATION_FIELDS, k, where);

  const items: Item[] = [];
  for (const r of (k.resources ?? []) as string[]) {
    const p = join(dir, r);
    if (!existsSync(p)) throw new KustomizeError(`${where} lists ${r}, which does not exist`);
    if (statSync(p).isDirectory()) items.push(...build(p, root));
    else
      for (const doc of readYaml(p)) {
        if (!KINDS.has(doc.kind))
          throw new KustomizeError(
            `${relative(root, p)}: kind ${doc.kind} is not supported by tests/deploy/kustomize.ts`,
          );
        items.push({ doc, generated: false });
      }
  }
  const key = (d: Doc) => `${d.kind}/${d.metadata?.name}`;
  for (let i = 0; i < items.length; i++)
    for (let j = i + 1; j < items.length; j++)
      if (
        key(items[i]!.doc) === key(items[j]!.doc) &&
        items[i]!.doc.metadata?.namespace === items[j]!.doc.metadata?.namespace
      )
        throw new KustomizeError(`${where}: ${key(items[i]!.doc)} is defined twice`);

  const generate = (kind: 'ConfigMap' | 'Secret', gens: Doc[]) => {
    for (const g of gens) {
      refuseUnknown(GENERATOR_FIELDS, g, `${where} ${kind} generator ${g.name}`);
      if (g.type !== undefined && kind !== 'Secret')
        throw new KustomizeError(`${where}: a ConfigMap generator has no type`);
      const data = Object.fromEntries(((g.literals ?? []) as string[]).map((l) => literal(l, where)));
      const behavior = (g.behavior ?? 'create') as string;
      const existing = items.find((it) => it.doc.kind === kind && it.doc.metadata?.name === g.name);
      const encode = (d: Record<string, string>) =>
        kind === 'Secret' ? Object.fromEntries(Object.entries(d).map(([n, v]) => [n, secretValue(v)])) : d;
      if (behavior === 'create') {
        if (existing)
          throw new KustomizeError(`${where}: ${kind} ${g.name} already exists (behavior: create)`);
        const doc: Doc = { apiVersion: 'v1', kind, metadata: { name: g.name } };
        if (Object.keys(data).length) doc.data = encode(data);
        if (kind === 'Secret') doc.type = g.type ?? 'Opaque';
        items.push({ doc, generated: true });
      } else if (behavior === 'merge' || behavior === 'replace') {
        if (!existing || !existing.generated)
          throw new KustomizeError(`${where}: ${kind} ${g.name} to ${behavior} is not generated below`);
        existing.doc.data = { ...(behavior === 'merge' ? existing.doc.data : {}), ...encode(data) };
        if (g.type !== undefined) existing.doc.type = g.type;
      } else throw new KustomizeError(`${where}: behavior ${behavior} is not supported`);
    }
  };
  generate('ConfigMap', (k.configMapGenerator ?? []) as Doc[]);
  generate('Secret', (k.secretGenerator ?? []) as Doc[]);

  for (const l of (k.labels ?? []) as Doc[]) {
    refuseUnknown(LABEL_FIELDS, l, `${where} labels`);
    const pairs = (l.pairs ?? {}) as Record<string, string>;
    // Selectors are set explicitly in this repository (a Service must never select Job pods).
    if (l.includeSelectors)
      throw new KustomizeError(`${where}: labels with includeSelectors are not supported`);
    for (const { doc } of items) {
      doc.metadata.labels = { ...doc.metadata.labels, ...pairs };
      if (l.includeTemplates)
        for (const t of podTemplates(doc)) {
          t.metadata ??= {};
          t.metadata.labels = { ...t.metadata.labels, ...pairs };
        }
    }
  }

  if (k.namespace !== undefined)
    for (const { doc } of items) if (!CLUSTER_SCOPED.has(doc.kind)) doc.metadata.namespace = k.namespace;

  for (const img of (k.images ?? []) as Doc[]) {
    refuseUnknown(IMAGE_FIELDS, img, `${where} images`);
    for (const { doc } of items)
      for (const c of containersOf(doc)) {
        const { name, tag, digest } = splitImage(String(c.image));
        if (name !== img.name) continue;
        // A new tag replaces the tag and drops a digest; without one, both are kept.
        c.image =
          `${img.newName ?? name}` +
          (img.newTag !== undefined ? `:${img.newTag}` : `${tag === undefined ? '' : `:${tag}`}${digest}`);
      }
  }

  for (const r of (k.replicas ?? []) as Doc[]) {
    const targets = items.filter((it) => SCALABLE.has(it.doc.kind) && it.doc.metadata.name === r.name);
    if (targets.length === 0) throw new KustomizeError(`${where}: replicas for ${r.name}, which is not here`);
    for (const t of targets) t.doc.spec.replicas = r.count;
  }
  return items;
}

/**
 * Renders a kustomization directory like `kubectl kustomize <dir>`: the resources, with generated
 * ConfigMaps and Secrets named `<name>-<hash>` and every pod-spec reference to them rewritten.
 */
export function kustomizeBuild(dir: string, root = dir): Doc[] {
  const items = build(dir, root);
  const renamed = new Map<string, string>();
  for (const it of items) {
    if (!it.generated) continue;
    const name = it.doc.metadata.name as string;
    const hashed = `${name}-${nameHash(it.doc)}`;
    renamed.set(`${it.doc.kind}/${name}`, hashed);
    it.doc.metadata.name = hashed;
  }
  const rename = (kind: string, ref: Doc | undefined, field = 'name') => {
    if (ref?.[field] !== undefined) ref[field] = renamed.get(`${kind}/${ref[field]}`) ?? ref[field];
  };
  for (const { doc } of items)
    for (const t of podTemplates(doc)) {
      for (const c of [...(t.spec?.containers ?? []), ...(t.spec?.initContainers ?? [])] as Doc[]) {
        for (const from of (c.envFrom ?? []) as Doc[]) {
          rename('ConfigMap', from.configMapRef);
          rename('Secret', from.secretRef);
        }
        for (const e of (c.env ?? []) as Doc[]) {
          rename('ConfigMap', e.valueFrom?.configMapKeyRef);
          rename('Secret', e.valueFrom?.secretKeyRef);
        }
      }
      for (const v of (t.spec?.volumes ?? []) as Doc[]) {
        rename('ConfigMap', v.configMap);
        rename('Secret', v.secret, 'secretName');
        for (const s of (v.projected?.sources ?? []) as Doc[]) {
          rename('ConfigMap', s.configMap);
          rename('Secret', s.secret);
        }
      }
      for (const s of (t.spec?.imagePullSecrets ?? []) as Doc[]) rename('Secret', s);
    }
  return items.map((it) => it.doc);
}
