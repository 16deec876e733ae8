import { Type, sandboxConfig } from '@sluice/config';
import { defineService, type ServiceConfig } from '@sluice/runtime';
import { entities } from './store/entities.js';
import { migrations } from './store/migrations.js';
import { composeIdentity } from './compose.js';

const config = Type.Object({
  SANDBOX_UMA_DOMAIN: sandboxConfig.SANDBOX_UMA_DOMAIN,
  WEBHOOK_SECRET_ROTATION_OVERLAP_SECONDS: Type.Integer({
    default: 86_400,
    minimum: 0,
    maximum: 30 * 86_400,
    description:
      'after a webhook signing secret rotation, how long deliveries carry a signature with the replaced secret too (0: it stops at once)',
  }),
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
