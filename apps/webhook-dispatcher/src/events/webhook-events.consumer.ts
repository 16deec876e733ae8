import { EventConsumer, streamName, type Bus, type Domain, type EventEnvelope } from '@sluice/events';
import { isId, newId, type Clock } from '@sluice/core';
import type { Logger } from '@sluice/logging';
import type { EntityManager, MikroORM } from '@sluice/store';
import { isPublicWebhookType, serializePayload, webhookIdForEvent } from '../domain/webhook-types.js';
import type { DeliveryRepository } from '../store/delivery.repository.js';

/** The domains whose streams can carry public webhook events. */
export const WEBHOOK_SOURCE_DOMAINS: readonly Domain[] = [
  'accounts',
  'payments',
  'identity',
  'compliance',
  'agents',
];

/** Durable consumer name on a domain's stream, shared by every dispatcher replica. */
export function durableName(domain: Domain): string {
  return `webhook-dispatcher-${domain}`;
}

/**
 * Turns a public webhook event into a PENDING delivery, inside the consumer's
 * inbox transaction (so a redelivered event is handled once; the unique
 * webhook id guards again). The body is frozen now: `{id, type, timestamp,
 * data}` with `id` = `Webhook:<uuid of the event id>` and `timestamp` = the
 * event's occurredAt. Other events are ignored.
 */
export async function handleEvent(
  em: EntityManager,
  event: EventEnvelope<unknown>,
  deps: { repo: DeliveryRepository; clock: Clock; logger: Logger },
): Promise<boolean> {
  if (!isPublicWebhookType(event.type)) return false;
  if (!isId(event.id) || !isId(event.platformId, 'Platform')) {
    deps.logger.warn(
      { eventId: event.id, type: event.type, platformId: event.platformId },
      'webhook event without a valid id or platform id; ignored',
    );
    return false;
  }
  const webhookId = webhookIdForEvent(event.id);
  const payload = serializePayload({
    id: webhookId,
    type: event.type,
    timestamp: event.occurredAt,
    data: event.data ?? {},
  });
  const inserted = await deps.repo.insertPending(em, {
    id: newId('WebhookDelivery'),
    webhookId,
    platformId: event.platformId,
    eventId: event.id,
    type: event.type,
    payload,
    now: deps.clock.now(),
  });
  if (inserted) deps.logger.debug({ webhookId, type: event.type }, 'webhook queued');
  return inserted;
}

/** One durable consumer per source domain stream (`<prefix>.<domain>.>`). */
export function webhookEventConsumers(deps: {
  bus: Bus;
  orm: MikroORM;
  logger: Logger;
  clock: Clock;
  prefix: string;
  repo: DeliveryRepository;
  onQueued?: () => void;
}): EventConsumer[] {
  return WEBHOOK_SOURCE_DOMAINS.map(
    (domain) =>
      new EventConsumer({
        bus: deps.bus,
        orm: deps.orm,
        logger: deps.logger,
        stream: streamName(deps.prefix, domain),
        durable: durableName(domain),
        filterSubjects: [`${deps.prefix}.${domain}.>`],
        // A relay: it forwards the data its producer wrote (and checked against the catalogue) untouched.
        handlers: [],
        others: async (em, event) => {
          if (await handleEvent(em, event, deps)) {
            // The inbox transaction commits right after the handler; look for it shortly after.
            if (deps.onQueued) setTimeout(deps.onQueued, 20).unref();
          }
        },
      }),
  );
}
