import { common } from '@sluice/contracts';
import { EVENTS, type EventContract, type EventData } from '@sluice/api';
import { newId } from '@sluice/core';
import { subjectFor, toJson, type EventEnvelope } from '@sluice/events';
import type { Harness } from './harness.js';

/**
 * Identity's events as its outbox relay publishes them, for the platforms and
 * customers the harness's stand-in identity knows. Every fixture is typed by its
 * catalogue contract, so one the contract refuses does not compile.
 */

/**
 * Publishes an identity event to JetStream. Each publish has a fresh message id,
 * so publishing the same event id twice is a redelivery the consumer must dedupe.
 */
export async function publishIdentityEvent<C extends EventContract>(
  h: Harness,
  contract: C,
  platformId: string,
  data: EventData<C>,
  id = newId('Event'),
): Promise<string> {
  const envelope: EventEnvelope<EventData<C>> = {
    id,
    type: contract.type,
    occurredAt: new Date().toISOString(),
    platformId,
    data,
  };
  await h.running.deps.bus.js.publish(subjectFor(h.prefix, 'identity', contract.type), toJson(envelope), {
    msgID: `${id}:${newId('Event')}`,
  });
  return id;
}

/** The platform's environment as identity writes it into its events; none for a platform it does not know. */
function environmentOf(h: Harness, platformId: string): { environment?: 'SANDBOX' | 'PRODUCTION' } {
  const env = h.platforms.get(platformId);
  if (env === common.Environment.SANDBOX) return { environment: 'SANDBOX' };
  if (env === common.Environment.PRODUCTION) return { environment: 'PRODUCTION' };
  return {};
}

/** CUSTOMER.CREATED / CUSTOMER.UPDATED data of a customer with these currencies. */
export function customerChange(
  h: Harness,
  platformId: string,
  customerId: string,
  currencies: string[],
): EventData<typeof EVENTS.CUSTOMER_CREATED> {
  return {
    customerId,
    customerType: 'INDIVIDUAL',
    platformCustomerId: `pc-${customerId.slice(-6)}`,
    currencies,
    umaAddress: '$alice@sandbox.sluice.local',
    ...environmentOf(h, platformId),
    embeddedWalletCurrencies: h.embeddedWallets.get(platformId) ?? [],
  };
}

/** PLATFORM_CONFIG.UPDATED data of a platform supporting these currencies. */
export function platformConfigChange(
  h: Harness,
  platformId: string,
  c: { supportedCurrencies: string[]; embeddedWalletCurrencies: string[] },
): EventData<typeof EVENTS.PLATFORM_CONFIG_UPDATED> {
  return {
    ...c,
    umaDomain: null,
    webhookEndpoint: null,
    webhookSigningSecretRotated: false,
    ...environmentOf(h, platformId),
  };
}
