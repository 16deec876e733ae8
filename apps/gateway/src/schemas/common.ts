import type { common } from '@sluice/contracts';
import { Type } from '@sinclair/typebox';

/** Shared REST schemas. Every route declares request and response schemas built from these. */

export { Amount, Currency, DateOnly, Id, Page, Timestamp, iso } from '@sluice/api';

/** `limit` and `cursor` of every list endpoint. */
export const PageQuery = {
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'page size, 1 to 100' }),
  ),
  cursor: Type.Optional(Type.String({ minLength: 1, description: 'nextCursor of the previous page' })),
};

export const ErrorBody = Type.Object(
  {
    status: Type.Integer(),
    code: Type.String(),
    message: Type.String(),
    details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    reason: Type.Optional(
      Type.String({ description: 'the specific failed check (401 UNAUTHORIZED of wallet flows)' }),
    ),
  },
  { $id: 'Error' },
);

/** The `page` of a list call: the query's `limit` and `cursor` (absent when not given). */
export function pageOf(q: { limit?: number; cursor?: string }): common.PageRequest {
  return { ...(q.limit ? { limit: q.limit } : {}), ...(q.cursor ? { cursor: q.cursor } : {}) };
}

/** The list envelope of a page: `data`, `hasMore`, `nextCursor` (only with more), `totalCount`. */
export function envelope<T>(data: T[], page: common.PageInfo | undefined) {
  return {
    data,
    hasMore: page?.hasMore ?? false,
    ...(page?.hasMore && page.nextCursor ? { nextCursor: page.nextCursor } : {}),
    totalCount: page?.totalCount ?? data.length,
  };
}
