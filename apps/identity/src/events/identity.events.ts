import type { Customer } from '../domain/customer.js';
import type { PlatformSettings } from '../domain/platform-config.js';
import type { Environment, Permission } from '../domain/token.js';

/**
 * Events the identity service publishes (domain `identity`, so subjects
 * `<prefix>.identity.<type lowercased>`); every envelope carries the platformId.
 */
export const IdentityEventType = {
  /** {name, environment} — a platform was created (bootstrap). */
  PLATFORM_CREATED: 'PLATFORM.CREATED',
  /** {supportedCurrencies, embeddedWalletCurrencies, umaDomain, webhookEndpoint, webhookSigningSecretRotated}. */
  PLATFORM_CONFIG_UPDATED: 'PLATFORM_CONFIG.UPDATED',
  /** {tokenId, name, permissions}. */
  TOKEN_CREATED: 'TOKEN.CREATED',
  /** {tokenId} — the token no longer authenticates; caches must drop it. */
  TOKEN_DELETED: 'TOKEN.DELETED',
  CUSTOMER_CREATED: 'CUSTOMER.CREATED',
  CUSTOMER_UPDATED: 'CUSTOMER.UPDATED',
  /** {customerId}. */
  CUSTOMER_DELETED: 'CUSTOMER.DELETED',
} as const;

/** Data of CUSTOMER.CREATED and CUSTOMER.UPDATED. */
export interface CustomerEventData extends Record<string, unknown> {
  customerId: string;
  customerType: string;
  platformCustomerId: string;
  currencies: string[];
  umaAddress: string;
}

export function customerEventData(c: Customer): CustomerEventData {
  return {
    customerId: c.id,
    customerType: c.customerType,
    platformCustomerId: c.platformCustomerId,
    currencies: [...c.currencies],
    umaAddress: c.umaAddress,
  };
}

/** Data of PLATFORM_CONFIG.UPDATED (never carries secrets). */
export interface PlatformConfigEventData extends Record<string, unknown> {
  supportedCurrencies: string[];
  embeddedWalletCurrencies: string[];
  umaDomain: string | null;
  webhookEndpoint: string | null;
  webhookSigningSecretRotated: boolean;
}

export function platformConfigEventData(
  s: PlatformSettings,
  webhookSigningSecretRotated = false,
): PlatformConfigEventData {
  return {
    supportedCurrencies: s.supportedCurrencies.map((c) => c.currencyCode),
    embeddedWalletCurrencies: [...(s.embeddedWalletConfig?.currencies ?? [])],
    umaDomain: s.umaDomain ?? null,
    webhookEndpoint: s.webhookEndpoint ?? null,
    webhookSigningSecretRotated,
  };
}

export function platformCreatedEventData(name: string, environment: Environment): Record<string, unknown> {
  return { name, environment };
}

export function tokenCreatedEventData(
  tokenId: string,
  name: string,
  permissions: Permission[],
): Record<string, unknown> {
  return { tokenId, name, permissions };
}
