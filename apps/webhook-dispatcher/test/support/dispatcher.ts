import { startService } from '@sluice/runtime';
import { webhookDispatcherService } from '../../src/index.js';

/** The running dispatcher a test drives (typed config and graph). */
export type Dispatcher = Awaited<ReturnType<typeof startDispatcher>>;

/**
 * Starts a webhook-dispatcher in-process on the test database, NATS and subject prefix, asking
 * the fake identity at `identityPort` for targets; `env` adds or overrides WEBHOOK_* settings.
 */
export function startDispatcher(
  o: { databaseUrl: string; natsUrl: string; prefix: string; identityPort: number },
  env: Record<string, string> = {},
) {
  return startService(webhookDispatcherService, {
    DATABASE_URL: o.databaseUrl,
    NATS_URL: o.natsUrl,
    EVENT_SUBJECT_PREFIX: o.prefix,
    GRPC_PORT: '0',
    LOG_LEVEL: 'silent',
    IDENTITY_GRPC_URL: `127.0.0.1:${o.identityPort}`,
    ...env,
  });
}
