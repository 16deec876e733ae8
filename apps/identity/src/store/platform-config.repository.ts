import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@sluice/store';
import type { PlatformConfig } from '../domain/platform.js';
import { PlatformConfigEntity } from './entities.js';
import { platformConfigFromRow, platformConfigToRow } from './mappers.js';

/** The `platform_configs` table: one row per platform, created with it. */
export class PlatformConfigRepository {
  /**
   * The platform's config (every platform has one). `lock`: `share` keeps it from
   * changing until the transaction ends (what a customer change reads), `update`
   * serializes the changes of one platform's config.
   */
  async get(em: EntityManager, platformId: string, lock?: 'share' | 'update'): Promise<PlatformConfig> {
    const lockMode =
      lock === 'update'
        ? LockMode.PESSIMISTIC_WRITE
        : lock === 'share'
          ? LockMode.PESSIMISTIC_READ
          : undefined;
    const row = await em.findOne(PlatformConfigEntity, { platformId }, lockMode ? { lockMode } : {});
    if (!row) throw new Error(`platform ${platformId} has no config row`);
    return platformConfigFromRow(row);
  }

  async insert(em: EntityManager, config: PlatformConfig): Promise<void> {
    em.create(PlatformConfigEntity, platformConfigToRow(config));
    await em.flush();
  }

  /** Writes the config's settings and timestamps over its row. */
  async update(em: EntityManager, config: PlatformConfig): Promise<void> {
    const row = await em.findOneOrFail(PlatformConfigEntity, { platformId: config.platformId });
    Object.assign(row, platformConfigToRow(config));
    await em.flush();
  }
}
