import type { Clock } from '@sluice/core';
import { transactional, type EntityManager, type MikroORM } from '@sluice/store';
import { applyConfigUpdate, sameSettings, type ConfigUpdateInput } from '../domain/platform-config.js';
import type { Platform, PlatformConfig, PlatformConfigView, WebhookTarget } from '../domain/platform.js';
import { validIds } from '../domain/validation.js';
import { activeSecrets, generateWebhookSecret, WEBHOOK_SECRET_GRACE_MS } from '../domain/webhook-secret.js';
import { requirePlatform, type PlatformStore } from './platforms.service.js';
import type { IdentityEvents } from './ports.js';

/** A platform's configuration, its webhook signing secrets and where its webhooks go. */
export class ConfigService {
  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly store: Omit<PlatformStore, 'tokens'>,
    private readonly events: IdentityEvents,
    /** How long a replaced signing secret keeps signing after a rotation. */
    private readonly rotationOverlapMs: number = WEBHOOK_SECRET_GRACE_MS,
  ) {}

  async get(platformId: string): Promise<PlatformConfigView> {
    validIds(['platformId', platformId, 'Platform']);
    const em = this.orm.em.fork();
    const platform = await requirePlatform(this.store.platforms, em, platformId);
    return this.view(em, platform, await this.store.configs.get(em, platformId));
  }

  /** Validates and applies a change; writes PLATFORM_CONFIG.UPDATED when something changed. */
  async update(platformId: string, input: ConfigUpdateInput): Promise<PlatformConfigView> {
    validIds(['platformId', platformId, 'Platform']);
    return transactional(this.orm, async (em) => {
      const platform = await requirePlatform(this.store.platforms, em, platformId);
      const config = await this.store.configs.get(em, platformId, 'update');
      const settings = applyConfigUpdate(config.settings, input, { environment: platform.environment });
      // Setting webhookEndpoint (even to the same URL) enables an endpoint the dispatcher disabled.
      const reenabled = input.webhookEndpoint !== undefined && !!config.webhookEndpointDisabled;
      if (sameSettings(config.settings, settings) && !reenabled) return this.view(em, platform, config);
      const now = this.clock.now();
      const { webhookEndpointDisabled, ...rest } = config;
      const updated: PlatformConfig = {
        ...rest,
        ...(webhookEndpointDisabled && !reenabled ? { webhookEndpointDisabled } : {}),
        settings,
        updatedAt: now,
      };
      await this.store.configs.update(em, updated);
      await this.events.platformConfigUpdated(em, {
        platform,
        settings,
        webhookSigningSecretRotated: false,
        webhookEndpointDisabled: !!updated.webhookEndpointDisabled,
        at: now,
      });
      return this.view(em, platform, updated);
    });
  }

  /**
   * WEBHOOK_ENDPOINT.DISABLED from the webhook-dispatcher, in the consumer's inbox transaction `em`:
   * the endpoint `url` is disabled (shown in GET /config; GetWebhookTarget omits it) until the
   * platform sets webhookEndpoint again. Ignored when the platform has since set another endpoint or
   * it is already disabled. Writes PLATFORM_CONFIG.UPDATED.
   */
  async disableWebhookEndpoint(
    em: EntityManager,
    platformId: string,
    e: { url: string; reason: string; at: Date },
  ): Promise<void> {
    const platform = await this.store.platforms.find(em, platformId);
    if (!platform) return;
    const config = await this.store.configs.get(em, platformId, 'update');
    if (config.settings.webhookEndpoint !== e.url || config.webhookEndpointDisabled) return;
    const now = this.clock.now();
    await this.store.configs.update(em, {
      ...config,
      webhookEndpointDisabled: { at: e.at, reason: e.reason },
      updatedAt: now,
    });
    await this.events.platformConfigUpdated(em, {
      platform,
      settings: config.settings,
      webhookSigningSecretRotated: false,
      webhookEndpointDisabled: true,
      at: now,
    });
  }

  /**
   * Makes a new current signing secret and writes PLATFORM_CONFIG.UPDATED (saying
   * only that it rotated). The replaced secret keeps signing for the rotation overlap
   * (WEBHOOK_SECRET_ROTATION_OVERLAP_SECONDS, 24 hours by default: deliveries carry both
   * signatures, so receivers accept either while they switch); secrets whose overlap is over
   * are deleted.
   */
  async rotateWebhookSecret(platformId: string): Promise<PlatformConfigView> {
    validIds(['platformId', platformId, 'Platform']);
    return transactional(this.orm, async (em) => {
      const platform = await requirePlatform(this.store.platforms, em, platformId);
      const config = await this.store.configs.get(em, platformId, 'update');
      const now = this.clock.now();
      await this.store.secrets.deleteExpired(em, platformId, now);
      await this.store.secrets.expireCurrent(
        em,
        platformId,
        new Date(now.getTime() + this.rotationOverlapMs),
      );
      await this.store.secrets.insert(em, platformId, { secret: generateWebhookSecret(), createdAt: now });
      const updated: PlatformConfig = { ...config, updatedAt: now };
      await this.store.configs.update(em, updated);
      await this.events.platformConfigUpdated(em, {
        platform,
        settings: config.settings,
        webhookSigningSecretRotated: true,
        webhookEndpointDisabled: !!config.webhookEndpointDisabled,
        at: now,
      });
      return this.view(em, platform, updated);
    });
  }

  /** Where the platform's webhooks go and the secrets that sign them now (current first). */
  async webhookTarget(platformId: string): Promise<WebhookTarget> {
    validIds(['platformId', platformId, 'Platform']);
    const em = this.orm.em.fork();
    const platform = await requirePlatform(this.store.platforms, em, platformId);
    const config = await this.store.configs.get(em, platformId);
    const secrets = activeSecrets(await this.store.secrets.list(em, platformId), this.clock.now());
    return {
      ...(config.settings.webhookEndpoint && !config.webhookEndpointDisabled
        ? { webhookEndpoint: config.settings.webhookEndpoint }
        : {}),
      signingSecrets: secrets.map((s) => s.secret),
      environment: platform.environment,
    };
  }

  private async view(
    em: EntityManager,
    platform: Platform,
    config: PlatformConfig,
  ): Promise<PlatformConfigView> {
    const secrets = activeSecrets(await this.store.secrets.list(em, platform.id), this.clock.now());
    const current = secrets[0];
    if (!current) throw new Error(`platform ${platform.id} has no webhook signing secret`);
    const previous = secrets[1];
    return {
      ...config,
      environment: platform.environment,
      webhookSigningSecret: current.secret,
      ...(previous?.expiresAt ? { previousWebhookSigningSecretExpiresAt: previous.expiresAt } : {}),
    };
  }
}
