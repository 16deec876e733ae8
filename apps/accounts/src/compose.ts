import { keyringFromConfig, type Composition, type ServiceDeps } from '@sluice/runtime';
import type { AccountsConfig } from './service.js';
import { InternalAccountsService } from './app/internal-accounts.service.js';
import { LedgerService } from './app/ledger.service.js';
import { LedgerReconcileWorker } from './app/ledger-reconcile.worker.js';
import { ExternalAccountsService } from './app/external-accounts.service.js';
import { DiscoveriesService } from './app/discoveries.service.js';
import { SANDBOX_DISCOVERIES } from './domain/discoveries.js';
import {
  ProductionBeneficiaryVerifier,
  SandboxBeneficiaryVerifier,
} from './domain/beneficiary-verification.js';
import { IdentityConsumer, IdentityEventsHandler } from './events/identity.consumer.js';
import { AccountsPublisher } from './events/accounts.events.js';
import { accountsRpc } from './rpc/accounts.rpc.js';
import type { HolderDirectory, PlatformDirectory } from './app/ports.js';
import { IdentityClient } from './clients/identity.client.js';
import { ExternalAccountRepository } from './store/external-account.repository.js';
import { ACCOUNTS_KEYRING } from './store/sealing.js';

/** Adapters a test or the benchmark's one-process baseline may replace (default: identity over gRPC). */
export interface AccountsAdapters {
  /** Customers and platforms as holders of external accounts. */
  holders?: HolderDirectory;
  /** Platforms' embedded-wallet currencies. */
  platforms?: PlatformDirectory;
}

/** The object graph of a running accounts service. */
export interface AccountsGraph extends Composition {
  internalAccounts: InternalAccountsService;
  ledger: LedgerService;
  externalAccounts: ExternalAccountsService;
  discoveries: DiscoveriesService;
  /** The scheduled reconciliation (absent with LEDGER_RECONCILE_INTERVAL_SECONDS=0). */
  reconcileWorker?: LedgerReconcileWorker;
}

/** The composition root of accounts: every object of the service, built once. */
export function composeAccounts(
  { orm, clock, outbox, bus, logger, config, metrics }: ServiceDeps<AccountsConfig>,
  adapters: AccountsAdapters = {},
): AccountsGraph {
  // One identity client serves every port the adapters leave to identity.
  let identity: IdentityClient | undefined;
  const identityClient = () => (identity ??= new IdentityClient(config.IDENTITY_GRPC_URL));
  const holders = adapters.holders ?? identityClient();
  const platforms = adapters.platforms ?? identityClient();
  const events = new AccountsPublisher(outbox);
  const internalAccounts = new InternalAccountsService(orm, clock, platforms, logger);
  const externalAccountRepo = new ExternalAccountRepository(keyringFromConfig(config, ACCOUNTS_KEYRING));
  // The ledger reads a hold's payee with the same repository (PlaceHold's payee_external_account_id).
  const ledger = new LedgerService(orm, clock, events, metrics, externalAccountRepo);
  const externalAccounts = new ExternalAccountsService(
    orm,
    clock,
    events,
    holders,
    {
      SANDBOX: new SandboxBeneficiaryVerifier(),
      // No beneficiary-verification partner yet: production reports UNSUPPORTED.
      PRODUCTION: new ProductionBeneficiaryVerifier(),
    },
    externalAccountRepo,
  );
  // The receiving institutions: the sandbox's fixed directory; none configured for production yet.
  const discoveries = new DiscoveriesService({ SANDBOX: SANDBOX_DISCOVERIES, PRODUCTION: [] });
  const reconcileWorker =
    config.LEDGER_RECONCILE_INTERVAL_SECONDS > 0
      ? new LedgerReconcileWorker(orm, ledger, logger, config.LEDGER_RECONCILE_INTERVAL_SECONDS * 1000)
      : undefined;
  return {
    internalAccounts,
    ledger,
    externalAccounts,
    discoveries,
    ...(reconcileWorker ? { reconcileWorker, workers: [reconcileWorker] } : {}),
    rpc: [accountsRpc({ accounts: internalAccounts, ledger, externalAccounts, discoveries, logger })],
    consumers: [
      new IdentityConsumer({
        bus,
        orm,
        logger,
        prefix: config.EVENT_SUBJECT_PREFIX,
        handler: new IdentityEventsHandler(internalAccounts, logger),
      }),
    ],
    close: () => identity?.close(),
  };
}
