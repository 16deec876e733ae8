import { ConfigError, loadConfig } from '@sluice/config';
import { createLogger } from '@sluice/logging';
import { Lifecycle } from '@sluice/rpc';
import { ensureDatabase, migrate, openStore, type MikroORM } from '@sluice/store';
import { connectBus, type Bus } from '@sluice/events';
import { buildGateway } from './app.js';
import { closeGatewayClients, createGatewayClients } from './clients.js';
import { gatewayConfigSchema, type GatewayConfig } from './config.js';
import { GATEWAY_SCHEMA, migrations } from './store/migrations.js';

function unreachable(what: 'Postgres' | 'NATS', url: string, err: unknown): Error {
  const hint =
    what === 'Postgres'
      ? 'start it (pg_ctlcluster <version> main start) or `docker compose -f deploy/compose.yaml up -d postgres`'
      : 'start nats-server with JetStream (nats-server -js) or `docker compose -f deploy/compose.yaml up -d nats`';
  return new Error(
    `${what} is not reachable at ${url.replace(/\/\/[^@/]*@/, '//***@')}: ${(err as Error).message}. ${hint}`,
  );
}

async function openGatewayStore(
  config: GatewayConfig,
  logger: ReturnType<typeof createLogger>,
): Promise<MikroORM> {
  try {
    await ensureDatabase(config.DATABASE_URL);
    const orm = await openStore({
      databaseUrl: config.DATABASE_URL,
      schema: GATEWAY_SCHEMA,
      entities: [],
      migrations,
      poolMax: config.DATABASE_POOL_MAX,
      logger,
    });
    await orm.em.getConnection().execute('select 1');
    return orm;
  } catch (err) {
    throw unreachable('Postgres', config.DATABASE_URL, err);
  }
}

/**
 * The gateway process. `main.ts migrate` only applies the gateway schema's
 * migrations (the Kubernetes migration Job); otherwise it serves HTTP until
 * SIGTERM/SIGINT, then stops accepting, drains in-flight requests (up to
 * SHUTDOWN_GRACE_MS) and closes the gRPC clients, NATS and the database.
 */
async function main(): Promise<void> {
  const config = loadConfig(gatewayConfigSchema);
  const logger = createLogger('gateway', config.LOG_LEVEL);
  if (process.argv.includes('migrate')) {
    const orm = await openGatewayStore(config, logger);
    const applied = await migrate(orm, GATEWAY_SCHEMA, logger);
    logger.info({ applied }, 'migrations done');
    await orm.close();
    return;
  }
  const life = new Lifecycle(logger);
  life.installSignalHandlers();
  try {
    const orm = await openGatewayStore(config, logger);
    life.onShutdown('database', () => orm.close());
    if (config.MIGRATE_ON_START) await migrate(orm, GATEWAY_SCHEMA, logger);
    let bus: Bus;
    try {
      bus = await connectBus(config.NATS_URL, 'gateway', logger);
    } catch (err) {
      throw unreachable('NATS', config.NATS_URL, err);
    }
    life.onShutdown('nats', () => bus.close());
    const clients = createGatewayClients(config);
    life.onShutdown('grpc clients', () => closeGatewayClients(clients));
    const app = await buildGateway({ config, clients, logger, orm, nats: bus.nc });
    life.onShutdown('http server', async () => {
      const timer = setTimeout(() => {
        logger.warn('grace period over; closing remaining connections');
        app.server.closeAllConnections();
      }, config.SHUTDOWN_GRACE_MS);
      timer.unref();
      await app.close();
      clearTimeout(timer);
    });
    const address = await app.listen({ host: config.GATEWAY_HOST, port: config.GATEWAY_PORT });
    logger.info({ address, api: `${address}${config.API_BASE_PATH}` }, 'gateway ready');
  } catch (err) {
    logger.fatal(
      { err: { message: (err as Error).message, stack: (err as Error).stack } },
      'failed to start',
    );
    await life.shutdown();
    process.exit(1);
  }
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`[gateway] ${err.message}\n`);
    process.exit(78);
  }
  process.stderr.write(`[gateway] ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
