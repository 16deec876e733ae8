import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { expect } from 'vitest';
import { common, accounts as accountsPb, identity, walletAuth } from '@sluice/contracts';
import { DomainError, ManualClock, isDomainError, newId } from '@sluice/core';
import { createLogger } from '@sluice/logging';
import type { ServiceDefinition } from '@grpc/grpc-js';
import { createRpcClient, implement, startRpcServer, type AsyncService, type PromiseClient, type RpcServer } from '@sluice/rpc';
import { startService } from '@sluice/runtime';
import { createTestDatabase, dropStreams, natsUrl, testPrefix, type TestDatabase } from '@sluice/testing';
import { walletAuthService } from '../../src/index.js';

export type WalletAuthClient = PromiseClient<walletAuth.WalletAuthServiceClient>;

/** An in-test gRPC server of one service: `handlers()` answer, every other method is UNIMPLEMENTED. */
abstract class FakeServer<S> {
  private server: RpcServer | undefined;

  constructor(
    private readonly definition: ServiceDefinition,
    private readonly name: string,
  ) {}

  protected abstract handlers(): Partial<AsyncService<S>>;

  get address(): string {
    return `127.0.0.1:${this.server!.port}`;
  }

  async start(): Promise<this> {
    const logger = createLogger(this.name, 'silent');
    const unimplemented = async () => {
      throw new DomainError('UNIMPLEMENTED', 'NOT_IMPLEMENTED', 'not in the fake');
    };
    const all = { ...Object.fromEntries(Object.keys(this.definition).map((m) => [m, unimplemented])), ...this.handlers() } as AsyncService<S>;
    this.server = await startRpcServer({ host: '127.0.0.1', port: 0, services: [implement<S>(this.definition, all, logger)], logger });
    return this;
  }

  async stop(): Promise<void> {
    await this.server?.shutdown(100);
  }
}

/** An in-test identity gRPC server answering GetPlatformConfig, AuthenticateToken and GetCustomer from maps. */
export class FakeIdentity extends FakeServer<identity.IdentityServiceServer> {
  readonly configs = new Map<string, identity.PlatformConfig>();
  /** API tokens (tokenId → secret, platform) for gateway tests. */
  readonly tokens = new Map<string, { secret: string; platformId: string }>();
  /** customerId → email. */
  readonly customers = new Map<string, string | undefined>();

  constructor() {
    super(identity.IdentityServiceService, 'fake-identity');
  }

  addPlatform(environment: 'SANDBOX' | 'PRODUCTION', wallet: Partial<identity.EmbeddedWalletConfig> = {}): string {
    const platformId = newId('Platform');
    this.configs.set(platformId, {
      id: `PlatformConfig:${platformId.split(':')[1]}`,
      platformId,
      environment: environment === 'SANDBOX' ? common.Environment.SANDBOX : common.Environment.PRODUCTION,
      supportedCurrencies: [],
      embeddedWalletConfig: { currencies: ['USDC'], otpLength: 6, oidcIssuers: [], ...wallet },
      webhookSigningSecret: 'whsec_x',
      isRegulatedFinancialInstitution: false,
    } as identity.PlatformConfig);
    return platformId;
  }

  setWallet(platformId: string, wallet: Partial<identity.EmbeddedWalletConfig>): void {
    const c = this.configs.get(platformId)!;
    c.embeddedWalletConfig = { ...c.embeddedWalletConfig!, ...wallet };
  }

  protected handlers(): Partial<AsyncService<identity.IdentityServiceServer>> {
    return {
      authenticateToken: async (req) => {
        const t = this.tokens.get(req.tokenId);
        if (!t || t.secret !== req.clientSecret) throw new DomainError('UNAUTHENTICATED', 'UNAUTHORIZED', 'Invalid or missing API credentials');
        return {
          tokenId: req.tokenId,
          platform: { id: t.platformId, name: 'p', environment: this.configs.get(t.platformId)!.environment, createdAt: new Date() },
          permissions: [identity.Permission.VIEW, identity.Permission.TRANSACT, identity.Permission.MANAGE],
        };
      },
      getCustomer: async (req) => {
        if (!this.customers.has(req.customerId)) throw new DomainError('NOT_FOUND', 'CUSTOMER_NOT_FOUND', 'no such customer');
        const email = this.customers.get(req.customerId);
        return { customer: identity.Customer.fromPartial({ id: req.customerId, platformId: req.platformId, ...(email ? { email } : {}) }) };
      },
      getPlatformConfig: async (req) => {
        const config = this.configs.get(req.platformId);
        if (!config) throw new DomainError('NOT_FOUND', 'PLATFORM_NOT_FOUND', 'no such platform');
        return { config };
      },
    };
  }
}

export interface Harness {
  client: WalletAuthClient;
  identity: FakeIdentity;
  clock: ManualClock;
  sql: pg.Client;
  db: TestDatabase;
  address: string;
  stop(): Promise<void>;
}

/** Starts wallet-auth in-process on a fresh database with a fake identity service. */
export async function startWalletAuth(label: string, env: Record<string, string> = {}): Promise<Harness> {
  const db = await createTestDatabase(`walletauth${label}`);
  const prefix = testPrefix(label);
  const nats = await natsUrl();
  const fake = await new FakeIdentity().start();
  const clock = new ManualClock(Date.now());
  const svc = await startService(
    walletAuthService,
    {
      DATABASE_URL: db.url,
      NATS_URL: nats,
      EVENT_SUBJECT_PREFIX: prefix,
      GRPC_PORT: '0',
      LOG_LEVEL: 'silent',
      IDENTITY_GRPC_URL: fake.address,
      WALLET_MASTER_KEY: randomBytes(32).toString('base64'),
      ...env,
    },
    { clock },
  );
  const address = `127.0.0.1:${svc.port}`;
  const client = createRpcClient(walletAuth.WalletAuthServiceClient, address);
  const sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  await sql.query('SET search_path TO wallet_auth');
  return {
    client,
    identity: fake,
    clock,
    sql,
    db,
    address,
    async stop() {
      client.close();
      await sql.end();
      await svc.stop();
      await fake.stop();
      await dropStreams(nats, prefix);
      await db.drop();
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

/** An in-test accounts gRPC server answering GetInternalAccount from a map. */
export class FakeAccounts extends FakeServer<accountsPb.AccountsServiceServer> {
  readonly accounts = new Map<string, { platformId: string; customerId?: string; type: accountsPb.InternalAccountType; privateEnabled?: boolean }>();

  constructor() {
    super(accountsPb.AccountsServiceService, 'fake-accounts');
  }

  add(platformId: string, customerId: string | undefined, type = accountsPb.InternalAccountType.EMBEDDED_WALLET): string {
    const id = newId('InternalAccount');
    this.accounts.set(id, { platformId, customerId, type });
    return id;
  }

  protected handlers(): Partial<AsyncService<accountsPb.AccountsServiceServer>> {
    return {
      getInternalAccount: async (req) => {
        const a = this.accounts.get(req.accountId);
        if (!a || a.platformId !== req.platformId) throw new DomainError('NOT_FOUND', 'INTERNAL_ACCOUNT_NOT_FOUND', `Internal account ${req.accountId} not found`);
        return { account: accountsPb.InternalAccount.fromPartial({ id: req.accountId, platformId: a.platformId, ...(a.customerId ? { customerId: a.customerId } : {}), type: a.type, currency: 'USDC' }) };
      },
      updateInternalAccount: async (req) => {
        const a = this.accounts.get(req.accountId)!;
        a.privateEnabled = req.privateEnabled;
        return {
          account: accountsPb.InternalAccount.fromPartial({
            id: req.accountId, platformId: a.platformId, customerId: a.customerId, type: a.type, currency: 'USDC',
            privateEnabled: a.privateEnabled, createdAt: new Date(), updatedAt: new Date(),
            balance: { amount: 0n, currency: { code: 'USDC', name: 'USD Coin', symbol: 'USDC', decimals: 6 } },
          }),
        };
      },
    };
  }
}
