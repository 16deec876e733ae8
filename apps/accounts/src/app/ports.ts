import type { EntityManager } from '@sluice/store';
import type { ExternalAccountRecord } from '../domain/external-account.js';
import type { InternalAccountRecord } from '../domain/internal-account.js';

/**
 * Every outbound port of accounts: what it needs of other services (implemented by
 * `clients/`, identity over gRPC, or by adapters a test or the benchmark passes to
 * compose.ts) and the events it publishes (implemented by `events/`).
 */

/** Where accounts learns about account holders (identity owns customers and platforms). */
export interface HolderDirectory {
  /**
   * The platform's live customer, or undefined when it does not exist, is deleted or
   * belongs to another platform. `name`: an individual's full name or a business's
   * legal name, when known. Throws when the directory is unreachable.
   */
  customer(platformId: string, customerId: string): Promise<{ name?: string } | undefined>;
  /** The platform's display name, or undefined when unknown. */
  platformName(platformId: string): Promise<string | undefined>;
}

/** What accounts needs of a platform's configuration (identity owns it). */
export interface PlatformDirectory {
  /**
   * Currencies of the platform's embedded wallets (`embeddedWalletConfig.currencies`);
   * [] without embedded wallets or for an unknown platform. Throws when the directory is unreachable.
   */
  embeddedWalletCurrencies(platformId: string): Promise<string[]>;
}

/**
 * Publishing accounts' events: each method writes one event of the catalogue to the
 * outbox in the transaction of the change it reports (`em`), mapped from the domain
 * by the publisher in `events/`.
 */
export interface AccountEvents {
  /** INTERNAL_ACCOUNT.BALANCE_UPDATED: the account as it is right after its posted balance moved. */
  balanceUpdated(em: EntityManager, account: InternalAccountRecord, occurredAt: Date): Promise<void>;
  /** EXTERNAL_ACCOUNT.CREATED. */
  externalAccountCreated(em: EntityManager, account: ExternalAccountRecord): Promise<void>;
  /** EXTERNAL_ACCOUNT.DELETED. */
  externalAccountDeleted(em: EntityManager, account: ExternalAccountRecord, occurredAt: Date): Promise<void>;
}
