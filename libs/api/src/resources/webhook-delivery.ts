import { Type, type Static } from '@sinclair/typebox';
import { webhooks } from '@sluice/contracts';
import { Timestamp, iso, stringEnum } from '../schema.js';

/** Where a delivery stands. */
export const WEBHOOK_DELIVERY_STATUSES = ['PENDING', 'DELIVERED', 'FAILED', 'SKIPPED'] as const;
export type WebhookDeliveryStatusName = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

export const WebhookDeliveryStatus = stringEnum(WEBHOOK_DELIVERY_STATUSES, {
  $id: 'WebhookDeliveryStatus',
  description:
    'PENDING: waiting for its first or next attempt. DELIVERED: the endpoint answered 2xx. FAILED: every attempt of the retry schedule failed (or the endpoint was disabled, or a request–response webhook was not answered 2xx). SKIPPED: not sent (no endpoint, or a disabled one).',
});

const STATUS_NAMES = new Map<webhooks.DeliveryStatus, WebhookDeliveryStatusName>([
  [webhooks.DeliveryStatus.PENDING, 'PENDING'],
  [webhooks.DeliveryStatus.DELIVERED, 'DELIVERED'],
  [webhooks.DeliveryStatus.FAILED, 'FAILED'],
  [webhooks.DeliveryStatus.SKIPPED, 'SKIPPED'],
]);

/** The proto DeliveryStatus of a public status name. */
export function webhookDeliveryStatusPb(name: WebhookDeliveryStatusName): webhooks.DeliveryStatus {
  return [...STATUS_NAMES.entries()].find(([, n]) => n === name)![0];
}

const RESPONSE_BODY_NOTE = 'the start of the response body (capped at WEBHOOK_RESPONSE_BODY_LIMIT bytes)';

export const WebhookDeliveryAttempt = Type.Object(
  {
    attempt: Type.Integer({ minimum: 1 }),
    url: Type.String(),
    attemptedAt: Timestamp,
    latencyMs: Type.Integer({
      minimum: 0,
      description: 'from the start of the attempt to the answer (or its failure)',
    }),
    succeeded: Type.Boolean(),
    responseStatus: Type.Optional(Type.Integer({ description: 'absent when no answer was obtained' })),
    responseBody: Type.Optional(Type.String({ description: RESPONSE_BODY_NOTE })),
    error: Type.Optional(
      Type.String({ description: 'why no answer was obtained, or the answer was a failure' }),
    ),
  },
  { $id: 'WebhookDeliveryAttempt' },
);

/**
 * One webhook as the delivery log records it (Sluice's own resource; the reference has no delivery
 * log): the exact body sent, where it stands and, in GET …/{deliveryId}, every attempt.
 */
export const WebhookDelivery = Type.Object(
  {
    id: Type.String({ description: 'WebhookDelivery:<uuid>' }),
    webhookId: Type.String({
      description: 'the `webhook-id` header and body `id`, stable across attempts and redeliveries',
    }),
    type: Type.String({ description: 'the webhook type, e.g. OUTGOING_PAYMENT.COMPLETED' }),
    status: WebhookDeliveryStatus,
    resourceId: Type.Optional(Type.String({ description: 'the resource the webhook is about (`data.id`)' })),
    eventId: Type.Optional(Type.String()),
    attemptCount: Type.Integer({ minimum: 0 }),
    nextAttemptAt: Type.Optional(Timestamp),
    lastAttemptAt: Type.Optional(Timestamp),
    lastResponseStatus: Type.Optional(Type.Integer()),
    lastError: Type.Optional(Type.String()),
    payload: Type.String({ description: 'the exact JSON body, the same bytes on every attempt' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    completedAt: Type.Optional(Timestamp),
    attempts: Type.Optional(
      Type.Array(WebhookDeliveryAttempt, { description: 'every attempt, in GET of one delivery' }),
    ),
  },
  { $id: 'WebhookDelivery' },
);
export type WebhookDelivery = Static<typeof WebhookDelivery>;

/** The one mapper of WebhookDelivery: from the dispatcher's proto message (attempts when it carries them). */
export function webhookDeliveryJson(d: webhooks.WebhookDelivery, withAttempts = false): WebhookDelivery {
  return {
    id: d.id,
    webhookId: d.webhookId,
    type: d.type,
    status: STATUS_NAMES.get(d.status) ?? 'PENDING',
    ...(d.resourceId ? { resourceId: d.resourceId } : {}),
    ...(d.eventId ? { eventId: d.eventId } : {}),
    attemptCount: d.attemptCount,
    ...(d.nextAttemptAt ? { nextAttemptAt: iso(d.nextAttemptAt)! } : {}),
    ...(d.lastAttemptAt ? { lastAttemptAt: iso(d.lastAttemptAt)! } : {}),
    ...(d.lastResponseStatus !== undefined ? { lastResponseStatus: d.lastResponseStatus } : {}),
    ...(d.lastError ? { lastError: d.lastError } : {}),
    payload: d.payload,
    createdAt: iso(d.createdAt)!,
    updatedAt: iso(d.updatedAt)!,
    ...(d.completedAt ? { completedAt: iso(d.completedAt)! } : {}),
    ...(withAttempts
      ? {
          attempts: d.attempts.map((a) => ({
            attempt: a.attempt,
            url: a.url,
            attemptedAt: iso(a.attemptedAt)!,
            latencyMs: a.durationMs,
            succeeded: a.succeeded,
            ...(a.responseStatus !== undefined ? { responseStatus: a.responseStatus } : {}),
            ...(a.responseBody !== undefined ? { responseBody: a.responseBody } : {}),
            ...(a.error !== undefined ? { error: a.error } : {}),
          })),
        }
      : {}),
  };
}
