import type { Environment } from '@sluice/core';
import { keyringFromConfig, type Composition, type ServiceDeps, type Worker } from '@sluice/runtime';
import { inheritedDeadline } from '@sluice/rpc';
import type { PaymentsConfig } from './service.js';
import type {
  AccountsPort,
  ApprovalPolicies,
  CustomerDirectory,
  Ledger,
  PayoutRails,
  TransferRail,
  UmaCounterparty,
  UmaProviderDirectory,
  WalletSignatures,
} from './app/ports.js';
import { JobLagAdmission } from './app/admission.js';
import { ExchangeRatesService } from './app/exchange-rates.service.js';
import { IncomingService } from './app/incoming.service.js';
import { SandboxFundingService } from './app/sandbox-funding.service.js';
import { FreshQuotes } from './app/fresh-quotes.js';
import { QuoteCreationService } from './app/quote-creation.service.js';
import { QuoteExecutionService } from './app/quote-execution.service.js';
import { QuoteExpiryService } from './app/quote-expiry.service.js';
import { QuoteParties } from './app/quote-parties.js';
import { QuotePaymentsService } from './app/quote-payments.service.js';
import { ReceiverLookupsService } from './app/receiver-lookups.service.js';
import { TransactionLifecycle } from './app/transaction-lifecycle.js';
import { TransactionsService } from './app/transactions.service.js';
import { TransfersService } from './app/transfers.service.js';
import { UmaProvidersService } from './app/uma-providers.service.js';
import { WithdrawalFeesService } from './app/withdrawal-fees.service.js';
import { SANDBOX_NETWORK_FEES } from './domain/withdrawal-fees.js';
import { AccountsClient } from './clients/accounts.client.js';
import { keptParties } from './clients/kept-parties.js';
import { IdentityClient } from './clients/identity.client.js';
import {
  SandboxAccountPayoutRail,
  SandboxTransferRail,
  SandboxUmaPayoutRail,
  UnconfiguredPayoutRail,
  UnconfiguredTransferRail,
} from './clients/sandbox-rails.js';
import {
  EmptyUmaProviderDirectory,
  SandboxUmaCounterparty,
  SandboxUmaProviderDirectory,
  UnconfiguredUmaCounterparty,
} from './clients/sandbox-uma.js';
import { WalletAuthClient } from './clients/wallet-auth.client.js';
import { approvalAnswerConsumer } from './events/approval-answers.consumer.js';
import {
  SandboxExchangeRateProvider,
  UnconfiguredExchangeRateProvider,
  type ExchangeRateProvider,
} from './domain/exchange-rates.js';
import { JOB_KINDS, jobIds } from './domain/jobs.js';
import { SandboxFeeSchedule } from './domain/pricing.js';
import { TransactionEventPublisher } from './events/transaction.events.js';
import { paymentsRpc } from './rpc/payments.rpc.js';
import { IncomingApprovalRepository } from './store/incoming-approval.repository.js';
import { JobScheduler, maxJobConcurrency } from './store/job-scheduler.js';
import { QuoteRepository } from './store/quote.repository.js';
import { ReceiverLookupRepository } from './store/receiver-lookup.repository.js';
import { PAYMENTS_KEYRING } from './store/sealing.js';
import { TransactionRepository } from './store/transaction.repository.js';

/**
 * Adapters a test (or the benchmark's one-process baseline) may replace; each port of
 * app/ports.ts left out is served by its default: the one gRPC client per remote service
 * (accounts for `accounts` and `ledger`, identity for `customers`, wallet-auth for
 * `walletSignatures`), opened only if some port needs it, and the sandbox rail adapters for
 * sandbox platforms (none for production).
 */
export interface PaymentsAdapters {
  accounts?: AccountsPort;
  ledger?: Ledger;
  customers?: CustomerDirectory;
  /** Whether platforms are asked to approve incoming payments (identity's platform config). */
  approvalPolicies?: ApprovalPolicies;
  /** The wallet signature of EMBEDDED_WALLET quote executions (wallet-auth's signed retry). */
  walletSignatures?: WalletSignatures;
  /** The rail adapters of same-currency transfers. */
  transferRails?: Partial<Record<Environment, TransferRail>>;
  /** The rail adapters of quote payouts (external accounts, UMA addresses). */
  payoutRails?: Partial<Record<Environment, PayoutRails>>;
}

/** The object graph of a running payments service. */
export interface PaymentsGraph extends Composition {
  scheduler: JobScheduler;
  /** The admission of new payments, told by the scheduler how far behind it is. */
  admission: JobLagAdmission;
  lookups: ReceiverLookupsService;
  rates: ExchangeRatesService;
  providers: UmaProvidersService;
  withdrawalFees: WithdrawalFeesService;
  transactions: TransactionsService;
  lifecycle: TransactionLifecycle;
  transfers: TransfersService;
  quoteCreation: QuoteCreationService;
  /** The quotes this process just created, for the execute that follows (tests make one stale). */
  freshQuotes: FreshQuotes;
  /**
   * The kept platformCustomerIds and external accounts of quotes and the subscription that
   * invalidates them (not used for a port a test replaces).
   */
  keptParties: ReturnType<typeof keptParties>;
  quoteExecution: QuoteExecutionService;
  quoteExpiry: QuoteExpiryService;
  quotePayments: QuotePaymentsService;
  incoming: IncomingService;
  sandboxFunding: SandboxFundingService;
}

/** The composition root of payments: every object of the service, built once. */
export function composePayments(
  { orm, clock, logger, outbox, bus, config: c, metrics }: ServiceDeps<PaymentsConfig>,
  adapters: PaymentsAdapters = {},
): PaymentsGraph {
  if (c.JOB_CONCURRENCY > maxJobConcurrency(c.DATABASE_POOL_MAX)) {
    // Jobs could hold every connection and wait for more: refuse rather than stall under load.
    throw new Error(
      `JOB_CONCURRENCY=${c.JOB_CONCURRENCY} needs DATABASE_POOL_MAX of at least ${2 * c.JOB_CONCURRENCY} (it is ${c.DATABASE_POOL_MAX})`,
    );
  }
  const keyring = keyringFromConfig(c, PAYMENTS_KEYRING);

  // Outbound clients: one per remote service, opened only where no adapter replaces every port it serves.
  const accountsClient =
    adapters.accounts && adapters.ledger ? undefined : new AccountsClient(c.ACCOUNTS_GRPC_URL);
  const identityClient =
    adapters.customers && adapters.approvalPolicies ? undefined : new IdentityClient(c.IDENTITY_GRPC_URL);
  const walletAuthClient = adapters.walletSignatures
    ? undefined
    : new WalletAuthClient(c.WALLET_AUTH_GRPC_URL);
  const accounts = adapters.accounts ?? accountsClient!;
  const ledger = adapters.ledger ?? accountsClient!;
  // platformCustomerIds and quotes' external destinations kept in memory, forgotten on identity's
  // CUSTOMER.DELETED and accounts' EXTERNAL_ACCOUNT.DELETED (every replica hears them).
  // A port a test replaces is used as it is.
  const kept = keptParties(
    { customers: adapters.customers ?? identityClient!, externalAccounts: accounts },
    { bus, prefix: c.EVENT_SUBJECT_PREFIX, logger },
  );
  const customers = adapters.customers ?? kept.directory;
  const payees = adapters.accounts ?? kept.externalAccounts;
  const approvalPolicies = adapters.approvalPolicies ?? identityClient!;
  const walletSignatures = adapters.walletSignatures ?? walletAuthClient!;

  // Per environment: sandbox platforms see the simulated world; production has no rate feed,
  // UMA client, registry or rail configured yet.
  const rates: Record<Environment, ExchangeRateProvider> = {
    SANDBOX: new SandboxExchangeRateProvider(),
    PRODUCTION: new UnconfiguredExchangeRateProvider(),
  };
  const counterparties: Record<Environment, UmaCounterparty> = {
    SANDBOX: new SandboxUmaCounterparty(c.SANDBOX_UMA_DOMAIN),
    PRODUCTION: new UnconfiguredUmaCounterparty(),
  };
  const directories: Record<Environment, UmaProviderDirectory> = {
    SANDBOX: new SandboxUmaProviderDirectory(c.SANDBOX_UMA_DOMAIN),
    PRODUCTION: new EmptyUmaProviderDirectory(),
  };
  const transferRails: Record<Environment, TransferRail> = {
    SANDBOX: adapters.transferRails?.SANDBOX ?? new SandboxTransferRail(),
    PRODUCTION: adapters.transferRails?.PRODUCTION ?? new UnconfiguredTransferRail(),
  };
  const noPayoutRail = new UnconfiguredPayoutRail();
  const payoutRails: Record<Environment, PayoutRails> = {
    // Quote payouts follow the specification's quote table (external accounts) and sandbox receivers (UMA).
    SANDBOX: adapters.payoutRails?.SANDBOX ?? {
      account: new SandboxAccountPayoutRail(),
      uma: new SandboxUmaPayoutRail(),
    },
    PRODUCTION: adapters.payoutRails?.PRODUCTION ?? { account: noPayoutRail, uma: noPayoutRail },
  };
  const fees = new SandboxFeeSchedule();

  // Storage, the scheduler and the transaction lifecycle every use case shares.
  const transactionRepository = new TransactionRepository(keyring);
  const quoteRepository = new QuoteRepository(keyring);
  // New payments wait while the scheduler is behind, so settlement keeps level with acceptance.
  const admission = new JobLagAdmission({
    maxJobLagMs: c.ADMISSION_MAX_JOB_LAG_MS,
    maxWaitMs: c.ADMISSION_MAX_WAIT_MS,
    deadline: inheritedDeadline,
    metrics,
  });
  const scheduler = new JobScheduler(orm, clock, {
    timeScale: c.SANDBOX_TIME_SCALE,
    pollMs: c.JOB_POLL_MS,
    leaseMs: c.JOB_LEASE_MS,
    concurrency: c.JOB_CONCURRENCY,
    logger,
    metrics,
    onLag: (ms) => admission.observe(ms),
  });
  const transactions = new TransactionsService(orm, transactionRepository);
  const lifecycle = new TransactionLifecycle(clock, {
    transactions: transactionRepository,
    quotes: quoteRepository,
    events: new TransactionEventPublisher(outbox),
  });

  // Use cases.
  const lookups = new ReceiverLookupsService(orm, clock, {
    accounts,
    rates,
    counterparties,
    lookups: new ReceiverLookupRepository(keyring),
    ttlMs: c.LOOKUP_TTL_SECONDS * 1000,
  });
  const transfers = new TransfersService(orm, clock, {
    admission,
    accounts,
    ledger,
    customers,
    rails: transferRails,
    transactions,
    lifecycle,
    scheduler,
    logger,
  });
  const quotePayments = new QuotePaymentsService(orm, clock, {
    ledger,
    rails: payoutRails,
    transactions,
    quotes: quoteRepository,
    lifecycle,
    scheduler,
    logger,
  });
  const freshQuotes = new FreshQuotes();
  const quoteExpiry = new QuoteExpiryService(orm, clock, {
    fresh: freshQuotes,
    ledger,
    quotes: quoteRepository,
    transactions,
    lifecycle,
    scheduler,
    logger,
  });
  const parties = new QuoteParties({ accounts, payees, customers, lookups });
  const quoteExecution = new QuoteExecutionService(orm, clock, {
    admission,
    fresh: freshQuotes,
    parties,
    walletSignatures,
    ledger,
    quotes: quoteRepository,
    expiry: quoteExpiry,
    transactions,
    lifecycle,
    quotePayments,
    scheduler,
    logger,
  });
  const quoteCreation = new QuoteCreationService(orm, clock, {
    parties,
    rates,
    fees,
    walletSignatures,
    quotes: quoteRepository,
    lifecycle,
    scheduler,
    execution: quoteExecution,
    fresh: freshQuotes,
    ttlMs: c.QUOTE_TTL_SECONDS * 1000,
  });
  const incoming = new IncomingService(
    orm,
    clock,
    {
      approvalWindowMs: c.INCOMING_APPROVAL_WINDOW_SECONDS * 1000,
      answerTimeoutMs: c.INCOMING_APPROVAL_ANSWER_TIMEOUT_SECONDS * 1000,
    },
    {
      accounts,
      customers,
      approvalPolicies,
      ledger,
      transactions,
      approvals: new IncomingApprovalRepository(keyring),
      lifecycle,
      scheduler,
      logger,
    },
  );
  const sandboxFunding = new SandboxFundingService(orm, clock, {
    accounts,
    customers,
    transactions,
    lifecycle,
    scheduler,
    incoming,
  });
  const exchangeRates = new ExchangeRatesService({ rates, fees });
  const providers = new UmaProvidersService(directories);
  // Network fees: the sandbox's fixed table; production has no fee source configured yet.
  const withdrawalFees = new WithdrawalFeesService({
    accounts,
    feeTables: { SANDBOX: SANDBOX_NETWORK_FEES, PRODUCTION: undefined },
  });

  // Every timed transition's handler is registered before the scheduler starts claiming jobs.
  transfers.registerJobs();
  quotePayments.registerJobs();
  quoteExpiry.registerJobs();
  incoming.registerJobs();
  const hourOf = (at: Date) => Math.floor(at.getTime() / 3_600_000);
  scheduler.register(JOB_KINDS.lookupsPurge, async (_job, em) => {
    const purged = await lookups.purgeExpired(em);
    if (purged) logger.info({ purged }, 'expired receiver lookups purged');
    // The next run: one job id per hour, so concurrent replicas schedule it once.
    const next = hourOf(clock.now()) + 1;
    await scheduler.schedule(
      {
        kind: JOB_KINDS.lookupsPurge,
        id: jobIds.lookupsPurge(next),
        delayMs: next * 3_600_000 - clock.now().getTime(),
        realTime: true,
      },
      em,
    );
  });
  const schedulerWorker: Worker = {
    start: async () => {
      await scheduler.schedule({
        kind: JOB_KINDS.lookupsPurge,
        id: jobIds.lookupsPurge(hourOf(clock.now())),
      });
      scheduler.start();
    },
    stop: () => scheduler.stop(),
  };

  return {
    scheduler,
    admission,
    lookups,
    rates: exchangeRates,
    providers,
    withdrawalFees,
    transactions,
    lifecycle,
    transfers,
    quoteCreation,
    freshQuotes,
    keptParties: kept,
    quoteExecution,
    quoteExpiry,
    quotePayments,
    incoming,
    sandboxFunding,
    consumers: [approvalAnswerConsumer({ bus, orm, logger, prefix: c.EVENT_SUBJECT_PREFIX, incoming })],
    workers: [schedulerWorker, kept.worker],
    rpc: [
      paymentsRpc({
        lookups,
        rates: exchangeRates,
        providers,
        withdrawalFees,
        transfers,
        transactions,
        incoming,
        sandboxFunding,
        quoteCreation,
        quoteExecution,
        quoteExpiry,
        logger,
      }),
    ],
    close: () => {
      accountsClient?.close();
      identityClient?.close();
      walletAuthClient?.close();
    },
  };
}
