import { EVENTS } from '@sluice/api';
import type { Outbox } from '@sluice/events';
import type { EntityManager } from '@sluice/store';
import type { DispatcherEvents } from '../app/ports.js';
import type { WebhookAnswer } from '../domain/answers.js';

/**
 * The dispatcher's events through its outbox: INCOMING_PAYMENT.APPROVAL_ANSWERED (payments consumes
 * it) and WEBHOOK_ENDPOINT.DISABLED (identity consumes it).
 */
export class OutboxDispatcherEvents implements DispatcherEvents {
  constructor(private readonly outbox: Outbox) {}

  async answered(em: EntityManager, platformId: string, answer: WebhookAnswer): Promise<void> {
    await this.outbox.add(em, EVENTS.INCOMING_PAYMENT_APPROVAL_ANSWERED, {
      platformId,
      data: answer,
      occurredAt: new Date(answer.answeredAt),
    });
  }

  async endpointDisabled(
    em: EntityManager,
    platformId: string,
    e: { url: string; reason: string; disabledAt: Date },
  ): Promise<{ eventId: string; occurredAt: string; data: Record<string, unknown> }> {
    const data = { url: e.url, reason: e.reason, disabledAt: e.disabledAt.toISOString() };
    const envelope = await this.outbox.add(em, EVENTS.WEBHOOK_ENDPOINT_DISABLED, {
      platformId,
      data,
      occurredAt: e.disabledAt,
    });
    return { eventId: envelope.id, occurredAt: envelope.occurredAt, data };
  }
}
