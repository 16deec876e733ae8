import { randomBytes, randomInt } from 'node:crypto';
import { accounts, identity, payments as pb, walletAuth } from '@sluice/contracts';
import type { Clock } from '@sluice/core';
import type { PromiseClient } from '@sluice/rpc';
import { germanIban, startServices, World, type WorldPlatform } from '@sluice/testing';
import { accountsService } from '@sluice/accounts';
import { identityService } from '@sluice/identity';
import { walletAuthService } from '@sluice/wallet-auth';
import { definePaymentsService, type PaymentsAdapters } from '../../src/index.js';

/**
 * Payments started in-process with its real neighbours — identity (platforms, customers),
 * accounts (internal and external accounts, the two-phase ledger) and wallet-auth (single-use
 * signing requests) — on one fresh database and subject prefix. Money and single-use assertions
 * read the owning service: balances and holds from accounts, signing requests from wallet-auth.
 * Only outside parties (rails, UMA counterparties) are simulated, by payments' sandbox adapters.
 */
export async function startPaymentsWithNeighbours(
  label: string,
  opts: { env?: Record<string, string>; adapters?: PaymentsAdapters; clock?: Clock } = {},
) {
  const services = await startServices(
    label,
    {
      identity: identityService,
      accounts: accountsService,
      'wallet-auth': walletAuthService,
      payments: definePaymentsService(opts.adapters),
    },
    {
      env: { SANDBOX_UMA_DOMAIN: 'sandbox.sluice.local', DATABASE_POOL_MAX: '10' },
      envOf: {
        'wallet-auth': { WALLET_MASTER_KEY: randomBytes(32).toString('base64') },
        payments: opts.env ?? {},
      },
      ...(opts.clock ? { clock: opts.clock } : {}),
    },
  );
  const identityClient = services.client(identity.IdentityServiceClient, 'identity');
  const accountsClient = services.client(accounts.AccountsServiceClient, 'accounts');
  const walletAuthClient = services.client(walletAuth.WalletAuthServiceClient, 'wallet-auth');
  const world = new World({
    identity: identityClient,
    accounts: accountsClient,
    walletAuth: walletAuthClient,
    sql: services.sql,
  });
  const client: PromiseClient<pb.PaymentsServiceClient> = services.client(
    pb.PaymentsServiceClient,
    'payments',
  );
  return {
    services,
    running: services.running.payments,
    client,
    identity: identityClient,
    accounts: accountsClient,
    walletAuth: walletAuthClient,
    world,
    sql: services.sql,
    stop: () => services.stop(),
  };
}

/** Random digits, for identifiers unique within a test file. */
export const digits = (n: number) => Array.from({ length: n }, () => randomInt(10)).join('');

/**
 * The account info of an external account in `currency` whose primary identifier ends in
 * `suffix` (the sandbox rails read its last 3 digits: 000 settles, 002–007 fail in their ways).
 */
export function accountInfoFor(currency: string, suffix = '000'): accounts.ExternalAccountInfo {
  switch (currency) {
    case 'EUR':
      return {
        accountType: 'EUR_ACCOUNT',
        iban: germanIban(`${digits(10 - suffix.length)}${suffix}`),
      } as accounts.ExternalAccountInfo;
    case 'USD':
      return {
        accountType: 'USD_ACCOUNT',
        accountNumber: `${digits(12 - suffix.length)}${suffix}`,
        routingNumber: '021000021',
      } as accounts.ExternalAccountInfo;
    default:
      throw new Error(`no external account info for ${currency} in these tests`);
  }
}

export type { WorldPlatform };

/**
 * The customers and internal accounts a payments test makes, with who owns what: accounts keeps
 * one account per owner and currency, so each test's money gets an account of its own (of a new
 * customer unless an owner is given).
 */
export class Holders {
  /** The customer owning each internal account made here. */
  readonly ownerOf = new Map<string, string>();
  /** Each customer's platformCustomerId. */
  readonly platformCustomerIdOf = new Map<string, string>();

  /** `world` and `platform` are read when used (a test file makes them in beforeAll). */
  constructor(
    private readonly world: () => World,
    private readonly platform: () => WorldPlatform,
  ) {}

  /** A new customer of the platform in identity. */
  async newCustomer(p: WorldPlatform = this.platform()): Promise<string> {
    const c = await this.world().customer(p.id, { platformCustomerId: `pc-${digits(10)}` });
    this.platformCustomerIdOf.set(c.id, c.platformCustomerId);
    return c.id;
  }

  /** An internal account in `currency` funded with `balance`, of `owner` (null: the platform), by default a new customer. */
  async internal(
    currency = 'USD',
    balance = 1_000_000n,
    opts: { owner?: string | null; platform?: WorldPlatform; type?: 'EMBEDDED_WALLET' } = {},
  ): Promise<string> {
    const p = opts.platform ?? this.platform();
    const owner = opts.owner === undefined ? await this.newCustomer(p) : opts.owner;
    const account = await this.world().internalAccount(p, owner, currency, {
      balance,
      ...(opts.type ? { type: opts.type } : {}),
    });
    if (owner) this.ownerOf.set(account.id, owner);
    return account.id;
  }
}
