import { Type, grpcClientConfig } from '@sluice/config';
import type { ServiceSpec } from '@sluice/runtime';
import { InternalAccountsService } from './app/internal-accounts.service.js';
import { LedgerService } from './app/ledger.service.js';
import { ExternalAccountsService } from './app/external-accounts.service.js';
import {
  ProductionBeneficiaryVerifier,
  SandboxBeneficiaryVerifier,
} from './domain/beneficiary-verification.js';
import { IdentityHolderDirectory } from './rpc/identity-holders.js';
import { IdentityConsumer, IdentityEventsHandler } from './events/identity.consumer.js';
import { accountsRpc } from './rpc/accounts.rpc.js';
import { IdentityPlatformDirectory } from './rpc/identity-directory.js';
import { migrations } from './store/migrations.js';

const config = Type.Object({
  /** host:port of identity (platform environments for event-driven provisioning). */
  IDENTITY_GRPC_URL: grpcClientConfig('identity').IDENTITY_GRPC_URL!,
});

/** The identity client of each running instance's RPC handlers (keyed by its ORM), closed by a worker on shutdown. */
const holderDirectories = new WeakMap<object, IdentityHolderDirectory>();
const rpcPlatformDirectories = new WeakMap<object, IdentityPlatformDirectory>();

/**
 * The accounts service: internal accounts (per customer and per platform, one per
 * currency), the double-entry ledger behind their balances, sandbox funding, and
 * INTERNAL_ACCOUNT.BALANCE_UPDATED events. Consumes identity events to provision
 * accounts as a backstop to the synchronous Ensure* calls.
 */
export const accountsService: ServiceSpec<typeof config> = {
  name: 'accounts',
  schema: 'accounts',
  domain: 'accounts',
  config,
  entities: [],
  migrations,
  rpc: ({ orm, clock, outbox, logger, config: c }) => {
    const holders = new IdentityHolderDirectory(c.IDENTITY_GRPC_URL);
    holderDirectories.set(orm, holders);
    const platforms = new IdentityPlatformDirectory(c.IDENTITY_GRPC_URL);
    rpcPlatformDirectories.set(orm, platforms);
    return [
      accountsRpc({
        accounts: new InternalAccountsService(orm, clock),
        ledger: new LedgerService(orm, clock, outbox),
        externalAccounts: new ExternalAccountsService(orm, clock, outbox, holders, {
          SANDBOX: new SandboxBeneficiaryVerifier(),
          // No beneficiary-verification partner yet: production reports UNSUPPORTED.
          PRODUCTION: new ProductionBeneficiaryVerifier(),
        }),
        logger,
        now: () => clock.now(),
        platforms,
      }),
    ];
  },
  // Closes the identity client used by the RPC handlers.
  workers: ({ orm }) => [
    {
      start: () => undefined,
      stop: async () => {
        holderDirectories.get(orm)?.close();
        rpcPlatformDirectories.get(orm)?.close();
      },
    },
  ],
  consumers: ({ orm, clock, bus, logger, config: c }) => {
    const directory = new IdentityPlatformDirectory(
      c.IDENTITY_GRPC_URL,
    );
    const handler = new IdentityEventsHandler(new InternalAccountsService(orm, clock), directory, logger);
    return [
      new IdentityConsumer({ bus, orm, logger, prefix: c.EVENT_SUBJECT_PREFIX, handler }, () =>
        directory.close(),
      ),
    ];
  },
};
