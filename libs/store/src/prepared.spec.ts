import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import type { MikroORM } from '@mikro-orm/postgresql';
import { openStore, transactional, writeAtCommit } from './index.js';
import { PreparedStatements } from './prepared.js';

// Named statements against the real Postgres: prepared once per connection, bounded, and a
// schema change under a running pool (a rolling deploy's migration) costs a retry, never an error.

const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const schema = `prep_${randomUUID().slice(0, 8)}`;
let orm: MikroORM;
let unnamed: MikroORM;
let admin: pg.Client;

/** The statements prepared on the connection that runs `fn` (it holds one connection: a transaction). */
const preparedIn = (
  o: MikroORM,
  fn: (em: Parameters<Parameters<typeof transactional>[1]>[0]) => Promise<unknown>,
) =>
  transactional(o, async (em) => {
    await fn(em);
    return (
      await em.execute<{ statement: string }[]>(
        `SELECT statement FROM pg_prepared_statements ORDER BY prepare_time`,
      )
    ).map((r) => r.statement);
  });

beforeAll(async () => {
  admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.t (id text PRIMARY KEY, a int)`);
  await admin.query(`INSERT INTO ${schema}.t VALUES ('x', 1)`);
  await admin.query(`CREATE TABLE ${schema}.w (n int PRIMARY KEY, note text)`);
  orm = await openStore({ databaseUrl: url, schema, entities: [], migrations: [], poolMax: 1 });
  unnamed = await openStore({
    databaseUrl: url,
    schema,
    entities: [],
    migrations: [],
    poolMax: 1,
    preparedStatements: false,
  });
});

afterAll(async () => {
  await orm?.close(true);
  await unnamed?.close(true);
  await admin?.query(`DROP SCHEMA ${schema} CASCADE`);
  await admin?.end();
});

describe('named statements', () => {
  it('a statement with parameters is prepared once per connection and reused; one without, or with preparedStatements: false, is not', async () => {
    const statements = await preparedIn(orm, async (em) => {
      for (let i = 0; i < 3; i++)
        expect(await em.execute('SELECT a FROM t WHERE id = ?', ['x'])).toEqual([{ a: 1 }]);
      await em.execute('SELECT a FROM t');
    });
    expect(statements.filter((s) => s.includes('FROM t WHERE id = $1'))).toHaveLength(1);
    expect(statements.some((s) => s === 'SELECT a FROM t')).toBe(false);
    const none = await preparedIn(unnamed, (em) => em.execute('SELECT a FROM t WHERE id = ?', ['x']));
    expect(none).toEqual([]);
  });

  it('keeps at most maxNames texts per connection: the rest run unnamed', async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      new PreparedStatements(3).attach(client as never);
      const run = (n: number) =>
        new Promise<unknown>((resolve, reject) =>
          client.query(
            { text: `SELECT $1::int + ${n} AS v`, values: [1] } as never,
            (err: Error | null, res: unknown) => (err ? reject(err) : resolve(res)),
          ),
        );
      for (let n = 0; n < 5; n++) await run(n);
      await run(0);
      const { rows } = await client.query('SELECT count(*)::int AS n FROM pg_prepared_statements');
      expect(rows[0].n).toBe(3);
    } finally {
      await client.end();
    }
  });

  it('a column added under a prepared SELECT * (a migration during a rolling deploy) costs a retry, not an error: outside a transaction and inside one', async () => {
    const read = (em: Parameters<Parameters<typeof transactional>[1]>[0]) =>
      em.execute<Record<string, unknown>[]>('SELECT * FROM t WHERE id = ?', ['x']);
    expect(await read(orm.em.fork())).toEqual([{ id: 'x', a: 1 }]);
    await admin.query(`ALTER TABLE ${schema}.t ADD COLUMN b int DEFAULT 2`);
    // Outside a transaction: the refused statement runs again at once.
    expect(await read(orm.em.fork())).toEqual([{ id: 'x', a: 1, b: 2 }]);
    // prepared again (a new generation of names) with the new column
    expect(await read(orm.em.fork())).toEqual([{ id: 'x', a: 1, b: 2 }]);
    await admin.query(`ALTER TABLE ${schema}.t ADD COLUMN c int DEFAULT 3`);
    // Inside one: the transaction is aborted by the refusal and transactional runs it again.
    let runs = 0;
    const rows = await transactional(orm, async (em) => {
      runs++;
      return read(em);
    });
    expect(rows).toEqual([{ id: 'x', a: 1, b: 2, c: 3 }]);
    expect(runs).toBe(2);
    // Prepared anew under the new generation: later runs need no retry.
    runs = 0;
    await transactional(orm, async (em) => {
      runs++;
      return read(em);
    });
    expect(runs).toBe(1);
  });

  it('a statement whose parameter Postgres cannot type as it types an inline value runs inline from then on: outside a transaction and inside one', async () => {
    const q = 'SELECT count(*)::int AS n FROM t WHERE (? IS NULL OR id = ?)';
    expect(await orm.em.fork().execute(q, [null, 'x'])).toEqual([{ n: 1 }]);
    const q2 = 'SELECT count(*)::int AS n FROM t WHERE (? IS NULL OR a = ?)';
    let runs = 0;
    const rows = await transactional(orm, async (em) => {
      runs++;
      return em.execute(q2, [1, 1]);
    });
    expect(rows).toEqual([{ n: 1 }]);
    expect(runs).toBe(2);
    // scalars only: an array parameter keeps MikroORM's own (inline) path
    expect(
      await orm.em.fork().execute('SELECT count(*)::int AS n FROM t WHERE id IN (?)', [['x', 'y']]),
    ).toEqual([{ n: 1 }]);
  });
});

describe('writes at commit', () => {
  const notes = async () => (await admin.query(`SELECT n, note FROM ${schema}.w ORDER BY n`)).rows;
  const statementsOf = async (fn: () => Promise<unknown>) => {
    const knex = orm.em.getConnection().getKnex();
    const seen: string[] = [];
    const listen = (q: { sql: string }) => void seen.push(q.sql.trim());
    knex.on('query', listen);
    try {
      await fn();
    } finally {
      knex.removeListener('query', listen);
    }
    return seen;
  };

  it('run in order after the transaction\'s statements, in the round trip of its COMMIT, and commit with it', async () => {
    await admin.query(`DELETE FROM ${schema}.w`);
    const sent = await statementsOf(() =>
      transactional(orm, async (em) => {
        await writeAtCommit(em, 'INSERT INTO w VALUES (?, ?)', [1, "it's one"]);
        await writeAtCommit(em, 'UPDATE w SET note = ? WHERE n = ?', ['one, then updated', 1]);
        // not yet written: a later statement of the transaction does not see it
        expect(await em.execute('SELECT count(*)::int AS n FROM w', [])).toEqual([{ n: 0 }]);
      }),
    );
    expect(sent.filter((q) => /^(BEGIN|COMMIT)/i.test(q))).toHaveLength(2);
    expect(sent.some((q) => /INSERT INTO w/.test(q))).toBe(false);
    expect(await notes()).toEqual([{ n: 1, note: 'one, then updated' }]);
  });

  it('one that fails rolls the whole transaction back and fails its commit; the connection goes back clean', async () => {
    await admin.query(`DELETE FROM ${schema}.w; INSERT INTO ${schema}.w VALUES (1, 'kept')`);
    const err = await transactional(orm, async (em) => {
      await em.execute('UPDATE w SET note = ? WHERE n = ?', ['changed', 1]);
      await writeAtCommit(em, 'INSERT INTO w VALUES (?, ?)', [2, 'two']);
      await writeAtCommit(em, 'INSERT INTO w VALUES (?, ?)', [1, 'a duplicate']);
    }).catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe('23505');
    expect(await notes()).toEqual([{ n: 1, note: 'kept' }]);
    // the pool's one connection is usable: not left inside the failed transaction
    await transactional(orm, (em) => writeAtCommit(em, 'INSERT INTO w VALUES (?, ?)', [3, 'three']));
    expect(await notes()).toEqual([
      { n: 1, note: 'kept' },
      { n: 3, note: 'three' },
    ]);
  });

  it('a savepoint rolled back to takes the writes made after it; outside a transaction, or without prepared statements, a write runs at once', async () => {
    await admin.query(`DELETE FROM ${schema}.w`);
    await transactional(orm, async (em) => {
      await writeAtCommit(em, 'INSERT INTO w VALUES (?, ?)', [1, 'before']);
      await em.execute('SAVEPOINT sp', []);
      await writeAtCommit(em, 'INSERT INTO w VALUES (?, ?)', [2, 'rolled back']);
      await em.execute('ROLLBACK TO SAVEPOINT sp', []);
      await writeAtCommit(em, 'INSERT INTO w VALUES (?, ?)', [3, 'after']);
    });
    expect((await notes()).map((r) => r.n)).toEqual([1, 3]);
    await writeAtCommit(orm.em.fork(), 'INSERT INTO w VALUES (?, ?)', [4, 'autocommit']);
    expect((await notes()).map((r) => r.n)).toEqual([1, 3, 4]);
    await transactional(unnamed, async (em) => {
      await writeAtCommit(em, 'INSERT INTO w VALUES (?, ?)', [5, 'at once']);
      expect(await em.execute('SELECT count(*)::int AS n FROM w WHERE n = 5', [])).toEqual([{ n: 1 }]);
    });
  });
});
