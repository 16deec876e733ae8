import { createHmac, randomBytes } from 'node:crypto';
import { constantTimeEqual } from '@sluice/crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { invalidInput } from '@sluice/core';

/** What a cursor is bound to: the caller, the list and the list's filters. */
export interface CursorScope {
  platformId: string;
  /** The list: method and route pattern (`GET /2025-10-13/transactions`). */
  list: string;
  /** The validated query without `cursor` and `limit` (the page size may change between pages). */
  filters: Record<string, unknown>;
}

/** Wraps a service's page cursor for the client and unwraps what the client sends back. */
export interface CursorCodec {
  wrap(serviceCursor: string, scope: CursorScope): string;
  /** The service's cursor, or 400 INVALID_INPUT on `cursor`. */
  unwrap(cursor: string, scope: CursorScope): string;
}

/** Longest cursor a client may send (a service cursor is at most 1024 characters). */
export const MAX_CURSOR_LENGTH = 2048;

const TAG_BYTES = 32;

function stable(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stable).join(',')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stable((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

function refused(): never {
  throw invalidInput([{ field: 'cursor', message: 'is not a cursor returned by this API for this list' }]);
}

/**
 * Cursors authenticated by the gateway: `<service cursor, base64url>.<tag>`, the
 * tag an HMAC-SHA256 (key: CURSOR_SIGNING_KEY) over the platform, the list, its
 * filters and the service cursor. A cursor from another list, another platform,
 * with other filters or an edited position fails the tag and is refused before
 * the service is called; the service still decodes (and bounds) its own cursor.
 */
export class HmacCursorCodec implements CursorCodec {
  constructor(private readonly key: Buffer) {}

  /** A key for this process only (development and tests: cursors do not outlive the process). */
  static random(): HmacCursorCodec {
    return new HmacCursorCodec(randomBytes(32));
  }

  private tag(serviceCursor: string, scope: CursorScope): Buffer {
    return createHmac('sha256', this.key)
      .update(stable(['sluice.cursor.v1', scope.platformId, scope.list, scope.filters, serviceCursor]))
      .digest();
  }

  wrap(serviceCursor: string, scope: CursorScope): string {
    const payload = Buffer.from(serviceCursor, 'utf8').toString('base64url');
    return `${payload}.${this.tag(serviceCursor, scope).toString('base64url')}`;
  }

  unwrap(cursor: string, scope: CursorScope): string {
    const m = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/.exec(cursor);
    if (!m || cursor.length > MAX_CURSOR_LENGTH) refused();
    const serviceCursor = Buffer.from(m[1]!, 'base64url').toString('utf8');
    const given = Buffer.from(m[2]!, 'base64url');
    const expected = this.tag(serviceCursor, scope);
    if (given.length !== TAG_BYTES || !constantTimeEqual(given, expected)) refused();
    return serviceCursor;
  }
}

/** The scope of a list request: its platform, route and filters. */
function scopeOf(request: FastifyRequest, query: Record<string, unknown>): CursorScope {
  const { cursor: _cursor, limit: _limit, ...filters } = query;
  return {
    platformId: request.platform.id,
    list: `${request.method} ${request.routeOptions.url ?? ''}`,
    filters,
  };
}

/** A route's validated query (an object whenever the route declares a querystring schema). */
function isQuery(q: unknown): q is Record<string, unknown> {
  return q !== null && typeof q === 'object';
}

function hasCursorParameter(request: FastifyRequest): boolean {
  const query = request.routeOptions.schema?.querystring as { properties?: Record<string, unknown> } | undefined;
  return query?.properties?.cursor !== undefined;
}

/**
 * In the API scope: on every list route (a querystring with `cursor`) the
 * client's cursor is verified and replaced by the service's before the handler
 * runs, and the answer's `nextCursor` is wrapped for this platform, list and
 * filters. Route handlers only ever see service cursors.
 */
export function registerCursors(scope: FastifyInstance, codec: CursorCodec): void {
  scope.addHook('preHandler', async (request: FastifyRequest) => {
    const query = request.query;
    if (!hasCursorParameter(request) || !isQuery(query) || typeof query.cursor !== 'string') return;
    query.cursor = codec.unwrap(query.cursor, scopeOf(request, query));
  });
  scope.addHook('preSerialization', async (request: FastifyRequest, _reply, payload: unknown) => {
    const query = request.query;
    if (!hasCursorParameter(request) || !isQuery(query) || !isQuery(payload)) return payload;
    if (typeof payload.nextCursor !== 'string') return payload;
    return { ...payload, nextCursor: codec.wrap(payload.nextCursor, scopeOf(request, query)) };
  });
}
