import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { common, accounts as pb, identity } from '@sluice/contracts';
import type { PromiseClient } from '@sluice/rpc';
import type { RunningService } from '@sluice/runtime';
import { startServices, World, type TestDatabase } from '@sluice/testing';
import { identityService } from '@sluice/identity';
import { accountsService, type AccountsConfig, type AccountsGraph } from '../../src/index.js';

/**
 * The accounts service started in-process against a fresh database and a unique subject prefix,
 * reached over real gRPC, with the real identity service (platforms, their configuration and
 * customers) started beside it. Accounts' consumer of identity's events runs only where a spec
 * asks for it (`consume: true`): elsewhere the synchronous API is under test, and identity's events
 * (a platform's creation provisions its accounts) would only add asynchronous work.
 */
export interface Harness {
  client: PromiseClient<pb.AccountsServiceClient>;
  identity: PromiseClient<identity.IdentityServiceClient>;
  running: RunningService<AccountsConfig, AccountsGraph>;
  /** host:port of the identity service started beside accounts. */
  identityAddress: string;
  db: TestDatabase;
  /** Direct access to the test database (accounts' tables are in schema `accounts`, identity's in `identity`). */
  sql: pg.Pool;
  prefix: string;
  /** The environment of each platform made here. */
  platforms: Map<string, common.Environment>;
  /** Embedded-wallet currencies of each platform that has them (set with `enableEmbeddedWallets`). */
  embeddedWallets: Map<string, string[]>;
  /** A new customer of the platform in identity (an individual named `name`). */
  customer(platformId: string, name?: string): Promise<string>;
  /** A new platform in identity. */
  platform(env?: 'SANDBOX' | 'PRODUCTION'): Promise<string>;
  /** Gives the platform embedded wallets in these currencies (identity's UpdatePlatformConfig). */
  enableEmbeddedWallets(platformId: string, currencies: string[]): Promise<void>;
  stop(): Promise<void>;
}

export async function startHarness(
  label: string,
  opts: { consume?: boolean; env?: Record<string, string> } = {},
): Promise<Harness> {
  const services = await startServices(
    label,
    { identity: identityService, accounts: accountsService },
    {
      // 200 concurrent ledger calls queue for 10 connections; on a loaded machine the wait can pass the 10 s default.
      env: { DATABASE_POOL_MAX: '10', DATABASE_ACQUIRE_TIMEOUT_MS: '60000', ...opts.env },
      ...(opts.consume ? {} : { withoutConsumers: ['accounts' as const] }),
    },
  );
  const client = services.client(pb.AccountsServiceClient, 'accounts', { defaultDeadlineMs: 20_000 });
  const identityClient = services.client(identity.IdentityServiceClient, 'identity');
  const world = new World({ identity: identityClient });
  const platforms = new Map<string, common.Environment>();
  const embeddedWallets = new Map<string, string[]>();

  return {
    client,
    identity: identityClient,
    running: services.running.accounts,
    identityAddress: services.address('identity'),
    db: services.db,
    sql: services.sql,
    prefix: services.prefix,
    platforms,
    embeddedWallets,
    async customer(platformId, name) {
      const c = await world.customer(platformId, {
        ...(name ? { fullName: name } : {}),
        // Production platforms without a UMA domain have no generated addresses.
        umaAddress: `$c${randomBytes(5).toString('hex')}@example.com`,
      });
      return c.id;
    },
    async platform(env = 'SANDBOX') {
      const p = await world.platform(env);
      platforms.set(p.id, env === 'SANDBOX' ? common.Environment.SANDBOX : common.Environment.PRODUCTION);
      return p.id;
    },
    async enableEmbeddedWallets(platformId, currencies) {
      await identityClient.updatePlatformConfig({
        platformId,
        embeddedWalletConfig: { currencies, otpLength: 6, oidcIssuers: [] },
        clearEmbeddedWalletConfig: false,
      });
      embeddedWallets.set(platformId, currencies);
    },
    stop: () => services.stop(),
  };
}

/** Runs `fn` and returns the DomainError it throws (fails the test if it does not throw one). */
export { rejection } from '@sluice/testing';

export const SANDBOX = common.Environment.SANDBOX;
export const PRODUCTION = common.Environment.PRODUCTION;
