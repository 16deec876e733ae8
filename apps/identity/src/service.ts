import { Type, sandboxConfig } from '@sluice/config';
import { implement } from '@sluice/rpc';
import { identity } from '@sluice/contracts';
import type { ServiceSpec } from '@sluice/runtime';
import { entities } from './store/entities.js';
import { migrations } from './store/migrations.js';
import { PlatformRepository } from './store/platform.repository.js';
import { TokenRepository } from './store/token.repository.js';
import { CustomerRepository } from './store/customer.repository.js';
import { identityHandlers } from './rpc/identity.rpc.js';

const configSchema = Type.Object({
  SANDBOX_UMA_DOMAIN: sandboxConfig.SANDBOX_UMA_DOMAIN,
});

/** The identity service: platforms, API tokens, platform config and customers. */
export const identityService: ServiceSpec<typeof configSchema> = {
  name: 'identity',
  schema: 'identity',
  domain: 'identity',
  config: configSchema,
  entities,
  migrations,
  rpc: ({ orm, outbox, clock, logger, config }) => {
    const platforms = new PlatformRepository(orm, outbox, clock);
    const tokens = new TokenRepository(orm, outbox, clock, platforms);
    const customers = new CustomerRepository(orm, outbox, clock, platforms, config.SANDBOX_UMA_DOMAIN);
    return [
      implement<identity.IdentityServiceServer>(
        identity.IdentityServiceService,
        identityHandlers({ platforms, tokens, customers }),
        logger,
        'sluice.identity.v1.IdentityService',
      ),
    ];
  },
};
