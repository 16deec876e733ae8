export {
  composeGateway,
  buildGateway,
  cursorCodec,
  openGatewayResources,
  type Gateway,
  type GatewayAdapters,
  type GatewayResources,
} from './compose.js';
export { gatewayConfigSchema, DEFAULT_API_BASE_PATH, type GatewayConfig } from './config.js';
export { createGatewayClients, closeGatewayClients } from './clients.js';
export { GATEWAY_SCHEMA, migrations } from './store/migrations.js';
export { GRPC_STATUS_TO_HTTP } from './http/error-mapping.js';
export {
  requireSandbox,
  type RouteModule,
  type GatewayDeps,
  type GatewayClients,
  type AuthenticatedPlatform,
  type Permission,
} from './http/types.js';
