import { EVENTS } from '@sluice/api';
import { EventConsumer, on, streamName, subjectFor, type Bus } from '@sluice/events';
import type { Logger } from '@sluice/logging';
import type { MikroORM } from '@sluice/store';
import type { ConfigService } from '../app/config.service.js';

/**
 * WEBHOOK_ENDPOINT.DISABLED from the webhook-dispatcher (on the webhooks stream): the platform's
 * endpoint is shown disabled in its config until it sets webhookEndpoint again.
 */
export function webhookEndpointConsumer(deps: {
  bus: Bus;
  orm: MikroORM;
  logger: Logger;
  prefix: string;
  config: ConfigService;
}): EventConsumer {
  const contract = EVENTS.WEBHOOK_ENDPOINT_DISABLED;
  return new EventConsumer({
    bus: deps.bus,
    orm: deps.orm,
    logger: deps.logger,
    stream: streamName(deps.prefix, 'webhooks'),
    durable: 'identity-webhook-endpoints',
    filterSubjects: [subjectFor(deps.prefix, 'webhooks', contract.type)],
    handlers: [
      on(contract, (em, data, event) =>
        deps.config.disableWebhookEndpoint(em, event.platformId, {
          url: data.url,
          reason: data.reason,
          at: new Date(data.disabledAt),
        }),
      ),
    ],
  });
}
