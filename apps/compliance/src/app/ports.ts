import type { EntityManager } from '@sluice/store';
import type { ScreeningOutcome } from '../domain/sandbox.js';
import type { CustomerFacts, Verification } from '../domain/verification.js';
import type { KycStatus } from '../domain/beneficial-owner.js';

export type { DocumentStore } from '../domain/document.js';

/** Customers of identity, as compliance needs them. */
export interface CustomerDirectory {
  /** The customer of the platform (deleted ones included, flagged), or undefined. */
  getCustomer(platformId: string, customerId: string): Promise<CustomerFacts | undefined>;
}

/** Platform settings of identity, as compliance needs them. */
export interface PlatformDirectory {
  /**
   * Where the platform's hosted KYC links point (its `kycLinkUrlTemplate`), or undefined when it set
   * none. Read per call: the platform may change it any time.
   */
  kycLinkUrlTemplate(platformId: string): Promise<string | undefined>;
}

/** Who a KYC check is about. */
export type ScreeningSubject =
  | {
      kind: 'PERSON';
      id: string;
      firstName: string;
      lastName: string;
      birthDate?: string;
      nationality?: string;
    }
  | { kind: 'BUSINESS'; id: string; legalName?: string; registrationNumber: string; country?: string };

/**
 * The KYC/KYB provider (an outside party). A check is submitted when a beneficial owner is
 * created or its personal data changes, or when a verification is complete; its outcome is asked
 * for `decisionDelayMs` later, as a real provider answers asynchronously.
 *
 * Contract of a production implementation: `screen` is idempotent per subject id and
 * `reference` (a retry after a crash asks again and must get the same answer); it answers
 * APPROVED or REJECTED once the provider decided, PENDING while a human review is open (the
 * check is asked again after `decisionDelayMs`); a transport failure throws (retried).
 */
export interface KycProvider {
  /** How long after submission the outcome is asked for. */
  decisionDelayMs(): number;
  screen(subject: ScreeningSubject, reference: string): Promise<ScreeningOutcome>;
}

/** The events compliance writes (outbox, in the caller's transaction). */
export interface ComplianceEvents {
  /** A verification was created or its status changed: VERIFICATION.<status> webhook. */
  verificationChanged(em: EntityManager, v: Verification): Promise<void>;
  /** What identity must set as the customer's kycStatus/kybStatus. */
  customerStatusChanged(em: EntityManager, v: Verification, status: KycStatus): Promise<void>;
}
