import { AsyncLocalStorage } from 'node:async_hooks';
import { MikroORM, type EntityManager, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import type { EntitySchema, Constructor } from '@mikro-orm/core';
import type { Migration } from '@mikro-orm/migrations';
import pg from 'pg';
import { quoteIdent } from './database.js';
import { bindParameters, isStalePlan, PreparedStatements } from './prepared.js';
import type { Logger } from '@sluice/logging';
import type { Metrics } from '@sluice/metrics';
import { tracingEnabled } from '@sluice/tracing';
import { inStatementSpan } from './statement-spans.js';

export { MikroORM, type EntityManager };
export { Migration } from '@mikro-orm/migrations';
export { EntitySchema } from '@mikro-orm/core';

export interface StoreOptions {
  databaseUrl: string;
  /** The service's own Postgres schema; every table of the service lives there. */
  schema: string;
  entities: EntitySchema[];
  /** Migrations in the order they apply; names must be unique and stable. */
  migrations: { name: string; class: Constructor<Migration> }[];
  poolMax?: number;
  /**
   * How long a query waits for a pooled connection before failing (knex's
   * `acquireConnectionTimeout`, default here 10 s instead of knex's 60 s): an
   * exhausted pool surfaces as errors within seconds, not a minute of silence.
   */
  acquireTimeoutMs?: number;
  /**
   * Name parameterized statements so each connection prepares them once (prepared.ts; default
   * true). Off behind a pooler in transaction mode that does not keep prepared statements.
   */
  preparedStatements?: boolean;
  /**
   * Send `em.execute` parameters as parameters (prepared.ts, bindParameters; default true) instead
   * of MikroORM writing them into the text. Off only to measure the difference
   * (tools/bench/prepared-statements.ts).
   */
  bindParameters?: boolean;
  logger?: Logger;
}

/**
 * Opens MikroORM for one service, bound to its schema (also the connection's
 * `search_path`, so raw SQL names tables without qualification).
 */
export async function openStore(opts: StoreOptions): Promise<MikroORM> {
  const schema = quoteIdent(opts.schema);
  const prepared = opts.preparedStatements === false ? undefined : new PreparedStatements();
  const options: Options = {
    clientUrl: opts.databaseUrl,
    schema: opts.schema,
    entities: opts.entities,
    discovery: { warnWhenNoEntities: false },
    extensions: [Migrator],
    migrations: {
      tableName: 'mikro_orm_migrations',
      migrationsList: opts.migrations,
      transactional: true,
      allOrNothing: true,
      snapshot: false,
    },
    pool: {
      min: 0,
      max: opts.poolMax ?? 10,
      afterCreate: (conn: { query: (sql: string, cb: (err: Error | null) => void) => void }, done: (err: Error | null, conn: unknown) => void) => {
        conn.query(`SET search_path TO ${schema}, public; SET TIME ZONE 'UTC'`, (err) => {
          if (!err && prepared) prepared.attach(conn as never);
          done(err, conn);
        });
      },
    },
    // compileSqlOnError: knex prefixes a failed query's message with the statement as sent (see withoutStatementsInErrors).
    driverOptions: { acquireConnectionTimeout: opts.acquireTimeoutMs ?? 10_000, compileSqlOnError: false },
    allowGlobalContext: false,
    debug: false,
    // MikroORM's query log inlines the parameters into the SQL: never on, whatever the log level.
    logger: (message: string) => opts.logger?.debug({ orm: true }, message),
    forceUtcTimezone: true,
  };
  const orm = await MikroORM.init(options);
  withoutStatementsInErrors(orm);
  if (opts.bindParameters !== false) bindParameters(orm);
  traceStatements(orm, opts.schema);
  return orm;
}

/**
 * A span per SQL statement when tracing is on (@sluice/tracing), as a child of the span that ran it
 * (none for statements outside a traced request: background polls would start traces of their own).
 * Every statement of MikroORM, raw `em.execute` and query builder alike, passes through the
 * connection's `execute(sql, params)` with the statement still in its `?`-placeholder form: the span
 * gets that text (`db.query.text`) and never the parameters (statement-spans.ts). A write left for
 * its COMMIT (writeAtCommit) gets its span when it is made.
 */
function traceStatements(orm: MikroORM, schema: string): void {
  type Execute = (query: unknown, ...rest: unknown[]) => Promise<unknown>;
  const connection = orm.em.getConnection() as unknown as { execute: Execute };
  const execute = connection.execute.bind(connection) as Execute;
  connection.execute = (query, ...rest) => {
    if (!tracingEnabled()) return execute(query, ...rest);
    const text =
      typeof query === 'string' ? query : String((query as { toSQL?: () => { sql: string } }).toSQL?.().sql ?? '');
    return inStatementSpan(schema, text, () => execute(query, ...rest));
  };
}

/**
 * knex prefixes the message of a failed query with the statement, its values
 * inlined (`insert into ... values ('<customer data>') - <postgres message>`),
 * and that message reaches logs wherever the error is logged. The statement is
 * cut off the message (the Postgres error, its code and constraint stay), so
 * no log line carries a customer's values by way of a failed query.
 */
function withoutStatementsInErrors(orm: MikroORM): void {
  orm.em
    .getConnection()
    .getKnex()
    .on('query-error', (err: unknown, query: { sql?: unknown }) => {
      if (!(err instanceof Error) || typeof query?.sql !== 'string') return;
      const prefix = `${query.sql} - `;
      const at = err.message.lastIndexOf(' - ');
      if (err.message.startsWith(prefix)) err.message = err.message.slice(prefix.length);
      else if (at >= 0) err.message = err.message.slice(at + 3);
    });
}

/**
 * Applies pending migrations of the service. Several processes may call it at
 * once (a Kubernetes migration Job and a pod): a session advisory lock per
 * schema lets one migrate while the others wait, then find nothing to do.
 */
export async function migrate(orm: MikroORM, schema: string, logger?: Logger): Promise<string[]> {
  const url = orm.config.get('clientUrl')!;
  const lock = new pg.Client({ connectionString: url });
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock(hashtext($1))', [`migrate:${schema}`]);
    await lock.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
    const done = await orm.getMigrator().up();
    const names = done.map((m) => m.name);
    if (names.length) logger?.info({ schema, migrations: names }, 'migrations applied');
    return names;
  } finally {
    await lock.query('SELECT pg_advisory_unlock(hashtext($1))', [`migrate:${schema}`]).catch(() => undefined);
    await lock.end();
  }
}

/**
 * The names among `names` (a service's migrations, in order) not applied yet in `schema`, read
 * without creating anything (no schema, no migrations table): what a pod's init container polls
 * until the migration Job has run (`main.mjs migrate --wait`). Migrations the database has and the
 * list lacks (a newer release's, after a rollback) do not count.
 */
export async function pendingMigrations(databaseUrl: string, schema: string, names: string[]): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const table = `${quoteIdent(schema)}.mikro_orm_migrations`;
    const exists = await client.query<{ t: string | null }>('SELECT to_regclass($1)::text AS t', [table]);
    if (!exists.rows[0]?.t) return names;
    const done = await client.query<{ name: string }>(`SELECT name FROM ${table}`);
    const applied = new Set(done.rows.map((r) => r.name));
    return names.filter((n) => !applied.has(n));
  } finally {
    await client.end();
  }
}

/** A jsonb column as the driver returns it (parsed) or as text: the value, parsed. */
export function fromJson<T>(v: T | string): T {
  return typeof v === 'string' ? (JSON.parse(v) as T) : v;
}

/** A nullable timestamp column (a Date, or text from some drivers) as an optional Date. */
export function optDate(v: Date | string | null): Date | undefined {
  return v === null ? undefined : new Date(v);
}

/**
 * A Postgres array literal of text values (null: a NULL element), for a `?::text[]` parameter
 * (the query builder would expand a JS array into a list of parameters).
 */
export function pgTextArray(values: readonly (string | null)[]): string {
  const element = (v: string | null) => (v === null ? 'NULL' : `"${v.replace(/["\\]/g, (c) => `\\${c}`)}"`);
  return `{${values.map(element).join(',')}}`;
}

/**
 * Takes a transaction-scoped advisory lock on each key (released at commit or rollback), in one
 * statement and in sorted order, so two transactions locking overlapping sets never deadlock.
 */
export async function lockKeys(em: EntityManager, keys: readonly string[]): Promise<void> {
  await em.execute(`SELECT pg_advisory_xact_lock(hashtextextended(k, 0)) FROM unnest(?::text[]) AS k ORDER BY k`, [
    pgTextArray(keys),
  ]);
}


const RETRYABLE = new Set(['40001', '40P01']);

export function pgErrorCode(err: unknown): string | undefined {
  const e = err as { code?: string; cause?: { code?: string } };
  return e?.code ?? e?.cause?.code;
}

/** True for a unique-constraint violation (optionally of the named constraint). */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  if (pgErrorCode(err) !== '23505') return false;
  if (!constraint) return true;
  const e = err as { constraint?: string; cause?: { constraint?: string }; message?: string };
  return (e.constraint ?? e.cause?.constraint) === constraint || (e.message ?? '').includes(constraint);
}

/**
 * Runs `fn` in a transaction on a fresh fork of the entity manager, retrying
 * on serialization failures and deadlocks (SQLSTATE 40001 / 40P01), and on a prepared statement
 * refused after a schema change (isStalePlan, prepared.ts), with jittered backoff. `fn` must be safe to run again from the start.
 */
export async function transactional<T>(
  orm: MikroORM,
  fn: (em: EntityManager) => Promise<T>,
  opts: { isolationLevel?: 'read committed' | 'repeatable read' | 'serializable'; retries?: number } = {},
): Promise<T> {
  const retries = opts.retries ?? 8;
  for (let attempt = 0; ; attempt++) {
    const em = orm.em.fork();
    try {
      return await em.transactional((tem) => holdingTransaction(() => fn(tem as EntityManager)), {
        isolationLevel: opts.isolationLevel as never,
      });
    } catch (err) {
      const code = pgErrorCode(err);
      if (((!code || !RETRYABLE.has(code)) && !isStalePlan(err)) || attempt >= retries) throw err;
      const delay = Math.min(200, 5 * 2 ** attempt) * (0.5 + Math.random());
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}

/**
 * Marks the tasks running inside a `transactional` callback, which hold a pooled connection for its
 * transaction until it ends: `observePool` counts a connection such a task asks the pool for
 * (`db_pool_nested_acquires_total`). A task holding one connection while it waits for a second is
 * how a pool deadlocks: enough of them hold every connection and wait for each other.
 */
const openTransaction = new AsyncLocalStorage<{ open: boolean }>();

async function holdingTransaction<T>(fn: () => Promise<T>): Promise<T> {
  const mark = { open: true };
  try {
    return await openTransaction.run(mark, fn);
  } finally {
    // Work the callback started and that runs later (after the commit) holds nothing.
    mark.open = false;
  }
}

/** Converts a Postgres bigint/numeric value (string from pg) to bigint. */
export function toBigInt(v: unknown): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number') return BigInt(v);
  if (typeof v === 'string') return BigInt(v);
  if (v === null || v === undefined) return 0n;
  throw new Error(`not an integer: ${String(v)}`);
}

/** The part of knex's connection pool (tarn.js) the metrics read. */
interface TarnPool {
  max: number;
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
  numPendingCreates(): number;
  on(event: 'acquireRequest', fn: (eventId: number) => void): void;
  on(event: 'acquireSuccess' | 'acquireFail', fn: (eventId: number) => void): void;
}

/**
 * Database pool metrics of an app: connections in use and idle, queries waiting
 * for a connection, the pool's size (gauges read from knex's tarn.js pool when
 * scraped), the time a query waited for its connection
 * (`db_pool_acquire_seconds`), the acquisitions that failed
 * (`db_pool_acquire_failures_total`: DATABASE_ACQUIRE_TIMEOUT_MS ran out, or
 * Postgres refused a new connection), and the connections asked for by a task
 * inside an open `transactional` (`db_pool_nested_acquires_total`: each one is a
 * task holding a connection while it waits for a second; logged with its stack).
 */
export function observePool(orm: MikroORM, metrics: Metrics, logger: Logger): void {
  const pool = (orm.em.getConnection().getKnex().client as { pool?: TarnPool }).pool;
  if (!pool) {
    logger.warn('no connection pool to measure');
    return;
  }
  const onError = (err: unknown) => logger.warn({ err }, 'database pool not measured');
  const gauge = (name: string, help: string, read: () => number) =>
    metrics.scrapedGauge({ name, help }, (g) => g.set(read()), onError);
  gauge('db_pool_connections_in_use', 'Connections lent to a query or transaction', () => pool.numUsed());
  gauge('db_pool_connections_idle', 'Open connections waiting in the pool', () => pool.numFree());
  gauge('db_pool_acquires_waiting', 'Queries waiting for a connection', () => pool.numPendingAcquires());
  gauge('db_pool_connections_max', 'Largest number of connections (DATABASE_POOL_MAX)', () => pool.max);
  const acquire = metrics.histogram({
    name: 'db_pool_acquire_seconds',
    help: 'Time a query waited for a pooled connection',
  });
  const failures = metrics.counter({
    name: 'db_pool_acquire_failures_total',
    help: 'Connection acquisitions that failed (timeout or refused connection)',
  });
  const nested = metrics.counter({
    name: 'db_pool_nested_acquires_total',
    help: 'Connections asked for by a task that holds one for an open transaction (enough of them deadlock the pool)',
  });
  const waiting = new Map<number, () => void>();
  pool.on('acquireRequest', (id) => {
    waiting.set(id, acquire.startTimer());
    // tarn emits this synchronously in acquire(), in the asking task's async context.
    if (openTransaction.getStore()?.open) {
      nested.inc();
      logger.warn({ stack: new Error('nested acquire').stack }, 'a connection was asked for inside an open transaction');
    }
  });
  pool.on('acquireSuccess', (id) => {
    waiting.get(id)?.();
    waiting.delete(id);
  });
  pool.on('acquireFail', (id) => {
    waiting.delete(id);
    failures.inc();
  });
}

export { ensureDatabase, quoteIdent } from './database.js';
export { bindParameters, isStalePlan, PreparedStatements, writeAtCommit } from './prepared.js';
