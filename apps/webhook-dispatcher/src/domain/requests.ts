import { FieldErrors, isId, pageSize, decodeCursor } from '@sluice/core';
import type { DeliveryStatus } from './delivery.js';

// The request rules of WebhooksService (400 INVALID_INPUT naming every bad field, as the proto spells it).

const PLATFORM_ID = 'must be a Platform id (Platform:<uuid>)';

/** SendTestWebhook: the platform whose endpoint gets the test webhook. */
export function checkTestWebhookRequest(platformId: string): void {
  const errors = new FieldErrors();
  if (!isId(platformId, 'Platform')) errors.add('platform_id', PLATFORM_ID);
  errors.throwIfAny();
}

/** The filters of the delivery log. */
export interface DeliveryLogFilters {
  platformId: string;
  type?: string;
  status?: DeliveryStatus;
  createdAfter?: Date;
  createdBefore?: Date;
  resourceId?: string;
}

/** ListWebhookDeliveries, valid: its filters, page size and the keyset position to continue after. */
export interface DeliveryLogQuery extends DeliveryLogFilters {
  limit: number;
  after?: { createdAt: string; id: string };
}

/** ListWebhookDeliveries: its filters and page, or INVALID_INPUT naming every bad field. */
export function parseDeliveryLogQuery(
  q: DeliveryLogFilters & { limit?: number; cursor?: string },
): DeliveryLogQuery {
  const errors = new FieldErrors();
  if (!isId(q.platformId, 'Platform')) errors.add('platform_id', PLATFORM_ID);
  if (q.type !== undefined && !/^[A-Z_]+(\.[A-Z_]+)?$/.test(q.type))
    errors.add('type', 'must be a webhook type such as OUTGOING_PAYMENT.COMPLETED');
  if (q.resourceId !== undefined && (q.resourceId.length === 0 || q.resourceId.length > 200))
    errors.add('resource_id', 'must be 1 to 200 characters');
  if (q.createdAfter && q.createdBefore && q.createdAfter.getTime() >= q.createdBefore.getTime())
    errors.add('created_before', 'must be after created_after');
  let limit = 20;
  try {
    limit = pageSize(q.limit);
  } catch {
    errors.add('limit', 'must be an integer from 1 to 100');
  }
  let after: DeliveryLogQuery['after'];
  try {
    const pos = decodeCursor(q.cursor);
    if (pos) after = { createdAt: pos.k, id: pos.id };
  } catch {
    errors.add('cursor', 'is not a cursor returned by this API');
  }
  errors.throwIfAny();
  return {
    platformId: q.platformId,
    limit,
    ...(q.type !== undefined ? { type: q.type } : {}),
    ...(q.status !== undefined ? { status: q.status } : {}),
    ...(q.createdAfter ? { createdAfter: q.createdAfter } : {}),
    ...(q.createdBefore ? { createdBefore: q.createdBefore } : {}),
    ...(q.resourceId !== undefined ? { resourceId: q.resourceId } : {}),
    ...(after ? { after } : {}),
  };
}

/** ReplayWebhooks: a platform and a window [since, until) that has begun. */
export function checkReplayRequest(
  platformId: string,
  since: Date | undefined,
  until: Date,
  now: Date,
): Date {
  const errors = new FieldErrors();
  if (!isId(platformId, 'Platform')) errors.add('platform_id', PLATFORM_ID);
  if (!since) errors.add('since', 'is required');
  else if (since.getTime() >= until.getTime()) errors.add('since', 'must be before until');
  else if (since.getTime() > now.getTime()) errors.add('since', 'must not be in the future');
  errors.throwIfAny();
  return since!;
}

/** GetWebhookDelivery: the platform and a `WebhookDelivery:` or `Webhook:` id. */
export function checkDeliveryLookup(platformId: string, deliveryId: string): void {
  const errors = new FieldErrors();
  if (!isId(platformId, 'Platform')) errors.add('platform_id', PLATFORM_ID);
  if (!isId(deliveryId, 'WebhookDelivery') && !isId(deliveryId, 'Webhook'))
    errors.add('delivery_id', 'must be a WebhookDelivery or Webhook id');
  errors.throwIfAny();
}
