import { Type } from '@sinclair/typebox';
import {
  Page,
  WEBHOOK_DELIVERY_STATUSES,
  WebhookDelivery,
  webhookDeliveryJson,
  webhookDeliveryStatusPb,
  stringEnum,
} from '@sluice/api';
import { webhooks } from '@sluice/contracts';
import type { RouteModule } from '../http/types.js';
import {
  DateTimeFilter,
  PageQuery,
  TextFilter,
  envelope,
  errorResponses,
  pageOf,
} from '../schemas/common.js';

const TAGS = ['Webhooks'];

const DeliveryParams = Type.Object(
  {
    deliveryId: Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'a WebhookDelivery id, or the Webhook id (webhook-id header) the platform received',
    }),
  },
  { additionalProperties: false },
);

const DeliveriesQuery = Type.Object(
  {
    type: Type.Optional(TextFilter('webhook type, e.g. OUTGOING_PAYMENT.COMPLETED', 100)),
    status: Type.Optional(stringEnum(WEBHOOK_DELIVERY_STATUSES)),
    resourceId: Type.Optional(
      TextFilter('the resource the webhook is about (data.id), e.g. a Transaction id', 200),
    ),
    createdAfter: Type.Optional(DateTimeFilter('deliveries created at or after this instant')),
    createdBefore: Type.Optional(DateTimeFilter('deliveries created before this instant')),
    ...PageQuery,
  },
  { additionalProperties: false },
);

const ReplayRequest = Type.Object(
  {
    since: Type.String({
      format: 'date-time',
      maxLength: 64,
      description: 'replay deliveries created at or after this instant',
    }),
    until: Type.Optional(
      Type.String({ format: 'date-time', maxLength: 64, description: 'and before this one (default now)' }),
    ),
    includeDelivered: Type.Optional(
      Type.Boolean({
        description: 'also send again what was delivered (default false: only FAILED and SKIPPED)',
      }),
    ),
  },
  { additionalProperties: false },
);

const ReplayResponse = Type.Object(
  { queued: Type.Integer({ minimum: 0, description: 'deliveries queued again' }) },
  { $id: 'WebhookReplayResponse', additionalProperties: false },
);

/**
 * The webhook delivery log (Sluice's own API; docs/webhooks.md): `GET /webhooks/deliveries` (filters,
 * newest first, keyset paginated), `GET /webhooks/deliveries/{deliveryId}` (with every attempt),
 * `POST /webhooks/deliveries/{deliveryId}/redeliver` (same webhook-id) and `POST /webhooks/replay`
 * (everything that did not reach the platform since a time, after an outage).
 */
const webhooksRoutes: RouteModule = (app, deps) => {
  const client = deps.clients.webhooks;

  app.get(
    '/webhooks/deliveries',
    {
      schema: {
        tags: TAGS,
        operationId: 'listWebhookDeliveries',
        summary: 'List webhook deliveries',
        description:
          'The platform’s webhook delivery log, newest first: filter by type, status, resourceId (data.id) and createdAfter/createdBefore. Attempts are in GET /webhooks/deliveries/{deliveryId}.',
        querystring: DeliveriesQuery,
        response: { 200: Page(WebhookDelivery, 'WebhookDeliveryList'), ...errorResponses() },
      },
    },
    async (request) => {
      const q = request.query;
      const page = await client.listWebhookDeliveries({
        platformId: request.platform.id,
        status: q.status ? webhookDeliveryStatusPb(q.status) : webhooks.DeliveryStatus.UNSPECIFIED,
        ...(q.type !== undefined ? { type: q.type } : {}),
        ...(q.resourceId !== undefined ? { resourceId: q.resourceId } : {}),
        ...(q.createdAfter !== undefined ? { createdAfter: new Date(q.createdAfter) } : {}),
        ...(q.createdBefore !== undefined ? { createdBefore: new Date(q.createdBefore) } : {}),
        page: pageOf(q),
      });
      return envelope(
        page.deliveries.map((d) => webhookDeliveryJson(d)),
        page.page,
      );
    },
  );

  app.get(
    '/webhooks/deliveries/:deliveryId',
    {
      schema: {
        tags: TAGS,
        operationId: 'getWebhookDelivery',
        summary: 'Get a webhook delivery with its attempts',
        description:
          'One delivery of the platform (by WebhookDelivery id or the webhook-id it was sent with) with every attempt: status, latency, response excerpt. 404 WEBHOOK_DELIVERY_NOT_FOUND for another platform’s.',
        params: DeliveryParams,
        response: { 200: WebhookDelivery, ...errorResponses() },
      },
    },
    async (request) => {
      const { delivery } = await client.getWebhookDelivery({
        platformId: request.platform.id,
        deliveryId: request.params.deliveryId,
      });
      return webhookDeliveryJson(delivery!, true);
    },
  );

  app.post(
    '/webhooks/deliveries/:deliveryId/redeliver',
    {
      schema: {
        tags: TAGS,
        operationId: 'redeliverWebhook',
        summary: 'Send a webhook again',
        description:
          'Queues the delivery again, due now, with the same webhook-id and body (a new signature and timestamp), from the start of the retry schedule. Takes no body.',
        params: DeliveryParams,
        response: { 200: WebhookDelivery, ...errorResponses() },
      },
    },
    async (request) => {
      const { delivery } = await client.redeliverWebhook({
        platformId: request.platform.id,
        deliveryId: request.params.deliveryId,
      });
      return webhookDeliveryJson(delivery!, true);
    },
  );

  app.post(
    '/webhooks/replay',
    {
      schema: {
        tags: TAGS,
        operationId: 'replayWebhooks',
        summary: 'Replay webhooks after an outage',
        description:
          'Queues again every webhook of the platform created in [since, until) that did not reach it (FAILED, SKIPPED; DELIVERED too with includeDelivered), each with its own webhook-id. Request–response webhooks (INCOMING_PAYMENT.PENDING) are not replayed.',
        body: ReplayRequest,
        response: { 200: ReplayResponse, ...errorResponses() },
      },
    },
    async (request) => {
      const b = request.body;
      const r = await client.replayWebhooks({
        platformId: request.platform.id,
        since: new Date(b.since),
        ...(b.until !== undefined ? { until: new Date(b.until) } : {}),
        includeDelivered: b.includeDelivered ?? false,
      });
      return { queued: r.queued };
    },
  );
};

export default webhooksRoutes;
