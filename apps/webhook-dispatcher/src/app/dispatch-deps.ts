import type { Clock } from '@sluice/core';
import type { Logger } from '@sluice/logging';
import type { MikroORM } from '@sluice/store';
import type { DeliveryRepository } from '../store/delivery.repository.js';
import type { DispatcherEvents, WebhookSender, WebhookTargetSource } from './ports.js';

/** What every use case that sends webhooks works with: the store, the two outbound ports and the clock. */
export interface DispatchDeps {
  orm: MikroORM;
  repo: DeliveryRepository;
  targets: WebhookTargetSource;
  sender: WebhookSender;
  /** The dispatcher's events: answers of request–response webhooks, disabled endpoints. */
  events: DispatcherEvents;
  clock: Clock;
  logger: Logger;
}
