import { EVENTS } from '@sluice/api';
import { EventConsumer, on, streamName, subjectFor, type Bus } from '@sluice/events';
import type { Logger } from '@sluice/logging';
import type { MikroORM } from '@sluice/store';
import type { IncomingService } from '../app/incoming.service.js';

/**
 * The platforms' answers to INCOMING_PAYMENT.PENDING, relayed by the webhook-dispatcher
 * (INCOMING_PAYMENT.APPROVAL_ANSWERED on the webhooks stream): each decides its payment, in the
 * consumer's inbox transaction (handled once however often it is delivered).
 */
export function approvalAnswerConsumer(deps: {
  bus: Bus;
  orm: MikroORM;
  logger: Logger;
  prefix: string;
  incoming: IncomingService;
}): EventConsumer {
  const contract = EVENTS.INCOMING_PAYMENT_APPROVAL_ANSWERED;
  return new EventConsumer({
    bus: deps.bus,
    orm: deps.orm,
    logger: deps.logger,
    stream: streamName(deps.prefix, 'webhooks'),
    durable: 'payments-approval-answers',
    filterSubjects: [subjectFor(deps.prefix, 'webhooks', contract.type)],
    handlers: [on(contract, (em, data, event) => deps.incoming.applyAnswer(em, event.platformId, data))],
  });
}
