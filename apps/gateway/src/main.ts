import { ConfigError, loadConfig } from '@sluice/config';
import { createLogger } from '@sluice/logging';
import { Metrics } from '@sluice/metrics';
import { Lifecycle } from '@sluice/rpc';
import { startMetricsEndpoint, waitForMigrations } from '@sluice/runtime';
import { migrate } from '@sluice/store';
import { startTracing } from '@sluice/tracing';
import { composeGateway, openGatewayDatabase, openGatewayResources } from './compose.js';
import { gatewayConfigSchema } from './config.js';
import { GATEWAY_SCHEMA, migrations } from './store/migrations.js';

/**
 * The gateway process. `main.ts migrate` only applies the gateway schema's
 * migrations (the Kubernetes migration Job), `main.ts migrate --wait` only waits
 * until they are applied (the Deployment's init container); otherwise it composes the gateway
 * (compose.ts), starts tracing when the `OTEL_*` variables ask for it, and serves HTTP until SIGTERM/SIGINT, then stops accepting,
 * drains in-flight requests (up to SHUTDOWN_GRACE_MS) and closes the gRPC
 * clients, NATS and the database. Its metrics are served on METRICS_PORT, apart
 * from the public port.
 */
async function main(): Promise<void> {
  if (process.argv.includes('migrate') && process.argv.includes('--wait')) {
    const logger = createLogger('gateway', process.env.LOG_LEVEL ?? 'info');
    await waitForMigrations({ schema: GATEWAY_SCHEMA, migrations, logger });
    return;
  }
  const config = loadConfig(gatewayConfigSchema);
  const logger = createLogger('gateway', config.LOG_LEVEL);
  if (process.argv.includes('migrate')) {
    const orm = await openGatewayDatabase(config, logger);
    const applied = await migrate(orm, GATEWAY_SCHEMA, logger);
    logger.info({ applied }, 'migrations done');
    await orm.close();
    return;
  }
  const life = new Lifecycle(logger);
  life.installSignalHandlers();
  try {
    // Registered first, so it closes last (the spans of the draining requests are flushed).
    const tracing = await startTracing('gateway');
    life.onShutdown('tracing', () => tracing.shutdown());
    const metrics = new Metrics('gateway');
    const gateway = await composeGateway(await openGatewayResources(config, logger, life, metrics));
    life.onShutdown('http server', () => gateway.close(config.SHUTDOWN_GRACE_MS));
    await startMetricsEndpoint(metrics, config, logger, life);
    const address = await gateway.app.listen({ host: config.GATEWAY_HOST, port: config.GATEWAY_PORT });
    logger.info({ address, api: `${address}${config.API_BASE_PATH}` }, 'gateway ready');
  } catch (err) {
    if (!(err instanceof ConfigError))
      logger.fatal({ err: { message: (err as Error).message, stack: (err as Error).stack } }, 'failed to start');
    await life.shutdown();
    if (err instanceof ConfigError) throw err;
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
