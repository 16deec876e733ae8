import { EVENTS } from '@sluice/api';
import { EventConsumer, on, streamName, type Bus } from '@sluice/events';
import type { Logger } from '@sluice/logging';
import type { MikroORM } from '@sluice/store';
import type { VerificationsService } from '../app/verifications.service.js';

/** Durable consumer name, shared by every replica of compliance. */
export const IDENTITY_CONSUMER = 'compliance-identity';

/**
 * Identity's acknowledgements of the customer statuses compliance decided
 * (`<prefix>.identity.customer_verification.>`): each CUSTOMER_VERIFICATION.STATUS_APPLIED lets
 * the verification show its decision, in the inbox transaction.
 */
export class IdentityConsumer extends EventConsumer {
  constructor(o: {
    bus: Bus;
    orm: MikroORM;
    logger: Logger;
    prefix: string;
    verifications: VerificationsService;
  }) {
    super({
      bus: o.bus,
      orm: o.orm,
      logger: o.logger,
      stream: streamName(o.prefix, 'identity'),
      durable: IDENTITY_CONSUMER,
      filterSubjects: [`${o.prefix}.identity.customer_verification.>`],
      handlers: [
        on(EVENTS.CUSTOMER_VERIFICATION_STATUS_APPLIED, async (em, data, event) => {
          if (!data.applied)
            o.logger.warn(
              { verificationId: data.verificationId, customerId: data.customerId },
              'identity did not apply a verification status (customer deleted or of another type)',
            );
          await o.verifications.confirm(em, event.platformId, data);
        }),
      ],
    });
  }
}
