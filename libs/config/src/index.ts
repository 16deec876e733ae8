import { Type, type TObject, type Static, type TSchema, type TString } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

export { Type };
export type { Static, TObject };

/** Raised when the environment does not satisfy a service's config schema. */
export class ConfigError extends Error {
  constructor(readonly problems: { variable: string; message: string }[]) {
    super(
      'Invalid configuration:\n' + problems.map((p) => `  - ${p.variable}: ${p.message}`).join('\n'),
    );
    this.name = 'ConfigError';
  }
}

/** Env variables every service reads. */
export const commonConfig = {
  LOG_LEVEL: Type.Union(
    [Type.Literal('trace'), Type.Literal('debug'), Type.Literal('info'), Type.Literal('warn'), Type.Literal('error'), Type.Literal('silent')],
    { default: 'info', description: 'pino log level' },
  ),
  NODE_ENV: Type.String({ default: 'development', description: 'development, test or production' }),
};

export const databaseConfig = {
  DATABASE_URL: Type.String({
    default: 'postgres://postgres@127.0.0.1:5432/sluice',
    pattern: '^postgres(ql)?://',
    description: 'Postgres connection URL; each service uses its own schema in this database',
  }),
  DATABASE_POOL_MAX: Type.Integer({ default: 10, minimum: 1, maximum: 200, description: 'connection pool size' }),
  DATABASE_ACQUIRE_TIMEOUT_MS: Type.Integer({
    default: 10_000,
    minimum: 1_000,
    maximum: 120_000,
    description: 'how long a query waits for a pooled connection before it fails (an exhausted pool shows up as errors, not silence)',
  }),
  DATABASE_PREPARED_STATEMENTS: Type.Boolean({
    default: true,
    description:
      'prepare each parameterized statement once per connection (named statements: about half the Postgres CPU per statement); false behind a pooler in transaction mode that does not keep prepared statements (PgBouncer before 1.21, or without max_prepared_statements)',
  }),
};

export const natsConfig = {
  NATS_URL: Type.String({ default: 'nats://127.0.0.1:4222', pattern: '^(nats|tls)://', description: 'NATS server with JetStream' }),
  EVENT_SUBJECT_PREFIX: Type.String({
    default: 'sluice',
    pattern: '^[a-zA-Z0-9_-]+$',
    description: 'first token of every event subject and of stream names; tests use a unique one',
  }),
};

/** The outbox every backend service publishes its events through (libs/events). */
export const outboxConfig = {
  OUTBOX_RETENTION_SECONDS: Type.Integer({
    default: 86_400,
    minimum: 60,
    maximum: 31_536_000,
    description:
      "how long an event stays in the service's `outbox` table after it was published to JetStream; the relay then deletes it (looked for once a minute, 1000 rows per statement). An unpublished event is never deleted. JetStream keeps events up to its stream max age (14 days) whatever this is",
  }),
};

export const grpcServerConfig = (defaultPort: number) => ({
  GRPC_HOST: Type.String({ default: '127.0.0.1', description: 'address the gRPC server binds' }),
  GRPC_PORT: Type.Integer({ default: defaultPort, minimum: 0, maximum: 65535, description: 'gRPC port (0 picks a free one)' }),
  SHUTDOWN_GRACE_MS: Type.Integer({ default: 10000, minimum: 0, description: 'how long in-flight calls may drain on SIGTERM' }),
});

/** Default gRPC ports of the services (one place; deploy/ and tools/start.ts use the same). */
export const SERVICE_PORTS = {
  identity: 50051,
  'wallet-auth': 50052,
  accounts: 50053,
  payments: 50054,
  compliance: 50055,
  agents: 50056,
  'webhook-dispatcher': 50057,
} as const;

export type ServiceName = keyof typeof SERVICE_PORTS;

/** The gateway's default public HTTP port. */
export const GATEWAY_DEFAULT_PORT = 8080;

/** Every app's default metrics port is its serving port plus this (identity 51051, ..., gateway 9080). */
export const METRICS_PORT_OFFSET = 1000;

/** An app of the system: a backend service or the gateway. */
export type AppName = ServiceName | 'gateway';

/** Default port of an app's Prometheus `/metrics` endpoint (one place; deploy/ and tools/stack.ts use the same). */
export function defaultMetricsPort(app: AppName): number {
  return (app === 'gateway' ? GATEWAY_DEFAULT_PORT : SERVICE_PORTS[app]) + METRICS_PORT_OFFSET;
}

/** Where an app serves `GET /metrics` (Prometheus text format), apart from its serving port. */
export const metricsConfig = (app: AppName) => ({
  METRICS_HOST: Type.String({ default: '127.0.0.1', description: 'address the metrics endpoint binds (0.0.0.0 in a pod)' }),
  METRICS_PORT: Type.Integer({
    default: defaultMetricsPort(app),
    minimum: 0,
    maximum: 65535,
    description: 'port of `GET /metrics` (Prometheus text format), never the serving port; 0 turns the endpoint off',
  }),
});

/** The name of the variable holding the address of a service a process calls: `IDENTITY_GRPC_URL`, `WALLET_AUTH_GRPC_URL`, ... */
export type GrpcUrlVariable<S extends ServiceName> = `${Uppercase<KebabToSnake<S>>}_GRPC_URL`;
type KebabToSnake<S extends string> = S extends `${infer A}-${infer B}` ? `${A}_${KebabToSnake<B>}` : S;

/**
 * A gRPC target: `host:port`, `dns:[//authority]/name:port`, `ipv4:`/`ipv6:`/`unix:` targets, or a
 * list of replica addresses as IP literals of one family (`ip:port,ip:port`, `[::1]:p,[::1]:q`: the
 * only lists grpc-js balances without a resolver; `rpcTarget` of @sluice/rpc turns them into one).
 */
export const GRPC_TARGET_PATTERN =
  '^(?:(?:dns:(?://[^/\\s]*)?/)?[^\\s,/]+:[0-9]{1,5}|(?:ipv4|ipv6|unix|unix-abstract|vsock):\\S+|[0-9]{1,3}(?:\\.[0-9]{1,3}){3}:[0-9]{1,5}(?:,[0-9]{1,3}(?:\\.[0-9]{1,3}){3}:[0-9]{1,5})+|\\[[0-9a-fA-F:.]+\\]:[0-9]{1,5}(?:,\\[[0-9a-fA-F:.]+\\]:[0-9]{1,5})+)$';

/** `<SERVICE>_GRPC_URL` variable for a service a process calls (typed: `grpcClientConfig('identity').IDENTITY_GRPC_URL`). */
export const grpcClientConfig = <S extends ServiceName>(service: S) =>
  ({
    [`${service.toUpperCase().replace(/-/g, '_')}_GRPC_URL`]: Type.String({
      default: `127.0.0.1:${SERVICE_PORTS[service]}`,
      pattern: GRPC_TARGET_PATTERN,
      description: `address of the ${service} gRPC server: host:port or dns:///name:port (every address the name resolves to, e.g. a headless Service), or ip:port,ip:port of its replicas; calls are balanced round robin`,
    }),
  }) as { [K in GrpcUrlVariable<S>]: TString };

export const sandboxConfig = {
  SANDBOX_TIME_SCALE: Type.Number({ default: 1, exclusiveMinimum: 0, maximum: 1000, description: 'multiplies every sandbox delay' }),
  SANDBOX_UMA_DOMAIN: Type.String({ default: 'sandbox.sluice.local', description: 'domain of sandbox UMA addresses' }),
};

/**
 * Reads and validates configuration from the environment. Empty strings count as
 * unset. Numbers and booleans are coerced from their string form. Throws
 * ConfigError naming every offending variable.
 */
export function loadConfig<T extends TObject>(schema: T, env: NodeJS.ProcessEnv = process.env): Static<T> {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(schema.properties)) {
    const v = env[key];
    if (v !== undefined && v !== '') raw[key] = v;
  }
  const withDefaults = Value.Default(schema, raw) as Record<string, unknown>;
  const converted = Value.Convert(schema, withDefaults) as Record<string, unknown>;
  const errors = [...Value.Errors(schema, converted)];
  if (errors.length > 0) {
    const seen = new Set<string>();
    const problems: { variable: string; message: string }[] = [];
    for (const e of errors) {
      const variable = e.path.replace(/^\//, '') || '(root)';
      if (seen.has(variable)) continue;
      seen.add(variable);
      const given = env[variable];
      problems.push({
        variable,
        message: given === undefined || given === '' ? `is required (${describe(schema.properties[variable])})` : `${e.message} (got ${JSON.stringify(given)})`,
      });
    }
    throw new ConfigError(problems);
  }
  return converted as Static<T>;
}

function describe(s: TSchema | undefined): string {
  return (s?.description as string | undefined) ?? 'no description';
}

/** Loads config or prints the problem and exits with status 78 (EX_CONFIG). */
export function loadConfigOrExit<T extends TObject>(service: string, schema: T, env: NodeJS.ProcessEnv = process.env): Static<T> {
  try {
    return loadConfig(schema, env);
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`[${service}] ${e.message}\n`);
      process.exit(78);
    }
    throw e;
  }
}
