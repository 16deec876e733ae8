/**
 * The one-process baseline: the same database work as quote-create + execute
 * (and the settlement that follows), without the gateway and the gRPC hops.
 *
 * Each service is started in this process through its own definition and
 * composition root (libs/runtime `startService` with `serve: false, consume:
 * false`): its own MikroORM on its own schema, migrated, its outbox relay to
 * NATS and its workers (payments' scheduler runs settlement here), built by the
 * same `compose*` function the deployed process uses. Only the adapters differ:
 * payments' and accounts' ports to their neighbours are served by the
 * in-process adapters below, which call the neighbour's app services directly
 * where the gRPC clients would call their RPCs.
 *
 * Not included (they are not part of the request's database work, or belong to
 * the hops): the gateway's Idempotency-Key rows, its credential check, the
 * gRPC request/response mapping, and the event consumers of other services
 * (webhook-dispatcher deliveries, accounts' identity consumer).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { isDomainError } from '@sluice/core';
import { createLogger, currentContext, withContext } from '@sluice/logging';
import { Lifecycle } from '@sluice/rpc';
import { startService } from '@sluice/runtime';
import { dropStreams } from '@sluice/testing';
import { LOCAL_DEV_MASTER_KEYS } from '../stack.js';
// identity
import { identityService } from '../../apps/identity/src/service.js';
import type { CustomersService } from '../../apps/identity/src/app/customers.service.js';
// accounts
import { defineAccountsService } from '../../apps/accounts/src/service.js';
import type { InternalAccountsService } from '../../apps/accounts/src/app/internal-accounts.service.js';
import type { ExternalAccountsService } from '../../apps/accounts/src/app/external-accounts.service.js';
import type { LedgerService } from '../../apps/accounts/src/app/ledger.service.js';
import type { HolderDirectory } from '../../apps/accounts/src/app/ports.js';
import type { ExternalAccountRecord } from '../../apps/accounts/src/domain/external-account.js';
// payments
import { definePaymentsService } from '../../apps/payments/src/service.js';
import type {
  AccountsPort,
  CustomerDirectory,
  CustomerRef,
  ExternalAccountInfo,
  InternalAccountInfo,
  Ledger,
  WalletSignatures,
} from '../../apps/payments/src/app/ports.js';
import { generateCredential } from '../lib/credentials.js';
import {
  eurAccountInfo,
  executeRetryingLater,
  type BenchSystem,
  type PairResult,
  type Payer,
} from './system.js';

/** The async context this module was loaded in: no caller's AsyncLocalStorage stores. */
const outsideAnyCall = AsyncLocalStorage.snapshot();

/**
 * Runs a call into another service as across a process boundary: only the
 * request context (request id, platform id: the gRPC metadata) crosses.
 * Over gRPC the callee starts from a clean context; in one process, anything
 * the caller's async context carries would leak into the callee — MikroORM's
 * transaction context (an AsyncLocalStorage shared by every ORM, all named
 * 'default') would make the callee's `transactional` join a transaction of the
 * caller, on the caller's connection and schema. Payments makes no call while a
 * transaction is open; this keeps the baseline honest should one ever slip in.
 */
function acrossServices<T>(fn: () => Promise<T>): Promise<T> {
  const ctx = currentContext();
  return outsideAnyCall(() => withContext(ctx, fn));
}

/** payments' AccountsPort and Ledger (what its accounts client serves) over the accounts app services. */
class InProcessAccounts implements AccountsPort, Ledger {
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
    return externalInfo(await acrossServices(() => this.external.get(platformId, accountId)));
  }

  /** The benchmark pays external accounts only: no incoming payment ever looks up a receiver's account. */
  async customerAccount(): Promise<InternalAccountInfo | undefined> {
    throw new Error('the baseline has no incoming payments');
  }

  async placeHold(h: Parameters<Ledger['placeHold']>[0]): Promise<{ payee?: ExternalAccountInfo }> {
    const { counter, ...hold } = h;
    const { payee } = await acrossServices(() =>
      this.ledger.placeHold({ ...hold, counterAccount: counter ?? { system: 'SETTLEMENT' } }),
    );
    return payee ? { payee: externalInfo(payee) } : {};
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

/** payments' CustomerDirectory over identity's customers use cases (what GetCustomer calls). */
class InProcessCustomers implements CustomerDirectory, HolderDirectory {
  constructor(private readonly customers: CustomersService) {}

  async platformCustomerId(platformId: string, customerId: string): Promise<string> {
    return (await acrossServices(() => this.customers.get(platformId, customerId))).platformCustomerId;
  }

  /** The benchmark pays external accounts only: no incoming payment ever looks up a receiver. */
  async customerByUmaAddress(): Promise<CustomerRef | undefined> {
    throw new Error('the baseline has no incoming payments');
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
    ...LOCAL_DEV_MASTER_KEYS.identity,
    ...LOCAL_DEV_MASTER_KEYS.accounts,
    ...LOCAL_DEV_MASTER_KEYS.payments,
  };
  const life = new Lifecycle(createLogger('bench-baseline', o.logLevel));
  const close = async () => {
    await life.shutdown();
    await dropStreams(o.natsUrl, o.prefix).catch(() => undefined);
  };
  const inProcess = { lifecycle: life, serve: false, consume: false } as const;
  try {
    const identity = (await startService(identityService, env, inProcess)).graph;
    const customerRepo = identity.customers;
    const customers = new InProcessCustomers(customerRepo);
    const acc = (await startService(defineAccountsService({ holders: customers }), env, inProcess)).graph;
    const internalAccounts = acc.internalAccounts;
    const externalAccounts = acc.externalAccounts;
    const ledgerService = acc.ledger;
    const accountsPort = new InProcessAccounts(internalAccounts, externalAccounts, ledgerService);
    const pay = (
      await startService(
        definePaymentsService({
          accounts: accountsPort,
          ledger: accountsPort,
          customers,
          walletSignatures: noWalletSignatures,
        }),
        o.paymentsPoolMax ? { ...env, DATABASE_POOL_MAX: String(o.paymentsPoolMax) } : env,
        inProcess,
      )
    ).graph;
    const { quoteCreation, quoteExecution } = pay;

    // The platform, as the stack's bootstrap makes it (identity EnsurePlatformCredential).
    const credential = generateCredential();
    const { platform } = await identity.platforms.ensureCredential({
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
          accountInfo: eurAccountInfo(index),
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
            const q = await quoteCreation.create({
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
          // Internal-account sources: the outcome is always the quote, never a signing challenge.
          // Payments' admission refusal is retried as the gateway's 503 with Retry-After 1.
          const { answer, retries } = await executeRetryingLater(
            () =>
              quoteExecution.executeQuote({ platformId, environment: 'SANDBOX', quoteId }).then(
                (outcome) => ({ outcome }),
                (err: unknown) => ({ err }),
              ),
            (a) => ('err' in a && code(a.err) === 'SERVICE_UNAVAILABLE' ? 1_000 : undefined),
          );
          if ('err' in answer)
            return {
              ok: false,
              payer: payer.index,
              createMs: t1 - t0,
              executeMs: performance.now() - t1,
              quoteId,
              error: `execute:${code(answer.err)}`,
              retries,
            };
          const t2 = performance.now();
          return {
            ok: true,
            payer: payer.index,
            createMs: t1 - t0,
            executeMs: t2 - t1,
            quoteId,
            sent: answer.outcome.quote!.amounts.totalSendingAmount,
            retries,
          };
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

/** An external account as payments' port gives it (what its gRPC client maps). */
function externalInfo(a: ExternalAccountRecord): ExternalAccountInfo {
  return {
    id: a.id,
    currency: a.currency,
    ...(a.customerId ? { customerId: a.customerId } : {}),
    status: a.status,
    accountType: a.accountInfo.accountType,
    primaryIdentifier: a.primaryIdentifier,
    paymentRails: a.accountInfo.paymentRails ?? [],
  };
}
