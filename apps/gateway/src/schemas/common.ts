import type { common } from '@sluice/contracts';
import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';
import { MAX_CURSOR_LENGTH } from '../http/cursor.codec.js';

/** Request schemas every route shares: paging, the error body, bounded text of queries. */

/** `limit` and `cursor` of every list endpoint. */
export const PageQuery = {
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'page size, 1 to 100' }),
  ),
  cursor: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: MAX_CURSOR_LENGTH,
      description: 'nextCursor of the previous page of the same list, with the same filters',
    }),
  ),
};

/** An ISO 8601 date-time in a query filter. */
export const DateTimeFilter = (description: string) =>
  Type.String({ format: 'date-time', maxLength: 64, description });

/** A free-form identifier in a query filter (the service decides what matches). */
export const TextFilter = (description?: string, maxLength = 255) =>
  Type.String({ minLength: 1, maxLength, ...(description ? { description } : {}) });

/**
 * One of several object shapes, chosen by the string field `tag`: the tag is
 * checked first (a missing or unknown tag is reported on that field), then the
 * body is validated against the branch the tag names only (oneOf +
 * discriminator), so errors concern that variant and fields of another
 * variant are unknown fields.
 */
export function discriminated<T extends TSchema[]>(
  tag: string,
  branches: [...T],
  options: { description?: string } = {},
) {
  const values = branches.map((b) => ((b as TObject).properties[tag] as { const?: unknown }).const);
  return Type.Unsafe<Static<T[number]>>({
    ...options,
    allOf: [
      { type: 'object', required: [tag], properties: { [tag]: { type: 'string', enum: values } } },
      { oneOf: branches, discriminator: { propertyName: tag } },
    ],
  });
}

/** A JSON object whose fields the service interprets (at most 50 fields; names of at most 100 characters). */
export const FreeFormObject = (description: string) =>
  Type.Record(Type.String(), Type.Unknown(), {
    maxProperties: 50,
    propertyNames: { maxLength: 100 },
    description,
  });

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

/** The error responses a route documents: ErrorBody for 400, 401, 403, 404, 500, 503 and the given extra statuses. */
export function errorResponses<S extends number = never>(...extra: S[]) {
  const statuses = [400, 401, 403, 404, 500, 503, ...extra] as const;
  return Object.fromEntries(statuses.map((s) => [s, ErrorBody])) as Record<
    400 | 401 | 403 | 404 | 500 | 503 | S,
    typeof ErrorBody
  >;
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

/**
 * A request schema published under the reference document's name for it
 * (`#/components/schemas/<id>`), so a client generated from either document names it alike.
 */
export function named<T extends TSchema>(id: string, schema: T): T {
  return { ...schema, $id: id };
}
