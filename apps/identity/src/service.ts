import { Type, sandboxConfig } from '@sluice/config';
import { defineService, masterKeyConfig, type ServiceConfig } from '@sluice/runtime';
import { entities } from './store/entities.js';
import { migrations } from './store/migrations.js';
import { composeIdentity } from './compose.js';
import { IDENTITY_KEYRING } from './store/sealing.js';
import { rewrapIdentity } from './store/rewrap.js';

const config = Type.Object({
  SANDBOX_UMA_DOMAIN: sandboxConfig.SANDBOX_UMA_DOMAIN,
  ...masterKeyConfig(IDENTITY_KEYRING, "customers' personal data and UMA addresses and webhook signing secrets"),
  WEBHOOK_SECRET_ROTATION_OVERLAP_SECONDS: Type.Integer({
    default: 86_400,
    minimum: 0,
    maximum: 30 * 86_400,
    description:
      'after a webhook signing secret rotation, how long deliveries carry a signature with the replaced secret too (0: it stops at once)',
  }),
  BULK_IMPORT_POLL_MS: Type.Integer({
    default: 10_000,
    minimum: 50,
    maximum: 600_000,
    description:
      'safety poll of the bulk customer import worker: a stored job wakes every replica on commit (LISTEN/NOTIFY), so this only bounds how late a lost notification or a job left by a crash is noticed (without a LISTEN connection it polls every second)',
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
  commands: { rewrap: rewrapIdentity },
});
