import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { expect } from 'vitest';
import { accounts as accountsPb, identity, walletAuth } from '@sluice/contracts';
import { ManualClock, isDomainError, newId, type DomainError } from '@sluice/core';
import type { PromiseClient } from '@sluice/rpc';
import { startServices, World, type TestDatabase, type WorldPlatform } from '@sluice/testing';
import { accountsService } from '@sluice/accounts';
import { identityService } from '@sluice/identity';
import { walletAuthService } from '../../src/index.js';

export type WalletAuthClient = PromiseClient<walletAuth.WalletAuthServiceClient>;

/** The embedded-wallet configuration a platform gets unless a test gives another: USDC wallets, 6-digit OTPs. */
const DEFAULT_WALLET: identity.EmbeddedWalletConfig = { currencies: ['USDC'], otpLength: 6, oidcIssuers: [] };

export interface Harness {
  client: WalletAuthClient;
  /** The real identity service wallet-auth asks for platforms, their embedded-wallet config and customers. */
  identity: PromiseClient<identity.IdentityServiceClient>;
  /** The real accounts service (started with `accounts: true`): embedded-wallet internal accounts. */
  accounts: PromiseClient<accountsPb.AccountsServiceClient> | undefined;
  world: World;
  clock: ManualClock;
  /** A connection to the test database with search_path wallet_auth. */
  sql: pg.Client;
  db: TestDatabase;
  /** host:port of wallet-auth and of identity. */
  address: string;
  identityAddress: string;
  /** host:port of accounts (started with `accounts: true`). */
  accountsAddress: string | undefined;
  /** A new platform in identity with embedded wallets (`wallet` over the defaults). */
  platform(environment: 'SANDBOX' | 'PRODUCTION', wallet?: Partial<identity.EmbeddedWalletConfig>): Promise<WorldPlatform>;
  /** Changes part of a platform's embedded-wallet config (identity's UpdatePlatformConfig). */
  setWallet(platformId: string, wallet: Partial<identity.EmbeddedWalletConfig>): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts wallet-auth in-process on a fresh database with the real identity service (and, with
 * `accounts: true`, the real accounts service) beside it, all on one manual clock.
 */
export async function startWalletAuth(
  label: string,
  env: Record<string, string> = {},
  opts: { accounts?: boolean } = {},
): Promise<Harness> {
  const clock = new ManualClock(Date.now());
  const services = await startServices(
    `walletauth${label}`,
    {
      identity: identityService,
      ...(opts.accounts ? { accounts: accountsService } : {}),
      'wallet-auth': walletAuthService,
    },
    {
      clock,
      envOf: { 'wallet-auth': { WALLET_MASTER_KEY: randomBytes(32).toString('base64'), ...env } },
      // Accounts' provisioning from identity's events is not what these tests look at.
      withoutConsumers: ['accounts'],
    },
  );
  const client = services.client(walletAuth.WalletAuthServiceClient, 'wallet-auth');
  const identityClient = services.client(identity.IdentityServiceClient, 'identity');
  const accountsClient = opts.accounts ? services.client(accountsPb.AccountsServiceClient, 'accounts') : undefined;
  const world = new World({ identity: identityClient, ...(accountsClient ? { accounts: accountsClient } : {}), sql: services.sql });
  const sql = new pg.Client({ connectionString: services.db.url });
  await sql.connect();
  await sql.query('SET search_path TO wallet_auth');
  const setWallet = async (platformId: string, wallet: Partial<identity.EmbeddedWalletConfig>) => {
    const { config } = await identityClient.getPlatformConfig({ platformId });
    await identityClient.updatePlatformConfig({
      platformId,
      embeddedWalletConfig: { ...(config!.embeddedWalletConfig ?? DEFAULT_WALLET), ...wallet },
      clearEmbeddedWalletConfig: false,
    });
  };
  return {
    client,
    identity: identityClient,
    accounts: accountsClient,
    world,
    clock,
    sql,
    db: services.db,
    address: services.address('wallet-auth'),
    identityAddress: services.address('identity'),
    accountsAddress: opts.accounts ? services.address('accounts') : undefined,
    async platform(environment, wallet = {}) {
      const p = await world.platform(environment);
      await identityClient.updatePlatformConfig({
        platformId: p.id,
        embeddedWalletConfig: { ...DEFAULT_WALLET, ...wallet },
        clearEmbeddedWalletConfig: false,
      });
      return p;
    },
    setWallet,
    async stop() {
      await sql.end();
      await services.stop();
    },
  };
}

/** Awaits a call expected to fail with a DomainError of `code`; returns it. */
export async function rejects(p: Promise<unknown>, code: string): Promise<DomainError> {
  try {
    await p;
  } catch (err) {
    if (!isDomainError(err)) throw err;
    expect(err.code, err.message).toBe(code);
    return err;
  }
  throw new Error(`expected ${code}, the call succeeded`);
}

export const newAccountId = () => newId('InternalAccount');
