import { EVENTS } from '@sluice/api';
import { LockMode } from '@mikro-orm/core';
import { newId, type Clock, type Page } from '@sluice/core';
import { transactional, type MikroORM } from '@sluice/store';
import type { Outbox } from '@sluice/events';
import { fail } from '../domain/errors.js';
import type { ApiToken } from '../domain/platform.js';
import {
  generateClientSecret,
  hashClientSecret,
  normalizeTokenId,
  validateTokenFilter,
  type NewToken,
  type TokenFilter,
} from '../domain/token.js';
import { tokenCreatedEventData } from '../events/identity.events.js';
import { ApiTokenEntity, PlatformEntity } from './entities.js';
import { tokenFromRecord } from './mappers.js';
import { afterCursor, between, pageOf, pageSize } from './keyset.js';
import type { PlatformRepository } from './platform.repository.js';

/** A platform's API tokens. Deleting is revoking: the row stays with `deleted_at` set. */
export class TokenRepository {
  constructor(
    private readonly orm: MikroORM,
    private readonly outbox: Outbox,
    private readonly clock: Clock,
    private readonly platforms: PlatformRepository,
  ) {}

  /** Creates a token; the returned secret is never available again. */
  async create(platformId: string, input: NewToken): Promise<{ token: ApiToken; clientSecret: string }> {
    const clientSecret = generateClientSecret();
    const token = await transactional(this.orm, async (em) => {
      await this.platforms.requirePlatform(em, platformId);
      const now = this.clock.now();
      const row = em.create(ApiTokenEntity, {
        id: newId('Token'),
        platformId,
        name: input.name,
        permissions: [...input.permissions],
        secretHash: hashClientSecret(clientSecret),
        createdAt: now,
        updatedAt: now,
        deletedAt: null,
      });
      await em.flush();
      await this.outbox.add(em, EVENTS.TOKEN_CREATED, {
        platformId,
        data: tokenCreatedEventData(row.id, row.name, input.permissions),
        occurredAt: now,
      });
      return tokenFromRecord(row);
    });
    return { token, clientSecret };
  }

  async get(platformId: string, tokenId: string): Promise<ApiToken> {
    const id = normalizeTokenId(tokenId);
    const row = id
      ? await this.orm.em.fork().findOne(ApiTokenEntity, { id, platformId, deletedAt: null })
      : null;
    if (!row) throw fail('TOKEN_NOT_FOUND', 'Token not found');
    return tokenFromRecord(row);
  }

  /** Live tokens, newest first. */
  async list(
    platformId: string,
    filter: TokenFilter,
    limit: number | undefined,
    cursor: string | undefined,
  ): Promise<Page<ApiToken>> {
    const f = validateTokenFilter(filter);
    const size = pageSize(limit);
    const after = afterCursor(cursor);
    const where: Record<string, unknown> = { platformId, deletedAt: null };
    if (f.name !== undefined) where.name = f.name;
    const created = between(f.createdAfter, f.createdBefore);
    if (created) where.createdAt = created;
    const updated = between(f.updatedAfter, f.updatedBefore);
    if (updated) where.updatedAt = updated;
    const em = this.orm.em.fork();
    const [total, rows] = await Promise.all([
      em.count(ApiTokenEntity, where),
      em
        .fork()
        .find(ApiTokenEntity, after ? { $and: [where, after] } : where, {
          orderBy: { createdAt: 'desc', id: 'desc' },
          limit: size + 1,
        }),
    ]);
    return pageOf(rows, size, total, tokenFromRecord);
  }

  /**
   * Revokes a token and emits TOKEN.DELETED (caches of verified credentials
   * drop it). The platform's last live token cannot be deleted, so a platform
   * cannot lock itself out; concurrent deletes are serialized on the platform row.
   */
  async delete(platformId: string, tokenId: string): Promise<ApiToken> {
    const id = normalizeTokenId(tokenId);
    if (!id) throw fail('TOKEN_NOT_FOUND', 'Token not found');
    return transactional(this.orm, async (em) => {
      const platform = await em.findOne(
        PlatformEntity,
        { id: platformId },
        { lockMode: LockMode.PESSIMISTIC_WRITE },
      );
      const row = platform ? await em.findOne(ApiTokenEntity, { id, platformId, deletedAt: null }) : null;
      if (!row) throw fail('TOKEN_NOT_FOUND', 'Token not found');
      const live = await em.count(ApiTokenEntity, { platformId, deletedAt: null });
      if (live <= 1)
        throw fail(
          'CANNOT_DELETE_LAST_TOKEN',
          'A platform must keep at least one API token; create another one first',
        );
      const now = this.clock.now();
      row.deletedAt = now;
      row.updatedAt = now;
      await em.flush();
      await this.outbox.add(em, EVENTS.TOKEN_DELETED, {
        platformId,
        data: { tokenId: id },
        occurredAt: now,
      });
      return tokenFromRecord(row);
    });
  }
}
