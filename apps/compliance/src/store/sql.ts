import { toPage, type CursorPosition, type Page } from '@sluice/core';
import type { EntityManager } from '@sluice/store';
import { notifyOnCommit } from '@sluice/events';

/** The channel that wakes the screening workers of every replica when a screening is given a due time. */
export const SCREENING_CHANNEL = 'sluice_compliance_screening';

/** A row written by `em` is due for screening at `due` (if any): wake the screening workers on commit. */
export function announceDue(em: EntityManager, due: Date | undefined): void {
  if (due) notifyOnCommit(em, SCREENING_CHANNEL);
}

/** Row timestamps come back as Date (or text from some drivers). */
export const date = (v: Date | string): Date => new Date(v);
/** The store kit's row readers (jsonb and nullable timestamps), used by every repository here. */
export { fromJson, optDate } from '@sluice/store';

/**
 * One keyset page of a table ordered by (created_at, id) in `order`: the rows after the cursor's
 * position, the total matching `where`, and the list envelope.
 */
export async function keysetPage<R extends { id: string; created_at: Date | string }, T>(
  em: EntityManager,
  q: {
    table: string;
    columns: string;
    where: string[];
    params: unknown[];
    order: 'ASC' | 'DESC';
    size: number;
    after: CursorPosition | undefined;
    map: (row: R) => T;
  },
): Promise<Page<T>> {
  const where = q.where.length ? q.where.join(' AND ') : 'true';
  const count = await em.execute<{ n: string }[]>(
    `SELECT count(*) AS n FROM ${q.table} WHERE ${where}`,
    q.params,
  );
  const cmp = q.order === 'DESC' ? '<' : '>';
  const pageWhere = q.after ? `${where} AND (created_at, id) ${cmp} (?::timestamptz, ?)` : where;
  const params = q.after ? [...q.params, q.after.k, q.after.id] : q.params;
  const rows = await em.execute<R[]>(
    `SELECT ${q.columns} FROM ${q.table} WHERE ${pageWhere} ORDER BY created_at ${q.order}, id ${q.order} LIMIT ?`,
    [...params, q.size + 1],
  );
  return toPage(
    rows,
    q.size,
    Number(count[0]?.n ?? 0),
    (r) => ({ k: date(r.created_at).toISOString(), id: r.id }),
    q.map,
  );
}
