import type { Environment } from '@sluice/core';
import type { Permission } from './token.js';
import type { PlatformSettings } from './platform-config.js';

export type { Environment, Permission };

/** A platform (tenant) and its environment. */
export interface Platform {
  id: string;
  name: string;
  environment: Environment;
  createdAt: Date;
}

/** An API token as shown to its platform (never with its secret). */
export interface ApiToken {
  id: string;
  platformId: string;
  name: string;
  permissions: Permission[];
  createdAt: Date;
  updatedAt: Date;
}

/** An API token as stored: the public view, the SHA-256 of its secret and when it was revoked. */
export interface StoredToken extends ApiToken {
  secretHash: Buffer;
  deletedAt?: Date;
}

/** A platform's configuration (one per platform): the platform-editable settings and the operator's flags. */
export interface PlatformConfig {
  platformId: string;
  settings: PlatformSettings;
  /**
   * The webhook-dispatcher disabled the endpoint (410 Gone, or failing too long): no webhook is sent
   * until the platform sets webhookEndpoint again.
   */
  webhookEndpointDisabled?: { at: Date; reason: string };
  isRegulatedFinancialInstitution: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/** The whole configuration of a platform as the API shows it. */
export interface PlatformConfigView extends PlatformConfig {
  environment: Environment;
  webhookSigningSecret: string;
  /** When the secret replaced by the last rotation stops signing, while it still does. */
  previousWebhookSigningSecretExpiresAt?: Date;
}

/** Where a platform's webhooks go and the secrets that sign them (current first). */
export interface WebhookTarget {
  webhookEndpoint?: string;
  signingSecrets: string[];
  environment: Environment;
}
