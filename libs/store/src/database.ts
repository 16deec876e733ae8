import pg from 'pg';

/**
 * What needs only the driver, not the ORM: importable alone as `@sluice/store/database` by tools that
 * must start fast (npm start, npm run migrate), and re-exported by `@sluice/store`.
 */

/** A plain SQL identifier, double-quoted; anything else is refused. */
export function quoteIdent(name: string): string {
  if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(name)) throw new Error(`bad SQL identifier ${name}`);
  return `"${name}"`;
}

/** Creates the database named in `databaseUrl` if it does not exist yet. */
export async function ensureDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const dbName = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!dbName) throw new Error('DATABASE_URL names no database');
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const r = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [dbName]);
    if (r.rowCount === 0) {
      try {
        await client.query(`CREATE DATABASE ${quoteIdent(dbName)}`);
      } catch (e) {
        if ((e as { code?: string }).code !== '42P04') throw e; // created concurrently
      }
    }
  } finally {
    await client.end();
  }
}
