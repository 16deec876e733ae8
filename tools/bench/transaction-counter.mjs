/**
 * `npm run bench -- --by-process` (and --quick) loads this into every app of the stack
 * (`NODE_OPTIONS=--import <this file>`, with BENCH_TRANSACTIONS_DIR set): it counts the process's
 * database transactions as Postgres counts them in pg_stat_database — one per BEGIN … COMMIT/ROLLBACK,
 * one per statement sent outside a transaction — by wrapping `pg.Client#query` of each copy of
 * `pg` (every Postgres client of the apps goes through one: MikroORM/knex, LISTEN connections).
 * Each transaction is keyed by its first statement (parameters and literals elided), so a reader
 * sees which statements the transactions of a pair are. The counts go, cumulatively, to
 * `<dir>/<app>-<pid>.json` (rewritten at most every 100 ms while they change, and at exit).
 * Measurement only: never loaded outside the benchmark.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, join } from 'node:path';

const dir = process.env.BENCH_TRANSACTIONS_DIR;
if (dir) {
  // `apps/<app>/src/main.ts` from source, `<bundles>/<app>/main.mjs` as the stack runs them (tools/stack.ts).
  const app = /(?:apps\/([a-z-]+)\/src\/main\.ts|\/([a-z-]+)\/main\.mjs)/.exec(process.argv.join(' '))?.slice(1).find(Boolean);
  const label = app
    ? `${app}${process.argv.includes('migrate') ? ' (migrate)' : ''}`
    : basename(process.argv[1] ?? 'node');
  const counts = { label, pid: process.pid, transactions: 0, statements: 0, byFirstStatement: {} };
  const key = (sql) =>
    sql
      .replace(/\s+/g, ' ')
      .replace(/\$\d+|'[^']*'|\b\d+\b/g, '?')
      .slice(0, 100);
  const count = (k) => {
    counts.transactions++;
    counts.byFirstStatement[k] = (counts.byFirstStatement[k] ?? 0) + 1;
  };
  const wrap = (pg) => {
    const query = pg.Client.prototype.query;
    if (query.benchCounted) return;
    pg.Client.prototype.query = function counted(config, ...rest) {
      const text = (typeof config === 'string' ? config : config?.text)?.trim();
      if (text) {
        counts.statements++;
        if (/^(BEGIN|START TRANSACTION)\b/i.test(text)) {
          this.benchTransaction = '(empty)';
          this.benchFirst = true;
        } else if (/^(COMMIT|ROLLBACK)\s*;?$/i.test(text) || /;\s*COMMIT\s*;?$/i.test(text)) {
          // A COMMIT may carry the transaction's writes at commit before it (libs/store writeAtCommit):
          // a transaction with no statement of its own is keyed by the first of them.
          if (this.benchFirst && !/^COMMIT/i.test(text)) this.benchTransaction = key(text);
          count(`${/^R/i.test(text) ? 'ROLLBACK of ' : ''}${this.benchTransaction ?? '(none)'}`);
          this.benchTransaction = undefined;
        } else if (this.benchTransaction !== undefined) {
          if (this.benchFirst && !/^(SET|SAVEPOINT|RELEASE)\b/i.test(text)) {
            this.benchTransaction = key(text);
            this.benchFirst = false;
          }
        } else count(`(autocommit) ${key(text)}`);
      }
      return query.call(this, config, ...rest);
    };
    pg.Client.prototype.query.benchCounted = true;
  };
  const require = createRequire(join(process.cwd(), 'package.json'));
  for (const from of [undefined, '@mikro-orm/postgresql']) {
    try {
      const paths = from ? [require.resolve(from)] : undefined;
      wrap(require(require.resolve('pg', paths ? { paths } : undefined)));
    } catch {
      // that copy is not installed
    }
  }
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${app ?? 'process'}-${process.pid}.json`);
  let written = -1;
  const flush = () => {
    if (counts.statements === written) return;
    written = counts.statements;
    writeFileSync(file, JSON.stringify({ ...counts, at: Date.now() }));
  };
  setInterval(flush, 100).unref();
  process.on('exit', flush);
}
