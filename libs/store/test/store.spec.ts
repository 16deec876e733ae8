import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@sluice/testing';
import {
  ensureDatabase,
  isUniqueViolation,
  migrate,
  Migration,
  observePool,
  openStore,
  pendingMigrations,
  transactional,
  type MikroORM,
} from '../src/index.js';
import pg from 'pg';
import { Metrics } from '@sluice/metrics';
import { createLogger } from '@sluice/logging';

class CreateCounter extends Migration {
  override async up(): Promise<void> {
    this.addSql('CREATE TABLE counter (id int PRIMARY KEY, n int NOT NULL)');
    this.addSql('INSERT INTO counter VALUES (1, 0)');
  }
}
const migrations = [{ name: '0001_counter', class: CreateCounter }];

describe('store kit', () => {
  let db: TestDatabase;
  let orms: MikroORM[] = [];

  beforeAll(async () => {
    db = await createTestDatabase('store');
    orms = await Promise.all(
      [0, 1, 2].map(() => openStore({ databaseUrl: db.url, schema: 'storetest', entities: [], migrations })),
    );
  });
  afterAll(async () => {
    await Promise.all(orms.map((o) => o.close(true)));
    await db.drop();
  });

  it('migrates once when several processes race, into the service schema', async () => {
    // Before: everything pending, and asking created nothing (no schema).
    expect(await pendingMigrations(db.url, 'storetest', ['0001_counter'])).toEqual(['0001_counter']);
    const c0 = new pg.Client({ connectionString: db.url });
    await c0.connect();
    const schemas = await c0.query(`SELECT 1 FROM information_schema.schemata WHERE schema_name = 'storetest'`);
    await c0.end();
    expect(schemas.rows).toEqual([]);
    const applied = await Promise.all(orms.map((o) => migrate(o, 'storetest')));
    // After: nothing pending; a migration of a later release is.
    expect(await pendingMigrations(db.url, 'storetest', ['0001_counter'])).toEqual([]);
    expect(await pendingMigrations(db.url, 'storetest', ['0001_counter', '0002_next'])).toEqual(['0002_next']);
    expect(applied.flat()).toEqual(['0001_counter']);
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    const r = await c.query("SELECT table_schema FROM information_schema.tables WHERE table_name = 'counter'");
    await c.end();
    expect(r.rows).toEqual([{ table_schema: 'storetest' }]);
  });

  it('retries serialization failures so concurrent serializable increments all land', async () => {
    const orm = orms[0]!;
    let attempts = 0;
    await Promise.all(
      Array.from({ length: 20 }, () =>
        transactional(
          orm,
          async (em) => {
            attempts++;
            const [row] = await em.execute<{ n: number }[]>('SELECT n FROM counter WHERE id = 1');
            await em.execute('UPDATE counter SET n = ? WHERE id = 1', [row!.n + 1]);
          },
          { isolationLevel: 'serializable', retries: 50 },
        ),
      ),
    );
    const [row] = await orm.em.fork().execute<{ n: number }[]>('SELECT n FROM counter WHERE id = 1');
    expect(row!.n).toBe(20);
    expect(attempts).toBeGreaterThan(20); // some were retried
  });

  it('recognises unique violations and creates missing databases', async () => {
    const err = await orms[0]!.em.fork().execute('INSERT INTO counter VALUES (1, 0)').catch((e) => e);
    expect(isUniqueViolation(err)).toBe(true);
    const url = new URL(db.url);
    url.pathname = `/${db.name}_extra`;
    await ensureDatabase(url.toString());
    await ensureDatabase(url.toString());
    const admin = new URL(db.url);
    admin.pathname = '/postgres';
    const c = new pg.Client({ connectionString: admin.toString() });
    await c.connect();
    const r = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [`${db.name}_extra`]);
    await c.query(`DROP DATABASE "${db.name}_extra"`);
    await c.end();
    expect(r.rowCount).toBe(1);
  });
});

describe('a failed query', () => {
  let db: TestDatabase;
  let orm: MikroORM;

  beforeAll(async () => {
    db = await createTestDatabase('storeerr');
    orm = await openStore({ databaseUrl: db.url, schema: 'storeerr', entities: [], migrations: [] });
  });
  afterAll(async () => {
    await orm?.close(true);
    await db?.drop();
  });

  it('never carries the statement or its values in its message (what error logs print)', async () => {
    const secret = 'cust-secret-4711';
    const failures = [
      // A NUL character, which Postgres refuses in text.
      () => orm.em.fork().execute('SELECT ?::text AS v', [`${secret}\u0000`]),
      // A failure unrelated to the value.
      () => orm.em.fork().execute("SELECT 1 / 0 WHERE ? <> '' AND now() - interval '1 day' < now()", [secret]),
    ];
    for (const fail of failures) {
      const err = (await fail().then(
        () => undefined,
        (e: unknown) => e,
      )) as Error & { code?: string };
      expect(err).toBeInstanceOf(Error);
      expect(err.message).not.toContain(secret);
      expect(err.message).not.toMatch(/select/i);
      expect(err.stack ?? '').not.toContain(secret);
      expect(err.code).toMatch(/^[0-9A-Z]{5}$/);
    }
  });
  it('counts a connection asked for inside an open transaction, and nothing else', async () => {
    const orm = await openStore({ databaseUrl: db.url, schema: 'storetest', entities: [], migrations, poolMax: 3 });
    try {
      const metrics = new Metrics('storetest', { processMetrics: false });
      observePool(orm, metrics, createLogger('storetest', 'silent'));
      const nested = async () =>
        (await metrics.registry.getSingleMetric('db_pool_nested_acquires_total')!.get()).values[0]?.value ?? 0;
      let later: Promise<unknown> | undefined;
      await transactional(orm, async (em) => {
        // The transaction's own connection: not counted.
        await em.execute('SELECT 1');
        // Work started here that runs after the commit holds nothing: not counted either.
        later = new Promise((r) => setTimeout(r, 50)).then(() => orm.em.fork().execute('SELECT 1'));
      });
      await later;
      await orm.em.fork().execute('SELECT 1');
      expect(await nested()).toBe(0);
      // A second connection while the transaction's is held: counted, once per ask.
      await transactional(orm, async () => {
        await orm.em.fork().execute('SELECT 1');
        await transactional(orm, (inner) => inner.execute('SELECT 1'));
      });
      expect(await nested()).toBe(2);
    } finally {
      await orm.close(true);
    }
  });
});
