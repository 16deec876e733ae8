import { isId, newId, type Clock } from '@sluice/core';
import type { EventEnvelope } from '@sluice/events';
import type { Logger } from '@sluice/logging';
import type { EntityManager } from '@sluice/store';
import {
  isAnsweredWebhookType,
  isPublicWebhookType,
  serializePayload,
  webhookIdForEvent,
} from '../domain/webhook-types.js';
import type { DeliveryRepository } from '../store/delivery.repository.js';
import type { EndpointStateCache } from './endpoint-state.cache.js';

/**
 * Turns public webhook events into PENDING deliveries. The data is relayed untouched: its
 * producer checked it against the event's contract in the catalogue when writing its outbox.
 */
export class EventRelayService {
  constructor(
    private readonly d: {
      repo: DeliveryRepository;
      clock: Clock;
      logger: Logger;
      /** Lets events with nothing to do skip the inbox transaction (`nothingToDo`). */
      endpoints?: EndpointStateCache;
    },
  ) {}

  /**
   * Whether an event certainly queues nothing, told without a transaction: an event that is not a
   * public webhook, or one of a platform known to have no endpoint (not a request–response webhook,
   * whose owner waits for its answer). The consumer then acks it without an inbox row. Anything
   * else (an unknown platform, a malformed id) goes through `queue` in the inbox transaction.
   */
  async nothingToDo(event: EventEnvelope<unknown>): Promise<boolean> {
    if (!isPublicWebhookType(event.type)) return true;
    if (isAnsweredWebhookType(event.type) || !this.d.endpoints) return false;
    if (!isId(event.id) || !isId(event.platformId, 'Platform')) return false;
    return this.d.endpoints.hasNoEndpoint(event.platformId);
  }

  /**
   * Notes from identity's events whether a platform has a webhook endpoint (PLATFORM.CREATED: none
   * yet; PLATFORM_CONFIG.UPDATED: the endpoint it now has, unless disabled), in the consumer's inbox
   * transaction. An endpoint set after the dispatcher disabled it is enabled again.
   */
  async platformChanged(
    em: EntityManager,
    platformId: string,
    hasEndpoint: boolean,
    occurredAt: string,
  ): Promise<void> {
    await this.d.repo.rememberEndpoint(em, platformId, hasEndpoint, new Date(occurredAt), true);
  }

  /**
   * Queues the delivery of an event, in the consumer's inbox transaction `em` (so a redelivered
   * event is handled once; the unique webhook id guards again). The body is frozen now:
   * `{id, type, timestamp, data}` with `id` = `Webhook:<uuid of the event id>` and `timestamp` =
   * the event's occurredAt. Other events are ignored. True when a delivery was queued.
   */
  async queue(em: EntityManager, event: EventEnvelope<unknown>): Promise<boolean> {
    if (!isPublicWebhookType(event.type)) return false;
    if (!isId(event.id) || !isId(event.platformId, 'Platform')) {
      this.d.logger.warn(
        { eventId: event.id, type: event.type, platformId: event.platformId },
        'webhook event without a valid id or platform id; ignored',
      );
      return false;
    }
    const answered = isAnsweredWebhookType(event.type);
    // A platform known to have no endpoint costs no delivery (a request–response webhook is still
    // queued: its owner waits for the answer, which is then NO_ENDPOINT). One whose endpoint the
    // dispatcher disabled gets its webhook recorded, not sent: replayable once it is set again.
    const endpoint = answered ? undefined : await this.d.repo.endpointState(em, event.platformId);
    if (endpoint && !endpoint.hasEndpoint && !endpoint.disabled) return false;
    const webhookId = webhookIdForEvent(event.id);
    const payload = serializePayload({
      id: webhookId,
      type: event.type,
      timestamp: event.occurredAt,
      data: event.data ?? {},
    });
    if (endpoint?.disabled) {
      await this.d.repo.insertSkipped(em, {
        id: newId('WebhookDelivery'),
        webhookId,
        platformId: event.platformId,
        eventId: event.id,
        type: event.type,
        payload,
        reason: 'not sent: the webhook endpoint is disabled',
        now: this.d.clock.now(),
      });
      return false;
    }
    const inserted = await this.d.repo.insertPending(em, {
      id: newId('WebhookDelivery'),
      webhookId,
      platformId: event.platformId,
      eventId: event.id,
      type: event.type,
      payload,
      answered,
      now: this.d.clock.now(),
    });
    if (inserted) this.d.logger.debug({ webhookId, type: event.type }, 'webhook queued');
    return inserted;
  }
}
