import { TEST_WEBHOOK, WEBHOOK_EVENT_TYPES, eventContract } from '@sluice/api';
import { idUuid, isId } from '@sluice/core';

/**
 * The public webhook types are the reference document's WebhookType enum. The event catalogue of
 * `@sluice/api` knows the ones a built service publishes (its contracts marked `webhook: true`,
 * `WEBHOOK_EVENT_TYPES`: OUTGOING_PAYMENT.*, INCOMING_PAYMENT.*, INTERNAL_ACCOUNT.BALANCE_UPDATED,
 * AGENT_ACTION.PENDING_APPROVAL, CUSTOMER.KYC_* and CUSTOMER.KYB_*, VERIFICATION.*, INVITATION.CLAIMED,
 * BULK_UPLOAD.*), so they are not listed here. The rest of the enum waits for its producer: each type
 * moves from this list to the catalogue when its service publishes it, so every public type is
 * written once.
 */
export const REFERENCE_WEBHOOK_TYPES_WITHOUT_PRODUCER = [
  'VERIFICATION.READY_FOR_VERIFICATION',
] as const;

/** The type of the webhooks the dispatcher makes itself (SendTestWebhook); no event carries it. */
export const TEST_WEBHOOK_TYPE = TEST_WEBHOOK;

/**
 * Every public webhook type: the catalogue's webhook events, the reference types still without a
 * producer, and TEST. An event of one of these types already carries its `data` in the public API
 * shape and becomes a webhook; every other event is internal and ignored.
 */
export const PUBLIC_WEBHOOK_TYPES: ReadonlySet<string> = new Set([
  ...WEBHOOK_EVENT_TYPES,
  ...REFERENCE_WEBHOOK_TYPES_WITHOUT_PRODUCER,
  TEST_WEBHOOK_TYPE,
]);

/** True for a public webhook type (see PUBLIC_WEBHOOK_TYPES). */
export function isPublicWebhookType(type: string): boolean {
  return PUBLIC_WEBHOOK_TYPES.has(type);
}

/**
 * True for a request–response webhook type (the catalogue marks it `answered`: today
 * INCOMING_PAYMENT.PENDING): one attempt, and the platform's answer is relayed to the owner.
 */
export function isAnsweredWebhookType(type: string): boolean {
  return eventContract(type)?.answered === true;
}

/** The body every webhook carries. */
export interface WebhookPayload {
  id: string;
  type: string;
  timestamp: string;
  data: unknown;
}

/** `Webhook:<uuid of the event id>`: stable across redeliveries of one event. */
export function webhookIdForEvent(eventId: string): string {
  if (!isId(eventId)) throw new Error(`malformed event id: ${eventId}`);
  return `Webhook:${idUuid(eventId)}`;
}

/**
 * The exact JSON text of a webhook body. It is frozen when the delivery is
 * created, so every attempt sends (and signs) the same bytes.
 */
export function serializePayload(p: WebhookPayload): string {
  return JSON.stringify({ id: p.id, type: p.type, timestamp: p.timestamp, data: p.data ?? {} });
}
