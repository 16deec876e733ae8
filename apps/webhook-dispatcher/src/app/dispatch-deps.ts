import type { Clock } from '@sluice/core';
import type { Logger } from '@sluice/logging';
import type { MikroORM } from '@sluice/store';
import type { DeliveryRepository } from '../store/delivery.repository.js';
import type { AnswerPublisher, WebhookSender, WebhookTargetSource } from './ports.js';

/** What every use case that sends webhooks works with: the store, the two outbound ports and the clock. */
export interface DispatchDeps {
  orm: MikroORM;
  repo: DeliveryRepository;
  targets: WebhookTargetSource;
  sender: WebhookSender;
  /** Relays the answers of request–response webhooks to their owner. */
  answers: AnswerPublisher;
  clock: Clock;
  logger: Logger;
}
