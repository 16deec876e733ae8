import type { EntityManager } from '@sluice/store';
import type { Invitation } from '../domain/invitation.js';
import type { BulkImportJob } from '../domain/bulk-import.js';
import type { Customer } from '../domain/customer.js';
import type { PlatformSettings } from '../domain/platform-config.js';
import type { ApiToken, Environment, Platform } from '../domain/platform.js';

/** The customer's platform as a customer event describes it: its environment and its settings when the change was made. */
export interface CustomerPlatform {
  environment: Environment;
  settings: PlatformSettings;
}

/**
 * Every outbound port of identity. Its only neighbour is the event stream: each
 * method writes one event of the catalogue (`@sluice/api` EVENTS) to the outbox,
 * in the transaction of the change it reports (`em`), mapped from the domain by
 * the publisher in `events/`.
 */
export interface IdentityEvents {
  /** PLATFORM.CREATED. */
  platformCreated(em: EntityManager, platform: Platform): Promise<void>;
  /** PLATFORM_CONFIG.UPDATED: the settings as they now are (never secrets; only whether the signing secret was rotated). */
  platformConfigUpdated(
    em: EntityManager,
    change: {
      platform: Platform;
      settings: PlatformSettings;
      webhookSigningSecretRotated: boolean;
      /** The webhook-dispatcher disabled the endpoint and it was not set anew since. */
      webhookEndpointDisabled?: boolean;
      at: Date;
    },
  ): Promise<void>;
  /** TOKEN.CREATED. */
  tokenCreated(em: EntityManager, token: ApiToken): Promise<void>;
  /** TOKEN.DELETED (credential caches drop the token). */
  tokenDeleted(em: EntityManager, token: ApiToken): Promise<void>;
  /** CUSTOMER.CREATED, with what consumers need of the customer's platform to provision its accounts. */
  customerCreated(em: EntityManager, customer: Customer, platform: CustomerPlatform): Promise<void>;
  /** CUSTOMER.UPDATED, with the same facts of its platform. */
  customerUpdated(em: EntityManager, customer: Customer, platform: CustomerPlatform): Promise<void>;
  /** CUSTOMER.DELETED. */
  customerDeleted(em: EntityManager, customer: Customer): Promise<void>;
  /** BULK_UPLOAD.COMPLETED or BULK_UPLOAD.FAILED (webhook, by the job's status): data is the public BulkCustomerImportJob. */
  bulkImportFinished(em: EntityManager, job: BulkImportJob): Promise<void>;
  /** INVITATION.CLAIMED (webhook): data is the public UmaInvitation. */
  invitationClaimed(em: EntityManager, invitation: Invitation): Promise<void>;
  /** CUSTOMER.KYC_<status> (individual) or CUSTOMER.KYB_<status> (business): the webhook of a status change. */
  customerVerificationStatusChanged(em: EntityManager, customer: Customer): Promise<void>;
  /** CUSTOMER_VERIFICATION.STATUS_APPLIED: a verification's status was handled (compliance then shows it). */
  customerVerificationStatusApplied(
    em: EntityManager,
    a: { platformId: string; customerId: string; verificationId: string; status: string; applied: boolean },
  ): Promise<void>;
}
