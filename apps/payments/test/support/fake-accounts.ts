import { DomainError } from '@sluice/core';
import type { AccountsPort, ExternalAccountInfo, InternalAccountInfo } from '../../src/index.js';

/** An internal account the fake knows: its platform, and a type (INTERNAL_FIAT unless given). */
export type FakeInternalAccount = Omit<InternalAccountInfo, 'type'> & { platformId: string; type?: InternalAccountInfo['type'] };

/** An external account the fake knows, with its platform. */
export type FakeExternalAccount = ExternalAccountInfo & { platformId: string };

/**
 * An in-memory stand-in for the accounts service's reads in the payments service tests (the
 * real service is proven in apps/accounts and through the real processes in tests/e2e): the
 * accounts a spec puts in `internal` and `external`, each visible to its own platform only;
 * anything else is the accounts service's NOT_FOUND.
 */
export class FakeAccounts implements AccountsPort {
  readonly internal = new Map<string, FakeInternalAccount>();
  readonly external = new Map<string, FakeExternalAccount>();
  /** Internal accounts that are EMBEDDED_WALLETs (a spec may mark one after creating it). */
  readonly embeddedWallets = new Set<string>();

  async getInternalAccount(platformId: string, accountId: string): Promise<InternalAccountInfo> {
    const a = this.internal.get(accountId);
    if (!a || a.platformId !== platformId) {
      throw new DomainError('NOT_FOUND', 'INTERNAL_ACCOUNT_NOT_FOUND', `${accountId} not found`);
    }
    return this.info(a);
  }

  async getExternalAccount(platformId: string, accountId: string): Promise<ExternalAccountInfo> {
    const a = this.external.get(accountId);
    if (!a || a.platformId !== platformId) {
      throw new DomainError('NOT_FOUND', 'EXTERNAL_ACCOUNT_NOT_FOUND', `${accountId} not found`);
    }
    return a;
  }

  async customerAccount(platformId: string, customerId: string, currency: string): Promise<InternalAccountInfo | undefined> {
    const a = [...this.internal.values()].find(
      (x) => x.platformId === platformId && x.customerId === customerId && x.currency === currency,
    );
    return a ? this.info(a) : undefined;
  }

  private info(a: FakeInternalAccount): InternalAccountInfo {
    return { ...a, type: this.embeddedWallets.has(a.id) ? 'EMBEDDED_WALLET' : (a.type ?? 'INTERNAL_FIAT') };
  }
}
