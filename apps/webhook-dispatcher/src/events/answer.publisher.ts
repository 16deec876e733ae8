import { EVENTS } from '@sluice/api';
import type { Outbox } from '@sluice/events';
import type { EntityManager } from '@sluice/store';
import type { AnswerPublisher } from '../app/ports.js';
import type { WebhookAnswer } from '../domain/answers.js';

/** INCOMING_PAYMENT.APPROVAL_ANSWERED through the dispatcher's outbox (payments consumes it). */
export class OutboxAnswerPublisher implements AnswerPublisher {
  constructor(private readonly outbox: Outbox) {}

  async answered(em: EntityManager, platformId: string, answer: WebhookAnswer): Promise<void> {
    await this.outbox.add(em, EVENTS.INCOMING_PAYMENT_APPROVAL_ANSWERED, {
      platformId,
      data: answer,
      occurredAt: new Date(answer.answeredAt),
    });
  }
}
