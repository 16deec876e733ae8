import { implement, type RegisteredService } from '@sluice/rpc';
import { webhooks } from '@sluice/contracts';
import type { Logger } from '@sluice/logging';
import type { Delivery, DeliveryAttempt } from '../domain/delivery.js';
import type { WebhooksService } from '../app/webhooks.service.js';

const STATUS: Record<Delivery['status'], webhooks.DeliveryStatus> = {
  PENDING: webhooks.DeliveryStatus.PENDING,
  DELIVERED: webhooks.DeliveryStatus.DELIVERED,
  FAILED: webhooks.DeliveryStatus.FAILED,
  SKIPPED: webhooks.DeliveryStatus.SKIPPED,
};

function toProtoAttempt(a: DeliveryAttempt): webhooks.DeliveryAttempt {
  return {
    attempt: a.attempt,
    url: a.url,
    attemptedAt: a.attemptedAt,
    durationMs: a.durationMs,
    succeeded: a.succeeded,
    ...(a.responseStatus !== null ? { responseStatus: a.responseStatus } : {}),
    ...(a.responseBody !== null ? { responseBody: a.responseBody } : {}),
    ...(a.error !== null ? { error: a.error } : {}),
  };
}

function toProtoDelivery(d: Delivery, attempts: DeliveryAttempt[]): webhooks.WebhookDelivery {
  return {
    id: d.id,
    webhookId: d.webhookId,
    platformId: d.platformId,
    type: d.type,
    status: STATUS[d.status],
    attemptCount: d.attemptCount,
    payload: d.payload,
    createdAt: d.createdAt,
    updatedAt: d.updatedAt,
    attempts: attempts.map(toProtoAttempt),
    ...(d.eventId ? { eventId: d.eventId } : {}),
    ...(d.nextAttemptAt ? { nextAttemptAt: d.nextAttemptAt } : {}),
    ...(d.lastError ? { lastError: d.lastError } : {}),
  };
}

/** gRPC handlers of sluice.webhooks.v1.WebhooksService. */
export function webhooksRpc(service: WebhooksService, logger: Logger): RegisteredService {
  return implement<webhooks.WebhooksServiceServer>(
    webhooks.WebhooksServiceService,
    {
      async sendTestWebhook(req) {
        const r = await service.sendTest(req.platformId);
        return {
          responseStatus: r.responseStatus,
          url: r.url,
          responseBody: r.responseBody,
          webhookId: r.webhookId,
          deliveryId: r.deliveryId,
        };
      },
      async getWebhookDelivery(req) {
        const { delivery, attempts } = await service.getDelivery(req.platformId, req.deliveryId);
        return { delivery: toProtoDelivery(delivery, attempts) };
      },
    },
    logger,
    'sluice.webhooks.v1.WebhooksService',
  );
}
