/**
 * The one-process baseline: the same database work as quote-create + execute
 * (and the settlement that follows), without the gateway and the gRPC hops.
 *
 * In this one process, each service keeps its own MikroORM on its own schema,
 * opened and migrated exactly as libs/runtime `startService` does (the spec's
 * schema, entities, EVENT_TABLES_MIGRATION + migrations, DATABASE_POOL_MAX and
 * the other settings from the service's own config schema), its own Outbox
 * and OutboxRelay to NATS:
 *   - payments: QuotesService, QuotePaymentsService, TransfersService,
 *     JobScheduler (settlement jobs run here), ReceiverLookupsService, wired as
 *     the `workers` of apps/payments/src/service.ts wire them;
 *   - accounts: LedgerService, InternalAccountsService, ExternalAccountsService;
 *   - identity: the customer repository (payments' CustomerDirectory reads it).
 * Payments' ports are served by the in-process adapters below, which call the
 * accounts (and identity) app services directly where the gRPC clients of
 * apps/payments/src/rpc would call their RPCs.
 *
 * Not included (they are not part of the request's database work, or belong to
 * the hops): the gateway's Idempotency-Key rows, its credential check, the
 * gRPC request/response mapping, and the event consumers of other services
 * (webhook-dispatcher deliveries, accounts' identity consumer).
 *
 * ALL the glue between the apps lives in this file, so a change of payments'
 * ports (apps/payments/src/app/ports.ts, the InternalAccountTypes /
 * WalletSignatures interfaces of quotes.service.ts) or of the QuotesService
 * wiring is adapted here only. Written against the ports of commit cd691a6.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '@sluice/config';
import { isDomainError, systemClock } from '@sluice/core';
import {
  connectBus,
  ensureStreams,
  EVENT_TABLES_MIGRATION,
  Outbox,
  OutboxRelay,
  type Bus,
  type Domain,
} from '@sluice/events';
import { createLogger, currentContext, withContext, type Logger } from '@sluice/logging';
import { serviceConfigSchema, type ServiceSpec } from '@sluice/runtime';
import { migrate, openStore, type MikroORM } from '@sluice/store';
import { dropStreams } from '@sluice/testing';
// identity
import { identityService } from '../../apps/identity/src/service.js';
import { PlatformRepository } from '../../apps/identity/src/store/platform.repository.js';
import { CustomerRepository } from '../../apps/identity/src/store/customer.repository.js';
// accounts
import { accountsService } from '../../apps/accounts/src/service.js';
import { InternalAccountsService } from '../../apps/accounts/src/app/internal-accounts.service.js';
import { ExternalAccountsService } from '../../apps/accounts/src/app/external-accounts.service.js';
import { LedgerService } from '../../apps/accounts/src/app/ledger.service.js';
import type { HolderDirectory } from '../../apps/accounts/src/app/holder-directory.js';
import {
  ProductionBeneficiaryVerifier,
  SandboxBeneficiaryVerifier,
} from '../../apps/accounts/src/domain/beneficiary-verification.js';
import { validateAccountInfo } from '../../apps/accounts/src/domain/external-account.js';
// payments
import { paymentsService } from '../../apps/payments/src/service.js';
import type { AccountsPort, CustomerDirectory, Ledger } from '../../apps/payments/src/app/ports.js';
import {
  QuotesService,
  type InternalAccountType,
  type InternalAccountTypes,
  type WalletSignatures,
} from '../../apps/payments/src/app/quotes.service.js';
import { TransfersService } from '../../apps/payments/src/app/transfers.service.js';
import { QuotePaymentsService } from '../../apps/payments/src/app/quote-payments.service.js';
import {
  ReceiverLookupsService,
  type Environment,
  type EnvironmentAdapters,
  type ExternalAccountDirectory,
} from '../../apps/payments/src/app/receiver-lookups.service.js';
import { JobScheduler } from '../../apps/payments/src/store/job-scheduler.js';
import {
  SandboxQuoteRail,
  SandboxUmaRail,
  UnconfiguredPayoutRail,
} from '../../apps/payments/src/domain/quote-rail.js';
import { SandboxPaymentRail, UnconfiguredPaymentRail } from '../../apps/payments/src/domain/payment-rail.js';
import {
  SandboxExchangeRateProvider,
  UnconfiguredExchangeRateProvider,
} from '../../apps/payments/src/domain/exchange-rates.js';
import { SandboxUmaCounterparty, UnconfiguredUmaCounterparty } from '../../apps/payments/src/domain/uma.js';
import { SandboxFeeSchedule } from '../../apps/payments/src/domain/pricing.js';
import { generateCredential } from '../lib/credentials.js';
import { eurAccountInfo, type BenchSystem, type PairResult, type Payer } from './system.js';

/** The async context this module was loaded in: no caller's AsyncLocalStorage stores. */
const outsideAnyCall = AsyncLocalStorage.snapshot();

/**
 * Runs a call into another service as across a process boundary: only the
 * request context (request id, platform id: the gRPC metadata) crosses.
 * Over gRPC the callee works on its own connection whatever transaction the
 * caller holds open (the settle job calls PostHold inside the job's
 * transaction); in one process, MikroORM's transaction context (an
 * AsyncLocalStorage shared by every ORM, all named 'default') would make the
 * callee's `transactional` join the caller's transaction, on the caller's
 * connection and schema.
 */
function acrossServices<T>(fn: () => Promise<T>): Promise<T> {
  const ctx = currentContext();
  return outsideAnyCall(() => withContext(ctx, fn));
}

/** payments' AccountsPort, Ledger, InternalAccountTypes and lookups' ExternalAccountDirectory over the accounts app services. */
class InProcessAccounts implements AccountsPort, Ledger, InternalAccountTypes, ExternalAccountDirectory {
  constructor(
    private readonly internal: InternalAccountsService,
    private readonly external: ExternalAccountsService,
    private readonly ledger: LedgerService,
  ) {}

  async getInternalAccount(platformId: string, accountId: string) {
    const a = await acrossServices(() => this.internal.get(platformId, accountId));
    return {
      id: a.id,
      currency: a.currency,
      ...(a.customerId ? { customerId: a.customerId } : {}),
      type: a.type,
    };
  }

  async getExternalAccount(platformId: string, accountId: string) {
    const a = await acrossServices(() => this.external.get(platformId, accountId));
    return {
      id: a.id,
      currency: a.currency,
      ...(a.customerId ? { customerId: a.customerId } : {}),
      status: a.status,
      accountType: a.accountInfo.accountType,
      primaryIdentifier: a.primaryIdentifier,
    };
  }

  async typeOf(platformId: string, accountId: string): Promise<InternalAccountType> {
    return (await acrossServices(() => this.internal.get(platformId, accountId))).type;
  }

  async placeHold(h: Parameters<Ledger['placeHold']>[0]): Promise<void> {
    const { counter, ...hold } = h;
    await acrossServices(() =>
      this.ledger.placeHold({ ...hold, counterAccount: counter ?? { system: 'SETTLEMENT' } }),
    );
  }

  async postHold(h: Parameters<Ledger['postHold']>[0]): Promise<void> {
    await acrossServices(() => this.ledger.postHold(h));
  }

  async voidHold(h: Parameters<Ledger['voidHold']>[0]): Promise<void> {
    await acrossServices(() => this.ledger.voidHold(h));
  }

  async creditFromOutside(c: Parameters<Ledger['creditFromOutside']>[0]): Promise<void> {
    await acrossServices(() =>
      this.ledger.postTransfer({
        platformId: c.platformId,
        entryId: c.entryId,
        lines: [
          { account: { internalAccountId: c.accountId }, currency: c.currency, amount: c.amount },
          { account: { system: 'SETTLEMENT' }, currency: c.currency, amount: -c.amount },
        ],
        kind: c.kind,
        ...(c.description ? { description: c.description } : {}),
      }),
    );
  }

  async postEntry(e: Parameters<Ledger['postEntry']>[0]): Promise<void> {
    await acrossServices(() =>
      this.ledger.postTransfer({
        platformId: e.platformId,
        entryId: e.entryId,
        lines: e.lines.map((l) => ({ account: l.account, currency: l.currency, amount: l.amount })),
        kind: e.kind,
        ...(e.description ? { description: e.description } : {}),
      }),
    );
  }
}

/** payments' CustomerDirectory over identity's customer repository (the read GetCustomer makes). */
class InProcessCustomers implements CustomerDirectory, HolderDirectory {
  constructor(private readonly customers: CustomerRepository) {}

  async platformCustomerId(platformId: string, customerId: string): Promise<string> {
    return (await acrossServices(() => this.customers.get(platformId, customerId))).platformCustomerId;
  }

  async customer(platformId: string, customerId: string) {
    const c = await acrossServices(() => this.customers.get(platformId, customerId));
    return c.deletedAt ? undefined : { name: c.fullName ?? c.businessInfo?.legalName };
  }

  async platformName(): Promise<string | undefined> {
    return 'Bench platform';
  }
}

/** The benchmark's payers are INTERNAL_FIAT accounts: no wallet signature is ever asked for. */
const noWalletSignatures: WalletSignatures = {
  challenge: () => Promise.reject(new Error('the baseline has no wallet-auth')),
  verify: () => Promise.reject(new Error('the baseline has no wallet-auth')),
};

/** As apps/payments/src/service.ts `adapters`: sandbox platforms see the simulated world. */
function environmentAdapters(umaDomain: string): Record<Environment, EnvironmentAdapters> {
  return {
    SANDBOX: { rates: new SandboxExchangeRateProvider(), uma: new SandboxUmaCounterparty(umaDomain) },
    PRODUCTION: { rates: new UnconfiguredExchangeRateProvider(), uma: new UnconfiguredUmaCounterparty() },
  };
}

interface Opened {
  orm: MikroORM;
  outbox: Outbox;
  logger: Logger;
  config: Record<string, unknown>;
}

/** A service's store as libs/runtime startService opens it: its config, schema, migrations, outbox, relay. */
async function openService(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- every service's spec, whatever its config
  spec: ServiceSpec<any>,
  env: Record<string, string>,
  bus: Bus,
  relays: OutboxRelay[],
): Promise<Opened> {
  const config = loadConfig(serviceConfigSchema(spec.name, spec.config), env) as Record<string, unknown>;
  const logger = createLogger(`${spec.name} (in-process)`, config.LOG_LEVEL as string);
  const orm = await openStore({
    databaseUrl: config.DATABASE_URL as string,
    schema: spec.schema,
    entities: spec.entities,
    migrations: [EVENT_TABLES_MIGRATION, ...spec.migrations],
    poolMax: config.DATABASE_POOL_MAX as number,
    logger,
  });
  await migrate(orm, spec.schema, logger);
  const relay = new OutboxRelay(orm, bus.js, logger);
  relay.start();
  relays.push(relay);
  return {
    orm,
    outbox: new Outbox(config.EVENT_SUBJECT_PREFIX as string, spec.domain as Domain),
    logger,
    config,
  };
}

export async function startInProcessSystem(o: {
  databaseUrl: string;
  databaseName: string;
  natsUrl: string;
  prefix: string;
  timeScale: number;
  logLevel: string;
  /** DATABASE_POOL_MAX of payments (default: the service's). */
  paymentsPoolMax?: number;
}): Promise<BenchSystem> {
  const env = {
    DATABASE_URL: o.databaseUrl,
    NATS_URL: o.natsUrl,
    EVENT_SUBJECT_PREFIX: o.prefix,
    SANDBOX_TIME_SCALE: String(o.timeScale),
    LOG_LEVEL: o.logLevel,
  };
  const bus = await connectBus(o.natsUrl, 'sluice-bench-baseline');
  await ensureStreams(bus.jsm, o.prefix);
  const relays: OutboxRelay[] = [];
  const opened: Opened[] = [];
  let scheduler: JobScheduler | undefined;
  const close = async () => {
    await scheduler?.stop();
    for (const r of relays) await r.stop();
    for (const s of opened) await s.orm.close();
    await bus.close();
    await dropStreams(o.natsUrl, o.prefix).catch(() => undefined);
  };
  try {
    const clock = systemClock;
    // identity
    const identity = await openService(identityService, env, bus, relays);
    opened.push(identity);
    const platforms = new PlatformRepository(identity.orm, identity.outbox, clock);
    const customerRepo = new CustomerRepository(
      identity.orm,
      identity.outbox,
      clock,
      platforms,
      identity.config.SANDBOX_UMA_DOMAIN as string,
    );
    const customers = new InProcessCustomers(customerRepo);
    // accounts (as apps/accounts/src/service.ts builds its RPC handlers' services)
    const acc = await openService(accountsService, env, bus, relays);
    opened.push(acc);
    const internalAccounts = new InternalAccountsService(acc.orm, clock);
    const ledgerService = new LedgerService(acc.orm, clock, acc.outbox);
    const externalAccounts = new ExternalAccountsService(acc.orm, clock, acc.outbox, customers, {
      SANDBOX: new SandboxBeneficiaryVerifier(),
      PRODUCTION: new ProductionBeneficiaryVerifier(),
    });
    const accountsPort = new InProcessAccounts(internalAccounts, externalAccounts, ledgerService);
    // payments (as the `workers` of apps/payments/src/service.ts wire them)
    const pay = await openService(
      paymentsService,
      o.paymentsPoolMax ? { ...env, DATABASE_POOL_MAX: String(o.paymentsPoolMax) } : env,
      bus,
      relays,
    );
    opened.push(pay);
    const c = pay.config;
    scheduler = new JobScheduler(pay.orm, clock, {
      timeScale: c.SANDBOX_TIME_SCALE as number,
      pollMs: c.JOB_POLL_MS as number,
      leaseMs: c.JOB_LEASE_MS as number,
      concurrency: c.JOB_CONCURRENCY as number,
      logger: pay.logger,
    });
    const umaDomain = c.SANDBOX_UMA_DOMAIN as string;
    const lookupTtlMs = (c.LOOKUP_TTL_SECONDS as number) * 1000;
    const transfers = new TransfersService(pay.orm, clock, {
      accounts: accountsPort,
      ledger: accountsPort,
      customers,
      rails: { SANDBOX: new SandboxPaymentRail(), PRODUCTION: new UnconfiguredPaymentRail() },
      scheduler,
      outbox: pay.outbox,
      logger: pay.logger,
    });
    transfers.registerJobs();
    const unconfigured = new UnconfiguredPayoutRail();
    const quotePayments = new QuotePaymentsService(pay.orm, clock, {
      ledger: accountsPort,
      transfers,
      rails: {
        SANDBOX: { account: new SandboxQuoteRail(), uma: new SandboxUmaRail() },
        PRODUCTION: { account: unconfigured, uma: unconfigured },
      },
      scheduler,
      logger: pay.logger,
    });
    quotePayments.registerJobs();
    const quotes = new QuotesService(pay.orm, clock, {
      accountTypes: accountsPort,
      walletSignatures: noWalletSignatures,
      accounts: accountsPort,
      lookups: new ReceiverLookupsService(
        pay.orm,
        clock,
        environmentAdapters(umaDomain),
        lookupTtlMs,
        accountsPort,
      ),
      adapters: environmentAdapters(umaDomain),
      fees: new SandboxFeeSchedule(),
      scheduler,
      ledger: accountsPort,
      customers,
      transfers,
      quotePayments,
      ttlMs: (c.QUOTE_TTL_SECONDS as number) * 1000,
      logger: pay.logger,
    });
    quotes.registerJobs();
    scheduler.start();

    // The platform, as the stack's bootstrap makes it (identity EnsurePlatformCredential).
    const credential = generateCredential();
    const { platform } = await platforms.ensureCredential({
      environment: 'SANDBOX',
      tokenId: credential.tokenId,
      clientSecret: credential.clientSecret,
      platformName: 'Bench platform',
    });
    const platformId = platform.id;
    const code = (err: unknown) =>
      isDomainError(err) ? err.code : `${(err as Error).name}: ${(err as Error).message?.slice(0, 80)}`;

    return {
      name: 'baseline',
      databaseUrl: o.databaseUrl,
      databaseName: o.databaseName,
      platformId,
      cpuRoots: () => new Map([[process.pid, 'bench (in-process baseline + load generator)']]),
      async createPayer(index: number, fund: bigint): Promise<Payer> {
        // What POST /customers, POST /customers/external-accounts and the sandbox fund route do.
        const { customer } = await customerRepo.create(platformId, {
          customerType: 'INDIVIDUAL',
          platformCustomerId: `bench-${index}`,
          fullName: `Bench Payer ${index}`,
          currencies: ['USD'],
        });
        const [account] = await internalAccounts.ensure(
          { platformId, owner: 'CUSTOMER', customerId: customer.id },
          ['USD'],
          'SANDBOX',
        );
        const ext = await externalAccounts.create({
          platformId,
          environment: 'SANDBOX',
          customerId: customer.id,
          currency: 'EUR',
          validated: validateAccountInfo('EUR', eurAccountInfo(index), clock.now()),
          defaultUmaDepositAccount: false,
        });
        const funded = await ledgerService.sandboxFund(platformId, account!.id, fund, `bench-fund-${index}`);
        return {
          index,
          customerId: customer.id,
          accountId: account!.id,
          externalAccountId: ext.id,
          funded: funded.account.postedBalance,
        };
      },
      pair(payer: Payer, amount: number): Promise<PairResult> {
        return withContext({ requestId: randomUUID(), platformId }, async () => {
          const t0 = performance.now();
          let quoteId: string;
          try {
            const q = await quotes.create({
              platformId,
              environment: 'SANDBOX',
              source: { kind: 'ACCOUNT', accountId: payer.accountId },
              destination: { kind: 'ACCOUNT', accountId: payer.externalAccountId },
              lockedCurrencySide: 'SENDING',
              lockedCurrencyAmount: BigInt(amount),
              senderCustomerInfo: {},
            });
            quoteId = q.id;
          } catch (err) {
            return {
              ok: false,
              payer: payer.index,
              createMs: performance.now() - t0,
              error: `create:${code(err)}`,
            };
          }
          const t1 = performance.now();
          try {
            // Internal-account sources: the outcome is always the quote, never a signing challenge.
            const { quote: q } = await quotes.execute(platformId, 'SANDBOX', quoteId);
            const t2 = performance.now();
            return {
              ok: true,
              payer: payer.index,
              createMs: t1 - t0,
              executeMs: t2 - t1,
              quoteId,
              sent: q!.amounts.totalSendingAmount,
            };
          } catch (err) {
            return {
              ok: false,
              payer: payer.index,
              createMs: t1 - t0,
              executeMs: performance.now() - t1,
              quoteId,
              error: `execute:${code(err)}`,
            };
          }
        });
      },
      async reconcile() {
        const r = await ledgerService.reconcile(platformId);
        return {
          consistent: r.consistent,
          detail: JSON.stringify(r, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)),
        };
      },
      close,
    };
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
}
