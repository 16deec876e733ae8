import { describe, expect, it } from 'vitest';
import { WEBHOOK_EVENT_TYPES } from '@sluice/api';
import {
  REFERENCE_WEBHOOK_TYPES_WITHOUT_PRODUCER,
  TEST_WEBHOOK_TYPE,
  isPublicWebhookType,
  serializePayload,
  webhookIdForEvent,
} from './webhook-types.js';

describe('webhook types', () => {
  it('knows the public types and nothing else', () => {
    for (const t of [
      'INTERNAL_ACCOUNT.BALANCE_UPDATED',
      'OUTGOING_PAYMENT.COMPLETED',
      'CUSTOMER.KYC_APPROVED',
      'AGENT_ACTION.PENDING_APPROVAL',
      'TEST',
    ]) {
      expect(isPublicWebhookType(t)).toBe(true);
    }
    for (const t of [
      'CUSTOMER.CREATED',
      'TOKEN.DELETED',
      'PLATFORM_CONFIG.UPDATED',
      'internal_account.balance_updated',
    ]) {
      expect(isPublicWebhookType(t)).toBe(false);
    }
  });

  it('derives the webhook id from the event uuid', () => {
    expect(webhookIdForEvent('Event:0190b2a4-1c2d-7e3f-8a9b-0c1d2e3f4a5b')).toBe(
      'Webhook:0190b2a4-1c2d-7e3f-8a9b-0c1d2e3f4a5b',
    );
    expect(() => webhookIdForEvent('nope')).toThrow();
  });

  it('serializes the body with a fixed key order', () => {
    const text = serializePayload({
      data: { a: 1 },
      timestamp: '2025-01-01T00:00:00.000Z',
      type: 'TEST',
      id: 'Webhook:x',
    } as never);
    expect(text).toBe(
      '{"id":"Webhook:x","type":"TEST","timestamp":"2025-01-01T00:00:00.000Z","data":{"a":1}}',
    );
  });
});

describe('public webhook types and the event catalogue', () => {
  it('lists as waiting for a producer only types the catalogue does not know yet', () => {
    for (const t of REFERENCE_WEBHOOK_TYPES_WITHOUT_PRODUCER) expect(WEBHOOK_EVENT_TYPES).not.toContain(t);
    expect(WEBHOOK_EVENT_TYPES).not.toContain(TEST_WEBHOOK_TYPE);
  });

  it('relays every webhook event of the catalogue', () => {
    for (const t of WEBHOOK_EVENT_TYPES) expect(isPublicWebhookType(t)).toBe(true);
  });
});
