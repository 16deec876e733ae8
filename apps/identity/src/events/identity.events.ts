import { EVENTS, type EventData } from '@sluice/api';
import type { Customer } from '../domain/customer.js';
import type { PlatformSettings } from '../domain/platform-config.js';
import type { Environment, Permission } from '../domain/token.js';

/**
 * The data of the events identity publishes (domain `identity`, subjects
 * `<prefix>.identity.<type lowercased>`), typed by their contracts in the
 * catalogue (`@sluice/api` EVENTS); every envelope carries the platformId.
 */

export function customerEventData(c: Customer): EventData<typeof EVENTS.CUSTOMER_CREATED> {
  return {
    customerId: c.id,
    customerType: c.customerType,
    platformCustomerId: c.platformCustomerId,
    currencies: [...c.currencies],
    umaAddress: c.umaAddress,
  };
}

/** Never carries secrets: only whether the webhook signing secret was rotated. */
export function platformConfigEventData(
  s: PlatformSettings,
  webhookSigningSecretRotated = false,
): EventData<typeof EVENTS.PLATFORM_CONFIG_UPDATED> {
  return {
    supportedCurrencies: s.supportedCurrencies.map((c) => c.currencyCode),
    embeddedWalletCurrencies: [...(s.embeddedWalletConfig?.currencies ?? [])],
    umaDomain: s.umaDomain ?? null,
    webhookEndpoint: s.webhookEndpoint ?? null,
    webhookSigningSecretRotated,
  };
}

export function platformCreatedEventData(
  name: string,
  environment: Environment,
): EventData<typeof EVENTS.PLATFORM_CREATED> {
  return { name, environment };
}

export function tokenCreatedEventData(
  tokenId: string,
  name: string,
  permissions: Permission[],
): EventData<typeof EVENTS.TOKEN_CREATED> {
  return { tokenId, name, permissions };
}
