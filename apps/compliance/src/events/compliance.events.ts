import { EVENTS, eventContract, verificationJson, type EventContract } from '@sluice/api';
import type { Outbox } from '@sluice/events';
import type { EntityManager } from '@sluice/store';
import type { ComplianceEvents } from '../app/ports.js';
import type { KycStatus } from '../domain/beneficial-owner.js';
import type { Verification } from '../domain/verification.js';
import { verificationToPb } from '../rpc/mappers.js';

/**
 * The events compliance publishes (domain `compliance`), written to the outbox in the caller's
 * transaction: VERIFICATION.<status> webhooks carrying the public Verification (the REST mapper
 * over the same proto message), and CUSTOMER_VERIFICATION.STATUS_CHANGED, which identity applies
 * to the customer's kycStatus/kybStatus.
 */
export class CompliancePublisher implements ComplianceEvents {
  constructor(private readonly outbox: Outbox) {}

  async verificationChanged(em: EntityManager, v: Verification): Promise<void> {
    const contract = eventContract(`VERIFICATION.${v.status}`);
    if (!contract?.webhook || contract.owner !== 'compliance') return; // READY_FOR_VERIFICATION is never set
    await this.outbox.add(em, contract as EventContract<string, typeof EVENTS.VERIFICATION_APPROVED.data>, {
      platformId: v.platformId,
      data: verificationJson(verificationToPb(v)),
      occurredAt: v.updatedAt,
    });
  }

  async customerStatusChanged(em: EntityManager, v: Verification, status: KycStatus): Promise<void> {
    if (status === 'UNVERIFIED') return;
    await this.outbox.add(em, EVENTS.CUSTOMER_VERIFICATION_STATUS_CHANGED, {
      platformId: v.platformId,
      data: { customerId: v.customerId, customerType: v.customerType, status, verificationId: v.id },
      occurredAt: v.updatedAt,
    });
  }
}
