import { invalidInput } from './errors.js';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

/** The list envelope every list endpoint returns. */
export interface Page<T> {
  data: T[];
  hasMore: boolean;
  nextCursor?: string;
  totalCount: number;
}

/**
 * Keyset position: the sort key and id of the last row of the previous page.
 * Encoded as opaque base64url JSON; the `v` field lets the format evolve.
 */
export interface CursorPosition {
  /** Sort key value of the last row (an ISO timestamp, usually createdAt). */
  k: string;
  /** Id of the last row (tie-breaker). */
  id: string;
}

export function encodeCursor(pos: CursorPosition): string {
  return Buffer.from(JSON.stringify({ v: 1, ...pos }), 'utf8').toString('base64url');
}

/**
 * Decodes a cursor; a malformed one is a 400 on field `cursor`. `key` says what
 * the sort key is: `timestamp` (the default; lists keyed by createdAt) accepts
 * only the canonical ISO form this API encodes (`Date#toISOString`), so a forged
 * cursor never reaches SQL as an unparseable or out-of-range date; `text` any string.
 */
export function decodeCursor(
  cursor: string | undefined | null,
  key: 'timestamp' | 'text' = 'timestamp',
): CursorPosition | undefined {
  if (cursor === undefined || cursor === null || cursor === '') return undefined;
  try {
    if (cursor.length > 1024 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw new Error('alphabet');
    const obj = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Record<string, unknown>;
    if (obj.v !== 1 || typeof obj.k !== 'string' || typeof obj.id !== 'string') throw new Error('shape');
    if (key === 'timestamp' && !isCanonicalTimestamp(obj.k)) throw new Error('timestamp');
    return { k: obj.k, id: obj.id };
  } catch {
    throw invalidInput([{ field: 'cursor', message: 'is not a cursor returned by this API' }]);
  }
}

/** `2026-01-01T00:00:00.000Z` exactly as `toISOString` writes it (years 0000–9999). */
function isCanonicalTimestamp(k: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(k)) return false;
  const d = new Date(k);
  return !Number.isNaN(d.getTime()) && d.toISOString() === k;
}

/** Validates `limit` (1..100, default 20). */
export function pageSize(limit: number | undefined | null): number {
  if (limit === undefined || limit === null || limit === 0) return DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
    throw invalidInput([{ field: 'limit', message: `must be an integer from 1 to ${MAX_PAGE_SIZE}` }]);
  }
  return limit;
}

/**
 * Builds the envelope from rows fetched with `limit + 1` (the extra row tells
 * whether there is a next page).
 */
export function toPage<R, T>(
  rows: R[],
  limit: number,
  totalCount: number,
  keyOf: (row: R) => CursorPosition,
  map: (row: R) => T,
): Page<T> {
  const hasMore = rows.length > limit;
  const pageRows = hasMore ? rows.slice(0, limit) : rows;
  const page: Page<T> = { data: pageRows.map(map), hasMore, totalCount };
  if (hasMore) page.nextCursor = encodeCursor(keyOf(pageRows[pageRows.length - 1]!));
  return page;
}
