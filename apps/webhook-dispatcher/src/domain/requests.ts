import { FieldErrors, isId } from '@sluice/core';

// The request rules of WebhooksService (400 INVALID_INPUT naming every bad field, as the proto spells it).

const PLATFORM_ID = 'must be a Platform id (Platform:<uuid>)';

/** SendTestWebhook: the platform whose endpoint gets the test webhook. */
export function checkTestWebhookRequest(platformId: string): void {
  const errors = new FieldErrors();
  if (!isId(platformId, 'Platform')) errors.add('platform_id', PLATFORM_ID);
  errors.throwIfAny();
}

/** GetWebhookDelivery: the platform and a `WebhookDelivery:` or `Webhook:` id. */
export function checkDeliveryLookup(platformId: string, deliveryId: string): void {
  const errors = new FieldErrors();
  if (!isId(platformId, 'Platform')) errors.add('platform_id', PLATFORM_ID);
  if (!isId(deliveryId, 'WebhookDelivery') && !isId(deliveryId, 'Webhook'))
    errors.add('delivery_id', 'must be a WebhookDelivery or Webhook id');
  errors.throwIfAny();
}
