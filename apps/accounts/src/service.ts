import { Type, grpcClientConfig, type Static } from '@sluice/config';
import type { ServiceSpec } from '@sluice/runtime';
import { InternalAccountsService } from './app/internal-accounts.service.js';
import { LedgerService } from './app/ledger.service.js';
import { IdentityConsumer, IdentityEventsHandler } from './events/identity.consumer.js';
import { accountsRpc } from './rpc/accounts.rpc.js';
import { IdentityPlatformDirectory } from './rpc/identity-directory.js';
import { migrations } from './store/migrations.js';

const config = Type.Object({
  /** host:port of identity (platform environments for event-driven provisioning). */
  IDENTITY_GRPC_URL: grpcClientConfig('identity').IDENTITY_GRPC_URL!,
});

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
  rpc: ({ orm, clock, outbox, logger }) => [
    accountsRpc({
      accounts: new InternalAccountsService(orm, clock),
      ledger: new LedgerService(orm, clock, outbox),
      logger,
    }),
  ],
  consumers: ({ orm, clock, bus, logger, config: c }) => {
    const directory = new IdentityPlatformDirectory(
      (c as unknown as Static<typeof config>).IDENTITY_GRPC_URL,
    );
    const handler = new IdentityEventsHandler(new InternalAccountsService(orm, clock), directory, logger);
    return [
      new IdentityConsumer({ bus, orm, logger, prefix: c.EVENT_SUBJECT_PREFIX, handler }, () =>
        directory.close(),
      ),
    ];
  },
};
