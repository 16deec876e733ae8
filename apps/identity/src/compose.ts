import { implement } from '@sluice/rpc';
import { identity } from '@sluice/contracts';
import { keyringFromConfig, type Composition, type ServiceDeps } from '@sluice/runtime';
import type { IdentityConfig } from './service.js';
import { PlatformsService } from './app/platforms.service.js';
import { ConfigService } from './app/config.service.js';
import { TokensService } from './app/tokens.service.js';
import { CustomersService } from './app/customers.service.js';
import { InvitationsService } from './app/invitations.service.js';
import { BulkImportService } from './app/bulk-import.service.js';
import { BulkImportWorker } from './app/bulk-import.worker.js';
import { PlatformRepository } from './store/platform.repository.js';
import { PlatformConfigRepository } from './store/platform-config.repository.js';
import { WebhookSecretRepository } from './store/webhook-secret.repository.js';
import { TokenRepository } from './store/token.repository.js';
import { CustomerRepository } from './store/customer.repository.js';
import { InvitationRepository } from './store/invitation.repository.js';
import { BulkImportRepository } from './store/bulk-import.repository.js';
import { IdentityPublisher } from './events/identity.events.js';
import { webhookEndpointConsumer } from './events/webhook-endpoint.consumer.js';
import { ComplianceConsumer } from './events/compliance.consumer.js';
import { identityHandlers } from './rpc/identity.rpc.js';
import { IDENTITY_KEYRING } from './store/sealing.js';

/** The object graph of a running identity service: its use cases. */
export interface IdentityGraph extends Composition {
  platforms: PlatformsService;
  config: ConfigService;
  tokens: TokensService;
  customers: CustomersService;
  invitations: InvitationsService;
  imports: BulkImportService;
}

/** The composition root of identity: every object of the service, built once. */
export function composeIdentity({
  orm,
  outbox,
  bus,
  clock,
  logger,
  config,
  metrics,
}: ServiceDeps<IdentityConfig>): IdentityGraph {
  const keyring = keyringFromConfig(config, IDENTITY_KEYRING);
  const store = {
    platforms: new PlatformRepository(),
    configs: new PlatformConfigRepository(),
    secrets: new WebhookSecretRepository(keyring),
    tokens: new TokenRepository(),
    customers: new CustomerRepository(keyring),
    invitations: new InvitationRepository(keyring),
    imports: new BulkImportRepository(keyring),
  };
  const events = new IdentityPublisher(outbox);
  const customers = new CustomersService(orm, clock, store, events, config.SANDBOX_UMA_DOMAIN);
  const useCases = {
    platforms: new PlatformsService(orm, clock, store, events),
    config: new ConfigService(
      orm,
      clock,
      store,
      events,
      config.WEBHOOK_SECRET_ROTATION_OVERLAP_SECONDS * 1000,
    ),
    tokens: new TokensService(orm, clock, store.platforms, store.tokens, events),
    customers,
    invitations: new InvitationsService(orm, clock, store, events, config.SANDBOX_UMA_DOMAIN),
    imports: new BulkImportService(orm, clock, store, customers, events, config.BULK_IMPORT_BATCH_SIZE, metrics),
  };
  return {
    ...useCases,
    workers: [new BulkImportWorker(orm, useCases.imports, logger, config.BULK_IMPORT_POLL_MS)],
    consumers: [
      webhookEndpointConsumer({
        bus,
        orm,
        logger,
        prefix: config.EVENT_SUBJECT_PREFIX,
        config: useCases.config,
      }),
      new ComplianceConsumer({
        bus,
        orm,
        logger,
        prefix: config.EVENT_SUBJECT_PREFIX,
        customers: useCases.customers,
      }),
    ],
    rpc: [
      implement<identity.IdentityServiceServer>(
        identity.IdentityServiceService,
        identityHandlers(useCases),
        logger,
        'sluice.identity.v1.IdentityService',
      ),
    ],
  };
}
