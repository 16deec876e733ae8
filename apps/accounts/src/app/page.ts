import { toPage, type Page } from '@sluice/core';

/** The page of a listing fetched with `size + 1` rows in (created_at, id) order; the next cursor is the last row's key. */
export function keysetPage<R extends { createdAt: Date; id: string }>(
  rows: R[],
  size: number,
  total: number,
): Page<R> {
  return toPage(
    rows,
    size,
    total,
    (r) => ({ k: r.createdAt.toISOString(), id: r.id }),
    (r) => r,
  );
}
