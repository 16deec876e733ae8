import { EVENTS, type EventData } from '@sluice/api';
import type { Outbox } from '@sluice/events';
import type { EntityManager } from '@sluice/store';
import type { AccountEvents } from '../app/ports.js';
import type { ExternalAccountRecord } from '../domain/external-account.js';
import type { InternalAccountRecord } from '../domain/internal-account.js';
import { publicInternalAccount } from './internal-account.events.js';

/**
 * The events accounts publishes (domain `accounts`), typed by their contracts in
 * the catalogue and written to the outbox in the caller's transaction; every
 * envelope carries the platformId.
 */
export class AccountsPublisher implements AccountEvents {
  constructor(private readonly outbox: Outbox) {}

  /** The webhook's data is the public InternalAccount, the same object the REST API returns. */
  async balanceUpdated(em: EntityManager, account: InternalAccountRecord, occurredAt: Date): Promise<void> {
    await this.outbox.add(em, EVENTS.INTERNAL_ACCOUNT_BALANCE_UPDATED, {
      platformId: account.platformId,
      data: publicInternalAccount(account),
      occurredAt,
    });
  }

  async externalAccountCreated(em: EntityManager, account: ExternalAccountRecord): Promise<void> {
    await this.outbox.add(em, EVENTS.EXTERNAL_ACCOUNT_CREATED, {
      platformId: account.platformId,
      data: externalAccountData(account),
      occurredAt: account.createdAt,
    });
  }

  async externalAccountDeleted(
    em: EntityManager,
    account: ExternalAccountRecord,
    occurredAt: Date,
  ): Promise<void> {
    await this.outbox.add(em, EVENTS.EXTERNAL_ACCOUNT_DELETED, {
      platformId: account.platformId,
      data: externalAccountData(account),
      occurredAt,
    });
  }
}

/** No account numbers: consumers that need them ask GetExternalAccount. */
function externalAccountData(a: ExternalAccountRecord): EventData<typeof EVENTS.EXTERNAL_ACCOUNT_CREATED> {
  return {
    externalAccountId: a.id,
    ...(a.customerId ? { customerId: a.customerId } : {}),
    currency: a.currency,
    accountType: a.accountInfo.accountType,
    beneficiaryVerificationStatus: a.beneficiaryVerificationStatus,
    ...(a.platformAccountId ? { platformAccountId: a.platformAccountId } : {}),
  };
}
