import { encodeCursor, isDomainError, newId, type Page } from '@sluice/core';
import { transactional } from '@sluice/store';
import { attemptRecord, type Delivery, type DeliveryAttempt } from '../domain/delivery.js';
import { fail } from '../domain/errors.js';
import {
  checkDeliveryLookup,
  checkReplayRequest,
  checkTestWebhookRequest,
  parseDeliveryLogQuery,
} from '../domain/requests.js';
import { TEST_WEBHOOK_TYPE, serializePayload } from '../domain/webhook-types.js';
import type { DispatchDeps } from './dispatch-deps.js';
import type { WebhookTarget } from './ports.js';

export interface TestWebhookResult {
  responseStatus: number;
  url: string;
  responseBody: string;
  webhookId: string;
  deliveryId: string;
}

/** The dispatcher's synchronous operations (behind its gRPC API). */
export class WebhooksService {
  constructor(private readonly d: DispatchDeps) {}

  /**
   * Sends a `TEST` webhook (`{id, type: "TEST", timestamp, data: {}}`) to the
   * platform's endpoint now, signed and guarded like every webhook, records it
   * as a delivery with its one attempt (no retries), and returns the answer.
   */
  async sendTest(platformId: string): Promise<TestWebhookResult> {
    checkTestWebhookRequest(platformId);
    const target = await this.target(platformId);
    if (!target.endpoint) {
      throw fail(
        'WEBHOOK_ENDPOINT_NOT_SET',
        'No webhook endpoint is configured; set webhookEndpoint with PATCH /config first',
      );
    }
    const now = this.d.clock.now();
    const webhookId = newId('Webhook');
    const payload = serializePayload({
      id: webhookId,
      type: TEST_WEBHOOK_TYPE,
      timestamp: now.toISOString(),
      data: {},
    });
    // The HTTP attempt runs before the transaction that records it opens.
    const result = await this.d.sender.send(target.endpoint, target.secrets, webhookId, payload);
    const deliveryId = newId('WebhookDelivery');
    await transactional(this.d.orm, (em) =>
      this.d.repo.insertFinal(
        em,
        {
          id: deliveryId,
          webhookId,
          platformId,
          type: TEST_WEBHOOK_TYPE,
          payload,
          status: result.ok ? 'DELIVERED' : 'FAILED',
          url: result.url,
          now: this.d.clock.now(),
        },
        attemptRecord(result),
      ),
    );
    this.d.logger.info({ webhookId, status: result.status, error: result.error }, 'test webhook sent');
    if (result.status === undefined) {
      throw fail(
        'WEBHOOK_DELIVERY_ERROR',
        `The test webhook could not be delivered: ${result.error ?? 'no response'}`,
        {
          url: result.url,
          reason: result.error ?? 'no response',
          webhookId,
        },
      );
    }
    return {
      responseStatus: result.status,
      url: result.url,
      responseBody: result.body ?? '',
      webhookId,
      deliveryId,
    };
  }

  /** A platform's delivery (by delivery id or webhook id) with its attempts; another platform's is not found. */
  async getDelivery(
    platformId: string,
    id: string,
  ): Promise<{ delivery: Delivery; attempts: DeliveryAttempt[] }> {
    checkDeliveryLookup(platformId, id);
    const found = await this.d.repo.findForPlatform(this.d.orm.em.fork(), platformId, id);
    if (!found) throw fail('WEBHOOK_DELIVERY_NOT_FOUND', `Webhook delivery ${id} not found`);
    return found;
  }

  /** A page of the platform's delivery log, newest first (see parseDeliveryLogQuery for the filters). */
  async list(q: Parameters<typeof parseDeliveryLogQuery>[0]): Promise<Page<Delivery>> {
    const query = parseDeliveryLogQuery(q);
    const { rows, total } = await this.d.repo.list(this.d.orm.em.fork(), {
      ...query,
      limit: query.limit + 1,
    });
    const hasMore = rows.length > query.limit;
    const data = hasMore ? rows.slice(0, query.limit) : rows;
    const last = data[data.length - 1];
    return {
      data,
      hasMore,
      totalCount: total,
      ...(hasMore && last
        ? { nextCursor: encodeCursor({ k: last.createdAt.toISOString(), id: last.id }) }
        : {}),
    };
  }

  /** Sends a delivery again (same webhook id), from the start of the retry schedule. */
  async redeliver(
    platformId: string,
    id: string,
  ): Promise<{ delivery: Delivery; attempts: DeliveryAttempt[] }> {
    checkDeliveryLookup(platformId, id);
    const delivery = await transactional(this.d.orm, (em) =>
      this.d.repo.redeliver(em, platformId, id, this.d.clock.now()),
    );
    if (!delivery) throw fail('WEBHOOK_DELIVERY_NOT_FOUND', `Webhook delivery ${id} not found`);
    this.d.logger.info({ webhookId: delivery.webhookId, deliveryId: delivery.id }, 'webhook queued again');
    return this.getDelivery(platformId, delivery.id);
  }

  /** Queues again what did not reach the platform in [since, until); returns how many. */
  async replay(o: {
    platformId: string;
    since?: Date;
    until?: Date;
    includeDelivered: boolean;
  }): Promise<number> {
    const now = this.d.clock.now();
    const until = o.until ?? now;
    const since = checkReplayRequest(o.platformId, o.since, until, now);
    const queued = await transactional(this.d.orm, (em) =>
      this.d.repo.replay(em, {
        platformId: o.platformId,
        since,
        until,
        includeDelivered: o.includeDelivered,
        now,
      }),
    );
    this.d.logger.info({ platformId: o.platformId, since, until, queued }, 'webhooks replayed');
    return queued;
  }

  /** The platform's target; WEBHOOK_TARGET_UNAVAILABLE when identity cannot be asked (its own refusals pass through). */
  private async target(platformId: string): Promise<WebhookTarget> {
    try {
      return await this.d.targets.get(platformId);
    } catch (err) {
      if (isDomainError(err)) throw err;
      this.d.logger.warn({ err }, 'could not get the webhook target');
      throw fail('WEBHOOK_TARGET_UNAVAILABLE', 'The webhook configuration could not be read; try again');
    }
  }
}
