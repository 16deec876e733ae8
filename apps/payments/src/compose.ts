import type { Composition, ServiceDeps, Worker } from '@sluice/runtime';
import type { PaymentsConfig } from './service.js';
import {
  ReceiverLookupsService,
  type EnvironmentAdapters,
  type Environment,
} from './app/receiver-lookups.service.js';
import { SandboxExchangeRateProvider, UnconfiguredExchangeRateProvider } from './domain/exchange-rates.js';
import { SandboxFeeSchedule } from './domain/pricing.js';
import { approvalThresholds } from './domain/approval-thresholds.js';
import { SandboxUmaCounterparty, UnconfiguredUmaCounterparty } from './domain/uma.js';
import { SandboxUmaProviderDirectory, type UmaProviderDirectory } from './domain/uma-providers.js';
import type { AccountsPort, CustomerDirectory, Ledger } from './app/ports.js';
import { TransfersService } from './app/transfers.service.js';
import { IncomingService, type IncomingDirectory } from './app/incoming.service.js';
import { GrpcIncomingDirectory } from './rpc/incoming.rpc.js';
import { QuotesService, type InternalAccountTypes, type WalletSignatures } from './app/quotes.service.js';
import { AccountsInternalAccountTypes, WalletAuthSignatures } from './rpc/quotes.rpc.js';
import { SandboxQuoteRail, SandboxUmaRail, UnconfiguredPayoutRail, type PayoutRail } from './domain/quote-rail.js';
import { QuotePaymentsService, type PayoutRails } from './app/quote-payments.service.js';
import { SandboxPaymentRail, UnconfiguredPaymentRail, type PaymentRail } from './domain/payment-rail.js';
import { AccountsLedgerClient, IdentityCustomerDirectory } from './rpc/accounts-ledger.js';
import { paymentsRpc } from './rpc/payments.rpc.js';
import { JobScheduler, maxJobConcurrency } from './store/job-scheduler.js';

/**
 * Adapters a test (or the benchmark's one-process baseline) may replace: the
 * accounts reads and ledger, the customer directory and the payment rails.
 * Defaults: gRPC to accounts, identity and wallet-auth, the sandbox rails for
 * sandbox platforms and none for production.
 */
export interface PaymentsAdapters {
  accounts?: AccountsPort;
  ledger?: Ledger;
  customers?: CustomerDirectory;
  rails?: Partial<Record<Environment, PaymentRail>>;
  /** Payout rails of quote payments (external accounts, UMA addresses). */
  payoutRails?: Partial<Record<Environment, PayoutRails>>;
  /** Receivers of incoming payments (identity customers by UMA address, their internal accounts). */
  incomingDirectory?: IncomingDirectory;
  /** Internal account types (EMBEDDED_WALLET quote sources need the wallet signature). */
  accountTypes?: InternalAccountTypes;
  /** The wallet signature of EMBEDDED_WALLET quote executions (wallet-auth signed retry). */
  walletSignatures?: WalletSignatures;
}

/** The object graph of a running payments service. */
export interface PaymentsGraph extends Composition {
  scheduler: JobScheduler;
  lookups: ReceiverLookupsService;
  transfers: TransfersService;
  quotePayments: QuotePaymentsService;
  quotes: QuotesService;
  incoming: IncomingService;
}

/** Removes receiver lookups expired for more than a day; reschedules itself hourly. */
const PURGE_LOOKUPS = 'receiver-lookups.purge';

/** Sandbox platforms see the simulated world; production has no rate feed or UMA client configured yet. */
function environmentAdapters(sandboxUmaDomain: string): Record<Environment, EnvironmentAdapters> {
  return {
    SANDBOX: { rates: new SandboxExchangeRateProvider(), uma: new SandboxUmaCounterparty(sandboxUmaDomain) },
    PRODUCTION: { rates: new UnconfiguredExchangeRateProvider(), uma: new UnconfiguredUmaCounterparty() },
  };
}

/** The composition root of payments: every object of the service, built once. */
export function composePayments(
  { orm, clock, logger, outbox, config: c }: ServiceDeps<PaymentsConfig>,
  overrides: PaymentsAdapters = {},
): PaymentsGraph {
  if (c.JOB_CONCURRENCY > maxJobConcurrency(c.DATABASE_POOL_MAX)) {
    // Jobs could hold every connection and wait for more: refuse rather than stall under load.
    throw new Error(
      `JOB_CONCURRENCY=${c.JOB_CONCURRENCY} needs DATABASE_POOL_MAX of at least ${3 * c.JOB_CONCURRENCY} (it is ${c.DATABASE_POOL_MAX})`,
    );
  }
  // Outbound clients, opened only where no adapter replaces them.
  const accountsClient = overrides.accounts && overrides.ledger ? undefined : new AccountsLedgerClient(c.ACCOUNTS_GRPC_URL);
  const identityClient = overrides.customers ? undefined : new IdentityCustomerDirectory(c.IDENTITY_GRPC_URL);
  const accountTypesClient = overrides.accountTypes ? undefined : new AccountsInternalAccountTypes(c.ACCOUNTS_GRPC_URL);
  const walletSignaturesClient = overrides.walletSignatures ? undefined : new WalletAuthSignatures(c.WALLET_AUTH_GRPC_URL);
  const incomingDirectoryClient = overrides.incomingDirectory
    ? undefined
    : new GrpcIncomingDirectory(c.IDENTITY_GRPC_URL, c.ACCOUNTS_GRPC_URL);
  const accounts = overrides.accounts ?? accountsClient!;
  const ledger = overrides.ledger ?? accountsClient!;
  const customers = overrides.customers ?? identityClient!;

  const envAdapters = environmentAdapters(c.SANDBOX_UMA_DOMAIN);
  const fees = new SandboxFeeSchedule();
  const rails: Record<Environment, PaymentRail> = {
    SANDBOX: overrides.rails?.SANDBOX ?? new SandboxPaymentRail(),
    PRODUCTION: overrides.rails?.PRODUCTION ?? new UnconfiguredPaymentRail(),
  };
  const unconfigured: PayoutRail = new UnconfiguredPayoutRail();
  const scheduler = new JobScheduler(orm, clock, {
    timeScale: c.SANDBOX_TIME_SCALE,
    pollMs: c.JOB_POLL_MS,
    leaseMs: c.JOB_LEASE_MS,
    concurrency: c.JOB_CONCURRENCY,
    logger,
  });
  const lookups = new ReceiverLookupsService(orm, clock, envAdapters, c.LOOKUP_TTL_SECONDS * 1000, accounts);
  const transfers = new TransfersService(orm, clock, { accounts, ledger, customers, rails, scheduler, outbox, logger });
  const quotePayments = new QuotePaymentsService(orm, clock, {
    ledger,
    transfers,
    rails: {
      // Quote payouts follow the specification's quote table (external accounts) and sandbox receivers (UMA).
      SANDBOX: overrides.payoutRails?.SANDBOX ?? { account: new SandboxQuoteRail(), uma: new SandboxUmaRail() },
      PRODUCTION: overrides.payoutRails?.PRODUCTION ?? { account: unconfigured, uma: unconfigured },
    },
    scheduler,
    logger,
  });
  const quotes = new QuotesService(orm, clock, {
    accountTypes: overrides.accountTypes ?? accountTypesClient!,
    walletSignatures: overrides.walletSignatures ?? walletSignaturesClient!,
    accounts,
    lookups,
    adapters: envAdapters,
    fees,
    scheduler,
    ledger,
    customers,
    transfers,
    quotePayments,
    ttlMs: c.QUOTE_TTL_SECONDS * 1000,
    logger,
  });
  const incoming = new IncomingService(
    orm,
    clock,
    {
      approvalThresholds: approvalThresholds(c.INCOMING_APPROVAL_THRESHOLDS),
      approvalWindowMs: c.INCOMING_APPROVAL_WINDOW_SECONDS * 1000,
    },
    {
      transfers,
      directory: overrides.incomingDirectory ?? incomingDirectoryClient!,
      ledger,
      rails,
      scheduler,
      logger,
    },
  );

  // Every timed transition's handler is registered before the scheduler starts claiming jobs.
  transfers.registerJobs();
  quotePayments.registerJobs();
  quotes.registerJobs();
  incoming.registerJobs();
  scheduler.register(PURGE_LOOKUPS, async (_job, em) => {
    const purged = await lookups.purgeExpired();
    if (purged) logger.info({ purged }, 'expired receiver lookups purged');
    // The next run: a fresh id per hour, so concurrent replicas schedule it once.
    const hour = Math.floor(clock.now().getTime() / 3_600_000) + 1;
    await scheduler.schedule(
      { kind: PURGE_LOOKUPS, id: `${PURGE_LOOKUPS}:${hour}`, delayMs: hour * 3_600_000 - clock.now().getTime(), realTime: true },
      em,
    );
  });
  const schedulerWorker: Worker = {
    start: async () => {
      const hour = Math.floor(clock.now().getTime() / 3_600_000);
      await scheduler.schedule({ kind: PURGE_LOOKUPS, id: `${PURGE_LOOKUPS}:${hour}` });
      scheduler.start();
    },
    stop: () => scheduler.stop(),
  };

  const directories: Record<Environment, UmaProviderDirectory> = {
    SANDBOX: new SandboxUmaProviderDirectory(c.SANDBOX_UMA_DOMAIN),
    PRODUCTION: { providers: async () => [] },
  };
  return {
    scheduler,
    lookups,
    transfers,
    quotePayments,
    quotes,
    incoming,
    workers: [schedulerWorker],
    rpc: [paymentsRpc({ lookups, adapters: envAdapters, fees, directories, transfers, incoming, quotes, logger })],
    close: () => {
      accountsClient?.close();
      identityClient?.close();
      accountTypesClient?.close();
      walletSignaturesClient?.close();
      incomingDirectoryClient?.close();
    },
  };
}
