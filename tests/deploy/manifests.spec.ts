/**
 * deploy/ agrees with the apps: every app has its Kubernetes manifests and its
 * compose services, every YAML file parses, the kustomizations render (on every
 * run: kustomize.ts renders the subset deploy/k8s uses, checked against
 * `kubectl kustomize` wherever kubectl exists), ports match SERVICE_PORTS (and the
 * gateway's 8080), every variable set exists in (and validates against) the
 * app's config schema, probes hit the serving port, every app declares its
 * metrics port and a scrape config (pod annotations, the monitoring ServiceMonitor),
 * every alert has its runbook in docs/operations.md, and webhooks never go to
 * private addresses from a deployment. Every rendered object validates against the Kubernetes
 * (1.33) and Prometheus Operator schemas (kubernetes-models), and the production properties hold
 * per app: restricted pod security, resources, an HPA owning the replica count, a PDB, topology
 * spread, migrations before rollout (init container), graceful termination, and NetworkPolicies
 * that let each backend's gRPC port be reached by exactly its callers (from the config schemas).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { Type, type TObject } from '@sinclair/typebox';
import { commonConfig, databaseConfig, defaultMetricsPort, loadConfig, SERVICE_PORTS, type ServiceName } from '@sluice/config';
import { tracingSettings } from '@sluice/tracing';
import { appConfigSchema } from '../../tools/lib/app-config.js';
import { APPS, grpcUrlVariable, type AppName } from '../../tools/stack.js';
import { KustomizeError, kustomizeBuild } from './kustomize.js';
import { connectionAllowed, type Endpoint, type Port } from './network-policy.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const DEPLOY = join(ROOT, 'deploy');
const BASE = join(DEPLOY, 'k8s', 'base');
const OVERLAY = join(DEPLOY, 'k8s', 'overlays', 'example');
const GATEWAY_PORT = 8080;

/** Every app of the repository (a directory with a project.json under apps/). */
const apps = readdirSync(join(ROOT, 'apps')).filter((a) =>
  existsSync(join(ROOT, 'apps', a, 'project.json')),
) as AppName[];
const backends = apps.filter((a) => a !== 'gateway') as (AppName & ServiceName)[];

/** Variables of the tooling entry points shipped in the images (not services). */
const TOOL_VARIABLES: Record<string, string[]> = {
  'ensure-credentials.mjs': [
    'IDENTITY_GRPC_URL',
    'SANDBOX_PLATFORM_CREDENTIALS',
    'PRODUCTION_PLATFORM_CREDENTIALS',
    'BOOTSTRAP_WAIT_MS',
    'PLATFORM_NAME',
  ],
};

type Doc = Record<string, any>;
/** A rendered kustomization: its resources, and the data of its ConfigMaps and Secrets by (rendered) name. */
interface Rendered {
  resources: Doc[];
  configMaps: Record<string, Record<string, string>>;
  secrets: Record<string, Record<string, string>>;
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

function readYaml(file: string): Doc[] {
  const docs = parseAllDocuments(readFileSync(file, 'utf8'));
  for (const d of docs)
    if (d.errors.length)
      throw new Error(`${relative(ROOT, file)}: ${d.errors.map((e) => e.message).join('; ')}`);
  return docs.map((d) => d.toJS() as Doc).filter(Boolean);
}

/** Renders a kustomization directory (kustomize.ts) and indexes its ConfigMaps and Secrets (decoded). */
function render(dir: string): Rendered {
  const resources = kustomizeBuild(dir, ROOT);
  const out: Rendered = { resources, configMaps: {}, secrets: {} };
  for (const d of resources) {
    if (d.kind === 'ConfigMap') out.configMaps[d.metadata.name] = { ...d.data };
    if (d.kind === 'Secret')
      out.secrets[d.metadata.name] = Object.fromEntries(
        Object.entries((d.data ?? {}) as Record<string, string>).map(([k, v]) => [
          k,
          Buffer.from(v, 'base64').toString('utf8'),
        ]),
      );
  }
  return out;
}

const find = (docs: Doc[], kind: string, name: string) =>
  docs.find((d) => d.kind === kind && d.metadata?.name === name);

/** Every container of a workload's pod template, init containers included. */
const podContainers = (d: Doc): Doc[] => [
  ...((d.spec.template.spec.initContainers ?? []) as Doc[]),
  ...(d.spec.template.spec.containers as Doc[]),
];

/**
 * Validates one Kubernetes object against its schema (kubernetes-models: the Kubernetes 1.33
 * OpenAPI schemas, and the Prometheus Operator's CRDs), by apiVersion and kind. An unknown
 * apiVersion/kind fails (the import), never passes. The schemas allow unknown fields, as the API's
 * own OpenAPI does; the property tests below read the fields that matter by name.
 */
async function validateObject(doc: Doc): Promise<void> {
  const [group, version] = String(doc.apiVersion).includes('/') ? String(doc.apiVersion).split('/') : ['', doc.apiVersion];
  const module =
    group === 'monitoring.coreos.com'
      ? `@kubernetes-models/prometheus-operator/${group}/${version}/${doc.kind}`
      : `kubernetes-models/${group ? `${group}/` : ''}${version}/${doc.kind}`;
  const Model = ((await import(module)) as Record<string, new (d: Doc) => { validate(): void }>)[doc.kind]!;
  // kustomize breaks a long Secret value's base64 into lines, which the API server's decoder (Go's
  // encoding/base64) skips; the schema's "byte" format does not, so it gets the value unbroken.
  const data = doc.kind === 'Secret' && doc.data
    ? Object.fromEntries(Object.entries(doc.data as Record<string, string>).map(([k, v]) => [k, v.replace(/\n/g, '')]))
    : undefined;
  new Model(data ? { ...doc, data } : doc).validate();
}

/**
 * The environment a container gets in a rendered kustomization: configMap refs resolved (each must
 * name a rendered ConfigMap, i.e. the hashed name of a generated one), secret refs from the rendered
 * secrets (or a placeholder where the base leaves the Secret to the overlay).
 */
function containerEnv(
  c: Doc,
  { configMaps, secrets }: Pick<Rendered, 'configMaps' | 'secrets'>,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const from of (c.envFrom ?? []) as Doc[]) {
    const name = from.configMapRef?.name as string;
    expect(configMaps[name], `configMap ${name} referenced by container ${c.name} is rendered`).toBeDefined();
    Object.assign(env, configMaps[name]);
  }
  for (const e of (c.env ?? []) as Doc[]) {
    if (e.value !== undefined) env[e.name] = String(e.value);
    else if (e.valueFrom?.secretKeyRef) {
      const ref = e.valueFrom.secretKeyRef;
      env[e.name] =
        secrets[ref.name]?.[ref.key] ?? (e.name === 'DATABASE_URL' ? 'postgres://u@db:5432/sluice' : 'x');
    } else env[e.name] = 'x';
  }
  return env;
}

/** Validates an environment against a config schema (throws ConfigError naming the variables). */
/** What `main.mjs migrate` reads (libs/runtime): the database settings alone. */
const MIGRATE_SCHEMA = Type.Object({ ...commonConfig, ...databaseConfig });

/** Every variable is one the app reads, and `loads` (the app's schema, or what its command reads) accepts them. */
function expectValidConfig(schema: TObject, env: Record<string, string>, where: string, loads: TObject = schema) {
  // OTEL_* are read by the OpenTelemetry SDK and libs/tracing, not by the app's schema (docs/configuration.md).
  const unknown = Object.keys(env).filter((k) => !(k in schema.properties) && !k.startsWith('OTEL_'));
  expect(unknown, `${where} sets variables the app does not read`).toEqual([]);
  expect(() => loadConfig(loads, env), where).not.toThrow();
}

const schemas = {} as Record<AppName, TObject>;

beforeAll(async () => {
  for (const app of apps) schemas[app] = await appConfigSchema(app);
}, 60_000);

describe('deploy/', () => {
  it('every YAML file parses', () => {
    const files = walk(DEPLOY).filter((f) => /\.ya?ml$/.test(f));
    expect(files.length).toBeGreaterThan(apps.length * 4);
    for (const f of files) expect(() => readYaml(f), relative(ROOT, f)).not.toThrow();
  });

  it('the Dockerfile builds one app per APP build arg into a non-root node:20-slim image', () => {
    const df = readFileSync(join(DEPLOY, 'Dockerfile'), 'utf8');
    expect(df).toMatch(/^ARG NODE_IMAGE=node:20-slim$/m);
    expect(df).toMatch(/node tools\/build-app\.mjs "\$APP"/);
    expect(df).toMatch(/node tools\/generate-contracts\.mjs/);
    expect(df).toMatch(/^USER 1000:1000$/m);
    expect(df).toMatch(/^CMD \["node", ?"main\.mjs"\]$/m);
    expect(existsSync(join(DEPLOY, 'Dockerfile.dockerignore'))).toBe(true);
  });
});

describe('kubernetes base', () => {
  // Rendered in a hook, so a kustomization that does not render fails every test of the block by name.
  let base: Rendered;
  beforeAll(() => {
    base = render(BASE);
  });

  it.each(apps)('%s has a Deployment, a Service and a migration Job', (app) => {
    const k = readYaml(join(BASE, app, 'kustomization.yaml'))[0]!;
    expect(k.resources).toEqual(
      expect.arrayContaining(['deployment.yaml', 'service.yaml', 'migration-job.yaml']),
    );
    const dep = find(base.resources, 'Deployment', app);
    const svc = find(base.resources, 'Service', app);
    const job = find(base.resources, 'Job', `${app}-migrate`);
    expect(dep, `Deployment ${app}`).toBeDefined();
    expect(svc, `Service ${app}`).toBeDefined();
    expect(job, `Job ${app}-migrate`).toBeDefined();
    const migrate = job!.spec.template.spec.containers[0];
    expect(migrate.image).toBe(`sluice/${app}`);
    expect(migrate.command).toEqual(['node', 'main.mjs', 'migrate']);
    // `migrate` reads only the database settings: the Job is given no other secret (no master key).
    const secrets = (migrate.env ?? [])
      .filter((e: { valueFrom?: { secretKeyRef?: unknown } }) => e.valueFrom?.secretKeyRef)
      .map((e: { name: string }) => e.name);
    expect(secrets).toEqual(['DATABASE_URL']);
    // The Service selects the serving pods only, never the Job's.
    const podLabels = dep!.spec.template.metadata.labels;
    for (const [k2, v] of Object.entries(svc!.spec.selector)) expect(podLabels[k2]).toBe(v);
    expect(
      Object.entries(svc!.spec.selector).every(([k2, v]) => job!.spec.template.metadata.labels[k2] === v),
    ).toBe(false);
    expect(dep!.spec.selector.matchLabels).toEqual(svc!.spec.selector);
  });

  it.each(apps)('%s: ports and probes agree with its serving port', (app) => {
    const dep = find(base.resources, 'Deployment', app)!;
    const svc = find(base.resources, 'Service', app)!;
    const c = dep.spec.template.spec.containers[0];
    const port = app === 'gateway' ? GATEWAY_PORT : SERVICE_PORTS[app as ServiceName];
    expect(c.image).toBe(`sluice/${app}`);
    // The serving port, and the metrics port (checked below).
    expect(c.ports).toHaveLength(2);
    expect(c.ports[0].containerPort).toBe(port);
    const env = containerEnv(c, base);
    expect(Number(env[app === 'gateway' ? 'GATEWAY_PORT' : 'GRPC_PORT'])).toBe(port);
    expect(env[app === 'gateway' ? 'GATEWAY_HOST' : 'GRPC_HOST']).toBe('0.0.0.0');
    expect(svc.spec.ports).toHaveLength(2);
    expect(svc.spec.ports[0].port).toBe(port);
    expect([port, c.ports[0].name]).toContain(svc.spec.ports[0].targetPort);
    for (const probe of ['readinessProbe', 'livenessProbe', 'startupProbe']) {
      const p = c[probe];
      expect(p, `${app} ${probe}`).toBeDefined();
      if (app === 'gateway') {
        expect([port, c.ports[0].name]).toContain(p.httpGet.port);
        expect(p.httpGet.path).toBe(probe === 'readinessProbe' ? '/readyz' : '/healthz');
      } else {
        expect(p.grpc?.port, `${app} ${probe} uses gRPC health on ${port}`).toBe(port);
      }
    }
    expect(
      c.resources?.requests?.cpu && c.resources?.requests?.memory && c.resources?.limits?.memory,
    ).toBeTruthy();
    expect(dep.spec.template.spec.securityContext.runAsNonRoot).toBe(true);
  });

  it.each(apps)('%s: declares its metrics port (container, Service, env) and a scrape config', (app) => {
    const dep = find(base.resources, 'Deployment', app)!;
    const svc = find(base.resources, 'Service', app)!;
    const c = dep.spec.template.spec.containers[0];
    const metrics = defaultMetricsPort(app);
    const serving = app === 'gateway' ? GATEWAY_PORT : SERVICE_PORTS[app as ServiceName];
    expect(metrics).not.toBe(serving);
    expect(c.ports.find((p: Doc) => p.name === 'metrics')?.containerPort, `${app} container port metrics`).toBe(metrics);
    const env = containerEnv(c, base);
    expect(Number(env.METRICS_PORT)).toBe(metrics);
    expect(env.METRICS_HOST).toBe('0.0.0.0');
    const port = svc.spec.ports.find((p: Doc) => p.name === 'metrics');
    expect(port, `Service ${app} port metrics`).toBeDefined();
    expect(port.port).toBe(metrics);
    expect(['metrics', metrics]).toContain(port.targetPort);
    // Plain Prometheus (kubernetes_sd, role pod) scrapes by these annotations.
    expect(dep.spec.template.metadata.annotations).toMatchObject({
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': String(metrics),
      'prometheus.io/path': '/metrics',
    });
    // The probes stay on the serving port: /metrics is never a health check.
    for (const probe of ['readinessProbe', 'livenessProbe', 'startupProbe'])
      expect([c[probe].grpc?.port, c[probe].httpGet?.port]).not.toContain(metrics);
  });

  it.each(apps)('%s: every variable set exists in its config schema and validates', (app) => {
    const schema = schemas[app];
    const dep = find(base.resources, 'Deployment', app)!;
    const job = find(base.resources, 'Job', `${app}-migrate`)!;
    const env = containerEnv(dep.spec.template.spec.containers[0], base);
    expectValidConfig(schema, env, `Deployment ${app}`);
    expectValidConfig(schema, containerEnv(job.spec.template.spec.containers[0], base), `Job ${app}-migrate`, MIGRATE_SCHEMA);
    // Everything that must not be left to its local default in a cluster is set.
    expect(env.DATABASE_URL, 'DATABASE_URL').toBeDefined();
    expect(
      dep.spec.template.spec.containers[0].env.find((e: Doc) => e.name === 'DATABASE_URL').valueFrom
        .secretKeyRef,
    ).toBeDefined();
    expect(env.NATS_URL, 'NATS_URL').toBeDefined();
    expect(env.MIGRATE_ON_START).toBe('false');
    // Traces go to the cluster's OpenTelemetry Collector, in the one encoding the apps export.
    expect(env.OTEL_EXPORTER_OTLP_ENDPOINT).toBe('http://otel-collector:4318');
    expect(() => tracingSettings(env)).not.toThrow();
    expect(tracingSettings(env).exporter).toBe('otlp');
    for (const v of Object.keys(schema.properties).filter((k) => k.endsWith('_GRPC_URL'))) {
      const target = backends.find((b) => grpcUrlVariable(b) === v);
      expect(target, `${v} names a backend`).toBeDefined();
      // dns:/// of the target's headless Service: every ready pod's address, balanced by the caller.
      expect(env[v], `${app} sets ${v}`).toBe(`dns:///${target}:${SERVICE_PORTS[target!]}`);
      const service = base.resources.find((d) => d.kind === 'Service' && d.metadata.name === target);
      expect(service?.spec.clusterIP, `${target} Service is headless`).toBe('None');
    }
    if ('WEBHOOK_ALLOW_PRIVATE_TARGETS' in schema.properties)
      expect(env.WEBHOOK_ALLOW_PRIVATE_TARGETS).toBe('false');
  });

  it('the tooling Jobs set only their own variables', () => {
    const tools = base.resources.filter((d) => d.kind === 'Job' && !d.metadata.name.endsWith('-migrate'));
    for (const job of tools) {
      const c = job.spec.template.spec.containers[0];
      const script = (c.command as string[]).find((a) => a.endsWith('.mjs'))!;
      expect(TOOL_VARIABLES[script], `${job.metadata.name} runs a known tool`).toBeDefined();
      for (const e of c.env as Doc[]) expect(TOOL_VARIABLES[script]).toContain(e.name);
    }
  });

  it('WEBHOOK_ALLOW_PRIVATE_TARGETS is false wherever deploy/ sets it', () => {
    const files = walk(DEPLOY).filter((f) => /\.ya?ml$/.test(f));
    let seen = 0;
    for (const f of files) {
      for (const m of readFileSync(f, 'utf8').matchAll(
        /WEBHOOK_ALLOW_PRIVATE_TARGETS\s*[:=]\s*["']?([^"'\s]*)["']?/g,
      )) {
        seen++;
        expect(m[1], relative(ROOT, f)).toBe('false');
      }
    }
    expect(seen).toBeGreaterThanOrEqual(2);
  });
});

describe('kubernetes monitoring (Prometheus Operator)', () => {
  const MONITORING = join(DEPLOY, 'k8s', 'monitoring');
  const operations = existsSync(join(ROOT, 'docs', 'operations.md'))
    ? readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8')
    : '';
  /** GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes. */
  const anchors = new Set(
    [...operations.matchAll(/^#+\s+(.+)$/gm)].map((m) =>
      m[1]!.trim().toLowerCase().replace(/[^a-z0-9 _-]/g, '').replace(/ /g, '-'),
    ),
  );
  /** The metric names a PromQL expression uses (histogram series reduced to the histogram). */
  const metricsIn = (expr: string) =>
    [
      ...expr.matchAll(
        /\b(?:http_server|grpc_server|grpc_client|outbox|events_consumer|webhook|scheduler|ledger|db_pool|process|nodejs)_[a-z0-9_]+/g,
      ),
    ].map((m) => m[0].replace(/_(bucket|count|sum)$/, ''));
  const documented = (metric: string) => operations.includes(`\`${metric}\``);

  let monitoring: Rendered;
  let base: Rendered;
  beforeAll(() => {
    monitoring = render(MONITORING);
    base = render(BASE);
  });

  it('a ServiceMonitor scrapes the metrics port of every app Service', () => {
    const sm = monitoring.resources.find((d) => d.kind === 'ServiceMonitor')!;
    expect(sm, 'ServiceMonitor').toBeDefined();
    const selector = sm.spec.selector.matchLabels as Record<string, string>;
    for (const app of apps) {
      const svc = find(base.resources, 'Service', app)!;
      for (const [k, v] of Object.entries(selector)) expect(svc.metadata.labels?.[k], `Service ${app} label ${k}`).toBe(v);
      for (const ep of sm.spec.endpoints as Doc[]) {
        expect(svc.spec.ports.map((p: Doc) => p.name)).toContain(ep.port);
        expect(ep.path).toBe('/metrics');
      }
    }
  });

  it('every alert has a severity, a summary, a runbook section in docs/operations.md and documented metrics', () => {
    const rule = monitoring.resources.find((d) => d.kind === 'PrometheusRule')!;
    expect(rule, 'PrometheusRule').toBeDefined();
    const alerts = (rule.spec.groups as Doc[]).flatMap((g) => g.rules as Doc[]);
    expect(alerts.map((a) => a.alert)).toEqual(
      expect.arrayContaining([
        'SluiceOutboxLag',
        'SluiceConsumerLag',
        'SluiceWebhookFailureRate',
        'SluiceGateway5xxRate',
        'SluiceLedgerReconcileFailed',
      ]),
    );
    for (const a of alerts) {
      expect(a.expr, a.alert).toBeTruthy();
      expect(['page', 'warning'], a.alert).toContain(a.labels?.severity);
      expect(a.annotations?.summary, a.alert).toBeTruthy();
      const [file, anchor] = String(a.annotations?.runbook_url).split('#');
      expect(file, a.alert).toBe('docs/operations.md');
      expect(anchors.has(anchor!), `${a.alert}: docs/operations.md has a section #${anchor}`).toBe(true);
      for (const m of metricsIn(a.expr)) expect(documented(m), `${a.alert} uses ${m}, documented in docs/operations.md`).toBe(true);
    }
  });

  it('the Grafana dashboard is valid JSON whose every query uses documented metrics', () => {
    const dashboard = JSON.parse(readFileSync(join(MONITORING, 'grafana-dashboard.json'), 'utf8')) as Doc;
    const exprs = (dashboard.panels as Doc[]).flatMap((p) => ((p.targets ?? []) as Doc[]).map((t) => t.expr as string));
    expect(exprs.length).toBeGreaterThan(10);
    for (const e of exprs) {
      expect(metricsIn(e).length, e).toBeGreaterThan(0);
      for (const m of metricsIn(e)) expect(documented(m), `dashboard uses ${m}, documented in docs/operations.md`).toBe(true);
    }
  });
});

describe('kubernetes example overlay', () => {
  const k = readYaml(join(OVERLAY, 'kustomization.yaml'))[0]!;
  let overlay: Rendered;
  beforeAll(() => {
    overlay = render(OVERLAY);
  });

  it('sets a restricted namespace, an image per app, no replica counts (the HPAs own them) and the database secret', () => {
    expect(k.namespace).toBeTruthy();
    const ns = find(overlay.resources, 'Namespace', k.namespace);
    expect(ns).toBeDefined();
    expect(ns!.metadata.labels?.['pod-security.kubernetes.io/enforce']).toBe('restricted');
    const images = (k.images as Doc[]).map((i) => i.name);
    for (const app of apps) expect(images).toContain(`sluice/${app}`);
    for (const i of k.images as Doc[]) expect(i.newTag, `${i.name} is pinned`).toMatch(/\S/);
    expect(k.replicas, 'replica counts belong to the HorizontalPodAutoscalers').toBeUndefined();
    const secret = overlay.resources.find(
      (d) => d.kind === 'Secret' && d.metadata.name.startsWith('sluice-secrets-'),
    );
    expect(overlay.secrets[secret?.metadata.name]?.DATABASE_URL).toMatch(/^postgres(ql)?:\/\//);
  });

  it.each(apps)('%s: its effective configuration validates', (app) => {
    const dep = find(overlay.resources, 'Deployment', app)!;
    expectValidConfig(
      schemas[app],
      containerEnv(dep.spec.template.spec.containers[0], overlay),
      `overlay ${app}`,
    );
  });

  it('renders: the namespace, pinned images, replicas, and every generated name referenced by its hashed name', () => {
    const kinds = overlay.resources.map((d) => d.kind);
    expect(kinds.filter((x) => x === 'Deployment')).toHaveLength(apps.length);
    for (const d of overlay.resources)
      if (d.kind !== 'Namespace')
        expect(d.metadata.namespace, `${d.kind} ${d.metadata.name}`).toBe(k.namespace);
    for (const app of apps) {
      const image = (k.images as Doc[]).find((i) => i.name === `sluice/${app}`)!;
      const dep = find(overlay.resources, 'Deployment', app)!;
      const job = find(overlay.resources, 'Job', `${app}-migrate`)!;
      for (const c of [...podContainers(dep), job.spec.template.spec.containers[0]])
        expect(c.image, app).toBe(`${image.newName}:${image.newTag}`);
      expect(dep.spec.replicas, `${app} replicas`).toBeUndefined();
    }
    // No reference is left to a generator's own name (it would name no object in the cluster).
    const names = new Set(overlay.resources.map((d) => `${d.kind}/${d.metadata.name}`));
    for (const d of overlay.resources)
      for (const c of (d.spec?.template?.spec?.containers ?? []) as Doc[]) {
        for (const from of (c.envFrom ?? []) as Doc[])
          expect(
            names.has(`ConfigMap/${from.configMapRef.name}`),
            `${d.metadata.name}: ${from.configMapRef.name}`,
          ).toBe(true);
        for (const e of (c.env ?? []) as Doc[]) {
          const ref = e.valueFrom?.secretKeyRef;
          if (ref && !ref.optional)
            expect(names.has(`Secret/${ref.name}`), `${d.metadata.name}: secret ${ref.name}`).toBe(true);
        }
      }
  });

  it.runIf(hasKubectl())(
    'kustomize.ts renders exactly what kubectl kustomize renders (base and overlay)',
    () => {
      for (const dir of [BASE, OVERLAY]) {
        const real = parseAllDocuments(execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8' })).map(
          (d) => d.toJS() as Doc,
        );
        const byId = (docs: Doc[]) =>
          new Map(docs.map((d) => [`${d.kind}/${d.metadata.namespace ?? ''}/${d.metadata.name}`, d]));
        const ours = byId(kustomizeBuild(dir, ROOT));
        const theirs = byId(real);
        expect([...ours.keys()].sort(), relative(ROOT, dir)).toEqual([...theirs.keys()].sort());
        for (const [id, d] of theirs) expect(ours.get(id), `${relative(ROOT, dir)}: ${id}`).toEqual(d);
      }
    },
  );

  it('kustomize.ts refuses what it does not implement instead of ignoring it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kustomize-'));
    try {
      writeFileSync(join(dir, 'cm.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: x }\n');
      const attempt = (kustomization: string) => {
        writeFileSync(join(dir, 'kustomization.yaml'), kustomization);
        return () => kustomizeBuild(dir);
      };
      expect(attempt('resources: [cm.yaml]\npatches: [{ path: p.yaml }]\n')).toThrow(KustomizeError);
      expect(attempt('resources: [cm.yaml]\nconfigMapGenerator: [{ name: y, files: [a.txt] }]\n')).toThrow(
        /"files" is not supported/,
      );
      expect(attempt('configMapGenerator: [{ name: y, behavior: merge, literals: [A=1] }]\n')).toThrow(
        /not generated below/,
      );
      expect(attempt('resources: [cm.yaml, cm.yaml]\n')).toThrow(/defined twice/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('kubernetes schemas', () => {
  it('every rendered object (base, example overlay, monitoring) validates against its Kubernetes schema', async () => {
    let n = 0;
    for (const dir of [BASE, OVERLAY, join(DEPLOY, 'k8s', 'monitoring')])
      for (const d of kustomizeBuild(dir, ROOT)) {
        await expect(validateObject(d), `${relative(ROOT, dir)}: ${d.kind} ${d.metadata?.name}`).resolves.toBeUndefined();
        n++;
      }
    expect(n).toBeGreaterThan(apps.length * 6);
  });

  it('the validation refuses what the API server would (so the test above can fail)', async () => {
    const base = kustomizeBuild(BASE, ROOT);
    const hpa = structuredClone(find(base, 'HorizontalPodAutoscaler', 'gateway')!);
    delete hpa.spec.scaleTargetRef.kind;
    await expect(validateObject(hpa)).rejects.toThrow(/kind/);
    const policy = structuredClone(find(base, 'NetworkPolicy', 'default-deny')!);
    policy.spec.policyTypes = ['Inbound'];
    await expect(validateObject(policy)).rejects.toThrow(/allowed values/);
    const dep = structuredClone(find(base, 'Deployment', 'accounts')!);
    dep.spec.template.spec.containers[0].ports[0].containerPort = '50053';
    await expect(validateObject(dep)).rejects.toThrow(/integer/);
    await expect(validateObject({ apiVersion: 'apps/v1', kind: 'Deploymnt', metadata: { name: 'x' } })).rejects.toThrow();
  });
});

describe('kubernetes production properties (example overlay)', () => {
  let overlay: Rendered;
  let namespace: string;
  const policies = () => overlay.resources.filter((d) => d.kind === 'NetworkPolicy');
  beforeAll(() => {
    overlay = render(OVERLAY);
    namespace = readYaml(join(OVERLAY, 'kustomization.yaml'))[0]!.namespace;
  });

  /** Every workload with a pod template: the Deployments and the Jobs (migrations, bootstrap). */
  const workloads = () => overlay.resources.filter((d) => d.kind === 'Deployment' || d.kind === 'Job');

  it('every pod is restricted: non-root, read-only root, no privilege escalation, no capabilities, seccomp, no token', () => {
    const all = workloads();
    expect(all.length).toBeGreaterThanOrEqual(apps.length * 2);
    for (const w of all) {
      const where = `${w.kind} ${w.metadata.name}`;
      const pod = w.spec.template.spec;
      expect(pod.securityContext?.runAsNonRoot, where).toBe(true);
      expect(pod.securityContext?.runAsUser, where).toBeGreaterThan(0);
      expect(pod.securityContext?.runAsGroup, where).toBeGreaterThan(0);
      expect(pod.securityContext?.seccompProfile?.type, where).toBe('RuntimeDefault');
      expect(pod.automountServiceAccountToken, where).toBe(false);
      expect(pod.hostNetwork ?? false, where).toBe(false);
      for (const c of podContainers(w)) {
        const at = `${where} container ${c.name}`;
        expect(c.securityContext?.allowPrivilegeEscalation, at).toBe(false);
        expect(c.securityContext?.readOnlyRootFilesystem, at).toBe(true);
        expect(c.securityContext?.capabilities?.drop, at).toEqual(['ALL']);
        expect(c.securityContext?.capabilities?.add ?? [], at).toEqual([]);
        expect(c.securityContext?.privileged ?? false, at).toBe(false);
        expect(c.securityContext?.runAsUser ?? pod.securityContext.runAsUser, at).toBeGreaterThan(0);
        // Requests to schedule by, a memory limit (a leak is killed, not the node's neighbours).
        expect(c.resources?.requests?.cpu && c.resources?.requests?.memory && c.resources?.limits?.memory, at).toBeTruthy();
      }
    }
    const sa = overlay.resources.find((d) => d.kind === 'ServiceAccount');
    expect(sa?.automountServiceAccountToken).toBe(false);
  });

  it.each(apps)('%s: an HPA owns its replicas (at least 2), a PDB keeps all but one pod, pods spread over nodes and zones', (app) => {
    const dep = find(overlay.resources, 'Deployment', app)!;
    const labels = dep.spec.template.metadata.labels as Record<string, string>;
    const selects = (sel: Doc) => Object.entries(sel.matchLabels as Record<string, string>).every(([k, v]) => labels[k] === v);
    expect(dep.spec.replicas).toBeUndefined();
    const hpa = overlay.resources.find((d) => d.kind === 'HorizontalPodAutoscaler' && d.spec.scaleTargetRef.name === app);
    expect(hpa, `HorizontalPodAutoscaler of ${app}`).toBeDefined();
    expect(hpa!.apiVersion).toBe('autoscaling/v2');
    expect(hpa!.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: app });
    expect(hpa!.spec.minReplicas).toBeGreaterThanOrEqual(2);
    expect(hpa!.spec.maxReplicas).toBeGreaterThan(hpa!.spec.minReplicas);
    // Utilization is relative to the requests: the container must request CPU.
    const cpu = (hpa!.spec.metrics as Doc[]).find((m) => m.resource?.name === 'cpu');
    expect(cpu?.resource.target.type).toBe('Utilization');
    expect(dep.spec.template.spec.containers[0].resources.requests.cpu).toBeTruthy();
    const pdb = overlay.resources.find((d) => d.kind === 'PodDisruptionBudget' && selects(d.spec.selector));
    expect(pdb, `PodDisruptionBudget of ${app}`).toBeDefined();
    expect(pdb!.spec.maxUnavailable ?? hpa!.spec.minReplicas - pdb!.spec.minAvailable).toBeLessThan(hpa!.spec.minReplicas);
    const spread = (dep.spec.template.spec.topologySpreadConstraints ?? []) as Doc[];
    expect(spread.map((t) => t.topologyKey).sort()).toEqual(['kubernetes.io/hostname', 'topology.kubernetes.io/zone']);
    for (const t of spread) {
      expect(selects(t.labelSelector), `${app} ${t.topologyKey} selects its own pods`).toBe(true);
      expect(t.maxSkew).toBe(1);
    }
  });

  it.each(apps)('%s: its pods start only once its migrations are applied (init container), and drain before they stop', (app) => {
    const dep = find(overlay.resources, 'Deployment', app)!;
    const job = find(overlay.resources, 'Job', `${app}-migrate`)!;
    const pod = dep.spec.template.spec;
    const [wait] = pod.initContainers as Doc[];
    const serving = pod.containers[0];
    expect(wait.command).toEqual(['node', 'main.mjs', 'migrate', '--wait']);
    // The same build as the server and the Job, so it waits for exactly the migrations that build has.
    expect(wait.image).toBe(serving.image);
    expect(job.spec.template.spec.containers[0].image).toBe(serving.image);
    expect((wait.env as Doc[]).map((e) => e.name)).toEqual(['DATABASE_URL']);
    expect(wait.env[0].valueFrom.secretKeyRef).toEqual(
      serving.env.find((e: Doc) => e.name === 'DATABASE_URL').valueFrom.secretKeyRef,
    );
    // Graceful termination: endpoints drop the pod during the preStop pause, then SIGTERM drains
    // for up to SHUTDOWN_GRACE_MS; the kubelet's SIGKILL comes after both.
    const env = containerEnv(serving, overlay);
    const graceMs = Number(env.SHUTDOWN_GRACE_MS ?? (schemas[app].properties.SHUTDOWN_GRACE_MS as { default: number }).default);
    // The gateway also keeps serving SHUTDOWN_DELAY_MS after SIGTERM (readiness false, connections closing).
    const delayProp = schemas[app].properties.SHUTDOWN_DELAY_MS as { default: number } | undefined;
    const delayMs = delayProp ? Number(env.SHUTDOWN_DELAY_MS ?? delayProp.default) : 0;
    expect(graceMs).toBeGreaterThan(0);
    const preStop = serving.lifecycle?.preStop?.exec?.command as string[];
    expect(preStop?.[0]).toBe('sleep');
    const preStopMs = Number(preStop[1]) * 1000;
    expect(preStopMs).toBeGreaterThan(0);
    expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(preStopMs + delayMs + graceMs);
    // Readiness notices a pod that stops serving sooner than liveness would restart it; the
    // gateway's readiness (/readyz) also checks its dependencies, its liveness (/healthz) only the process.
    const r = serving.readinessProbe;
    const l = serving.livenessProbe;
    expect(r.periodSeconds * r.failureThreshold).toBeLessThan(l.periodSeconds * l.failureThreshold);
    if (app === 'gateway') expect(r.httpGet.path).not.toBe(l.httpGet.path);
  });

  describe('network policies', () => {
    const INGRESS: Endpoint = { namespace: 'ingress-nginx', labels: { 'app.kubernetes.io/name': 'ingress-nginx' } };
    const PROMETHEUS: Endpoint = { namespace: 'monitoring', labels: { 'app.kubernetes.io/name': 'prometheus' } };
    const INTERNET: Endpoint = { ip: '203.0.113.7' };
    const METADATA: Endpoint = { ip: '169.254.169.254' };
    const pod = (labels: Record<string, string>): Endpoint => ({ namespace, labels });
    const server = (app: AppName) => pod(find(overlay.resources, 'Deployment', app)!.spec.template.metadata.labels);
    const servingPort = (app: AppName): Port => ({
      port: app === 'gateway' ? GATEWAY_PORT : SERVICE_PORTS[app as ServiceName],
      name: app === 'gateway' ? 'http' : 'grpc',
    });
    const metricsPort = (app: AppName): Port => ({ port: defaultMetricsPort(app), name: 'metrics' });
    /** Whom each app calls: the backends whose *_GRPC_URL its config schema reads. */
    const calls = (from: AppName, to: AppName) =>
      to !== 'gateway' && grpcUrlVariable(to as ServiceName) in schemas[from].properties;

    it('the namespace denies by default, in and out', () => {
      const deny = find(overlay.resources, 'NetworkPolicy', 'default-deny')!;
      expect(deny.spec.podSelector).toEqual({});
      expect(deny.spec.policyTypes.sort()).toEqual(['Egress', 'Ingress']);
      expect(deny.spec.ingress ?? []).toEqual([]);
      expect(deny.spec.egress ?? []).toEqual([]);
      // Something outside every rule is refused (the evaluator is not permissive).
      const stranger = pod({ 'app.kubernetes.io/name': 'debug' });
      expect(connectionAllowed(policies(), stranger, server('identity'), servingPort('identity'))).toBe(false);
      expect(connectionAllowed(policies(), server('identity'), INTERNET, { port: 443 })).toBe(false);
    });

    it("each app's serving port is reached exactly by its callers (from the config schemas), the gateway only from the ingress controller", () => {
      for (const to of apps)
        for (const from of apps) {
          if (from === to) continue;
          expect(
            connectionAllowed(policies(), server(from), server(to), servingPort(to)),
            `${from} → ${to}:${servingPort(to).port}`,
          ).toBe(calls(from, to));
        }
      expect(connectionAllowed(policies(), INGRESS, server('gateway'), servingPort('gateway'))).toBe(true);
      for (const b of backends)
        expect(connectionAllowed(policies(), INGRESS, server(b), servingPort(b)), `ingress → ${b}`).toBe(false);
      // The credentials bootstrap Job reaches identity, and only identity.
      const bootstrap = pod(find(overlay.resources, 'Job', 'identity-bootstrap-credentials')!.spec.template.metadata.labels);
      for (const b of backends)
        expect(connectionAllowed(policies(), bootstrap, server(b), servingPort(b)), `bootstrap → ${b}`).toBe(b === 'identity');
      // Every backend has a caller: a policy that lets nobody in would be a broken service.
      for (const b of backends) expect(apps.some((a) => calls(a, b)), `${b} has callers`).toBe(true);
    });

    it('metrics ports are scraped from the monitoring namespace only', () => {
      for (const app of apps) {
        expect(connectionAllowed(policies(), PROMETHEUS, server(app), metricsPort(app)), `prometheus → ${app}`).toBe(true);
        expect(connectionAllowed(policies(), PROMETHEUS, server(app), servingPort(app)), `prometheus → ${app} serving`).toBe(false);
        for (const other of apps)
          if (other !== app)
            expect(connectionAllowed(policies(), server(other), server(app), metricsPort(app)), `${other} → ${app} metrics`).toBe(false);
      }
    });

    it('every pod reaches DNS, Postgres, NATS and the OTLP collector; only the apps that call out reach the internet', () => {
      const dns: Endpoint = { namespace: 'kube-system', labels: { 'k8s-app': 'kube-dns' } };
      const postgres: Endpoint = { namespace: 'database', labels: { app: 'postgres' } };
      const nats: Endpoint = { namespace: 'messaging', labels: { app: 'nats' } };
      const collector: Endpoint = { namespace: 'observability', labels: { app: 'otel-collector' } };
      const CALLING_OUT = new Set<AppName>(['webhook-dispatcher', 'wallet-auth', 'compliance']);
      for (const w of workloads()) {
        const me = pod(w.spec.template.metadata.labels);
        const at = `${w.kind} ${w.metadata.name}`;
        expect(connectionAllowed(policies(), me, dns, { port: 53, protocol: 'UDP' }), `${at} → DNS`).toBe(true);
        expect(connectionAllowed(policies(), me, postgres, { port: 5432 }), `${at} → Postgres`).toBe(true);
        expect(connectionAllowed(policies(), me, nats, { port: 4222 }), `${at} → NATS`).toBe(true);
        expect(connectionAllowed(policies(), me, collector, { port: 4318 }), `${at} → OTLP`).toBe(true);
        expect(connectionAllowed(policies(), me, METADATA, { port: 80 }), `${at} → cloud metadata`).toBe(false);
        const app = w.metadata.name as AppName;
        const outbound = w.kind === 'Deployment' && CALLING_OUT.has(app);
        expect(connectionAllowed(policies(), me, INTERNET, { port: 443 }), `${at} → internet`).toBe(outbound);
      }
      // Each of those reaches what it calls: HTTPS endpoints; wallet-auth its SMTP relay too.
      expect(connectionAllowed(policies(), server('wallet-auth'), INTERNET, { port: 587 })).toBe(true);
      expect(connectionAllowed(policies(), server('webhook-dispatcher'), { ip: '10.0.0.5' }, { port: 443 })).toBe(false);
    });
  });
});

describe('compose', () => {
  const compose = readYaml(join(DEPLOY, 'compose.yaml'))[0]!;
  const services = compose.services as Record<string, Doc>;
  /** `${VAR:-default}` → default (what compose uses when VAR is unset). */
  const interpolate = (v: unknown) => String(v).replace(/\$\{[A-Z0-9_]+:?-([^}]*)\}/g, '$1');
  const envOf = (s: Doc) =>
    Object.fromEntries(
      Object.entries((s.environment ?? {}) as Record<string, unknown>).map(([k2, v]) => [k2, interpolate(v)]),
    );

  it('runs Postgres and NATS with JetStream', () => {
    expect(services.postgres?.image).toMatch(/^postgres:/);
    expect(services.nats?.image).toMatch(/^nats:/);
    expect(services.nats?.command).toContain('-js');
  });

  it.each(apps)('%s: built from deploy/Dockerfile, migrated first, ports and variables agree', (app) => {
    const svc = services[app];
    const mig = services[`${app}-migrate`];
    expect(svc, `service ${app}`).toBeDefined();
    expect(mig, `service ${app}-migrate`).toBeDefined();
    expect(mig!.build).toMatchObject({ context: '..', dockerfile: 'deploy/Dockerfile', args: { APP: app } });
    expect(mig!.command).toEqual(['node', 'main.mjs', 'migrate']);
    expect(svc!.image).toBe(mig!.image);
    expect(svc!.depends_on?.[`${app}-migrate`]?.condition).toBe('service_completed_successfully');
    const env = envOf(svc!);
    const port = app === 'gateway' ? GATEWAY_PORT : SERVICE_PORTS[app as ServiceName];
    expect(Number(env[app === 'gateway' ? 'GATEWAY_PORT' : 'GRPC_PORT'])).toBe(port);
    expect((svc!.expose as string[]).map(Number)).toContain(port);
    // Metrics on their own port, reachable by a Prometheus on the compose network only.
    expect(Number(env.METRICS_PORT)).toBe(defaultMetricsPort(app));
    expect(env.METRICS_HOST).toBe('0.0.0.0');
    expect((svc!.expose as string[]).map(Number)).toContain(defaultMetricsPort(app));
    expect(((svc!.ports ?? []) as string[]).some((p) => p.endsWith(`:${defaultMetricsPort(app)}`))).toBe(false);
    if (app === 'gateway') expect((svc!.ports as string[]).some((p) => p.endsWith(`:${port}`))).toBe(true);
    expectValidConfig(schemas[app], env, `compose ${app}`);
    expectValidConfig(schemas[app], envOf(mig!), `compose ${app}-migrate`);
    for (const v of Object.keys(schemas[app].properties).filter((k2) => k2.endsWith('_GRPC_URL'))) {
      const target = backends.find((b) => grpcUrlVariable(b) === v)!;
      expect(env[v], `${app} sets ${v}`).toBe(`${target}:${SERVICE_PORTS[target]}`);
      expect(services[target], `${v} points at a compose service`).toBeDefined();
    }
    if ('WEBHOOK_ALLOW_PRIVATE_TARGETS' in schemas[app].properties)
      expect(env.WEBHOOK_ALLOW_PRIVATE_TARGETS).toBe('false');
  });

  it('the bootstrap service sets only the credential tool variables', () => {
    const b = services.bootstrap!;
    expect(b.command).toEqual(['node', 'ensure-credentials.mjs']);
    for (const k2 of Object.keys(b.environment))
      expect(TOOL_VARIABLES['ensure-credentials.mjs']).toContain(k2);
  });
});

describe('repository docs', () => {
  it('docs/configuration.md is generated from the current config schemas', async () => {
    const { renderConfigurationDoc } = await import('../../tools/lib/config-doc.js');
    const expected = renderConfigurationDoc(schemas);
    const actual = readFileSync(join(ROOT, 'docs', 'configuration.md'), 'utf8');
    expect(
      actual === expected,
      'docs/configuration.md is out of date: run `npx tsx tools/config-doc.ts`',
    ).toBe(true);
  });

  it('CODEOWNERS names an owner for every app and the shared libs', () => {
    const lines = readFileSync(join(ROOT, 'CODEOWNERS'), 'utf8')
      .split('\n')
      .filter((l) => l.trim() && !l.startsWith('#'));
    const owned = (path: string) => lines.some((l) => l.split(/\s+/)[0] === path && /\s@\S+/.test(l));
    for (const app of apps) expect(owned(`/apps/${app}/`), `owner of /apps/${app}/`).toBe(true);
    expect(owned('/libs/')).toBe(true);
  });

  it('lists every app in the stack', () => {
    expect([...APPS].sort()).toEqual([...apps].sort());
  });
});

function hasKubectl(): boolean {
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore', timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
}
