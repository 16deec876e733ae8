import { Type, sandboxConfig } from '@sluice/config';
import { defineService, type ServiceConfig } from '@sluice/runtime';
import { entities } from './store/entities.js';
import { migrations } from './store/migrations.js';
import { composeIdentity } from './compose.js';

const config = Type.Object({
  SANDBOX_UMA_DOMAIN: sandboxConfig.SANDBOX_UMA_DOMAIN,
});

/** The validated configuration of identity. */
export type IdentityConfig = ServiceConfig<typeof config>;

/** The identity service: platforms, API tokens, platform config and customers. */
export const identityService = defineService({
  name: 'identity',
  schema: 'identity',
  domain: 'identity',
  config,
  entities,
  migrations,
  compose: composeIdentity,
});
