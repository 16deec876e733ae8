export { buildGateway, type BuildGatewayOptions, type GatewayInternals } from './app.js';
export { gatewayConfigSchema, DEFAULT_API_BASE_PATH, type GatewayConfig } from './config.js';
export { createGatewayClients, closeGatewayClients } from './clients.js';
export { GATEWAY_SCHEMA, migrations } from './store/migrations.js';
export { GRPC_STATUS_TO_HTTP } from './http/error-mapping.js';
export {
  requireSandbox,
  requirePermission,
  type RouteModule,
  type GatewayDeps,
  type GatewayClients,
  type AuthenticatedPlatform,
  type Permission,
} from './http/types.js';
