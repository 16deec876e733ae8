import type { common } from '@sluice/contracts';
import { Type, type TSchema } from '@sinclair/typebox';

/** Shared REST schemas. Every route declares request and response schemas built from these. */

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 date-time' });
export const DateOnly = Type.String({ format: 'date', description: 'ISO 8601 calendar date' });

export const Currency = Type.Object(
  {
    code: Type.String({ description: 'ISO 4217 code (or a stablecoin code such as USDC)' }),
    name: Type.String(),
    symbol: Type.String(),
    decimals: Type.Integer({ minimum: 0 }),
  },
  { $id: 'Currency' },
);

/** Money on the wire: an integer in the currency's smallest unit. */
export const Amount = Type.Integer({ description: 'amount in the smallest unit of the currency' });

/** `limit` and `cursor` of every list endpoint. */
export const PageQuery = {
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'page size, 1 to 100' }),
  ),
  cursor: Type.Optional(Type.String({ minLength: 1, description: 'nextCursor of the previous page' })),
};

/** The list envelope: `data`, `hasMore`, `nextCursor` (only when hasMore), `totalCount`. */
export function Page<T extends TSchema>(item: T, name: string) {
  return Type.Object(
    {
      data: Type.Array(item),
      hasMore: Type.Boolean(),
      nextCursor: Type.Optional(Type.String()),
      totalCount: Type.Integer({ minimum: 0 }),
    },
    { $id: name },
  );
}

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

/** `<Type>:<uuid>` path/query id. */
export function Id(type: string) {
  return Type.String({
    pattern: `^${type}:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`,
    description: `${type} id (\`${type}:<uuid>\`)`,
  });
}

/** Converts a proto Timestamp (ts-proto Date) to the API string. */
export function iso(d: Date | undefined | null): string | undefined {
  return d ? d.toISOString() : undefined;
}

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
