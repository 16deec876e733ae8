/**
 * Measures what an idle stack costs its database: starts every process (as `npm start` does) on a
 * fresh database, lets it settle, then counts the transactions committed (and rolled back) in that
 * database over a window, from pg_stat_database. `npx tsx tools/idle-load.ts [windowSeconds]`.
 */
import pg from 'pg';
import { startFreshStack } from './lib/fresh-stack.js';

const windowS = Number(process.argv[2] ?? 10);
const settleS = Number(process.argv[3] ?? 15);

async function main(): Promise<void> {
  const { databaseUrl, databaseName: name, close } = await startFreshStack('idle');
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  const sample = async () => {
    // pg_stat_database is a snapshot per transaction: read it in a fresh one each time.
    await pool.query('SELECT pg_stat_clear_snapshot()');
    const { rows } = await pool.query<{ n: string }>(
      `SELECT (xact_commit + xact_rollback)::text AS n FROM pg_stat_database WHERE datname = $1`,
      [name],
    );
    return Number(rows[0]!.n);
  };
  try {
    await new Promise((r) => setTimeout(r, settleS * 1000));
    const a = await sample();
    await new Promise((r) => setTimeout(r, windowS * 1000));
    const b = await sample();
    // The two samples are themselves transactions (2 per sample).
    const n = b - a - 2;
    process.stdout.write(
      `idle stack: ${n} database transactions in ${windowS} s = ${(n / windowS).toFixed(1)} per second\n`,
    );
  } finally {
    await pool.end();
    await close();
  }
}

void main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
