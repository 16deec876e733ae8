import { EVENTS, bulkImportJobJson, customerJson, invitationJson, type EventData } from '@sluice/api';
import type { Outbox } from '@sluice/events';
import type { EntityManager } from '@sluice/store';
import type { CustomerPlatform, IdentityEvents } from '../app/ports.js';
import type { Customer } from '../domain/customer.js';
import type { PlatformSettings } from '../domain/platform-config.js';
import type { ApiToken, Platform } from '../domain/platform.js';
import type { Invitation } from '../domain/invitation.js';
import { bulkImportJobToPb, customerToPb, invitationToPb } from '../rpc/convert.js';
import type { BulkImportJob } from '../domain/bulk-import.js';

/** The webhook of each kycStatus / kybStatus a customer can move to. */
const STATUS_WEBHOOKS = {
  INDIVIDUAL: {
    PENDING: EVENTS.CUSTOMER_KYC_PENDING,
    APPROVED: EVENTS.CUSTOMER_KYC_APPROVED,
    REJECTED: EVENTS.CUSTOMER_KYC_REJECTED,
  },
  BUSINESS: {
    PENDING: EVENTS.CUSTOMER_KYB_PENDING,
    APPROVED: EVENTS.CUSTOMER_KYB_APPROVED,
    REJECTED: EVENTS.CUSTOMER_KYB_REJECTED,
  },
} as const;

/**
 * The events identity publishes (domain `identity`, subjects
 * `<prefix>.identity.<type lowercased>`), typed by their contracts in the
 * catalogue (`@sluice/api` EVENTS) and written to the outbox in the caller's
 * transaction; every envelope carries the platformId, and an event occurs when
 * the change it reports was made.
 */
export class IdentityPublisher implements IdentityEvents {
  constructor(private readonly outbox: Outbox) {}

  async platformCreated(em: EntityManager, p: Platform): Promise<void> {
    await this.outbox.add(em, EVENTS.PLATFORM_CREATED, {
      platformId: p.id,
      data: { name: p.name, environment: p.environment },
      occurredAt: p.createdAt,
    });
  }

  async platformConfigUpdated(
    em: EntityManager,
    c: {
      platform: Platform;
      settings: PlatformSettings;
      webhookSigningSecretRotated: boolean;
      webhookEndpointDisabled?: boolean;
      at: Date;
    },
  ): Promise<void> {
    await this.outbox.add(em, EVENTS.PLATFORM_CONFIG_UPDATED, {
      platformId: c.platform.id,
      data: {
        ...platformConfigData(c.platform, c.settings, c.webhookSigningSecretRotated),
        ...(c.webhookEndpointDisabled ? { webhookEndpointDisabled: true } : {}),
      },
      occurredAt: c.at,
    });
  }

  async tokenCreated(em: EntityManager, t: ApiToken): Promise<void> {
    await this.outbox.add(em, EVENTS.TOKEN_CREATED, {
      platformId: t.platformId,
      data: { tokenId: t.id, name: t.name, permissions: [...t.permissions] },
      occurredAt: t.createdAt,
    });
  }

  async tokenDeleted(em: EntityManager, t: ApiToken): Promise<void> {
    await this.outbox.add(em, EVENTS.TOKEN_DELETED, {
      platformId: t.platformId,
      data: { tokenId: t.id },
      occurredAt: t.updatedAt,
    });
  }

  async customerCreated(em: EntityManager, c: Customer, platform: CustomerPlatform): Promise<void> {
    await this.outbox.add(em, EVENTS.CUSTOMER_CREATED, {
      platformId: c.platformId,
      data: customerData(c, platform),
      occurredAt: c.createdAt,
    });
  }

  async customerUpdated(em: EntityManager, c: Customer, platform: CustomerPlatform): Promise<void> {
    await this.outbox.add(em, EVENTS.CUSTOMER_UPDATED, {
      platformId: c.platformId,
      data: customerData(c, platform),
      occurredAt: c.updatedAt,
    });
  }

  /** data is the public Customer, the REST mapper over the proto Customer GetCustomer returns. */
  async customerVerificationStatusChanged(em: EntityManager, c: Customer): Promise<void> {
    if (c.verificationStatus === 'UNVERIFIED') return;
    await this.outbox.add(em, STATUS_WEBHOOKS[c.customerType][c.verificationStatus], {
      platformId: c.platformId,
      data: customerJson(customerToPb(c)),
      occurredAt: c.updatedAt,
    });
  }

  async customerVerificationStatusApplied(
    em: EntityManager,
    a: { platformId: string; customerId: string; verificationId: string; status: string; applied: boolean },
  ): Promise<void> {
    const { platformId, ...data } = a;
    await this.outbox.add(em, EVENTS.CUSTOMER_VERIFICATION_STATUS_APPLIED, { platformId, data });
  }

  /** data is the public UmaInvitation, the REST mapper over the proto Invitation GetInvitation returns. */
  async invitationClaimed(em: EntityManager, i: Invitation): Promise<void> {
    await this.outbox.add(em, EVENTS.INVITATION_CLAIMED, {
      platformId: i.platformId,
      data: invitationJson(invitationToPb(i)),
      occurredAt: i.claimedAt,
    });
  }

  async bulkImportFinished(em: EntityManager, job: BulkImportJob): Promise<void> {
    await this.outbox.add(em, job.status === 'FAILED' ? EVENTS.BULK_UPLOAD_FAILED : EVENTS.BULK_UPLOAD_COMPLETED, {
      platformId: job.platformId,
      data: bulkImportJobJson(bulkImportJobToPb(job)),
      occurredAt: job.completedAt ?? job.createdAt,
    });
  }

  async customerDeleted(em: EntityManager, c: Customer): Promise<void> {
    await this.outbox.add(em, EVENTS.CUSTOMER_DELETED, {
      platformId: c.platformId,
      data: { customerId: c.id },
      occurredAt: c.deletedAt ?? c.updatedAt,
    });
  }
}

/** The customer, and its platform's environment and embedded-wallet currencies (accounts provisions from them). */
function customerData(c: Customer, platform: CustomerPlatform): EventData<typeof EVENTS.CUSTOMER_CREATED> {
  return {
    customerId: c.id,
    customerType: c.customerType,
    platformCustomerId: c.platformCustomerId,
    currencies: [...c.currencies],
    umaAddress: c.umaAddress,
    environment: platform.environment,
    embeddedWalletCurrencies: embeddedWalletCurrencies(platform.settings),
  };
}

function embeddedWalletCurrencies(s: PlatformSettings): string[] {
  return [...(s.embeddedWalletConfig?.currencies ?? [])];
}

/** Never carries secrets: only whether the webhook signing secret was rotated. */
function platformConfigData(
  platform: Platform,
  s: PlatformSettings,
  webhookSigningSecretRotated: boolean,
): EventData<typeof EVENTS.PLATFORM_CONFIG_UPDATED> {
  return {
    supportedCurrencies: s.supportedCurrencies.map((c) => c.currencyCode),
    embeddedWalletCurrencies: embeddedWalletCurrencies(s),
    umaDomain: s.umaDomain ?? null,
    webhookEndpoint: s.webhookEndpoint ?? null,
    kycLinkUrlTemplate: s.kycLinkUrlTemplate ?? null,
    webhookSigningSecretRotated,
    environment: platform.environment,
  };
}
