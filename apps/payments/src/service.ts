import { Type, grpcClientConfig, sandboxConfig } from '@sluice/config';
import type { ServiceSpec } from '@sluice/runtime';
import type { MikroORM } from '@sluice/store';
import {
  ReceiverLookupsService,
  type EnvironmentAdapters,
  type Environment,
} from './app/receiver-lookups.service.js';
import { SandboxExchangeRateProvider, UnconfiguredExchangeRateProvider } from './domain/exchange-rates.js';
import { SandboxFeeSchedule } from './domain/pricing.js';
import { APPROVAL_THRESHOLDS_PATTERN, approvalThresholds } from './domain/approval-thresholds.js';
import { SandboxUmaCounterparty, UnconfiguredUmaCounterparty } from './domain/uma.js';
import { SandboxUmaProviderDirectory, type UmaProviderDirectory } from './domain/uma-providers.js';
import type { AccountsPort, CustomerDirectory, Ledger } from './app/ports.js';
import { TransfersService } from './app/transfers.service.js';
import { IncomingService, type IncomingDirectory } from './app/incoming.service.js';
import { GrpcIncomingDirectory } from './rpc/incoming.rpc.js';
import { QuotesService, type InternalAccountTypes, type WalletSignatures } from './app/quotes.service.js';
import { AccountsInternalAccountTypes, WalletAuthSignatures } from './rpc/quotes.rpc.js';
import {
  SandboxQuoteRail,
  SandboxUmaRail,
  UnconfiguredPayoutRail,
  type PayoutRail,
} from './domain/quote-rail.js';
import { QuotePaymentsService, type PayoutRails } from './app/quote-payments.service.js';
import { SandboxPaymentRail, UnconfiguredPaymentRail, type PaymentRail } from './domain/payment-rail.js';
import { AccountsLedgerClient, IdentityCustomerDirectory } from './rpc/accounts-ledger.js';
import { paymentsRpc } from './rpc/payments.rpc.js';
import { JobScheduler, maxJobConcurrency } from './store/job-scheduler.js';
import { migrations } from './store/migrations.js';

const config = Type.Object({
  ...sandboxConfig,
  /** host:port of accounts (external accounts as payment destinations). */
  ACCOUNTS_GRPC_URL: grpcClientConfig('accounts').ACCOUNTS_GRPC_URL!,
  /** host:port of identity (platformCustomerId of a transaction's customer). */
  IDENTITY_GRPC_URL: grpcClientConfig('identity').IDENTITY_GRPC_URL!,
  /** host:port of wallet-auth (the wallet signature of EMBEDDED_WALLET quote executions). */
  WALLET_AUTH_GRPC_URL: grpcClientConfig('wallet-auth').WALLET_AUTH_GRPC_URL!,
  JOB_POLL_MS: Type.Integer({
    default: 250,
    minimum: 10,
    maximum: 60_000,
    description: 'how often the scheduler looks for due jobs',
  }),
  JOB_CONCURRENCY: Type.Integer({
    default: 3,
    minimum: 1,
    maximum: 64,
    description:
      'jobs one instance runs at once; each holds a database connection and may take a second, so at most a third of DATABASE_POOL_MAX',
  }),
  JOB_LEASE_MS: Type.Integer({
    default: 60_000,
    minimum: 1_000,
    maximum: 3_600_000,
    description: 'how long a claimed job is exclusive; a crashed worker’s jobs run again after it',
  }),
  LOOKUP_TTL_SECONDS: Type.Integer({
    default: 900,
    minimum: 60,
    maximum: 86_400,
    description: 'how long a receiver lookup (lookupId) stays usable for quotes',
  }),
  QUOTE_TTL_SECONDS: Type.Integer({
    default: 120,
    minimum: 60,
    maximum: 300,
    description: 'how long a quote stays executable (expiresAt = createdAt + this)',
  }),
  INCOMING_APPROVAL_THRESHOLDS: Type.String({
    default: '',
    pattern: APPROVAL_THRESHOLDS_PATTERN,
    description:
      'per-currency overrides `CUR:minorUnits,...` (e.g. `USD:500000,BTC:1000000`) of the amounts at or above which incoming payments wait for POST /transactions/{id}/approve; defaults are about 10,000 USD worth per currency (docs/payments.md)',
  }),
  INCOMING_APPROVAL_WINDOW_SECONDS: Type.Integer({
    default: 300,
    minimum: 1,
    maximum: 604_800,
    description:
      'how long an incoming payment awaits approval before it FAILs (PAYMENT_APPROVAL_TIMED_OUT); × SANDBOX_TIME_SCALE',
  }),
});

/** What each running instance shares between its workers and RPC handlers, keyed by its ORM. */
const instances = new WeakMap<
  object,
  {
    scheduler: JobScheduler;
    /** Accounts reads (also the external-account directory of receiver lookups). */
    accounts: AccountsPort;
    transfers: TransfersService;
    incoming: IncomingService;
    quotes: QuotesService;
  }
>();

/**
 * Adapters a test (or another deployment) may replace: the accounts reads and
 * ledger, the customer directory and the payment rails. Defaults: gRPC to
 * accounts and identity, the sandbox rail for sandbox platforms and none for
 * production.
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

/** The durable scheduler of a running payments instance. */
export function schedulerOf(orm: MikroORM): JobScheduler | undefined {
  return instances.get(orm)?.scheduler;
}

/** Removes receiver lookups expired for more than a day; reschedules itself hourly. */
const PURGE_LOOKUPS = 'receiver-lookups.purge';

/** The payments service with some adapters replaced (see `PaymentsAdapters`). */
export function createPaymentsService(overrides: PaymentsAdapters = {}): ServiceSpec<typeof config> {
  return {
    name: 'payments',
    schema: 'payments',
    domain: 'payments',
    config,
    entities: [],
    migrations,
    // Workers start before the RPC server, so the scheduler exists when handlers are built.
    workers: ({ orm, clock, logger, outbox, config: c }) => {
      if (c.JOB_CONCURRENCY > maxJobConcurrency(c.DATABASE_POOL_MAX)) {
        // Jobs could hold every connection and wait for more: refuse rather than stall under load.
        throw new Error(
          `JOB_CONCURRENCY=${c.JOB_CONCURRENCY} needs DATABASE_POOL_MAX of at least ${3 * c.JOB_CONCURRENCY} (it is ${c.DATABASE_POOL_MAX})`,
        );
      }
      const scheduler = new JobScheduler(orm, clock, {
        timeScale: c.SANDBOX_TIME_SCALE,
        pollMs: c.JOB_POLL_MS,
        leaseMs: c.JOB_LEASE_MS,
        concurrency: c.JOB_CONCURRENCY,
        logger,
      });
      const lookups = new ReceiverLookupsService(
        orm,
        clock,
        adapters(c.SANDBOX_UMA_DOMAIN),
        c.LOOKUP_TTL_SECONDS * 1000,
      );
      scheduler.register(PURGE_LOOKUPS, async (_job, em) => {
        const purged = await lookups.purgeExpired();
        if (purged) logger.info({ purged }, 'expired receiver lookups purged');
        // The next run: a fresh id per hour, so concurrent replicas schedule it once.
        const hour = Math.floor(clock.now().getTime() / 3_600_000) + 1;
        await scheduler.schedule(
          {
            kind: PURGE_LOOKUPS,
            id: `${PURGE_LOOKUPS}:${hour}`,
            delayMs: hour * 3_600_000 - clock.now().getTime(),
            realTime: true,
          },
          em,
        );
      });
      const accountsClient =
        overrides.accounts && overrides.ledger ? undefined : new AccountsLedgerClient(c.ACCOUNTS_GRPC_URL);
      const identityClient = overrides.customers
        ? undefined
        : new IdentityCustomerDirectory(c.IDENTITY_GRPC_URL);
      const transfers = new TransfersService(orm, clock, {
        accounts: overrides.accounts ?? accountsClient!,
        ledger: overrides.ledger ?? accountsClient!,
        customers: overrides.customers ?? identityClient!,
        rails: {
          SANDBOX: overrides.rails?.SANDBOX ?? new SandboxPaymentRail(),
          PRODUCTION: overrides.rails?.PRODUCTION ?? new UnconfiguredPaymentRail(),
        },
        scheduler,
        outbox,
        logger,
      });
      transfers.registerJobs();
      const unconfigured: PayoutRail = new UnconfiguredPayoutRail();
      const quotePayments = new QuotePaymentsService(orm, clock, {
        ledger: overrides.ledger ?? accountsClient!,
        transfers,
        rails: {
          // Quote payouts follow the specification's quote table (external accounts) and sandbox receivers (UMA).
          SANDBOX: overrides.payoutRails?.SANDBOX ?? {
            account: new SandboxQuoteRail(),
            uma: new SandboxUmaRail(),
          },
          PRODUCTION: overrides.payoutRails?.PRODUCTION ?? { account: unconfigured, uma: unconfigured },
        },
        scheduler,
        logger,
      });
      quotePayments.registerJobs();
      const accountTypes = overrides.accountTypes
        ? undefined
        : new AccountsInternalAccountTypes(c.ACCOUNTS_GRPC_URL);
      const walletSignatures = overrides.walletSignatures
        ? undefined
        : new WalletAuthSignatures(c.WALLET_AUTH_GRPC_URL);
      const quotes = new QuotesService(orm, clock, {
        accountTypes: overrides.accountTypes ?? accountTypes!,
        walletSignatures: overrides.walletSignatures ?? walletSignatures!,
        accounts: overrides.accounts ?? accountsClient!,
        lookups: new ReceiverLookupsService(
          orm,
          clock,
          adapters(c.SANDBOX_UMA_DOMAIN),
          c.LOOKUP_TTL_SECONDS * 1000,
          overrides.accounts ?? accountsClient!,
        ),
        adapters: adapters(c.SANDBOX_UMA_DOMAIN),
        fees: new SandboxFeeSchedule(),
        scheduler,
        ledger: overrides.ledger ?? accountsClient!,
        customers: overrides.customers ?? identityClient!,
        transfers,
        quotePayments,
        ttlMs: c.QUOTE_TTL_SECONDS * 1000,
        logger,
      });
      quotes.registerJobs();
      const incomingDirectory = overrides.incomingDirectory
        ? undefined
        : new GrpcIncomingDirectory(c.IDENTITY_GRPC_URL, c.ACCOUNTS_GRPC_URL);
      const incoming = new IncomingService(
        orm,
        clock,
        {
          approvalThresholds: approvalThresholds(c.INCOMING_APPROVAL_THRESHOLDS),
          approvalWindowMs: c.INCOMING_APPROVAL_WINDOW_SECONDS * 1000,
        },
        {
          transfers,
          directory: overrides.incomingDirectory ?? incomingDirectory!,
          ledger: overrides.ledger ?? accountsClient!,
          rails: {
            SANDBOX: overrides.rails?.SANDBOX ?? new SandboxPaymentRail(),
            PRODUCTION: overrides.rails?.PRODUCTION ?? new UnconfiguredPaymentRail(),
          },
          scheduler,
          logger,
        },
      );
      incoming.registerJobs();
      instances.set(orm, {
        incoming,
        scheduler,
        accounts: overrides.accounts ?? accountsClient!,
        transfers,
        quotes,
      });
      return [
        {
          start: async () => {
            const hour = Math.floor(clock.now().getTime() / 3_600_000);
            await scheduler.schedule({ kind: PURGE_LOOKUPS, id: `${PURGE_LOOKUPS}:${hour}` });
            scheduler.start();
          },
          stop: async () => {
            await scheduler.stop();
            accountsClient?.close();
            accountTypes?.close();
            walletSignatures?.close();
            identityClient?.close();
            incomingDirectory?.close();
          },
        },
      ];
    },
    rpc: ({ orm, clock, logger, config: c }) => {
      const envAdapters = adapters(c.SANDBOX_UMA_DOMAIN);
      const directories: Record<Environment, UmaProviderDirectory> = {
        SANDBOX: new SandboxUmaProviderDirectory(c.SANDBOX_UMA_DOMAIN),
        PRODUCTION: { providers: async () => [] },
      };
      return [
        paymentsRpc({
          lookups: new ReceiverLookupsService(
            orm,
            clock,
            envAdapters,
            c.LOOKUP_TTL_SECONDS * 1000,
            instances.get(orm)!.accounts,
          ),
          adapters: envAdapters,
          fees: new SandboxFeeSchedule(),
          directories,
          transfers: instances.get(orm)!.transfers,
          incoming: instances.get(orm)!.incoming,
          quotes: instances.get(orm)!.quotes,
          logger,
        }),
      ];
    },
  };
}

/**
 * The payments service: exchange rates, fees and quote amounts, receiver
 * lookups (UMA), the UMA provider directory, same-currency transfers and
 * transactions, and the durable scheduler that drives timed transitions.
 */
export const paymentsService: ServiceSpec<typeof config> = createPaymentsService();

/** The incoming payments of a running payments instance. */
export function incomingOf(orm: MikroORM): IncomingService | undefined {
  return instances.get(orm)?.incoming;
}

/** The transfers of a running payments instance (tests drive the state machine through it). */
export function transfersOf(orm: MikroORM): TransfersService | undefined {
  return instances.get(orm)?.transfers;
}

/** Sandbox platforms see the simulated world; production has no rate feed or UMA client configured yet. */
function adapters(sandboxUmaDomain: string): Record<Environment, EnvironmentAdapters> {
  return {
    SANDBOX: { rates: new SandboxExchangeRateProvider(), uma: new SandboxUmaCounterparty(sandboxUmaDomain) },
    PRODUCTION: { rates: new UnconfiguredExchangeRateProvider(), uma: new UnconfiguredUmaCounterparty() },
  };
}
