import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { common, identity } from '@sluice/contracts';
import { ManualClock, newId } from '@sluice/core';
import { createRpcClient, type PromiseClient } from '@sluice/rpc';
import { startService } from '@sluice/runtime';
import {
  TEST_MASTER_KEYS,
  createTestDatabase,
  dropStreams,
  natsUrl,
  testPrefix,
  type TestDatabase,
} from '@sluice/testing';
import { identityService } from '../../src/index.js';

export type IdentityClient = PromiseClient<identity.IdentityServiceClient>;

export interface Harness {
  client: IdentityClient;
  clock: ManualClock;
  db: TestDatabase;
  sql: pg.Client;
  prefix: string;
  natsUrl: string;
  /** host:port of the service's gRPC server. */
  identityAddress: string;
  /** The environment of another replica on the same database and prefix (migrations already applied), with `env` over it. */
  replicaEnv(env?: Record<string, string>): Record<string, string>;
  stop(): Promise<void>;
}

/** Starts the identity service in-process on a fresh database, a unique subject prefix and a free port. */
export async function startIdentity(label: string, env: Record<string, string> = {}): Promise<Harness> {
  const db = await createTestDatabase(`identity${label}`);
  const prefix = testPrefix(label);
  const nats = await natsUrl();
  const clock = new ManualClock('2026-01-10T12:00:00.000Z');
  const base = {
    DATABASE_URL: db.url,
    NATS_URL: nats,
    EVENT_SUBJECT_PREFIX: prefix,
    GRPC_PORT: '0',
    LOG_LEVEL: 'silent',
    SANDBOX_UMA_DOMAIN: 'sandbox.sluice.test',
    ...TEST_MASTER_KEYS,
  };
  const svc = await startService(identityService, { ...base, ...env }, { clock });
  const client = createRpcClient(identity.IdentityServiceClient, `127.0.0.1:${svc.port}`);
  const sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  await sql.query('SET search_path TO identity');
  return {
    client,
    clock,
    db,
    sql,
    prefix,
    natsUrl: nats,
    identityAddress: `127.0.0.1:${svc.port}`,
    replicaEnv: (extra = {}) => ({ ...base, MIGRATE_ON_START: 'false', ...extra }),
    async stop() {
      client.close();
      await sql.end();
      await svc.stop();
      await dropStreams(nats, prefix);
      await db.drop();
    },
  };
}

export interface TestPlatform {
  id: string;
  tokenId: string;
  clientSecret: string;
}

/** A fresh platform with a bootstrap credential. */
export async function newPlatform(
  client: IdentityClient,
  environment: common.Environment = common.Environment.SANDBOX,
  name = `platform-${randomBytes(4).toString('hex')}`,
  flags: { isRegulatedFinancialInstitution?: boolean } = {},
): Promise<TestPlatform> {
  const tokenId = newId('Token');
  const clientSecret = randomBytes(32).toString('base64url');
  const r = await client.ensurePlatformCredential({
    environment,
    tokenId,
    clientSecret,
    platformName: name,
    ...flags,
  });
  return { id: r.platform!.id, tokenId, clientSecret };
}

/** Outbox rows of a platform (oldest first). */
export async function outbox(
  sql: pg.Client,
  platformId: string,
): Promise<{ type: string; envelope: { data: Record<string, unknown>; platformId: string } }[]> {
  const r = await sql.query('SELECT type, envelope FROM outbox WHERE platform_id = $1 ORDER BY seq', [
    platformId,
  ]);
  return r.rows;
}
