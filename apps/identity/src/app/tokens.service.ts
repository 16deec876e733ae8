import { decodeCursor, newId, pageSize, type Clock, type Page } from '@sluice/core';
import { transactional, type MikroORM } from '@sluice/store';
import { fail, tokenNotFound } from '../domain/errors.js';
import type { ApiToken, StoredToken } from '../domain/platform.js';
import {
  generateClientSecret,
  hashClientSecret,
  normalizeTokenId,
  validateNewToken,
  validateTokenFilter,
  type Permission,
  type TokenFilter,
} from '../domain/token.js';
import { validIds } from '../domain/validation.js';
import type { PlatformRepository } from '../store/platform.repository.js';
import type { TokenRepository } from '../store/token.repository.js';
import { requirePlatform } from './platforms.service.js';
import type { IdentityEvents } from './ports.js';

/** A platform's API tokens. Deleting is revoking: the token stays stored with `deletedAt` set. */
export class TokensService {
  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly platforms: PlatformRepository,
    private readonly tokens: TokenRepository,
    private readonly events: IdentityEvents,
  ) {}

  /** Creates a token and writes TOKEN.CREATED; the returned secret is never available again. */
  async create(
    platformId: string,
    request: { name: string; permissions: (Permission | undefined)[] },
  ): Promise<{ token: ApiToken; clientSecret: string }> {
    validIds(['platformId', platformId, 'Platform']);
    const input = validateNewToken(request);
    const clientSecret = generateClientSecret();
    const token = await transactional(this.orm, async (em) => {
      await requirePlatform(this.platforms, em, platformId);
      const now = this.clock.now();
      const created: StoredToken = {
        id: newId('Token'),
        platformId,
        name: input.name,
        permissions: [...input.permissions],
        secretHash: hashClientSecret(clientSecret),
        createdAt: now,
        updatedAt: now,
      };
      await this.tokens.insert(em, created);
      await this.events.tokenCreated(em, created);
      return created;
    });
    return { token, clientSecret };
  }

  /** A live token of the platform. */
  async get(platformId: string, tokenId: string): Promise<ApiToken> {
    validIds(['platformId', platformId, 'Platform'], ['tokenId', tokenId, 'Token']);
    const token = await this.tokens.findLive(this.orm.em.fork(), platformId, normalizeTokenId(tokenId)!);
    if (!token) throw tokenNotFound();
    return token;
  }

  /** Live tokens matching the filter, newest first. */
  async list(
    platformId: string,
    filter: TokenFilter,
    limit: number | undefined,
    cursor: string | undefined,
  ): Promise<Page<ApiToken>> {
    validIds(['platformId', platformId, 'Platform']);
    const valid = validateTokenFilter(filter);
    const size = pageSize(limit);
    const after = decodeCursor(cursor);
    return this.tokens.list(this.orm.em.fork(), platformId, valid, size, after);
  }

  /**
   * Revokes a token and writes TOKEN.DELETED (caches of verified credentials drop
   * it). The platform's last live token cannot be deleted, so a platform cannot lock
   * itself out; concurrent deletes are serialized on the platform's row.
   */
  async delete(platformId: string, tokenId: string): Promise<ApiToken> {
    validIds(['platformId', platformId, 'Platform'], ['tokenId', tokenId, 'Token']);
    const id = normalizeTokenId(tokenId)!;
    return transactional(this.orm, async (em) => {
      const platform = await this.platforms.find(em, platformId, { forUpdate: true });
      const token = platform ? await this.tokens.findLive(em, platformId, id) : undefined;
      if (!token) throw tokenNotFound();
      if ((await this.tokens.countLive(em, platformId)) <= 1)
        throw fail(
          'CANNOT_DELETE_LAST_TOKEN',
          'A platform must keep at least one API token; create another one first',
        );
      const now = this.clock.now();
      const revoked: StoredToken = { ...token, deletedAt: now, updatedAt: now };
      await this.tokens.update(em, revoked);
      await this.events.tokenDeleted(em, revoked);
      return revoked;
    });
  }
}
