import { EVENTS } from '@sluice/api';
import { randomUUID } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import { idUuid, isId, newId, type Clock } from '@sluice/core';
import { transactional, type EntityManager, type MikroORM } from '@sluice/store';
import type { Outbox } from '@sluice/events';
import { fail, UNAUTHORIZED_MESSAGE } from '../domain/errors.js';
import {
  applyConfigUpdate,
  defaultSettings,
  type ConfigUpdateInput,
  type PlatformSettings,
} from '../domain/platform-config.js';
import type { Platform, PlatformConfigView, WebhookTarget } from '../domain/platform.js';
import {
  clientSecretMatches,
  hashClientSecret,
  normalizeTokenId,
  PERMISSIONS,
  type Environment,
  type Permission,
} from '../domain/token.js';
import { activeSecrets, generateWebhookSecret, WEBHOOK_SECRET_GRACE_MS } from '../domain/webhook-secret.js';
import {
  platformConfigEventData,
  platformCreatedEventData,
  tokenCreatedEventData,
} from '../events/identity.events.js';
import {
  ApiTokenEntity,
  PlatformConfigEntity,
  PlatformEntity,
  WebhookSecretEntity,
  type PlatformConfigRecord,
  type PlatformRecord,
} from './entities.js';
import { platformFromRecord, settingsFromRecord, settingsToRecord } from './mappers.js';

/** Platforms, their configuration, webhook signing secrets and credential checks. */
export class PlatformRepository {
  constructor(
    private readonly orm: MikroORM,
    private readonly outbox: Outbox,
    private readonly clock: Clock,
  ) {}

  /**
   * Checks a credential with one primary-key lookup (token joined to its
   * platform). Unknown, wrong and revoked credentials fail alike.
   */
  async authenticate(
    tokenId: string,
    clientSecret: string,
  ): Promise<{ platform: Platform; tokenId: string; permissions: Permission[] }> {
    const id = normalizeTokenId(tokenId);
    const rows = id
      ? await this.orm.em
          .getConnection()
          .execute<
            {
              secret_hash: Buffer;
              permissions: string[];
              deleted_at: Date | null;
              id: string;
              name: string;
              environment: Environment;
              created_at: Date;
            }[]
          >(
            `SELECT t.secret_hash, t.permissions, t.deleted_at, p.id, p.name, p.environment, p.created_at
             FROM api_tokens t JOIN platforms p ON p.id = t.platform_id
            WHERE t.id = ?`,
            [id],
          )
      : [];
    const row = rows[0];
    const matches = clientSecretMatches(clientSecret, row?.secret_hash);
    if (!row || !matches || row.deleted_at) throw fail('UNAUTHORIZED', UNAUTHORIZED_MESSAGE);
    return {
      platform: {
        id: row.id,
        name: row.name,
        environment: row.environment,
        createdAt: new Date(row.created_at),
      },
      tokenId: id!,
      permissions: row.permissions as Permission[],
    };
  }

  async get(platformId: string): Promise<Platform> {
    return platformFromRecord(await this.requirePlatform(this.orm.em.fork(), platformId));
  }

  /**
   * Bootstrap: a platform of `environment` holds exactly this credential.
   * Creates the token (and the platform named `platformName` unless one of
   * that environment and name exists). Serialized per token id and platform
   * name with transaction-scoped advisory locks, so concurrent starts agree.
   */
  async ensureCredential(input: {
    environment: Environment;
    tokenId: string;
    clientSecret: string;
    platformName: string;
  }): Promise<{ platform: Platform; created: boolean }> {
    return transactional(this.orm, async (em) => {
      await em.execute(`SELECT pg_advisory_xact_lock(hashtext(?))`, [
        `identity:bootstrap:${input.environment}:${input.platformName}`,
      ]);
      await em.execute(`SELECT pg_advisory_xact_lock(hashtext(?))`, [`identity:bootstrap:${input.tokenId}`]);
      const token = await em.findOne(ApiTokenEntity, { id: input.tokenId });
      if (token) {
        const platform = await this.requirePlatform(em, token.platformId);
        if (!clientSecretMatches(input.clientSecret, token.secretHash)) {
          throw fail('CREDENTIAL_CONFLICT', `Token ${input.tokenId} exists with a different client secret`);
        }
        if (token.deletedAt)
          throw fail(
            'CREDENTIAL_CONFLICT',
            `Token ${input.tokenId} has been revoked; configure a new credential`,
          );
        if (platform.environment !== input.environment) {
          throw fail(
            'CREDENTIAL_CONFLICT',
            `Token ${input.tokenId} belongs to a ${platform.environment} platform`,
          );
        }
        return { platform: platformFromRecord(platform), created: false };
      }
      const now = this.clock.now();
      let platform = await em.findOne(
        PlatformEntity,
        { environment: input.environment, name: input.platformName },
        { orderBy: { createdAt: 'asc', id: 'asc' } },
      );
      if (!platform) platform = await this.createPlatform(em, input.platformName, input.environment, now);
      em.create(ApiTokenEntity, {
        id: input.tokenId,
        platformId: platform.id,
        name: 'bootstrap',
        permissions: [...PERMISSIONS],
        secretHash: hashClientSecret(input.clientSecret),
        createdAt: now,
        updatedAt: now,
        deletedAt: null,
      });
      await em.flush();
      await this.outbox.add(em, EVENTS.TOKEN_CREATED, {
        platformId: platform.id,
        data: tokenCreatedEventData(input.tokenId, 'bootstrap', [...PERMISSIONS]),
        occurredAt: now,
      });
      return { platform: platformFromRecord(platform), created: true };
    });
  }

  private async createPlatform(
    em: EntityManager,
    name: string,
    environment: Environment,
    now: Date,
  ): Promise<PlatformRecord> {
    const platform = em.create(PlatformEntity, {
      id: newId('Platform'),
      name,
      environment,
      createdAt: now,
      updatedAt: now,
    });
    await em.flush(); // parent row first: the children reference it
    const settings = defaultSettings();
    em.create(PlatformConfigEntity, {
      platformId: platform.id,
      ...settingsToRecord(settings),
      isRegulatedFinancialInstitution: false,
      createdAt: now,
      updatedAt: now,
    });
    em.create(WebhookSecretEntity, {
      id: randomUUID(),
      platformId: platform.id,
      secret: generateWebhookSecret(),
      createdAt: now,
      expiresAt: null,
    });
    await em.flush();
    await this.outbox.add(em, EVENTS.PLATFORM_CREATED, {
      platformId: platform.id,
      data: platformCreatedEventData(name, environment),
      occurredAt: now,
    });
    await this.outbox.add(em, EVENTS.PLATFORM_CONFIG_UPDATED, {
      platformId: platform.id,
      data: platformConfigEventData(settings),
      occurredAt: now,
    });
    return platform;
  }

  async getConfig(platformId: string): Promise<PlatformConfigView> {
    const em = this.orm.em.fork();
    const platform = await this.requirePlatform(em, platformId);
    const config = await em.findOneOrFail(PlatformConfigEntity, { platformId });
    return this.view(em, platform, config);
  }

  /** Validates and applies a config change; emits PLATFORM_CONFIG.UPDATED when something changed. */
  async updateConfig(platformId: string, input: ConfigUpdateInput): Promise<PlatformConfigView> {
    return transactional(this.orm, async (em) => {
      const platform = await this.requirePlatform(em, platformId);
      const config = await em.findOneOrFail(
        PlatformConfigEntity,
        { platformId },
        { lockMode: LockMode.PESSIMISTIC_WRITE },
      );
      const current = settingsFromRecord(config);
      const next = applyConfigUpdate(current, input);
      if (!sameSettings(current, next)) {
        const now = this.clock.now();
        Object.assign(config, settingsToRecord(next), { updatedAt: now });
        await em.flush();
        await this.outbox.add(em, EVENTS.PLATFORM_CONFIG_UPDATED, {
          platformId,
          data: platformConfigEventData(next),
          occurredAt: now,
        });
      }
      return this.view(em, platform, config);
    });
  }

  /**
   * Makes a new current signing secret. The replaced one keeps signing for
   * 24 hours (receivers accept either while they switch); secrets whose grace
   * period is over are deleted.
   */
  async rotateWebhookSecret(platformId: string): Promise<PlatformConfigView> {
    return transactional(this.orm, async (em) => {
      const platform = await this.requirePlatform(em, platformId);
      const config = await em.findOneOrFail(
        PlatformConfigEntity,
        { platformId },
        { lockMode: LockMode.PESSIMISTIC_WRITE },
      );
      const now = this.clock.now();
      await em.nativeDelete(WebhookSecretEntity, { platformId, expiresAt: { $lte: now } });
      await em.nativeUpdate(
        WebhookSecretEntity,
        { platformId, expiresAt: null },
        { expiresAt: new Date(now.getTime() + WEBHOOK_SECRET_GRACE_MS) },
      );
      em.create(WebhookSecretEntity, {
        id: randomUUID(),
        platformId,
        secret: generateWebhookSecret(),
        createdAt: now,
        expiresAt: null,
      });
      config.updatedAt = now;
      await em.flush();
      await this.outbox.add(em, EVENTS.PLATFORM_CONFIG_UPDATED, {
        platformId,
        data: platformConfigEventData(settingsFromRecord(config), true),
        occurredAt: now,
      });
      return this.view(em, platform, config);
    });
  }

  async webhookTarget(platformId: string): Promise<WebhookTarget> {
    const em = this.orm.em.fork();
    const platform = await this.requirePlatform(em, platformId);
    const config = await em.findOneOrFail(PlatformConfigEntity, { platformId });
    const secrets = await this.activeSecrets(em, platformId);
    const target: WebhookTarget = {
      signingSecrets: secrets.map((s) => s.secret),
      environment: platform.environment,
    };
    if (config.webhookEndpoint) target.webhookEndpoint = config.webhookEndpoint;
    return target;
  }

  /** Platform and its config, for rules that depend on them (customers). */
  async platformWithSettings(
    em: EntityManager,
    platformId: string,
  ): Promise<{ platform: PlatformRecord; settings: PlatformSettings }> {
    const platform = await this.requirePlatform(em, platformId);
    const config = await em.findOneOrFail(PlatformConfigEntity, { platformId });
    return { platform, settings: settingsFromRecord(config) };
  }

  async requirePlatform(em: EntityManager, platformId: string): Promise<PlatformRecord> {
    const platform = isId(platformId, 'Platform')
      ? await em.findOne(PlatformEntity, { id: platformId })
      : null;
    if (!platform) throw fail('PLATFORM_NOT_FOUND', 'Platform not found');
    return platform;
  }

  private async activeSecrets(em: EntityManager, platformId: string) {
    const rows = await em.find(WebhookSecretEntity, { platformId });
    return activeSecrets(
      rows.map((r) => ({
        secret: r.secret,
        createdAt: r.createdAt,
        ...(r.expiresAt ? { expiresAt: r.expiresAt } : {}),
      })),
      this.clock.now(),
    );
  }

  private async view(
    em: EntityManager,
    platform: PlatformRecord,
    config: PlatformConfigRecord,
  ): Promise<PlatformConfigView> {
    const secrets = await this.activeSecrets(em, platform.id);
    const current = secrets[0];
    if (!current) throw new Error(`platform ${platform.id} has no webhook signing secret`);
    const view: PlatformConfigView = {
      platformId: platform.id,
      environment: platform.environment,
      settings: settingsFromRecord(config),
      isRegulatedFinancialInstitution: config.isRegulatedFinancialInstitution,
      webhookSigningSecret: current.secret,
      createdAt: config.createdAt,
      updatedAt: config.updatedAt,
    };
    const previous = secrets[1];
    if (previous?.expiresAt) view.previousWebhookSigningSecretExpiresAt = previous.expiresAt;
    return view;
  }
}

/** `PlatformConfig:<uuid of the platform>`: the config has no life of its own. */
export function platformConfigId(platformId: string): string {
  return `PlatformConfig:${idUuid(platformId)}`;
}

function sameSettings(a: PlatformSettings, b: PlatformSettings): boolean {
  const norm = (s: PlatformSettings) => JSON.stringify(settingsToRecord(s));
  return norm(a) === norm(b);
}
