import { Type, loadConfig, ConfigError, commonConfig, databaseConfig, natsConfig, grpcServerConfig, SERVICE_PORTS, type ServiceName, type Static, type TObject } from '@sluice/config';
import { createLogger, type Logger } from '@sluice/logging';
import { openStore, migrate, ensureDatabase, type MikroORM, type EntitySchema, type Migration } from '@sluice/store';
import { connectBus, ensureStreams, Outbox, OutboxRelay, EVENT_TABLES_MIGRATION, type Bus, type Domain, type EventConsumer } from '@sluice/events';
import { Lifecycle, startRpcServer, type RegisteredService } from '@sluice/rpc';
import { systemClock, type Clock } from '@sluice/core';
import type { Constructor } from '@mikro-orm/core';

/** The common env schema of a backend service (DB, NATS, gRPC server, logging). */
export function serviceConfigSchema<P extends TObject>(name: ServiceName, extra: P) {
  return Type.Object({
    ...commonConfig,
    ...databaseConfig,
    ...natsConfig,
    ...grpcServerConfig(SERVICE_PORTS[name]),
    MIGRATE_ON_START: Type.Boolean({ default: true, description: 'apply pending migrations at start (false when a migration Job does it)' }),
    ...extra.properties,
  });
}

export interface ServiceDeps<C> {
  config: C;
  logger: Logger;
  orm: MikroORM;
  bus: Bus;
  outbox: Outbox;
  clock: Clock;
}

/** Something with a lifetime the service starts after the RPC server and stops before it. */
export interface Worker {
  start(): Promise<void> | void;
  stop(): Promise<void>;
}

/** The validated config a service receives: the common variables plus its own. */
export type ServiceConfig<P extends TObject> = Static<ReturnType<typeof serviceConfigSchema<TObject>>> & Static<P>;

export interface ServiceSpec<P extends TObject, C = ServiceConfig<P>> {
  name: ServiceName;
  /** Postgres schema owned by the service. */
  schema: string;
  /** Event domain the service publishes under (its stream). */
  domain: Domain;
  config: P;
  entities: EntitySchema[];
  migrations: { name: string; class: Constructor<Migration> }[];
  rpc: (deps: ServiceDeps<C>) => RegisteredService[];
  consumers?: (deps: ServiceDeps<C>) => EventConsumer[];
  workers?: (deps: ServiceDeps<C>) => Worker[];
  clock?: Clock;
}

export interface RunningService<C> {
  port: number;
  deps: ServiceDeps<C>;
  stop(): Promise<void>;
}

function describeUnreachable(what: 'Postgres' | 'NATS', url: string, err: unknown): Error {
  const hint =
    what === 'Postgres'
      ? 'start it (pg_ctlcluster <version> main start) or `docker compose -f deploy/compose.yaml up -d postgres`'
      : 'start nats-server with JetStream (nats-server -js) or `docker compose -f deploy/compose.yaml up -d nats`';
  const safeUrl = url.replace(/\/\/[^@/]*@/, '//***@');
  return new Error(`${what} is not reachable at ${safeUrl}: ${(err as Error).message}. ${hint}`);
}

/**
 * Starts a service: validated config, logger, its schema migrated, NATS and
 * streams, outbox relay, event consumers, workers and the gRPC server with
 * health, all closed in reverse order on shutdown.
 */
export async function startService<P extends TObject>(
  spec: ServiceSpec<P>,
  env: NodeJS.ProcessEnv = process.env,
  lifecycle?: Lifecycle,
): Promise<RunningService<ServiceConfig<P>>> {
  type C = ServiceConfig<P>;
  const config = loadConfig(serviceConfigSchema(spec.name, spec.config), env) as C & Record<string, unknown>;
  const logger = createLogger(spec.name, config.LOG_LEVEL as string);
  const life = lifecycle ?? new Lifecycle(logger);
  let orm: MikroORM;
  try {
    await ensureDatabase(config.DATABASE_URL as string);
    orm = await openStore({
      databaseUrl: config.DATABASE_URL as string,
      schema: spec.schema,
      entities: spec.entities,
      migrations: [EVENT_TABLES_MIGRATION, ...spec.migrations],
      poolMax: config.DATABASE_POOL_MAX as number,
      acquireTimeoutMs: config.DATABASE_ACQUIRE_TIMEOUT_MS as number,
      logger,
    });
    await orm.em.getConnection().execute('select 1');
  } catch (err) {
    throw describeUnreachable('Postgres', config.DATABASE_URL as string, err);
  }
  life.onShutdown('database', () => orm.close());
  if (config.MIGRATE_ON_START) await migrate(orm, spec.schema, logger);
  let bus: Bus;
  try {
    bus = await connectBus(config.NATS_URL as string, spec.name, logger);
  } catch (err) {
    throw describeUnreachable('NATS', config.NATS_URL as string, err);
  }
  life.onShutdown('nats', () => bus.close());
  await ensureStreams(bus.jsm, config.EVENT_SUBJECT_PREFIX as string);
  const deps: ServiceDeps<C> = {
    config,
    logger,
    orm,
    bus,
    outbox: new Outbox(config.EVENT_SUBJECT_PREFIX as string, spec.domain),
    clock: spec.clock ?? systemClock,
  };
  const relay = new OutboxRelay(orm, bus.js, logger);
  relay.start();
  life.onShutdown('outbox relay', () => relay.stop());
  for (const c of spec.consumers?.(deps) ?? []) {
    await c.start();
    life.onShutdown('consumer', () => c.stop());
  }
  for (const w of spec.workers?.(deps) ?? []) {
    await w.start();
    life.onShutdown('worker', () => w.stop());
  }
  const server = await startRpcServer({
    host: config.GRPC_HOST as string,
    port: config.GRPC_PORT as number,
    services: spec.rpc(deps),
    logger,
  });
  life.onShutdown('grpc server', () => server.shutdown(config.SHUTDOWN_GRACE_MS as number));
  logger.info({ port: server.port }, `${spec.name} ready`);
  return { port: server.port, deps, stop: () => life.shutdown() };
}

/**
 * The entry point of a service process. `main.ts migrate` only applies the
 * migrations (the Kubernetes migration Job); otherwise the service runs until
 * SIGTERM/SIGINT.
 */
export async function main<P extends TObject>(spec: ServiceSpec<P>): Promise<void> {
  const bootLogger = createLogger(spec.name, process.env.LOG_LEVEL ?? 'info');
  try {
    if (process.argv.includes('migrate')) {
      const config = loadConfig(serviceConfigSchema(spec.name, spec.config)) as Record<string, unknown>;
      await ensureDatabase(config.DATABASE_URL as string);
      const orm = await openStore({
        databaseUrl: config.DATABASE_URL as string,
        schema: spec.schema,
        entities: spec.entities,
        migrations: [EVENT_TABLES_MIGRATION, ...spec.migrations],
        logger: bootLogger,
      });
      const applied = await migrate(orm, spec.schema, bootLogger);
      bootLogger.info({ applied }, 'migrations done');
      await orm.close();
      return;
    }
    const life = new Lifecycle(bootLogger);
    life.installSignalHandlers();
    await startService(spec, process.env, life);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`[${spec.name}] ${err.message}\n`);
      process.exit(78);
    }
    bootLogger.fatal({ err: { message: (err as Error).message, stack: (err as Error).stack } }, 'failed to start');
    process.exit(1);
  }
}
