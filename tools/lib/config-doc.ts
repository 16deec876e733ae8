import type { TObject } from '@sinclair/typebox';
import { APPS, type AppName } from '../stack.js';
import { describeSchema, type ConfigVariable } from './app-config.js';
import { OTEL_VARIABLES } from '@sluice/tracing';

/** Variables read by `npm start` / `npm test` themselves (not by a service). */
export const TOOLING_VARIABLES: { name: string; default: string; description: string }[] = [
  {
    name: 'DATABASE_URL',
    default: 'postgres://postgres@127.0.0.1:5432/sluice',
    description:
      '`npm start`: the database every service uses (created when missing). `npm test`: the server test databases are created on (default `.../postgres`; one fresh database per test file).',
  },
  {
    name: 'NATS_URL',
    default: 'nats://127.0.0.1:4222',
    description: 'NATS server with JetStream, for `npm start` and `npm test`.',
  },
  {
    name: 'EVENT_SUBJECT_PREFIX',
    default: 'sluice',
    description: 'first token of every event subject and stream name, passed to every service.',
  },
  {
    name: 'GATEWAY_HOST',
    default: '127.0.0.1',
    description: 'address the gateway binds; the printed API base URL uses it.',
  },
  { name: 'GATEWAY_PORT', default: '8080', description: 'gateway HTTP port.' },
  {
    name: 'STACK_REPLICAS',
    default: '1',
    description:
      "processes per app (1–16). With 2 or more, each backend's `<SERVICE>_GRPC_URL` lists every replica (`ip:port,ip:port`, balanced round robin by the callers), the replicas after the first take free ports, and the gateway port is served by a TCP balancer that spreads connections over the gateway replicas (the local stand-in for a Kubernetes Service); the gateway replicas then share one `CURSOR_SIGNING_KEY` (random per start unless set), so a list cursor from one works on the other; and the replicas of an app share one process's connections (`DATABASE_POOL_MAX` of each is 10 ÷ replicas, at least 4, unless set; payments' `JOB_CONCURRENCY` follows), so the stack fits the same Postgres.",
  },
  {
    name: 'SANDBOX_PLATFORM_CREDENTIALS',
    default: '—',
    description:
      '`<tokenId>:<secret>`: at start, a sandbox platform exists with exactly this API credential (idempotent). The token id has the form `Token:<uuid>`.',
  },
  {
    name: 'PRODUCTION_PLATFORM_CREDENTIALS',
    default: '—',
    description:
      '`<tokenId>:<secret>`: the same for a production platform. With neither variable set, a sandbox credential is created once, kept in `.sluice/sandbox-credentials.json` and printed.',
  },
  {
    name: 'SANDBOX_TIME_SCALE',
    default: '1',
    description: 'multiplies every sandbox delay (passed to every service).',
  },
  {
    name: 'SANDBOX_UMA_DOMAIN',
    default: "the services' default",
    description: 'domain of sandbox UMA addresses (passed to every service when set).',
  },
  {
    name: 'WEBHOOK_ALLOW_PRIVATE_TARGETS',
    default: 'true',
    description: 'local runs deliver webhooks to loopback/private addresses; `deploy/` sets `false`.',
  },
  { name: 'LOG_LEVEL', default: 'info', description: 'log level of every service.' },
  { name: 'NO_COLOR', default: '—', description: 'set to print the `[app]` log prefixes without color.' },
];

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

function fmtDefault(v: ConfigVariable): string {
  if (v.default === undefined) return v.required ? '**required**' : '—';
  if (v.default === '') return '(empty)';
  return `\`${String(v.default)}\``;
}

function table(vars: ConfigVariable[]): string[] {
  const out = ['| Variable | Type | Default | Meaning |', '| --- | --- | --- | --- |'];
  for (const v of vars) {
    const meaning = [v.description, v.constraint ? `(${v.constraint})` : ''].filter(Boolean).join(' ');
    out.push(`| \`${v.name}\` | ${v.type} | ${cell(fmtDefault(v))} | ${cell(meaning)} |`);
  }
  return out;
}

const same = (a: ConfigVariable, b: ConfigVariable) =>
  a.type === b.type &&
  JSON.stringify(a.default) === JSON.stringify(b.default) &&
  a.description === b.description &&
  a.constraint === b.constraint;

/** docs/configuration.md, generated from the apps' config schemas (`npx tsx tools/config-doc.ts`). */
export function renderConfigurationDoc(schemas: Partial<Record<AppName, TObject>>): string {
  const apps = APPS.filter((a) => schemas[a]);
  const vars = Object.fromEntries(apps.map((a) => [a, describeSchema(schemas[a]!)])) as Record<
    AppName,
    ConfigVariable[]
  >;
  // Variables every app declares identically are listed once.
  const shared = (vars[apps[0]!] ?? []).filter((v) =>
    apps.every((a) => vars[a].some((w) => w.name === v.name && same(v, w))),
  );
  const sharedNames = new Set(shared.map((v) => v.name));
  const backends = apps.filter((a) => a !== 'gateway');
  const backendShared = (vars[backends[0]!] ?? []).filter(
    (v) =>
      !sharedNames.has(v.name) && backends.every((a) => vars[a].some((w) => w.name === v.name && same(v, w))),
  );
  for (const v of backendShared) sharedNames.add(v.name);
  const backendOnly = new Set(backendShared.map((v) => v.name));

  const out: string[] = [
    '# Configuration',
    '',
    "<!-- Generated by `npx tsx tools/config-doc.ts` from the apps' config schemas. Do not edit by hand;",
    '     a deploy test (tests/deploy) fails when this file is out of date. -->',
    '',
    'Every app reads its configuration from environment variables only, validated against a TypeBox schema',
    '(`libs/config`) when the process starts. An empty value counts as unset; numbers and booleans are given',
    'in their string form (`true`/`false`). Any missing or invalid variable stops the process with exit',
    'status 78 and a message naming every offending variable, for example',
    '`[identity] Invalid configuration: - GRPC_PORT: Expected integer (got "x")`.',
    '',
    'In Kubernetes the values come from the `sluice-config` ConfigMap and the `sluice-secrets` Secret',
    '(`deploy/k8s`); `deploy/compose.yaml` sets them per container.',
    '',
    '## `npm start` and `npm test`',
    '',
    '`npm start` (tools/start.ts) passes these to the processes it starts; the gRPC ports are the defaults',
    'below and each caller gets the matching `<SERVICE>_GRPC_URL`.',
    '',
    '| Variable | Default | Meaning |',
    '| --- | --- | --- |',
    ...TOOLING_VARIABLES.map(
      (v) =>
        `| \`${v.name}\` | ${v.default.startsWith('—') || v.default.includes(' ') ? v.default : `\`${v.default}\``} | ${cell(v.description)} |`,
    ),
    '',
    '## Every app',
    '',
    `Declared identically by ${apps.map((a) => `\`${a}\``).join(', ')}.`,
    '',
    ...table(shared),
    '',
    '## Every backend service',
    '',
    `Declared identically by ${backends.map((a) => `\`${a}\``).join(', ')} (the gRPC services); each one's`,
    '`GRPC_PORT` default is listed in its section.',
    '',
    ...table(backendShared),
    '',
  ];
  out.push(
    '## Traces (OpenTelemetry, every app)',
    '',
    'Read by `@sluice/tracing` and the OpenTelemetry SDK from the environment of every app (not part of the',
    "apps' schemas: the SDK reads them itself). Tracing is **off** unless `OTEL_TRACES_EXPORTER` or an OTLP",
    'endpoint asks for it; what is traced is in [operations.md](operations.md#traces).',
    '',
    '| Variable | Default | Meaning |',
    '| --- | --- | --- |',
    ...OTEL_VARIABLES.map((v) => `| \`${v.name}\` | ${v.default} | ${cell(v.description)} |`),
    '',
  );
  for (const app of apps) {
    const own = vars[app].filter(
      (v) => !(sharedNames.has(v.name) && (app !== 'gateway' || !backendOnly.has(v.name))),
    );
    out.push(`## ${app}`, '');
    out.push(own.length ? table(own).join('\n') : 'No variables beyond those every app reads.', '');
  }
  return out.join('\n');
}
