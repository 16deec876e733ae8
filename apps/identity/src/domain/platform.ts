import type { Environment, Permission } from './token.js';
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

/** The whole configuration of a platform as the API shows it. */
export interface PlatformConfigView {
  platformId: string;
  environment: Environment;
  settings: PlatformSettings;
  isRegulatedFinancialInstitution: boolean;
  webhookSigningSecret: string;
  /** When the secret replaced by the last rotation stops signing, while it still does. */
  previousWebhookSigningSecretExpiresAt?: Date;
  createdAt: Date;
  updatedAt: Date;
}

/** Where a platform's webhooks go and the secrets that sign them (current first). */
export interface WebhookTarget {
  webhookEndpoint?: string;
  signingSecrets: string[];
  environment: Environment;
}
