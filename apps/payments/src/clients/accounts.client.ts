import { BoundedMap } from '@sluice/core';
import { accounts } from '@sluice/contracts';
import { createRpcClient, type PromiseClient } from '@sluice/rpc';
import type { AccountsPort, ExternalAccountInfo, InternalAccountInfo, Ledger } from '../app/ports.js';
import type { LedgerAccountRef, LedgerLine, SystemAccount } from '../domain/quote-ledger.js';

const STATUS: Record<string, ExternalAccountInfo['status']> = {
  [accounts.ExternalAccountStatus.ACTIVE]: 'ACTIVE',
  [accounts.ExternalAccountStatus.PENDING]: 'PENDING',
  [accounts.ExternalAccountStatus.UNDER_REVIEW]: 'UNDER_REVIEW',
  [accounts.ExternalAccountStatus.INACTIVE]: 'INACTIVE',
};

const INTERNAL_TYPE: Record<string, InternalAccountInfo['type']> = {
  [accounts.InternalAccountType.INTERNAL_FIAT]: 'INTERNAL_FIAT',
  [accounts.InternalAccountType.INTERNAL_CRYPTO]: 'INTERNAL_CRYPTO',
  [accounts.InternalAccountType.EMBEDDED_WALLET]: 'EMBEDDED_WALLET',
};

const SYSTEM: Record<SystemAccount, accounts.SystemAccount> = {
  SETTLEMENT: accounts.SystemAccount.SETTLEMENT,
  FEES: accounts.SystemAccount.FEES,
  FX: accounts.SystemAccount.FX,
  CLEARING: accounts.SystemAccount.CLEARING,
};

const SETTLEMENT = { systemAccount: accounts.SystemAccount.SETTLEMENT };

/** A ledger account reference as the accounts proto's LedgerAccountRef. */
function refToPb(r: LedgerAccountRef): accounts.LedgerAccountRef {
  return 'internalAccountId' in r
    ? { internalAccountId: r.internalAccountId }
    : { systemAccount: SYSTEM[r.system] };
}

function linesToPb(lines: readonly LedgerLine[]): accounts.LedgerLine[] {
  return lines.map((l) => ({ account: refToPb(l.account), currency: l.currency, amount: l.amount }));
}

function externalAccount(a: accounts.ExternalAccount): ExternalAccountInfo {
  return {
    id: a.id,
    currency: a.currency,
    ...(a.customerId ? { customerId: a.customerId } : {}),
    status: STATUS[a.status] ?? 'UNKNOWN',
    accountType: a.accountInfo?.accountType ?? '',
    primaryIdentifier: a.primaryIdentifier,
    paymentRails: a.accountInfo?.paymentRails ?? [],
  };
}

function internalAccount(a: accounts.InternalAccount): InternalAccountInfo {
  return {
    id: a.id,
    currency: a.currency,
    ...(a.customerId ? { customerId: a.customerId } : {}),
    type: INTERNAL_TYPE[a.type] ?? 'UNKNOWN',
  };
}

/**
 * The one client of payments to the accounts service (`sluice.accounts.v1.AccountsService`):
 * account reads and the two-phase ledger (PlaceHold, PostHold, VoidHold, PostTransfer).
 * Accounts' DomainErrors pass through unchanged.
 */
export class AccountsClient implements AccountsPort, Ledger {
  private readonly client: PromiseClient<accounts.AccountsServiceClient>;
  private readonly internalAccounts = new BoundedMap<string, InternalAccountInfo>(10_000);

  constructor(address: string, deadlineMs = 5000) {
    this.client = createRpcClient(accounts.AccountsServiceClient, address, { defaultDeadlineMs: deadlineMs });
  }

  /**
   * What payments needs of an internal account never changes (its id, owner, currency and type; an
   * internal account is never deleted), so each is read from accounts once and kept
   * (`internalAccounts`, the most recently used 10,000): a quote or transfer from an account used
   * before costs no call. Only found accounts are kept; a refusal is asked again.
   */
  async getInternalAccount(platformId: string, accountId: string): Promise<InternalAccountInfo> {
    const key = `${platformId} ${accountId}`;
    const known = this.internalAccounts.get(key);
    if (known) return known;
    const { account } = await this.client.getInternalAccount({ platformId, accountId });
    const info = internalAccount(account!);
    this.internalAccounts.set(key, info);
    return info;
  }

  async getExternalAccount(platformId: string, accountId: string): Promise<ExternalAccountInfo> {
    const { account } = await this.client.getExternalAccount({ platformId, accountId });
    return externalAccount(account!);
  }

  async customerAccount(
    platformId: string,
    customerId: string,
    currency: string,
  ): Promise<InternalAccountInfo | undefined> {
    const { accounts: list } = await this.client.listInternalAccounts({
      platformId,
      owner: accounts.Owner.CUSTOMERS,
      customerId,
      currency,
      page: { limit: 1 },
    });
    return list[0] ? internalAccount(list[0]) : undefined;
  }

  async placeHold(h: Parameters<Ledger['placeHold']>[0]): Promise<{ payee?: ExternalAccountInfo }> {
    const { payeeExternalAccount } = await this.client.placeHold({
      platformId: h.platformId,
      holdId: h.holdId,
      accountId: h.accountId,
      amount: h.amount,
      currency: h.currency,
      counterAccount: h.counter ? refToPb(h.counter) : SETTLEMENT,
      kind: h.kind,
      ...(h.description ? { description: h.description } : {}),
      ...(h.payeeExternalAccountId ? { payeeExternalAccountId: h.payeeExternalAccountId } : {}),
    });
    return payeeExternalAccount ? { payee: externalAccount(payeeExternalAccount) } : {};
  }

  async postHold({ entry, ...h }: Parameters<Ledger['postHold']>[0]): Promise<void> {
    await this.client.postHold({
      ...h,
      ...(entry
        ? {
            entry: {
              entryId: entry.entryId,
              lines: linesToPb(entry.lines),
              kind: entry.kind,
              ...(entry.description ? { description: entry.description } : {}),
            },
          }
        : {}),
    });
  }

  async voidHold(h: Parameters<Ledger['voidHold']>[0]): Promise<void> {
    await this.client.voidHold(h);
  }

  async creditFromOutside(c: Parameters<Ledger['creditFromOutside']>[0]): Promise<void> {
    await this.client.postTransfer({
      platformId: c.platformId,
      entryId: c.entryId,
      lines: [
        { account: { internalAccountId: c.accountId }, currency: c.currency, amount: c.amount },
        { account: SETTLEMENT, currency: c.currency, amount: -c.amount },
      ],
      kind: c.kind,
      ...(c.description ? { description: c.description } : {}),
    });
  }

  async postEntry(e: Parameters<Ledger['postEntry']>[0]): Promise<void> {
    await this.client.postTransfer({
      platformId: e.platformId,
      entryId: e.entryId,
      lines: linesToPb(e.lines),
      kind: e.kind,
      ...(e.description ? { description: e.description } : {}),
    });
  }

  close(): void {
    this.client.close();
  }
}
