import { implement } from '@sluice/rpc';
import { identity } from '@sluice/contracts';
import type { Composition, ServiceDeps } from '@sluice/runtime';
import type { IdentityConfig } from './service.js';
import { PlatformRepository } from './store/platform.repository.js';
import { TokenRepository } from './store/token.repository.js';
import { CustomerRepository } from './store/customer.repository.js';
import { identityHandlers } from './rpc/identity.rpc.js';

/** The object graph of a running identity service. */
export interface IdentityGraph extends Composition {
  platforms: PlatformRepository;
  tokens: TokenRepository;
  customers: CustomerRepository;
}

/** The composition root of identity: every object of the service, built once. */
export function composeIdentity({ orm, outbox, clock, logger, config }: ServiceDeps<IdentityConfig>): IdentityGraph {
  const platforms = new PlatformRepository(orm, outbox, clock);
  const tokens = new TokenRepository(orm, outbox, clock, platforms);
  const customers = new CustomerRepository(orm, outbox, clock, platforms, config.SANDBOX_UMA_DOMAIN);
  return {
    platforms,
    tokens,
    customers,
    rpc: [
      implement<identity.IdentityServiceServer>(
        identity.IdentityServiceService,
        identityHandlers({ platforms, tokens, customers }),
        logger,
        'sluice.identity.v1.IdentityService',
      ),
    ],
  };
}
