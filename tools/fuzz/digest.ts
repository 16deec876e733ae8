import type pg from 'pg';

/** A table's rows as hashes (sorted), standing for its content. */
export type Digest = Map<string, string[]>;

function quoted(table: string): string {
  return table
    .split('.')
    .map((p) => `"${p.replace(/"/g, '""')}"`)
    .join('.');
}

/**
 * Rows a bad request adds by design, left out of the digest (a SQL condition of the rows that
 * ARE compared), each with why. Everything else must not change.
 */
export const COMPARED_ROWS: Record<string, string> = {
  // A POST whose handler ran and answered 404 (the made-up id names nothing) is answered the same
  // way on a retry with its Idempotency-Key: the gateway records that final answer
  // (idempotency.hook.ts). A request refused before its handler (validation, credentials, limits:
  // every other status here) must record nothing, so those rows are still compared.
  'gateway.idempotency_keys': 'response_status IS DISTINCT FROM 404',
  // Failed device-code redeems are counted per source address to throttle code guessing
  // (agents device-code.repository.ts): recording the attempt is the point.
  'agents.device_code_failures': 'false',
  // Every request with credentials, and every one to a route without, is counted by the gateway's
  // rate limiter (rate-limit.hook.ts), refused ones included: counting is the point.
  'gateway.rate_limit_counters': 'false',
};

/** A digest of every table of every service schema: each row's hash, per `schema.table`. */
export async function digestTables(db: pg.Pool): Promise<Digest> {
  const { rows: tables } = await db.query<{ name: string }>(
    `SELECT table_schema || '.' || table_name AS name FROM information_schema.tables
      WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')
        AND table_schema NOT LIKE 'pg\\_%' ORDER BY 1`,
  );
  const out: Digest = new Map();
  for (const { name } of tables) {
    const { rows } = await db.query<{ h: string }>(
      `SELECT md5(r::text) AS h FROM ${quoted(name)} r WHERE ${COMPARED_ROWS[name] ?? 'true'} ORDER BY 1`,
    );
    out.set(
      name,
      rows.map((r) => r.h),
    );
  }
  return out;
}

/** The tables whose content differs between `a` and `b` (present in one only included). */
export function changedTables(a: Digest, b: Digest): string[] {
  const names = new Set([...a.keys(), ...b.keys()]);
  return [...names].filter((n) => (a.get(n) ?? []).join() !== (b.get(n) ?? []).join()).sort();
}

/** Up to `limit` rows of `table` that `before` did not have (as text, for the report). */
export async function newRows(db: pg.Pool, table: string, before: Digest, limit = 3): Promise<string[]> {
  const known = before.get(table) ?? [];
  const { rows } = await db.query<{ t: string }>(
    `SELECT left(r::text, 300) AS t FROM ${quoted(table)} r
      WHERE ${COMPARED_ROWS[table] ?? 'true'} AND NOT (md5(r::text) = ANY($1)) LIMIT ${limit}`,
    [known],
  );
  return rows.map((r) => r.t);
}

/**
 * The digest once the system is at rest: taken until two in a row, `gapMs` apart, agree (relays
 * and schedulers finishing what a set-up started), at most `attempts` times.
 */
export async function settledDigest(db: pg.Pool, gapMs = 1_000, attempts = 30): Promise<Digest> {
  let last = await digestTables(db);
  for (let i = 0; i < attempts; i++) {
    await new Promise((r) => setTimeout(r, gapMs));
    const next = await digestTables(db);
    if (changedTables(last, next).length === 0) return next;
    last = next;
  }
  return last;
}
