import { loadConfig } from '@sluice/config';
import { createLogger } from '@sluice/logging';
import type { FastifyInstance } from 'fastify';
import { buildGateway, type BuildGatewayOptions } from '../../src/app.js';
import { createGatewayClients } from '../../src/clients.js';
import { gatewayConfigSchema, type GatewayConfig } from '../../src/config.js';
import type { GatewayClients, RouteModule } from '../../src/http/types.js';

export const API = '/2025-10-13';

export interface Harness {
  app: FastifyInstance;
  config: GatewayConfig;
  clients: GatewayClients;
  close(): Promise<void>;
}

/** A gateway wired to real gRPC clients pointing at `identityAddress` (accounts and webhooks unused). */
export async function startGateway(
  identityAddress: string,
  routes: Record<string, RouteModule>,
  env: Record<string, string> = {},
  extra: Partial<BuildGatewayOptions> = {},
): Promise<Harness> {
  const config = loadConfig(gatewayConfigSchema, {
    IDENTITY_GRPC_URL: identityAddress,
    ACCOUNTS_GRPC_URL: '127.0.0.1:1',
    WEBHOOK_DISPATCHER_GRPC_URL: '127.0.0.1:1',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    RPC_DEADLINE_MS: '2000',
    ...env,
  });
  const clients = createGatewayClients(config);
  const logger = createLogger('gateway', config.LOG_LEVEL);
  const app = await buildGateway({ config, clients, logger, routes, ...extra });
  await app.ready();
  return {
    app,
    config,
    clients,
    async close() {
      await app.close();
      clients.identity.close();
      clients.accounts.close();
      clients.webhooks.close();
    },
  };
}
