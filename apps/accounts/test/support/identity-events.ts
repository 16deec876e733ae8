import { common } from '@sluice/contracts';
import { EVENTS, type EventContract, type EventData } from '@sluice/api';
import { newId } from '@sluice/core';
import { subjectFor, toJson, type EventEnvelope } from '@sluice/events';
import type { Harness } from './harness.js';

/**
 * Identity's events as its outbox relay publishes them, hand-made for what identity itself
 * would not send (a redelivery of one event id, an unknown platform, an unknown currency). Every fixture is typed by its
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
