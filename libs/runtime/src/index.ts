import {
  Type,
  loadConfig,
  ConfigError,
  commonConfig,
  databaseConfig,
  natsConfig,
  outboxConfig,
  grpcServerConfig,
  metricsConfig,
  SERVICE_PORTS,
  type ServiceName,
  type Static,
  type TObject,
} from '@sluice/config';
import { createLogger, type Logger } from '@sluice/logging';
import { openStore, migrate, ensureDatabase, observePool, pendingMigrations, type MikroORM, type EntitySchema, type Migration } from '@sluice/store';
import { Metrics, serveMetrics } from '@sluice/metrics';
import {
  connectBus,
  ensureStreams,
  Outbox,
  OutboxRelay,
  EVENT_TABLES_MIGRATIONS,
  observeOutbox,
  type Bus,
  type Domain,
  type EventConsumer,
} from '@sluice/events';
import { Lifecycle, startRpcServer, type RegisteredService } from '@sluice/rpc';
import { startTracing } from '@sluice/tracing';
import { systemClock, type Clock } from '@sluice/core';
import type { Constructor } from '@mikro-orm/core';

export * from './secrets.js';

const baseServiceConfig = (name: ServiceName) => ({
  ...commonConfig,
  ...databaseConfig,
  ...natsConfig,
  ...outboxConfig,
  ...grpcServerConfig(SERVICE_PORTS[name]),
  ...metricsConfig(name),
  MIGRATE_ON_START: Type.Boolean({
    default: true,
    description: 'apply pending migrations at start (false when a migration Job does it)',
  }),
});

/** The validated config a service receives: the common variables plus its own, typed from the schemas. */
export type ServiceConfig<P extends TObject> = Static<TObject<ReturnType<typeof baseServiceConfig>>> & Static<P>;

/** The full env schema of a backend service: the common variables (DB, NATS, gRPC server, logging) and its own. */
export function serviceConfigSchema(name: ServiceName, extra: TObject): TObject {
  return Type.Object({ ...baseServiceConfig(name), ...extra.properties });
}

/** Loads a service's config; its type is `ServiceConfig<P>` by construction of `serviceConfigSchema`. */
export function loadServiceConfig<P extends TObject>(
  def: { name: ServiceName; config: P },
  env: NodeJS.ProcessEnv = process.env,
): ServiceConfig<P> {
  return loadConfig(serviceConfigSchema(def.name, def.config), env) as ServiceConfig<P>;
}

/** What the runtime opens for a service before its composition root runs. */
export interface ServiceDeps<C> {
  config: C;
  logger: Logger;
  orm: MikroORM;
  bus: Bus;
  outbox: Outbox;
  clock: Clock;
  /** The app's metrics (served on METRICS_PORT by a process); the composition root adds its own. */
  metrics: Metrics;
}

/** Something with a lifetime (a scheduler, a delivery loop) that the runtime starts before serving and stops after. */
export interface Worker {
  start(): Promise<void> | void;
  stop(): Promise<void>;
}

/**
 * What a service's composition root returns: its object graph, built once, and
 * the parts the runtime runs. Start order: consumers, workers, then the gRPC
 * server; shutdown in reverse (the server drains first), then `close` (the
 * outbound clients the composition opened), NATS and the database.
 */
export interface Composition {
  rpc: RegisteredService[];
  consumers?: EventConsumer[];
  workers?: Worker[];
  /** Releases what the composition opened itself (outbound gRPC clients). */
  close?: () => Promise<void> | void;
}

/** A backend service: what it owns and its one composition root. */
export interface ServiceDefinition<P extends TObject, G extends Composition = Composition> {
  name: ServiceName;
  /** Postgres schema owned by the service. */
  schema: string;
  /** Event domain the service publishes under (its stream). */
  domain: Domain;
  /** The service's own env variables (the common ones are added by `serviceConfigSchema`). */
  config: P;
  /** MikroORM entities, for the tables a service maps with entities rather than exact SQL. */
  entities?: EntitySchema[];
  migrations: { name: string; class: Constructor<Migration> }[];
  /** The composition root: builds the whole object graph once from the opened dependencies. */
  compose: (deps: ServiceDeps<ServiceConfig<P>>) => G | Promise<G>;
  /**
   * Operator commands besides serving and `migrate` (`main.ts <name>`, e.g. `rewrap`): each runs
   * once against the service's database (migrated first unless MIGRATE_ON_START=false), prints
   * its counts as one JSON line and exits (1 when a count named `*.failed` is not 0).
   */
  commands?: Record<string, ServiceCommand<ServiceConfig<P>>>;
}

/** What an operator command receives: the validated config, a logger, the opened store and a clock. */
export interface CommandDeps<C> {
  config: C;
  logger: Logger;
  orm: MikroORM;
  clock: Clock;
}

/** An operator command of a service (see `ServiceDefinition.commands`); answers counts to print. */
export type ServiceCommand<C> = (deps: CommandDeps<C>) => Promise<Record<string, number>>;

/** Declares a service (an identity function that lets TypeScript infer the config and graph types). */
export function defineService<P extends TObject, G extends Composition>(
  definition: ServiceDefinition<P, G>,
): ServiceDefinition<P, G> {
  return definition;
}

export interface StartOptions {
  /** Shutdown hooks are registered here (the process's, with signal handlers, in `main`). */
  lifecycle?: Lifecycle;
  /** The clock of the service (tests pass a ManualClock). */
  clock?: Clock;
  /** Start the gRPC server (default true; the benchmark's one-process baseline calls the graph directly). */
  serve?: boolean;
  /** Start the event consumers (default true). */
  consume?: boolean;
  /**
   * Serve `GET /metrics` on METRICS_HOST:METRICS_PORT (0: not at all) with process metrics
   * (default false: tests and the benchmark run several services in one process; `main` serves).
   */
  metricsEndpoint?: boolean;
}

export interface RunningService<C, G extends Composition = Composition> {
  /** The gRPC port (0 when started with `serve: false`). */
  port: number;
  deps: ServiceDeps<C>;
  /** The object graph the composition root built (tests drive services through it). */
  graph: G;
  stop(): Promise<void>;
}

/** The error a process stops with when Postgres or NATS cannot be reached: the URL (password masked) and how to start it. */
export function describeUnreachable(what: 'Postgres' | 'NATS', url: string, err: unknown): Error {
  const hint =
    what === 'Postgres'
      ? 'start it (pg_ctlcluster <version> main start) or `docker compose -f deploy/compose.yaml up -d postgres`'
      : 'start nats-server with JetStream (nats-server -js) or `docker compose -f deploy/compose.yaml up -d nats`';
  const safeUrl = url.replace(/\/\/[^@/]*@/, '//***@');
  return new Error(`${what} is not reachable at ${safeUrl}: ${(err as Error).message}. ${hint}`);
}

function storeOptions(
  def: Pick<ServiceDefinition<TObject>, 'schema' | 'entities' | 'migrations'>,
  config: { DATABASE_URL: string; DATABASE_POOL_MAX: number; DATABASE_ACQUIRE_TIMEOUT_MS: number; DATABASE_PREPARED_STATEMENTS?: boolean },
  logger: Logger,
) {
  return {
    databaseUrl: config.DATABASE_URL,
    schema: def.schema,
    entities: def.entities ?? [],
    migrations: [...EVENT_TABLES_MIGRATIONS, ...def.migrations],
    poolMax: config.DATABASE_POOL_MAX,
    acquireTimeoutMs: config.DATABASE_ACQUIRE_TIMEOUT_MS,
    preparedStatements: config.DATABASE_PREPARED_STATEMENTS ?? true,
    logger,
  };
}

/**
 * Opens what every service needs before its composition root runs: validated
 * config, logger, its schema (migrated unless MIGRATE_ON_START=false), NATS and
 * the streams, the outbox. Each is registered on `life` for shutdown. The
 * benchmark's one-process baseline opens its services with this too.
 */
export async function openServiceDeps<P extends TObject, G extends Composition>(
  def: ServiceDefinition<P, G>,
  env: NodeJS.ProcessEnv,
  life: Lifecycle | undefined,
  options: { clock?: Clock; logger?: Logger; metrics?: Metrics } = {},
): Promise<ServiceDeps<ServiceConfig<P>>> {
  const config = loadServiceConfig(def, env);
  const logger = options.logger ?? createLogger(def.name, config.LOG_LEVEL);
  let orm: MikroORM;
  try {
    await ensureDatabase(config.DATABASE_URL);
    orm = await openStore(storeOptions(def, config, logger));
    await orm.em.getConnection().execute('select 1');
  } catch (err) {
    throw describeUnreachable('Postgres', config.DATABASE_URL, err);
  }
  life?.onShutdown('database', () => orm.close());
  if (config.MIGRATE_ON_START) await migrate(orm, def.schema, logger);
  let bus: Bus;
  try {
    bus = await connectBus(config.NATS_URL, def.name, logger);
  } catch (err) {
    throw describeUnreachable('NATS', config.NATS_URL, err);
  }
  life?.onShutdown('nats', () => bus.close());
  await ensureStreams(bus.jsm, config.EVENT_SUBJECT_PREFIX);
  const metrics = options.metrics ?? new Metrics(def.name, { processMetrics: false });
  observePool(orm, metrics, logger);
  observeOutbox(orm, metrics, logger);
  return {
    config,
    logger,
    orm,
    bus,
    outbox: new Outbox(config.EVENT_SUBJECT_PREFIX, def.domain),
    clock: options.clock ?? systemClock,
    metrics,
  };
}

/**
 * Starts a service: its dependencies (`openServiceDeps`), its composition root,
 * the outbox relay, event consumers, workers and the gRPC server with health,
 * all closed in reverse order on shutdown.
 */
export async function startService<P extends TObject, G extends Composition>(
  def: ServiceDefinition<P, G>,
  env: NodeJS.ProcessEnv = process.env,
  options: StartOptions = {},
): Promise<RunningService<ServiceConfig<P>, G>> {
  const metrics = new Metrics(def.name, { processMetrics: options.metricsEndpoint ?? false });
  const deps = await openServiceDeps(def, env, undefined, { clock: options.clock, metrics });
  const life = options.lifecycle ?? new Lifecycle(deps.logger);
  life.onShutdown('database', () => deps.orm.close());
  life.onShutdown('nats', () => deps.bus.close());
  let graph: G;
  try {
    graph = await def.compose(deps);
  } catch (err) {
    // A composition that refuses its config (a malformed master key) leaves nothing open.
    await life.shutdown();
    throw err;
  }
  if (graph.close) life.onShutdown('outbound clients', graph.close);
  const relay = new OutboxRelay(deps.orm, deps.bus.js, deps.logger, {
    retentionSeconds: deps.config.OUTBOX_RETENTION_SECONDS,
    metrics,
  });
  relay.start();
  life.onShutdown('outbox relay', () => relay.stop());
  for (const c of options.consume === false ? [] : (graph.consumers ?? [])) {
    await c.start({ metrics });
    life.onShutdown('consumer', () => c.stop());
  }
  for (const w of graph.workers ?? []) {
    await w.start();
    life.onShutdown('worker', () => w.stop());
  }
  if (options.serve === false) return { port: 0, deps, graph, stop: () => life.shutdown() };
  const server = await startRpcServer({
    host: deps.config.GRPC_HOST,
    port: deps.config.GRPC_PORT,
    services: graph.rpc,
    logger: deps.logger,
    metrics,
  });
  life.onShutdown('grpc server', () => server.shutdown(deps.config.SHUTDOWN_GRACE_MS));
  if (options.metricsEndpoint) await startMetricsEndpoint(metrics, deps.config, deps.logger, life);
  deps.logger.info({ port: server.port }, `${def.name} ready`);
  return { port: server.port, deps, graph, stop: () => life.shutdown() };
}

/**
 * Serves an app's `GET /metrics` on METRICS_HOST:METRICS_PORT (nothing when the
 * port is 0), closed with the rest of the app on shutdown.
 * Every app process (the gateway's too) opens its endpoint with this.
 */
export async function startMetricsEndpoint(
  metrics: Metrics,
  config: { METRICS_HOST: string; METRICS_PORT: number },
  logger: Logger,
  life: Lifecycle,
): Promise<number | undefined> {
  if (config.METRICS_PORT === 0) return undefined;
  const endpoint = await serveMetrics(metrics, {
    host: config.METRICS_HOST,
    port: config.METRICS_PORT,
    onError: (err) => logger.error({ err }, 'metrics collection failed'),
  });
  life.onShutdown('metrics endpoint', () => endpoint.close());
  logger.info({ port: endpoint.port, host: config.METRICS_HOST }, 'metrics served at /metrics');
  return endpoint.port;
}

/** How long `migrate --wait` waits for the migration Job (as long as the Job's activeDeadlineSeconds). */
const MIGRATE_WAIT_MS = 600_000;
const MIGRATE_POLL_MS = 2_000;

/**
 * `main.ts migrate --wait`: returns once every one of `migrations` (an app's, in order) is applied to
 * `schema` (polling, read-only; database errors are retried), or throws after MIGRATE_WAIT_MS. The
 * Deployments' init container, so a new release's pods start only after its migration Job ran.
 */
export async function waitForMigrations(o: {
  schema: string;
  migrations: { name: string }[];
  logger: Logger;
  /** Read for DATABASE_URL only, so the init container needs no other setting (default process.env). */
  env?: NodeJS.ProcessEnv;
}): Promise<void> {
  const { schema, logger } = o;
  const databaseUrl = loadConfig(Type.Object({ DATABASE_URL: databaseConfig.DATABASE_URL }), o.env).DATABASE_URL;
  const names = o.migrations.map((m) => m.name);
  const deadline = Date.now() + MIGRATE_WAIT_MS;
  let reported = '';
  for (;;) {
    let pending: string[] | undefined;
    try {
      pending = await pendingMigrations(databaseUrl, schema, names);
    } catch (err) {
      logger.warn({ err: { message: (err as Error).message } }, 'cannot read the applied migrations yet');
    }
    if (pending?.length === 0) {
      logger.info({ schema, migrations: names.length }, 'every migration is applied');
      return;
    }
    if (pending && pending.join() !== reported) {
      reported = pending.join();
      logger.info({ schema, pending }, 'waiting for the migration Job');
    }
    if (Date.now() > deadline)
      throw new Error(`migrations still pending after ${MIGRATE_WAIT_MS / 1000} s: ${(pending ?? ['unknown']).join(', ')}`);
    await new Promise((r) => setTimeout(r, MIGRATE_POLL_MS));
  }
}

/**
 * Runs an operator command of `def` (`ServiceDefinition.commands`) once against the service's
 * database: migrated first unless MIGRATE_ON_START=false. Answers the command's counts.
 */
export async function runServiceCommand<P extends TObject, G extends Composition>(
  def: ServiceDefinition<P, G>,
  name: string,
  env: NodeJS.ProcessEnv = process.env,
  options: { logger?: Logger; clock?: Clock } = {},
): Promise<Record<string, number>> {
  const command = def.commands?.[name];
  if (!command) throw new Error(`${def.name} has no command ${name}`);
  const config = loadServiceConfig(def, env);
  const logger = options.logger ?? createLogger(def.name, config.LOG_LEVEL);
  await ensureDatabase(config.DATABASE_URL);
  const orm = await openStore(storeOptions(def, config, logger));
  try {
    if (config.MIGRATE_ON_START) await migrate(orm, def.schema, logger);
    return await command({ config, logger, orm, clock: options.clock ?? systemClock });
  } finally {
    await orm.close();
  }
}

/**
 * The entry point of a service process. `main.ts migrate` only applies the
 * migrations (the Kubernetes migration Job); `main.ts migrate --wait` only waits
 * until they are applied (the Deployment's init container); `main.ts <command>`
 * runs one of the service's `commands` (e.g. `rewrap`) and prints its counts;
 * otherwise the service starts tracing when the `OTEL_*` variables ask for it
 * (@sluice/tracing) and runs until SIGTERM/SIGINT.
 */
export async function main<P extends TObject, G extends Composition>(def: ServiceDefinition<P, G>): Promise<void> {
  const bootLogger = createLogger(def.name, process.env.LOG_LEVEL ?? 'info');
  try {
    if (process.argv.includes('migrate') && process.argv.includes('--wait')) {
      await waitForMigrations({
        schema: def.schema,
        migrations: [...EVENT_TABLES_MIGRATIONS, ...def.migrations],
        logger: bootLogger,
      });
      return;
    }
    if (process.argv.includes('migrate')) {
      // The database settings only: a migration Job holds no service secret (master keys, tokens).
      const config = loadConfig(Type.Object({ ...commonConfig, ...databaseConfig }), process.env);
      await ensureDatabase(config.DATABASE_URL);
      const orm = await openStore(storeOptions(def, config, bootLogger));
      const applied = await migrate(orm, def.schema, bootLogger);
      bootLogger.info({ applied }, 'migrations done');
      await orm.close();
      return;
    }
    const command = process.argv.slice(2).find((a) => def.commands && Object.hasOwn(def.commands, a));
    if (command) {
      const counts = await runServiceCommand(def, command, process.env, { logger: bootLogger });
      process.stdout.write(`${JSON.stringify({ service: def.name, command, ...counts })}\n`);
      const failed = Object.entries(counts).some(([k, n]) => k.endsWith('.failed') && n > 0);
      process.exit(failed ? 1 : 0);
    }
    const life = new Lifecycle(bootLogger);
    life.installSignalHandlers();
    // Registered first, so it closes last: the spans of the shutdown itself are flushed too.
    const tracing = await startTracing(def.name);
    life.onShutdown('tracing', () => tracing.shutdown());
    await startService(def, process.env, { lifecycle: life, metricsEndpoint: true });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`[${def.name}] ${err.message}\n`);
      process.exit(78);
    }
    bootLogger.fatal({ err: { message: (err as Error).message, stack: (err as Error).stack } }, 'failed to start');
    process.exit(1);
  }
}
