import type { CursorPosition, Page } from '@sluice/core';
import type { EntityDictionary } from '@mikro-orm/core';
import type { EntityManager } from '@sluice/store';
import type { ApiToken, Environment, Platform, StoredToken } from '../domain/platform.js';
import type { TokenFilter } from '../domain/token.js';
import { ApiTokenEntity, PlatformEntity, type ApiTokenRecord } from './entities.js';
import { platformFromRow, tokenFromRow, tokenToRow } from './mappers.js';
import { afterCursor, between, pageOf } from './keyset.js';

/** The columns of `findWithPlatform`: an `api_tokens` row and, prefixed `p_`, its `platforms` row. */
type TokenJoinedToPlatform = EntityDictionary<ApiTokenRecord> & {
  p_id: string;
  p_name: string;
  p_environment: Environment;
  p_created_at: Date;
  p_updated_at: Date;
};

/**
 * The `api_tokens` table. A deleted token is revoked, not removed: its row keeps
 * `deleted_at`, and only live rows are listed or found by `findLive`.
 */
export class TokenRepository {
  /**
   * A token (live or revoked) and its platform in one primary-key lookup joined to
   * `platforms`: exact SQL, since it runs on every API request the gateway has not
   * cached. Each half of the row is read by its table's mapper.
   */
  async findWithPlatform(
    em: EntityManager,
    tokenId: string,
  ): Promise<{ token: StoredToken; platform: Platform } | undefined> {
    const rows = await em.execute<TokenJoinedToPlatform[]>(
      `SELECT t.id, t.platform_id, t.name, t.permissions, t.secret_hash, t.created_at, t.updated_at, t.deleted_at,
              p.id AS p_id, p.name AS p_name, p.environment AS p_environment, p.created_at AS p_created_at,
              p.updated_at AS p_updated_at
         FROM api_tokens t JOIN platforms p ON p.id = t.platform_id
        WHERE t.id = ?`,
      [tokenId],
    );
    const row = rows[0];
    if (!row) return undefined;
    const { p_id, p_name, p_environment, p_created_at, p_updated_at, ...token } = row;
    const platform = {
      id: p_id,
      name: p_name,
      environment: p_environment,
      created_at: p_created_at,
      updated_at: p_updated_at,
    };
    return {
      token: tokenFromRow(em.map(ApiTokenEntity, token)),
      platform: platformFromRow(em.map(PlatformEntity, platform)),
    };
  }

  /** A live token of the platform. */
  async findLive(em: EntityManager, platformId: string, tokenId: string): Promise<StoredToken | undefined> {
    const row = await em.findOne(ApiTokenEntity, { id: tokenId, platformId, deletedAt: null });
    return row ? tokenFromRow(row) : undefined;
  }

  /** A token of any platform, live or revoked. */
  async find(em: EntityManager, tokenId: string): Promise<StoredToken | undefined> {
    const row = await em.findOne(ApiTokenEntity, { id: tokenId });
    return row ? tokenFromRow(row) : undefined;
  }

  async insert(em: EntityManager, token: StoredToken): Promise<void> {
    em.create(ApiTokenEntity, tokenToRow(token));
    await em.flush();
  }

  /** Writes the token over its row (revoking sets `deletedAt`). */
  async update(em: EntityManager, token: StoredToken): Promise<void> {
    const row = await em.findOneOrFail(ApiTokenEntity, { id: token.id });
    Object.assign(row, tokenToRow(token));
    await em.flush();
  }

  async countLive(em: EntityManager, platformId: string): Promise<number> {
    return em.count(ApiTokenEntity, { platformId, deletedAt: null });
  }

  /** Live tokens matching the (validated) filter, newest first: a page of `size` after `after`. */
  async list(
    em: EntityManager,
    platformId: string,
    filter: TokenFilter,
    size: number,
    after: CursorPosition | undefined,
  ): Promise<Page<ApiToken>> {
    const where: Record<string, unknown> = { platformId, deletedAt: null };
    if (filter.name !== undefined) where.name = filter.name;
    const created = between(filter.createdAfter, filter.createdBefore);
    if (created) where.createdAt = created;
    const updated = between(filter.updatedAfter, filter.updatedBefore);
    if (updated) where.updatedAt = updated;
    const position = afterCursor(after);
    const [total, rows] = await Promise.all([
      em.count(ApiTokenEntity, where),
      em.fork().find(ApiTokenEntity, position ? { $and: [where, position] } : where, {
        orderBy: { createdAt: 'desc', id: 'desc' },
        limit: size + 1,
      }),
    ]);
    return pageOf(rows, size, total, tokenFromRow);
  }
}
