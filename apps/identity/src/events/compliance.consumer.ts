import { EVENTS } from '@sluice/api';
import { EventConsumer, on, streamName, type Bus } from '@sluice/events';
import type { Logger } from '@sluice/logging';
import type { MikroORM } from '@sluice/store';
import type { CustomersService } from '../app/customers.service.js';

/** Durable consumer name, shared by every replica of identity. */
export const COMPLIANCE_CONSUMER = 'identity-compliance';

/**
 * Identity owns the customers' kycStatus/kybStatus; compliance decides them. This durable
 * JetStream consumer of compliance events (`<prefix>.compliance.>`) applies each
 * CUSTOMER_VERIFICATION.STATUS_CHANGED to the customer in the inbox transaction, which also
 * writes the CUSTOMER.KYC_* / KYB_* webhook.
 */
export class ComplianceConsumer extends EventConsumer {
  constructor(o: { bus: Bus; orm: MikroORM; logger: Logger; prefix: string; customers: CustomersService }) {
    super({
      bus: o.bus,
      orm: o.orm,
      logger: o.logger,
      stream: streamName(o.prefix, 'compliance'),
      durable: COMPLIANCE_CONSUMER,
      filterSubjects: [`${o.prefix}.compliance.customer_verification.>`],
      handlers: [
        on(EVENTS.CUSTOMER_VERIFICATION_STATUS_CHANGED, async (em, data, event) => {
          const applied = await o.customers.applyVerificationStatus(em, event.platformId, data);
          if (!applied)
            o.logger.warn(
              { type: event.type, eventId: event.id, customerId: data.customerId },
              'verification status of a customer that is deleted, unknown or of another type; skipped',
            );
        }),
      ],
    });
  }
}
