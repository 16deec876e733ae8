import { newId, type Clock } from '@sluice/core';
import { transactional, type EntityManager, type MikroORM } from '@sluice/store';
import { fail, platformNotFound, UNAUTHORIZED_MESSAGE } from '../domain/errors.js';
import { defaultSettings } from '../domain/platform-config.js';
import type { Environment, Platform } from '../domain/platform.js';
import {
  bootstrapLockKeys,
  clientSecretMatches,
  hashClientSecret,
  normalizeTokenId,
  PERMISSIONS,
  validateBootstrapCredential,
  type Permission,
} from '../domain/token.js';
import { validIds } from '../domain/validation.js';
import { generateWebhookSecret } from '../domain/webhook-secret.js';
import type { PlatformRepository } from '../store/platform.repository.js';
import type { PlatformConfigRepository } from '../store/platform-config.repository.js';
import type { TokenRepository } from '../store/token.repository.js';
import type { WebhookSecretRepository } from '../store/webhook-secret.repository.js';
import type { IdentityEvents } from './ports.js';

/** The tables a platform spans, as the services that create or read it need them. */
export interface PlatformStore {
  platforms: PlatformRepository;
  configs: PlatformConfigRepository;
  secrets: WebhookSecretRepository;
  tokens: TokenRepository;
}

/** The platform, or PLATFORM_NOT_FOUND: how every platform-scoped use case starts. */
export async function requirePlatform(
  platforms: PlatformRepository,
  em: EntityManager,
  platformId: string,
  o: { forUpdate?: boolean } = {},
): Promise<Platform> {
  const platform = await platforms.find(em, platformId, o);
  if (!platform) throw platformNotFound();
  return platform;
}

/** Platforms: credential checks, reads and the bootstrap that creates them. */
export class PlatformsService {
  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly store: PlatformStore,
    private readonly events: IdentityEvents,
  ) {}

  /**
   * Checks a credential with one primary-key lookup (token joined to its platform).
   * Unknown, malformed, wrong and revoked credentials fail alike, and an unknown
   * token id costs the same hash comparison as a known one.
   */
  async authenticate(
    tokenId: string,
    clientSecret: string,
  ): Promise<{ platform: Platform; tokenId: string; permissions: Permission[] }> {
    const id = normalizeTokenId(tokenId);
    const found = id ? await this.store.tokens.findWithPlatform(this.orm.em.fork(), id) : undefined;
    const matches = clientSecretMatches(clientSecret, found?.token.secretHash);
    if (!found || !matches || found.token.deletedAt) throw fail('UNAUTHORIZED', UNAUTHORIZED_MESSAGE);
    return { platform: found.platform, tokenId: found.token.id, permissions: found.token.permissions };
  }

  async get(platformId: string): Promise<Platform> {
    validIds(['platformId', platformId, 'Platform']);
    return requirePlatform(this.store.platforms, this.orm.em.fork(), platformId);
  }

  /**
   * Bootstrap: a platform of `environment` holds exactly this credential. Creates
   * the token (and the platform named `platformName` unless one of that environment
   * and name exists). Serialized per platform name and token id with
   * transaction-scoped advisory locks, so concurrent starts agree.
   */
  async ensureCredential(request: {
    environment: Environment | undefined;
    tokenId: string;
    clientSecret: string;
    platformName: string;
    /** The operator's flag of a platform this call creates (see PlatformConfig); default false. */
    isRegulatedFinancialInstitution?: boolean;
  }): Promise<{ platform: Platform; created: boolean }> {
    const input = validateBootstrapCredential(request);
    return transactional(this.orm, async (em) => {
      await this.store.platforms.lock(em, bootstrapLockKeys(input));
      const token = await this.store.tokens.find(em, input.tokenId);
      if (token) {
        const platform = await requirePlatform(this.store.platforms, em, token.platformId);
        if (!clientSecretMatches(input.clientSecret, token.secretHash))
          throw fail('CREDENTIAL_CONFLICT', `Token ${input.tokenId} exists with a different client secret`);
        if (token.deletedAt)
          throw fail(
            'CREDENTIAL_CONFLICT',
            `Token ${input.tokenId} has been revoked; configure a new credential`,
          );
        if (platform.environment !== input.environment)
          throw fail(
            'CREDENTIAL_CONFLICT',
            `Token ${input.tokenId} belongs to a ${platform.environment} platform`,
          );
        return { platform, created: false };
      }
      const now = this.clock.now();
      const platform =
        (await this.store.platforms.findByName(em, input.environment, input.platformName)) ??
        (await this.create(em, input.platformName, input.environment, now, {
          isRegulatedFinancialInstitution: request.isRegulatedFinancialInstitution ?? false,
        }));
      const created = {
        id: input.tokenId,
        platformId: platform.id,
        name: 'bootstrap',
        permissions: [...PERMISSIONS],
        secretHash: hashClientSecret(input.clientSecret),
        createdAt: now,
        updatedAt: now,
      };
      await this.store.tokens.insert(em, created);
      await this.events.tokenCreated(em, created);
      return { platform, created: true };
    });
  }

  /**
   * A new platform with the default config (USD, USDC), the operator's flags, and a current
   * webhook signing secret.
   */
  private async create(
    em: EntityManager,
    name: string,
    environment: Environment,
    now: Date,
    flags: { isRegulatedFinancialInstitution: boolean },
  ): Promise<Platform> {
    const platform: Platform = { id: newId('Platform'), name, environment, createdAt: now };
    await this.store.platforms.insert(em, platform); // first: the other rows reference it
    const settings = defaultSettings();
    await this.store.configs.insert(em, {
      platformId: platform.id,
      settings,
      isRegulatedFinancialInstitution: flags.isRegulatedFinancialInstitution,
      createdAt: now,
      updatedAt: now,
    });
    await this.store.secrets.insert(em, platform.id, { secret: generateWebhookSecret(), createdAt: now });
    await this.events.platformCreated(em, platform);
    await this.events.platformConfigUpdated(em, {
      platform,
      settings,
      webhookSigningSecretRotated: false,
      at: now,
    });
    return platform;
  }
}
