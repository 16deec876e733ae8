import type { common } from '@sluice/contracts';

/** The `sluice.common.v1.PageInfo` of a page of a list (the envelope fields besides `data`). */
export function pageInfo(page: { hasMore: boolean; nextCursor?: string | undefined; totalCount: number }): common.PageInfo {
  return {
    hasMore: page.hasMore,
    ...(page.hasMore && page.nextCursor ? { nextCursor: page.nextCursor } : {}),
    totalCount: page.totalCount,
  };
}

/** The `limit` and `cursor` of a `sluice.common.v1.PageRequest` (absent when unset or empty). */
export function pageRequest(page: common.PageRequest | undefined): { limit?: number; cursor?: string } {
  return {
    ...(page?.limit ? { limit: page.limit } : {}),
    ...(page?.cursor ? { cursor: page.cursor } : {}),
  };
}
