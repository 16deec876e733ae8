import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { Type, grpcClientConfig } from '@sluice/config';
import { defineService } from '@sluice/runtime';
import { NOT_STARTED_ADDRESS, startServices, type ServiceSet } from '../src/index.js';

// Two small services shaped like real ones: `accounts` calls `identity` and `payments` (not started).
const identityLike = defineService({
  name: 'identity',
  schema: 'svc_one',
  domain: 'identity',
  config: Type.Object({}),
  migrations: [],
  compose: () => ({ rpc: [] }),
});
const accountsLike = defineService({
  name: 'accounts',
  schema: 'svc_two',
  domain: 'accounts',
  config: Type.Object({ ...grpcClientConfig('identity'), ...grpcClientConfig('payments') }),
  migrations: [],
  compose: () => ({ rpc: [] }),
});

let set: ServiceSet<{ identity: typeof identityLike; accounts: typeof accountsLike }>;
beforeAll(async () => {
  set = await startServices('svcset', { identity: identityLike, accounts: accountsLike });
});
afterAll(async () => {
  await set?.stop();
});

describe('startServices', () => {
  it('points each service at the neighbours started before it, and a neighbour not started nowhere', () => {
    const config = set.running.accounts.deps.config;
    expect(config.IDENTITY_GRPC_URL).toBe(set.address('identity'));
    expect(set.address('identity')).toBe(`127.0.0.1:${set.running.identity.port}`);
    expect(config.PAYMENTS_GRPC_URL).toBe(NOT_STARTED_ADDRESS);
  });

  it('one database with a schema per service, one subject prefix for all', async () => {
    const { rows } = await set.sql.query<{ schema_name: string }>(
      `SELECT schema_name FROM information_schema.schemata WHERE schema_name IN ('svc_one', 'svc_two') ORDER BY 1`,
    );
    expect(rows.map((r) => r.schema_name)).toEqual(['svc_one', 'svc_two']);
    expect(set.running.identity.deps.config.DATABASE_URL).toBe(set.db.url);
    expect(set.running.accounts.deps.config.DATABASE_URL).toBe(set.db.url);
    expect(set.running.identity.deps.config.EVENT_SUBJECT_PREFIX).toBe(set.prefix);
    expect(set.running.accounts.deps.config.EVENT_SUBJECT_PREFIX).toBe(set.prefix);
  });

  it('refuses a service listed before a neighbour it calls, and a key that is not the service’s name', async () => {
    await expect(startServices('svcorder', { accounts: accountsLike, identity: identityLike })).rejects.toThrow(
      'accounts calls identity; list identity before accounts',
    );
    await expect(startServices('svcname', { payments: identityLike })).rejects.toThrow(
      'key payments holds the definition of identity',
    );
  });

  it('stop() stops the services and drops their database', async () => {
    const other = await startServices('svcstop', { identity: identityLike });
    const name = other.db.name;
    await other.stop();
    const admin = new URL(set.db.url);
    admin.pathname = '/postgres';
    const c = new pg.Client({ connectionString: admin.toString() });
    await c.connect();
    try {
      const { rows } = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      expect(rows).toEqual([]);
    } finally {
      await c.end();
    }
  });
});
