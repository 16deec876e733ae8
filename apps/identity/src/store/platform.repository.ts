import { LockMode } from '@mikro-orm/core';
import { isId } from '@sluice/core';
import type { EntityManager } from '@sluice/store';
import type { Environment, Platform } from '../domain/platform.js';
import { PlatformEntity } from './entities.js';
import { platformFromRow, platformToRow } from './mappers.js';

/** The `platforms` table, and the advisory locks that serialize bootstraps. */
export class PlatformRepository {
  /** The platform, or undefined (a malformed id finds none). `forUpdate` locks its row. */
  async find(
    em: EntityManager,
    platformId: string,
    o: { forUpdate?: boolean } = {},
  ): Promise<Platform | undefined> {
    if (!isId(platformId, 'Platform')) return undefined;
    const row = await em.findOne(
      PlatformEntity,
      { id: platformId },
      o.forUpdate ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {},
    );
    return row ? platformFromRow(row) : undefined;
  }

  /** The oldest platform of that environment with that name. */
  async findByName(em: EntityManager, environment: Environment, name: string): Promise<Platform | undefined> {
    const row = await em.findOne(
      PlatformEntity,
      { environment, name },
      { orderBy: { createdAt: 'asc', id: 'asc' } },
    );
    return row ? platformFromRow(row) : undefined;
  }

  /** Inserts the row now: the platform's config, secrets and tokens reference it. */
  async insert(em: EntityManager, platform: Platform): Promise<void> {
    em.create(PlatformEntity, platformToRow(platform));
    await em.flush();
  }

  /** Takes a transaction-scoped advisory lock per key, in the order given. */
  async lock(em: EntityManager, keys: readonly string[]): Promise<void> {
    for (const key of keys) await em.execute(`SELECT pg_advisory_xact_lock(hashtext(?))`, [key]);
  }
}
