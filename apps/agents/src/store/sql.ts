import type { EntityManager } from '@sluice/store';

// Helpers of the exact-SQL repositories of the agents schema.

/** A jsonb column as pg returns it (parsed) or as text: the store kit's reader. */
export { fromJson } from '@sluice/store';

/** How many rows a write statement changed (MikroORM's `run` result). */
export function affectedRows(result: unknown): number {
  return typeof result === 'object' && result !== null && 'affectedRows' in result && typeof result.affectedRows === 'number'
    ? result.affectedRows
    : 0;
}

/** Inserts one row (jsonb columns given as JSON text). */
export async function insertRow(em: EntityManager, table: string, row: object, jsonb: ReadonlySet<string>): Promise<void> {
  const columns = Object.keys(row);
  const values = columns.map((c) => (jsonb.has(c) ? '?::jsonb' : '?'));
  await em.execute(`INSERT INTO ${table} (${columns.join(', ')}) VALUES (${values.join(', ')})`, Object.values(row));
}

/** SQL conditions and their parameters, built up filter by filter. */
export class Where {
  readonly clauses: string[] = [];
  readonly params: unknown[] = [];

  add(clause: string, ...params: unknown[]): this {
    this.clauses.push(clause);
    this.params.push(...params);
    return this;
  }

  addIf(value: unknown, clause: string): this {
    return value === undefined ? this : this.add(clause, value);
  }

  get sql(): string {
    return this.clauses.length ? `WHERE ${this.clauses.join(' AND ')}` : '';
  }
}

/** Keyset page over (created_at, id): rows after `after` in `order`, `limit + 1` of them, and the total. */
export async function keysetPage<R>(
  em: EntityManager,
  table: string,
  where: Where,
  o: { limit: number; after?: { k: string; id: string }; order: 'ASC' | 'DESC' },
): Promise<{ rows: R[]; total: number }> {
  const [{ count }] = await em.execute<{ count: string }[]>(`SELECT count(*) AS count FROM ${table} ${where.sql}`, where.params);
  const page = new Where().add(where.clauses.length ? where.clauses.join(' AND ') : 'true', ...where.params);
  if (o.after) page.add(`(created_at, id) ${o.order === 'DESC' ? '<' : '>'} (?::timestamptz, ?)`, o.after.k, o.after.id);
  const rows = await em.execute<R[]>(
    `SELECT * FROM ${table} ${page.sql} ORDER BY created_at ${o.order}, id ${o.order} LIMIT ?`,
    [...page.params, o.limit + 1],
  );
  return { rows, total: Number(count) };
}
