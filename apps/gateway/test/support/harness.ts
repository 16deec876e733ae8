import { loadConfig } from '@sluice/config';
import type { EventFanout } from '@sluice/events';
import { createLogger } from '@sluice/logging';
import type { FastifyInstance } from 'fastify';
import { composeGateway, type GatewayAdapters, type GatewayResources } from '../../src/compose.js';
import { gatewayConfigSchema, type GatewayConfig } from '../../src/config.js';
import type { CursorCodec } from '../../src/http/cursor.codec.js';
import type { GatewayClients, RouteModule } from '../../src/http/types.js';

export const API = '/2025-10-13';

export interface Harness {
  app: FastifyInstance;
  config: GatewayConfig;
  clients: GatewayClients;
  /** The credential revocations' fan-out (given `nats`), live once started. */
  revocations?: EventFanout;
  close(): Promise<void>;
}

/**
 * A gateway built by the composition root, with real gRPC clients pointing at
 * `identityAddress` (and whatever backends `env` names), only the given route
 * modules, and process-memory idempotency unless `extra.orm` is given.
 */
export async function startGateway(
  identityAddress: string,
  routes: Record<string, RouteModule>,
  env: Record<string, string> = {},
  extra: Omit<GatewayAdapters, 'routes'> & Pick<GatewayResources, 'orm' | 'nats'> = {},
): Promise<Harness> {
  const config = loadConfig(gatewayConfigSchema, {
    IDENTITY_GRPC_URL: identityAddress,
    ACCOUNTS_GRPC_URL: '127.0.0.1:1',
    WEBHOOK_DISPATCHER_GRPC_URL: '127.0.0.1:1',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    RPC_DEADLINE_MS: '2000',
    ...env,
  });
  const logger = createLogger('gateway', config.LOG_LEVEL);
  const { orm, nats, ...adapters } = extra;
  const gateway = await composeGateway(
    { config, logger, ...(orm ? { orm } : {}), ...(nats ? { nats } : {}) },
    { ...adapters, routes },
  );
  await gateway.app.ready();
  return {
    app: gateway.app,
    config,
    clients: gateway.clients,
    ...(gateway.revocations ? { revocations: gateway.revocations } : {}),
    close: () => gateway.close(0),
  };
}

/**
 * Cursors passed through as the service wrote them, for route tests about the
 * filters a list forwards (the real codec is tested in test/cursors.spec.ts).
 */
export const transparentCursors: CursorCodec = { wrap: (c) => c, unwrap: (c) => c };
