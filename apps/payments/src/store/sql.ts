// Helpers of the exact-SQL repositories (store/README in apps/payments/README.md, "Tables").

/** A jsonb column as pg returns it (parsed) or as text: the store kit's reader. */
export { fromJson } from '@sluice/store';

/**
 * The INSERT of one row: every column of `row` in order, `?::jsonb` for the jsonb ones (whose
 * values the row mapper gives as JSON text).
 */
export function insertRow(
  table: string,
  row: object,
  jsonb: ReadonlySet<string> = new Set(),
): [sql: string, params: unknown[]] {
  const columns = Object.keys(row);
  const values = columns.map((c) => (jsonb.has(c) ? '?::jsonb' : '?'));
  return [`INSERT INTO ${table} (${columns.join(', ')}) VALUES (${values.join(', ')})`, Object.values(row)];
}

/** How many rows a write statement changed (MikroORM's `run` result). */
export function affectedRows(result: unknown): number {
  return typeof result === 'object' && result !== null && 'affectedRows' in result && typeof result.affectedRows === 'number'
    ? result.affectedRows
    : 0;
}
