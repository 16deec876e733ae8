import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import type { MikroORM } from '@mikro-orm/postgresql';
import { isDependencyUnavailable } from '@sluice/core';
import { openStore, transactional } from './index.js';

const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
let orm: MikroORM;
let admin: pg.Client;

beforeAll(async () => {
  orm = await openStore({ databaseUrl: url, schema: 'public', entities: [], migrations: [], poolMax: 2 });
  admin = new pg.Client({ connectionString: url });
  await admin.connect();
});

afterAll(async () => {
  await orm?.close(true);
  await admin?.end();
});

describe('a transaction whose connection is lost', () => {
  it('fails as "dependency unavailable", however the loss surfaces (the statement, the commit or the rollback after it)', async () => {
    for (const when of ['statement', 'commit', 'parallel statements'] as const) {
      const err = await transactional(
        orm,
        async (em) => {
          const [{ pid }] = await em.execute<{ pid: number }[]>('select pg_backend_pid() as pid');
          await admin.query('select pg_terminate_backend($1)', [pid]);
          if (when === 'statement') await em.execute('select 1');
          if (when === 'parallel statements') await Promise.all([em.execute('select 1'), em.execute('select 2')]);
        },
        { retries: 0 },
      ).catch((e: unknown) => e);
      expect(err, when).toBeInstanceOf(Error);
      expect(isDependencyUnavailable(err), `${when}: ${String(err)}`).toBe(true);
    }
  });
});
