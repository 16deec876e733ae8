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
  BULK_IMPORT_POLL_MS: Type.Integer({
    default: 5000,
    minimum: 50,
    maximum: 600_000,
    description:
      'how often the bulk customer import worker looks for jobs stored by another replica or left by a crash (a job this replica stores is started at once)',
  }),
  BULK_IMPORT_BATCH_SIZE: Type.Integer({
    default: 200,
    minimum: 1,
    maximum: 5000,
    description: 'rows of a bulk customer import created per database transaction',
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
