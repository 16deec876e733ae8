import { accounts } from '@sluice/contracts';
import { createRpcClient, type PromiseClient } from '@sluice/rpc';
import type { AccountRef, AccountsPort } from '../app/ports.js';

const ref = (a: { id: string; customerId?: string | undefined; currency: string }): AccountRef => ({
  id: a.id,
  ...(a.customerId ? { customerId: a.customerId } : {}),
  currency: a.currency,
});

/** The one client of agents to accounts: the customer's internal and external accounts. */
export class AccountsClient implements AccountsPort {
  private readonly client: PromiseClient<accounts.AccountsServiceClient>;

  constructor(address: string, deadlineMs = 5000) {
    this.client = createRpcClient(accounts.AccountsServiceClient, address, { defaultDeadlineMs: deadlineMs });
  }

  async internalAccountIds(platformId: string, customerId: string): Promise<string[]> {
    const ids: string[] = [];
    let cursor: string | undefined;
    do {
      const res = await this.client.listInternalAccounts({
        platformId,
        owner: accounts.Owner.CUSTOMERS,
        customerId,
        page: { limit: 100, ...(cursor ? { cursor } : {}) },
      });
      ids.push(...res.accounts.map((a) => a.id));
      cursor = res.page?.hasMore ? res.page.nextCursor : undefined;
    } while (cursor);
    return ids;
  }

  async internalAccount(platformId: string, accountId: string): Promise<AccountRef> {
    const { account } = await this.client.getInternalAccount({ platformId, accountId });
    return ref(account!);
  }

  async externalAccount(platformId: string, accountId: string): Promise<AccountRef> {
    const { account } = await this.client.getExternalAccount({ platformId, accountId });
    return ref(account!);
  }

  close(): void {
    this.client.close();
  }
}
