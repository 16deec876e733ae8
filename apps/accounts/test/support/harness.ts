import { Server, ServerCredentials, status, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import pg from 'pg';
import { common, accounts as pb, identity } from '@sluice/contracts';
import { isDomainError, newId, type DomainError } from '@sluice/core';
import { createRpcClient, type PromiseClient } from '@sluice/rpc';
import { startService, type RunningService } from '@sluice/runtime';
import { createTestDatabase, dropStreams, natsUrl, testPrefix, type TestDatabase } from '@sluice/testing';
import { accountsService, type AccountsConfig, type AccountsGraph } from '../../src/index.js';

/**
 * The accounts service started in-process against a fresh database and a unique
 * subject prefix, reached over real gRPC, with a stand-in identity service that
 * answers GetPlatform for the platforms registered here.
 */
export interface Harness {
  client: PromiseClient<pb.AccountsServiceClient>;
  running: RunningService<AccountsConfig, AccountsGraph>;
  db: TestDatabase;
  /** Direct access to the test database (tables are in schema `accounts`). */
  sql: pg.Pool;
  prefix: string;
  platforms: Map<string, common.Environment>;
  /** Embedded-wallet currencies per platform (GetPlatformConfig of the stand-in identity). */
  embeddedWallets: Map<string, string[]>;
  /** Customers known to the stand-in identity service (GetCustomer). */
  customers: Map<string, { platformId: string; name?: string; deleted?: boolean }>;
  /** A new customer of the platform, known to the stand-in identity service. */
  customer(platformId: string, name?: string): string;
  /** A new platform known to the stand-in identity service. */
  platform(env?: 'SANDBOX' | 'PRODUCTION'): string;
  stop(): Promise<void>;
}

export async function startHarness(label: string): Promise<Harness> {
  const db = await createTestDatabase(label);
  const prefix = testPrefix(label);
  const nats = await natsUrl();
  const platforms = new Map<string, common.Environment>();
  const embeddedWallets = new Map<string, string[]>();
  const customers = new Map<string, { platformId: string; name?: string; deleted?: boolean }>();

  const identityServer = new Server();
  identityServer.addService(identity.IdentityServiceService, {
    getPlatform: (
      call: ServerUnaryCall<identity.GetPlatformRequest, identity.GetPlatformResponse>,
      cb: sendUnaryData<identity.GetPlatformResponse>,
    ) => {
      const env = platforms.get(call.request.platformId);
      if (!env) return cb({ code: status.NOT_FOUND, details: 'no such platform' });
      cb(null, {
        platform: { id: call.request.platformId, name: 'test', environment: env, createdAt: new Date() },
      });
    },
    getPlatformConfig: (
      call: ServerUnaryCall<identity.GetPlatformConfigRequest, identity.GetPlatformConfigResponse>,
      cb: sendUnaryData<identity.GetPlatformConfigResponse>,
    ) => {
      const env = platforms.get(call.request.platformId);
      if (!env) return cb({ code: status.NOT_FOUND, details: 'no such platform' });
      const currencies = embeddedWallets.get(call.request.platformId);
      cb(null, {
        config: identity.PlatformConfig.fromPartial({
          platformId: call.request.platformId,
          environment: env,
          ...(currencies ? { embeddedWalletConfig: { currencies, otpLength: 6, oidcIssuers: [] } } : {}),
        }),
      });
    },
    getCustomer: (
      call: ServerUnaryCall<identity.GetCustomerRequest, identity.GetCustomerResponse>,
      cb: sendUnaryData<identity.GetCustomerResponse>,
    ) => {
      const c = customers.get(call.request.customerId);
      if (!c || c.platformId !== call.request.platformId)
        return cb({ code: status.NOT_FOUND, details: 'no such customer' });
      cb(null, {
        customer: identity.Customer.fromPartial({
          id: call.request.customerId,
          platformId: c.platformId,
          platformCustomerId: 'pc',
          customerType: identity.CustomerType.INDIVIDUAL,
          currencies: [],
          umaAddress: '$x@example.com',
          kycStatus: identity.VerificationStatus.APPROVED,
          kybStatus: identity.VerificationStatus.UNSPECIFIED,
          ...(c.name ? { fullName: c.name } : {}),
          isDeleted: c.deleted ?? false,
        }),
      });
    },
  });
  const identityPort = await new Promise<number>((resolve, reject) =>
    identityServer.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, port) =>
      err ? reject(err) : resolve(port),
    ),
  );

  const running = await startService(accountsService, {
    DATABASE_URL: db.url,
    NATS_URL: nats,
    EVENT_SUBJECT_PREFIX: prefix,
    GRPC_PORT: '0',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    DATABASE_POOL_MAX: '10',
    IDENTITY_GRPC_URL: `127.0.0.1:${identityPort}`,
  });
  const client = createRpcClient(pb.AccountsServiceClient, `127.0.0.1:${running.port}`, {
    defaultDeadlineMs: 20_000,
  });
  const sql = new pg.Pool({ connectionString: db.url, max: 2 });

  return {
    client,
    running,
    db,
    sql,
    prefix,
    platforms,
    embeddedWallets,
    customers,
    customer(platformId, name) {
      const id = newId('Customer');
      customers.set(id, { platformId, ...(name ? { name } : {}) });
      return id;
    },
    platform(env = 'SANDBOX') {
      const id = newId('Platform');
      platforms.set(id, env === 'SANDBOX' ? common.Environment.SANDBOX : common.Environment.PRODUCTION);
      return id;
    },
    async stop() {
      client.close();
      await sql.end();
      await running.stop();
      identityServer.forceShutdown();
      await dropStreams(nats, prefix).catch(() => undefined);
      await db.drop();
    },
  };
}

/** Runs `fn` and returns the DomainError it throws (fails the test if it does not throw one). */
export async function rejection(fn: () => Promise<unknown>): Promise<DomainError> {
  try {
    await fn();
  } catch (e) {
    if (isDomainError(e)) return e;
    throw e;
  }
  throw new Error('expected a rejection');
}

export const SANDBOX = common.Environment.SANDBOX;
export const PRODUCTION = common.Environment.PRODUCTION;
