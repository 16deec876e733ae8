import { randomUUID } from 'node:crypto';
import type { MasterKeyring } from '@sluice/crypto';
import type { EntityManager } from '@sluice/store';
import type { SigningSecret } from '../domain/webhook-secret.js';
import { WebhookSecretEntity } from './entities.js';
import { signingSecretFromRow, signingSecretToRow } from './mappers.js';

/** The `webhook_signing_secrets` table (secrets sealed under `keyring`): one current secret per platform (no expiry), replaced ones with theirs. */
export class WebhookSecretRepository {
  constructor(private readonly keyring: MasterKeyring) {}

  async list(em: EntityManager, platformId: string): Promise<SigningSecret[]> {
    return (await em.find(WebhookSecretEntity, { platformId })).map((r) => signingSecretFromRow(r, this.keyring));
  }

  async insert(em: EntityManager, platformId: string, secret: SigningSecret): Promise<void> {
    em.create(WebhookSecretEntity, signingSecretToRow(randomUUID(), platformId, secret, this.keyring));
    await em.flush();
  }

  /** Deletes the platform's secrets whose grace period ended by `now`. */
  async deleteExpired(em: EntityManager, platformId: string, now: Date): Promise<void> {
    await em.nativeDelete(WebhookSecretEntity, { platformId, expiresAt: { $lte: now } });
  }

  /** Gives the platform's current secret an expiry: it keeps signing until then. */
  async expireCurrent(em: EntityManager, platformId: string, expiresAt: Date): Promise<void> {
    await em.nativeUpdate(WebhookSecretEntity, { platformId, expiresAt: null }, { expiresAt });
  }
}
