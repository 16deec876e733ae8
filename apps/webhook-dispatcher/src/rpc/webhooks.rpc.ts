import { implement, pageInfo, pageRequest, type RegisteredService } from '@sluice/rpc';
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

const STATUS_OF = new Map<webhooks.DeliveryStatus, Delivery['status']>(
  Object.entries(STATUS).map(([k, v]) => [v, k as Delivery['status']]),
);

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
    ...(d.resourceId ? { resourceId: d.resourceId } : {}),
    ...(d.lastAttemptAt ? { lastAttemptAt: d.lastAttemptAt } : {}),
    ...(d.lastResponseStatus !== null ? { lastResponseStatus: d.lastResponseStatus } : {}),
    ...(d.completedAt ? { completedAt: d.completedAt } : {}),
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
      async listWebhookDeliveries(req) {
        const status = STATUS_OF.get(req.status);
        const page = await service.list({
          platformId: req.platformId,
          ...(req.type !== undefined ? { type: req.type } : {}),
          ...(status ? { status } : {}),
          ...(req.createdAfter ? { createdAfter: req.createdAfter } : {}),
          ...(req.createdBefore ? { createdBefore: req.createdBefore } : {}),
          ...(req.resourceId !== undefined ? { resourceId: req.resourceId } : {}),
          ...pageRequest(req.page),
        });
        return { deliveries: page.data.map((d) => toProtoDelivery(d, [])), page: pageInfo(page) };
      },
      async redeliverWebhook(req) {
        const { delivery, attempts } = await service.redeliver(req.platformId, req.deliveryId);
        return { delivery: toProtoDelivery(delivery, attempts) };
      },
      async replayWebhooks(req) {
        const queued = await service.replay({
          platformId: req.platformId,
          ...(req.since ? { since: req.since } : {}),
          ...(req.until ? { until: req.until } : {}),
          includeDelivered: req.includeDelivered,
        });
        return { queued };
      },
    },
    logger,
    'sluice.webhooks.v1.WebhooksService',
  );
}
