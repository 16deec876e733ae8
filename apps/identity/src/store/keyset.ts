import { toPage, type CursorPosition, type Page } from '@sluice/core';

/**
 * Keyset pagination over (created_at DESC, id DESC): the condition selecting the
 * rows after a cursor's position, or undefined for the first page.
 */
export function afterCursor(pos: CursorPosition | undefined): Record<string, unknown> | undefined {
  if (!pos) return undefined;
  const k = new Date(pos.k);
  return { $or: [{ createdAt: { $lt: k } }, { createdAt: k, id: { $lt: pos.id } }] };
}

/** The list envelope from rows fetched with `limit + 1`. */
export function pageOf<R extends { createdAt: Date; id: string }, T>(
  rows: R[],
  limit: number,
  total: number,
  map: (r: R) => T,
): Page<T> {
  return toPage(rows, limit, total, (r) => ({ k: r.createdAt.toISOString(), id: r.id }), map);
}

/** Inclusive range condition on a timestamp column, or undefined when unbounded. */
export function between(after: Date | undefined, before: Date | undefined): Record<string, Date> | undefined {
  if (!after && !before) return undefined;
  const c: Record<string, Date> = {};
  if (after) c.$gte = after;
  if (before) c.$lte = before;
  return c;
}
