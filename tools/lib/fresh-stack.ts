import { createTestDatabase, dropStreams, natsUrl, testPrefix } from '@sluice/testing';
import { startStack, TEST_STACK_RATE_LIMITS, type Stack } from '../stack.js';

/**
 * Every app as its own process (as `npm start` runs them) on a fresh database and subject prefix,
 * with a generated sandbox credential: what the measuring scripts (tools/idle-load.ts,
 * tools/bench/webhooks.ts) run against. `close()` stops it and drops the database and the streams.
 */
export async function startFreshStack(
  label: string,
): Promise<{ stack: Stack; databaseUrl: string; databaseName: string; close(): Promise<void> }> {
  const db = await createTestDatabase(label);
  const nats = await natsUrl();
  const prefix = testPrefix(label);
  const stack = await startStack({
    databaseUrl: db.url,
    natsUrl: nats,
    prefix,
    freePorts: true,
    gatewayPort: 0,
    silent: true,
    localCredentialFile: false,
    logLevel: 'warn',
    migrate: false,
    appEnv: { gateway: { ...TEST_STACK_RATE_LIMITS } },
  });
  return {
    stack,
    databaseUrl: db.url,
    databaseName: new URL(db.url).pathname.slice(1),
    async close() {
      await stack.stop();
      await db.drop();
      await dropStreams(nats, prefix);
    },
  };
}
