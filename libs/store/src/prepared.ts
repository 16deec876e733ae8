import { recordStatementAtCommit } from './statement-spans.js';
/**
 * Named (prepared) statements for a pooled connection: each distinct statement text with
 * parameters is parsed and planned by Postgres once per connection, then only bound and executed.
 * Measured on this machine (tools/bench/prepared-statements.ts): Postgres spends about half as much
 * CPU on such a statement (67 µs instead of 125), and the driver less too.
 *
 * - Only statements with parameters are named (they already use the extended protocol; a text
 *   without them may hold several statements, which a prepared statement cannot).
 * - At most `maxNames` texts per connection: a text beyond them runs unnamed (texts built with a
 *   varying number of placeholders must not grow the server's memory without bound).
 * - A schema change under a running process (a rolling deploy's migration adding a column) makes
 *   Postgres refuse a prepared `SELECT *` or `RETURNING *` whose result type changed
 *   ("cached plan must not change result type", SQLSTATE 0A000). Every connection of the pool then
 *   prepares its statements again under new names (a new generation); a statement outside a
 *   transaction is run again at once, unnamed; inside one, the error aborts the transaction and
 *   `transactional` runs it again (isStalePlan is retryable).
 */

/** The writes a connection's open transaction left for its COMMIT (writeAtCommit). */
const PENDING = Symbol('sluice.writesAtCommit');
interface WithPending {
  [PENDING]: string[];
}

/** The part of a pg Client this wraps. */
interface QueryableClient {
  query: (...args: unknown[]) => unknown;
}

type Callback = (err: Error | null, res?: unknown) => void;

interface QueryConfig {
  text?: string;
  name?: string;
  values?: unknown[];
  submit?: unknown;
  [k: string]: unknown;
}

/** True for Postgres' refusal of a prepared statement whose result type a schema change altered. */
export function isStalePlan(err: unknown): boolean {
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e?.code ?? e?.cause?.code;
  const message = `${e?.message ?? ''} ${e?.cause?.message ?? ''}`;
  return (
    (code === '0A000' && message.includes('cached plan must not change result type')) || code === '26000'
  );
}

/**
 * The statement names of one pool: a stale plan on any of its connections (a schema change)
 * starts a new generation, and every connection then prepares its statements again under new
 * names at their next use.
 */
export class PreparedStatements {
  private generation = 0;

  constructor(private readonly maxNames = 250) {}

  /** Makes `client` (a pg Client of the pool) name its parameterized statements. */
  attach(client: QueryableClient): void {
    const original = client.query.bind(client) as (...args: unknown[]) => unknown;
    let names = new Map<string, string>();
    let generation = this.generation;
    let inTransaction = false;

    /**
     * COMMIT with the writes left for it (writeAtCommit) before it, in one round trip: one simple
     * query of several statements, run in order. If one fails the transaction is rolled back here
     * (so the connection goes back to the pool clean) and the commit fails with its error.
     */
    const commitWith = (writes: string[], callback: Callback): unknown =>
      original(`${writes.join(';\n')};\nCOMMIT`, (err: Error | null, res?: unknown) => {
        if (!err) return callback(null, Array.isArray(res) ? res[res.length - 1] : res);
        return original('ROLLBACK', () => callback(err));
      });

    const pending = ((client as Partial<WithPending>)[PENDING] = [] as string[]);
    /** Open savepoints and how many writes were pending when each was set. */
    const marks: { name: string; at: number }[] = [];

    client.query = (config: unknown, ...rest: unknown[]): unknown => {
      const c = config as QueryConfig | string;
      const text = typeof c === 'string' ? c : c?.text;
      if (typeof text === 'string') {
        const savepoint = /^\s*(SAVEPOINT|ROLLBACK\s+TO\s+SAVEPOINT|RELEASE\s+SAVEPOINT)\s+("?[\w$]+"?)/i.exec(text);
        if (savepoint) {
          // A write left for the commit inside a savepoint goes with it when it is rolled back to.
          const [, what, name] = savepoint;
          if (/^SAVEPOINT$/i.test(what!)) marks.push({ name: name!, at: pending.length });
          else {
            const i = marks.map((m) => m.name).lastIndexOf(name!);
            if (i >= 0) {
              if (/^ROLLBACK/i.test(what!)) pending.length = marks[i]!.at;
              marks.length = /^ROLLBACK/i.test(what!) ? i + 1 : i;
            }
          }
        } else if (/^\s*(BEGIN|START TRANSACTION)\b/i.test(text)) {
          inTransaction = true;
          pending.length = 0;
          marks.length = 0;
        } else if (/^\s*ROLLBACK\s*;?\s*$/i.test(text)) {
          inTransaction = false;
          pending.length = 0;
        } else if (/^\s*COMMIT\s*;?\s*$/i.test(text)) {
          inTransaction = false;
          const callback = rest[rest.length - 1];
          if (pending.length > 0 && typeof callback === 'function') return commitWith(pending.splice(0), callback as Callback);
        }
      }
      const callback = rest[rest.length - 1];
      if (
        typeof c !== 'object' ||
        c === null ||
        c.name !== undefined ||
        c.submit !== undefined ||
        typeof text !== 'string' ||
        !Array.isArray(c.values) ||
        c.values.length === 0 ||
        rest.length !== 1 ||
        typeof callback !== 'function'
      )
        return original(config, ...rest);
      if (generation !== this.generation) {
        generation = this.generation;
        names = new Map();
      }
      let name = names.get(text);
      if (name === undefined) {
        if (names.size >= this.maxNames) return original(config, callback);
        name = `sluice_${generation}_${names.size + 1}`;
        names.set(text, name);
      }
      const outside = !inTransaction;
      return original({ ...c, name }, (err: Error | null, res?: unknown) => {
        if (err && isStalePlan(err)) {
          if (generation === this.generation) this.generation++;
          // Outside a transaction the statement runs again at once, unnamed; inside one the
          // transaction is aborted, and `transactional` runs it again (isStalePlan is retryable).
          if (outside) return original(c, callback);
        }
        return (callback as Callback)(err, res);
      });
    };
  }
}

/** A value the driver sends as a parameter exactly as MikroORM would have written it inline. */
function bindable(v: unknown): boolean {
  if (v === null || v === undefined) return true;
  const t = typeof v;
  return (
    t === 'string' ||
    t === 'number' ||
    t === 'bigint' ||
    t === 'boolean' ||
    v instanceof Date ||
    Buffer.isBuffer(v)
  );
}

/** The `?` placeholders of a statement (`??` identifiers and `\?` escapes are not). */
function placeholders(sql: string): number {
  let n = 0;
  for (let i = 0; i < sql.length; i++) {
    if (sql[i] === '\\') {
      i++;
      continue;
    }
    if (sql[i] !== '?') continue;
    if (sql[i + 1] === '?') {
      n = -1;
      break;
    }
    n++;
  }
  return n;
}

/**
 * Postgres' refusals of a parameter whose type it cannot infer the way it infers an inline literal's
 * (`? IS NULL`, a parameter of a variadic function, an operator it cannot choose): such a statement
 * runs inline from then on.
 */
const INFERENCE_ERRORS = new Set(['42P18', '42725', '42883', '42804']);

/** The connection methods `bindParameters` uses (MikroORM's AbstractSqlConnection). */
interface SqlConnection {
  execute: (
    query: unknown,
    params?: unknown[],
    method?: string,
    ctx?: unknown,
    loggerContext?: unknown,
  ) => Promise<unknown>;
  ensureConnection(): Promise<void>;
  getKnex(): {
    raw(sql: string, bindings: unknown[]): { transacting(ctx: unknown): unknown } & PromiseLike<unknown>;
  };
  transformRawResult(res: unknown, method: string): unknown;
  executeQuery(query: string, cb: () => Promise<unknown>, context: Record<string, unknown>): Promise<unknown>;
}

/** The error `transactional` retries after a statement was moved to the inline path (isStalePlan). */
class InlineFromNowOn extends Error {
  readonly code = '26000';
  constructor(override readonly cause: unknown) {
    super('a statement will run with its parameters inline from now on; run the transaction again');
  }
}

/**
 * MikroORM writes a raw statement's parameters into its text (`platform.formatQuery`) before it
 * sends it, so every execution is a new text for Postgres to parse and plan, and the escaping costs
 * the process as much again. This sends the parameters of `em.execute(sql, params)` as parameters
 * instead (knex binds `?` as `$n`), so a statement is one text whatever its values, and named
 * statements (PreparedStatements) are prepared once per connection.
 *
 * Only statements whose parameters are all scalars (text, numbers, bigints, booleans, dates,
 * buffers, null) are bound; a statement with an array or object parameter, or `??` identifiers,
 * keeps MikroORM's inline path. A statement Postgres refuses to type as a parameter
 * (INFERENCE_ERRORS) runs inline from then on: at once outside a transaction; inside one the
 * transaction is aborted and `transactional` runs it again.
 */
export function bindParameters(orm: { em: { getConnection(): unknown } }): void {
  const connection = orm.em.getConnection() as SqlConnection;
  const inline = connection.execute.bind(connection);
  const inlineOnly = new Set<string>();
  connection.execute = async (query, params = [], method = 'all', ctx, loggerContext) => {
    if (
      typeof query !== 'string' ||
      params.length === 0 ||
      inlineOnly.has(query) ||
      !params.every(bindable) ||
      placeholders(query) !== params.length
    )
      return inline(query, params, method, ctx, loggerContext);
    await connection.ensureConnection();
    try {
      return await connection.executeQuery(
        query,
        async () => {
          const raw = connection.getKnex().raw(query, params);
          if (ctx) raw.transacting(ctx);
          return connection.transformRawResult(await raw, method);
        },
        { query, params, ...(loggerContext as object) },
      );
    } catch (err) {
      const code = (err as { code?: string })?.code;
      if (!code || !INFERENCE_ERRORS.has(code)) throw err;
      inlineOnly.add(query);
      if (!ctx) return inline(query, params, method, ctx, loggerContext);
      throw new InlineFromNowOn(err);
    }
  };
}

/** What writeAtCommit needs of an entity manager (MikroORM's). */
interface CommitWriter {
  config: { get(key: 'schema'): string | undefined };
  getTransactionContext(): unknown;
  getConnection(): unknown;
  execute(sql: string, params: unknown[]): Promise<unknown>;
}

/**
 * Runs a write whose result the caller does not need — an outbox row, a job scheduled or retired —
 * at the end of the caller's transaction, in the round trip of its COMMIT instead of one of its own
 * (PreparedStatements sends `<writes>; COMMIT` as one query). The writes of a transaction run in the
 * order they were made, after its other statements and before its commit: they commit with it or
 * not at all, and one that fails rolls the transaction back and fails its commit. A later statement
 * of the same transaction does not see such a write, so only writes nothing in the transaction
 * reads afterwards go this way. Outside a transaction, or on a connection not prepared by
 * PreparedStatements (DATABASE_PREPARED_STATEMENTS=false), the write runs at once. The values are
 * written into the statement as MikroORM writes them (`platform.formatQuery`).
 */
export async function writeAtCommit(em: CommitWriter, sql: string, params: unknown[]): Promise<void> {
  const trx = em.getTransactionContext() as { client?: { acquireConnection?(): Promise<unknown> } } | undefined;
  const connection = trx?.client?.acquireConnection ? ((await trx.client.acquireConnection()) as Partial<WithPending>) : undefined;
  const pending = connection?.[PENDING];
  if (!pending) {
    await em.execute(sql, params);
    return;
  }
  const platform = (em.getConnection() as { getPlatform(): { formatQuery(sql: string, params: readonly unknown[]): string } }).getPlatform();
  pending.push(platform.formatQuery(sql, params));
  recordStatementAtCommit(em.config.get('schema') ?? 'public', sql);
}
