import { loadConfig } from '@sluice/config';
import { createLogger } from '@sluice/logging';
import { composeGateway, gatewayConfigSchema } from '../../apps/gateway/src/index.js';
import type { Json } from './reference.js';

/**
 * Sluice's OpenAPI document as the gateway serves it (`<base>/openapi.json`), from a gateway
 * built by its composition root with every route module; no backend is called.
 */
export async function sluiceOpenApiDocument(): Promise<Json> {
  const config = loadConfig(gatewayConfigSchema, {
    IDENTITY_GRPC_URL: '127.0.0.1:1',
    ACCOUNTS_GRPC_URL: '127.0.0.1:1',
    WEBHOOK_DISPATCHER_GRPC_URL: '127.0.0.1:1',
    LOG_LEVEL: 'silent',
  });
  const gateway = await composeGateway({ config, logger: createLogger('gateway', 'silent') });
  try {
    await gateway.app.ready();
    const res = await gateway.app.inject({ url: `${config.API_BASE_PATH}/openapi.json` });
    if (res.statusCode !== 200) throw new Error(`openapi.json answered ${res.statusCode}: ${res.body}`);
    return res.json() as Json;
  } finally {
    await gateway.close(0);
  }
}
