import { accounts } from '@sluice/contracts';
import { createRpcClient, type PromiseClient } from '@sluice/rpc';
import type { ExternalAccountDirectory, ExternalAccountSummary } from '../app/receiver-lookups.service.js';

const STATUS: Record<string, ExternalAccountSummary['status']> = {
  [accounts.ExternalAccountStatus.ACTIVE]: 'ACTIVE',
  [accounts.ExternalAccountStatus.PENDING]: 'PENDING',
  [accounts.ExternalAccountStatus.UNDER_REVIEW]: 'UNDER_REVIEW',
  [accounts.ExternalAccountStatus.INACTIVE]: 'INACTIVE',
};

/** External accounts from the accounts service over gRPC (its NOT_FOUND errors pass through unchanged). */
export class AccountsExternalAccountDirectory implements ExternalAccountDirectory {
  private readonly client: PromiseClient<accounts.AccountsServiceClient>;

  constructor(address: string, deadlineMs = 5000) {
    this.client = createRpcClient(accounts.AccountsServiceClient, address, { defaultDeadlineMs: deadlineMs });
  }

  async getExternalAccount(platformId: string, accountId: string): Promise<ExternalAccountSummary> {
    const { account } = await this.client.getExternalAccount({ platformId, accountId });
    return {
      id: account!.id,
      currency: account!.currency,
      ...(account!.customerId ? { customerId: account!.customerId } : {}),
      status: STATUS[account!.status] ?? 'UNKNOWN',
    };
  }

  close(): void {
    this.client.close();
  }
}
