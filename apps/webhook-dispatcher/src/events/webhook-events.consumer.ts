import { EVENTS } from '@sluice/api';
import { EventConsumer, on, streamName, type Bus, type Domain, type EventHandler } from '@sluice/events';
import type { Logger } from '@sluice/logging';
import type { MikroORM } from '@sluice/store';
import type { EventRelayService } from '../app/event-relay.service.js';

/** The domains whose streams can carry public webhook events. */
const WEBHOOK_SOURCE_DOMAINS: readonly Domain[] = [
  'accounts',
  'payments',
  'identity',
  'compliance',
  'agents',
];

/** Durable consumer name on a domain's stream, shared by every dispatcher replica. */
function durableName(domain: Domain): string {
  return `webhook-dispatcher-${domain}`;
}

/** Identity's platform events: whether each platform has an endpoint (no deliveries for those without). */
function platformHandlers(relay: EventRelayService): EventHandler[] {
  return [
    on(EVENTS.PLATFORM_CREATED, (em, _data, ev) =>
      relay.platformChanged(em, ev.platformId, false, ev.occurredAt),
    ),
    on(EVENTS.PLATFORM_CONFIG_UPDATED, (em, data, ev) =>
      relay.platformChanged(
        em,
        ev.platformId,
        !!data.webhookEndpoint && !data.webhookEndpointDisabled,
        ev.occurredAt,
      ),
    ),
  ];
}

/**
 * One durable consumer per source domain stream (`<prefix>.<domain>.>`). The dispatcher is a
 * relay: it registers no typed handler but hands every event to the kit's `others` handler,
 * which queues the public webhook ones (EventRelayService) and ignores the rest. Events it can tell
 * queue nothing (not a public webhook, or a platform without an endpoint) are acked before any
 * transaction (`skipOthers`).
 */
export function webhookEventConsumers(deps: {
  bus: Bus;
  orm: MikroORM;
  logger: Logger;
  prefix: string;
  relay: EventRelayService;
  /** Called shortly after an event queued a delivery (to wake the delivery worker). */
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
        handlers: domain === 'identity' ? platformHandlers(deps.relay) : [],
        skipOthers: (event) => deps.relay.nothingToDo(event),
        others: async (em, event) => {
          if (await deps.relay.queue(em, event)) {
            // The inbox transaction commits right after the handler; look for it shortly after.
            if (deps.onQueued) setTimeout(deps.onQueued, 20).unref();
          }
        },
      }),
  );
}
